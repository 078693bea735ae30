"""A dict a helper of yours returns (normalize/helper_results.py): ``d = encode(x)`` where
every ``return`` of ``encode`` is a dict display with the same constant keys becomes one
name per key, the call one of a DictResults that hands on the values, so the helper's
derivative takes one cotangent per value. Checked against finite differences in both
modes and at second order (where the helper is written out, and the dict it returns is
the caller's)."""

from functools import partial

import numpy as np
import pytest

import srcad

X = np.array([0.3, -1.2, 2.0, 0.7])
W = np.array([[0.3, -0.2, 0.5, 0.1], [0.1, 0.4, -0.3, 0.2], [-0.5, 0.2, 0.1, 0.3]])
PARAMS = {"W": W, "b": np.array([0.1, -0.2, 0.05])}


def encode(x, W):
    h = np.tanh(W @ x)
    return {"mean": h[:2], "logvar": 0.5 * h[2:]}


def vae_like(x, W):
    d = encode(x, W)
    z = d["mean"] * np.exp(d["logvar"])
    return np.sum(z**2) + np.sum(d["mean"])


def branchy(x, scale):
    if np.sum(x) > 0:
        return {"a": np.sin(x) * scale, "b": x}
    return {"a": x * scale, "b": np.cos(x)}


def calls_a_branchy_helper(x, W):
    out = branchy(x, 2.0)
    more = branchy(W @ x, 0.5)
    return np.sum(out["a"] * out["b"]) + np.sum(more["a"] ** 2) + np.sum(more["b"])


def with_a_constant(x):
    return {"value": np.sum(x**2), "count": 3}


def reads_a_constant_too(x, W):
    r = with_a_constant(W @ x)
    return r["value"] / r["count"] + np.sum(x)


def looped(x, W):
    total = 0.0
    for k in range(3):
        d = encode(x * (k + 1.0), W)
        total = total + np.sum(d["mean"] * d["logvar"])
    return total


def iterated(x, W):
    d = encode(x, W)
    return sum(np.sum(v**2) for v in d.values()) + np.sum(np.concatenate(list(d.values())) * 0.3)


def returned_whole(x, W):
    d = encode(x, W)
    return d


@pytest.mark.parametrize(
    "f", [vae_like, calls_a_branchy_helper, reads_a_constant_too, looped, iterated]
)
def test_a_helpers_dict_in_both_modes_and_at_second_order(f):
    srcad.check_grad(f, X, W, wrt=(0, 1), modes=("rev", "fwd"), order=2)


def test_the_values_equal_the_functions_own():
    value, grads = srcad.value_and_grad(vae_like, wrt=(0, 1))(X, W)
    assert value == vae_like(X, W)
    eps = 1e-6
    bumped = X.copy()
    bumped[2] += eps
    lowered = X.copy()
    lowered[2] -= eps
    fd = (vae_like(bumped, W) - vae_like(lowered, W)) / (2 * eps)
    assert abs(grads[0][2] - fd) < 1e-6


def test_a_helpers_dict_passed_on_by_vjp():
    out, pullback = srcad.vjp(returned_whole, X, W)
    assert set(out) == {"mean", "logvar"}
    np.testing.assert_allclose(out["mean"], encode(X, W)["mean"])
    ones = {"mean": np.ones(2), "logvar": np.zeros(1)}
    dx, dW = pullback(ones)
    np.testing.assert_allclose(dx, srcad.grad(mean_only)(X))


def mean_only(x):
    d = encode(x, W)
    return np.sum(d["mean"])


