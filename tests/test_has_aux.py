"""has_aux: the function returns (output, aux); only the output is differentiated."""

import numpy as np
import pytest

import srcad


def loss_with_stats(W, x):
    h = np.tanh(x @ W)
    loss = np.sum(h * h)
    return loss, {"mean_h": np.mean(h), "norm": np.sqrt(np.sum(W * W))}


def early_aux(x):
    if np.sum(x) > 0:
        return np.sum(x * x), "positive"
    return np.sum(np.sin(x)), "negative"


def not_a_pair(x):
    return np.sum(x)


def test_grad_and_value_and_grad_with_aux():
    rng = np.random.default_rng(0)
    W, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    grads, aux = srcad.grad(loss_with_stats, has_aux=True)(W, x)
    h = np.tanh(x @ W)
    np.testing.assert_allclose(grads, x.T @ (2 * h * (1 - h * h)))
    assert aux["mean_h"] == pytest.approx(np.mean(h))
    (value, aux2), grads2 = srcad.value_and_grad(loss_with_stats, has_aux=True)(W, x)
    assert value == pytest.approx(np.sum(h * h))
    np.testing.assert_allclose(grads2, grads)
    assert aux2["norm"] == pytest.approx(np.linalg.norm(W))


@pytest.mark.parametrize(
    "x, tag", [(np.array([0.5, 0.2]), "positive"), (np.array([-0.5, 0.2]), "negative")]
)
def test_aux_through_early_returns(x, tag):
    g, aux = srcad.grad(early_aux, has_aux=True)(x)
    assert aux == tag
    expected = 2 * x if tag == "positive" else np.cos(x)
    np.testing.assert_allclose(g, expected)


def test_vjp_with_aux():
    x = np.array([0.5, 0.2])
    out, pullback, aux = srcad.vjp(early_aux, x, has_aux=True)
    assert aux == "positive" and out == pytest.approx(np.sum(x * x))
    np.testing.assert_allclose(pullback(2.0)[0], 4 * x)


def test_return_that_is_not_a_pair_is_refused():
    with pytest.raises(srcad.TransformError, match="return output, aux"):
        srcad.grad(not_a_pair, has_aux=True)(np.ones(2))
