"""Derivatives of derivatives: the generated code is transformed again, to depth 3,
through loops, branches and the tape."""

import numpy as np
import pytest

import srcad

EPS = 1e-5


def numeric(f, x, eps=EPS):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def poly_sin(x):
    return np.sin(x) * x**3


def looped(x):
    h = x
    for _t in range(3):
        h = np.sin(h) * 1.5
        if h > 0.2:
            h = h * h
    return h


def while_loop(x):
    h = x
    n = 0
    while h < 3.0 and n < 6:
        h = h * 1.3 + np.sin(h)
        n += 1
    return h * h


@pytest.mark.parametrize("f", [poly_sin, looped, while_loop])
@pytest.mark.parametrize("x", [0.3, 0.7])
def test_grad_of_grad_and_third_order(f, x):
    g1 = srcad.grad(f)
    g2 = srcad.grad(g1)
    g3 = srcad.grad(g2)
    np.testing.assert_allclose(g2(x), numeric(g1, x), rtol=1e-6)
    np.testing.assert_allclose(g3(x), numeric(g2, x), rtol=1e-5)


def test_grad_of_grad_matches_the_closed_form():
    x = 0.7
    expected = -np.sin(x) * x**3 + 6 * np.cos(x) * x**2 + 6 * np.sin(x) * x
    np.testing.assert_allclose(srcad.grad(srcad.grad(poly_sin))(x), expected, rtol=1e-12)


@pytest.mark.parametrize("f", [poly_sin, looped, while_loop])
def test_jvp_of_grad_and_of_grad_of_grad(f):
    x = 0.45
    g1, g2 = srcad.grad(f), srcad.grad(srcad.grad(f))
    np.testing.assert_allclose(srcad.jvp(g1, (x,), (1.0,))[1], g2(x), rtol=1e-12)
    np.testing.assert_allclose(srcad.jvp(g2, (x,), (1.0,))[1], numeric(g2, x), rtol=1e-5)


def network(x, W):
    h = x
    for _t in range(2):
        h = np.tanh(W @ h)
    return np.sum(h * h)


def directional(x, W, v):
    _, tangent = srcad.jvp(network, (x, W), (v, None))
    return tangent


def hv_by_reverse_over_reverse(x, W, v):
    return np.sum(srcad.grad(network)(x, W) * v)


def test_grad_of_jvp_equals_jvp_of_grad_equals_reverse_over_reverse():
    rng = np.random.default_rng(3)
    x, W, v = rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=3)
    by_grad_of_jvp = srcad.grad(directional)(x, W, v)
    by_jvp_of_grad = srcad.jvp(srcad.grad(network), (x, W), (v, None))[1]
    by_reverse = srcad.grad(hv_by_reverse_over_reverse)(x, W, v)
    g = srcad.grad(network)
    by_differences = (g(x + EPS * v, W) - g(x - EPS * v, W)) / (2 * EPS)
    np.testing.assert_allclose(by_grad_of_jvp, by_jvp_of_grad, rtol=1e-10)
    np.testing.assert_allclose(by_reverse, by_jvp_of_grad, rtol=1e-10)
    np.testing.assert_allclose(by_jvp_of_grad, by_differences, rtol=1e-6)


def test_generated_gradient_source_is_differentiated_with_its_tape():
    text = srcad.source(srcad.grad(srcad.grad(looped)))
    # the inner gradient's tape is read back; its adjoints ride a tape of their own
    assert "tape.pop()" in text and "dtape.push(" in text and "dtape.pop()" in text


def test_derivative_with_has_aux_cannot_be_differentiated_again():
    def with_aux(x):
        return x * x, 1

    with pytest.raises(TypeError, match="differentiated again"):
        srcad.grad(srcad.grad(with_aux, has_aux=True))(1.0)


def gathers(x, idx):
    n = x.shape[0] // 2
    head = x[:n]
    picked = x[idx]  # repeated indices: the gradient accumulates with add_at
    return np.sum(np.sin(head) * head) + np.sum(picked**3)


def test_hessian_through_computed_slices_and_repeated_indices():
    x = np.array([0.3, -0.7, 1.1, 0.4, -0.2, 0.9])
    idx = np.array([1, 1, 4, 0])
    H = srcad.hessian(gathers)(x, idx)
    n = x.shape[0] // 2
    expected = np.zeros((6, 6))
    for k in range(n):
        expected[k, k] += 2 * np.cos(x[k]) - x[k] * np.sin(x[k])
    for k in idx:
        expected[k, k] += 6 * x[k]
    np.testing.assert_allclose(H, expected, atol=1e-12)
    g2 = srcad.grad(lambda x: np.sum(srcad.grad(gathers)(x, idx) ** 2))
    assert srcad.check_grad(lambda x: np.sum(srcad.grad(gathers)(x, idx) ** 2), x) < 1e-5
    assert g2(x).shape == x.shape


def helper(x):
    return np.sin(x) * x


def calls_helper(x):
    return helper(x) * 2.0


def recursive_helper(x, n):
    if n == 0:
        return x
    return recursive_helper(np.sin(x) * x, n - 1)


def calls_recursive_helper(x):
    return np.sum(recursive_helper(x, 2))


def summed_calls(x):
    return np.sum(calls_helper(x))  # a helper calling a helper


def test_second_order_through_calls_of_your_functions():
    # the helpers are written out in the gradient that is differentiated again
    x = np.array([0.3, 0.2])
    expected = np.diag(2 * (2 * np.cos(x) - x * np.sin(x)))
    np.testing.assert_allclose(srcad.hessian(summed_calls)(x), expected, atol=1e-12)
    srcad.check_grad(summed_calls, x, order=2, modes=("rev", "fwd"))
    d2 = 2 * (2 * np.cos(0.3) - 0.3 * np.sin(0.3))
    assert srcad.grad(srcad.grad(calls_helper))(0.3) == pytest.approx(d2)
    # a recursive helper whose depth is a constant of the call is unrolled
    srcad.check_grad(calls_recursive_helper, x, order=2, modes=("rev", "fwd"))
    assert srcad.grad(calls_recursive_helper)(x).shape == x.shape  # first order as before
    # one whose depth is not (an argument of f) stays a call, followed level by level
    depth_argument = lambda x, n=2: np.sum(recursive_helper(x, n))  # noqa: E731
    srcad.check_grad(depth_argument, x, order=2, modes=("rev", "fwd"))


def updates_in_place(x):
    y = np.tanh(x)
    for k in range(2):
        y[k] = y[k] * x[k]
    return np.sum(y * x)


def test_second_order_through_updates_in_place():
    # the gradient restores y in place; differentiated again that is an update of y
    x = np.array([0.3, -0.2, 0.5])
    srcad.check_grad(updates_in_place, x, order=2, modes=("rev", "fwd"))