def encode_params(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return {"mean": h[:2], "logvar": h[2:]}


def pytree_loss(params, x):
    d = encode_params(params, x)
    return np.sum(d["mean"] ** 2 * np.exp(d["logvar"]))


def test_a_helper_taking_the_pytree_argument_returns_a_dict():
    grads = srcad.grad(pytree_loss)(PARAMS, X)
    assert set(grads) == {"W", "b"}
    srcad.check_grad(pytree_loss, PARAMS, X, modes=("rev", "fwd"))
    srcad.check_grad(pytree_loss, PARAMS, X, modes=("rev",), order=2)


def encode_pair(pair, x):
    W, b = pair
    h = np.tanh(W @ x + b)
    return {"mean": h[:2], "logvar": h[2:]}


def display_argument(W, b, x):
    d = encode_pair((W, b), x)
    return np.sum(d["mean"] * d["logvar"])


def test_a_helper_given_a_display_returns_a_dict():
    srcad.check_grad(display_argument, W, PARAMS["b"], X, wrt=(0, 1), modes=("rev", "fwd"))


def test_the_generated_code_takes_the_values():
    text = srcad.source(srcad.grad(vae_like, wrt=(0, 1)), X, W)
    assert "d_mean, d_logvar" in text
    assert "{" not in text  # no dict built in the derivative


def read_in_place(x):
    return np.sum(encode(x, W)["mean"])


def reordered(x):
    if x[0] > 0:
        return {"a": x, "b": 2 * x}
    return {"b": x, "a": 2 * x}


def reads_reordered(x):
    d = reordered(x)
    return np.sum(d["a"] * d["b"])


@pytest.mark.parametrize("f", [read_in_place, reads_reordered])
def test_other_dicts_from_helpers_are_refused_by_name(f):
    refusal = "returns a dict.*(bound to a name|same constant keys)|same keys"
    with pytest.raises(srcad.TransformError, match=refusal):
        srcad.grad(f)(X[:3] if f is reads_reordered else X)


def scaled_stats(x, scale):
    return {"m": np.sin(x) * scale, "s": x * scale}


class Encoder:
    def __init__(self, W):
        self.W = W

    def encode(self, x):
        h = np.tanh(self.W @ x)
        return {"m": h[:2], "s": h[2:]}


HALF = partial(scaled_stats, scale=0.5)
ENCODER = Encoder(W * 0.5)


def through_a_partial_and_a_method(x, W):
    a = HALF(x * W[0])
    b = ENCODER.encode(x)
    return np.sum(a["m"] * a["s"]) + np.sum(b["m"]) * np.sum(b["s"])


def nested(x, n):
    if n == 0:
        return {"a": x, "b": x * 0.5}
    d = nested(np.sin(x), n - 1)
    return {"a": d["a"] * d["b"], "b": np.cos(d["b"])}


def recursive(x, W):
    d = nested(W @ x, 3)
    return np.sum(d["a"] + d["b"] ** 2)


@pytest.mark.parametrize("f", [through_a_partial_and_a_method, recursive])
def test_partials_methods_and_recursion_returning_dicts(f):
    srcad.check_grad(f, X, W, wrt=(0, 1), modes=("rev", "fwd"), order=2)


def reads_a_runtime_dict(x, model):
    d = model.encode(x)
    return np.sum(d["m"] * d["s"])


def test_a_dict_only_known_at_run_time_is_refused_by_name():
    # a method of an object passed in: its class is known only at run time (before: an
    # IndexError from inside the generated code, which indexed an array with the key)
    with pytest.raises(
        srcad.TransformError, match="the key 's' read from what a method of an object returns"
    ):
        srcad.grad(reads_a_runtime_dict)(X, Encoder(W))
    srcad.check_grad(reads_a_runtime_dict, X, Encoder(W), modes=("fwd",))


def halves(x):
    if np.sum(np.abs(x)) > 0.5:
        d = halves(x * 0.5)
        return {"a": d["a"] + x, "b": d["b"] * np.sin(x)}
    return {"a": x, "b": np.cos(x)}


def data_dependent(x):
    d = halves(x)
    return np.sum(d["a"] * d["b"])


def test_data_dependent_recursion_returning_a_dict():
    srcad.check_grad(data_dependent, X, modes=("rev", "fwd"))
    with pytest.raises(srcad.TransformError, match="returns a dict.*depth depends on data"):
        srcad.hessian(data_dependent)(X)
