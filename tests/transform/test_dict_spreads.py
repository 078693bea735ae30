"""Dicts spread and copied (#17): ``{**d, "b": v}``, ``dict(d, b=v)``, ``d.copy()``,
``f(**d)``, of a dict the function builds or a pytree argument, and ``state = {**state,
"h": h}`` in a loop; each refused until stop 31 ("building a container of differentiable
values", "'**kwargs' in a call is not supported yet")."""

import copy

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])


def layer(W, b, scale=1.0):
    return np.tanh(W * scale + b)


def spread_then_key(x):
    d = {"a": x, "b": x * x}
    e = {**d, "a": x * 3.0}  # a key written again later wins
    return np.sum(e["a"] * e["b"])


def two_spreads(x):
    d1 = {"a": x, "b": x * x}
    d2 = {"c": np.cos(x)}
    d3 = {**d1, **d2}
    return np.sum(d3["a"] * d3["b"] * d3["c"])


def dict_of_a_dict(x):
    d = {"a": x}
    e = dict(d, b=x * x)
    f = dict(**d, c=np.sin(x))
    return np.sum(e["a"] * e["b"] * f["c"])


def copies(x):
    d = {"a": x * 2.0, "b": x}
    e = d.copy()
    f = copy.copy(d)
    g = dict(d)
    e["a"] = e["a"] * 3.0  # the copy's key only
    return np.sum(d["a"] * e["a"] * f["b"] * g["a"])


def spread_into_a_call(x):
    d = {"W": x * 2.0, "b": np.sin(x)}
    return np.sum(layer(**d, scale=0.5))


def state_in_a_loop(x):
    state = {"h": x, "c": x * 0.5}
    for _ in range(3):
        state = {**state, "h": np.tanh(state["h"] * state["c"])}
    return np.sum(state["h"])


def swapped_keys(x):
    d = {"a": x, "b": x * x}
    d = {**d, "a": d["b"], "b": d["a"] * 2.0}  # both read before either is stored
    return np.sum(d["a"] * np.cos(d["b"]))


def dict_from_a_helper(v):
    return {"a": v, "b": v * v}


def spread_of_a_helpers_dict(x):
    d = dict_from_a_helper(x)
    e = {**d, "c": x}
    return np.sum(e["a"] * e["b"] * e["c"])


BUILT = [
    spread_then_key,
    two_spreads,
    dict_of_a_dict,
    copies,
    spread_into_a_call,
    state_in_a_loop,
    swapped_keys,
    spread_of_a_helpers_dict,
]


@pytest.mark.parametrize("f", BUILT, ids=lambda f: f.__name__)
def test_spreads_and_copies_of_dicts_built_in_the_function(f):
    for order in (1, 2):
        assert srcad.check_grad(f, X, modes=("rev", "fwd"), order=order) < 1e-6
    np.testing.assert_allclose(srcad.value_and_grad(f)(X)[0], f(X.copy()))


def spread_argument(p, x):
    q = {**p, "W": p["W"] * 2.0}
    return np.sum(q["W"] * q["b"] * x)


def argument_into_a_call(p, x):
    return np.sum(layer(**p) * x)


@pytest.mark.parametrize("f", [spread_argument, argument_into_a_call], ids=lambda f: f.__name__)
@pytest.mark.parametrize("wrt", [0, 1, (0, 1)])
def test_spreads_of_a_dict_argument(f, wrt):
    p = {"W": X * 1.0, "b": X * 0.5}
    for order in (1, 2):
        assert srcad.check_grad(f, p, X, wrt=wrt, modes=("rev", "fwd"), order=order) < 1e-6


def keys_not_names(x):
    d = {1: x}
    return np.sum(layer(**d))


def beside_differentiated_values(x, cfg):
    return np.sum(layer(x, **cfg))


def test_spreads_srcad_cannot_follow_are_refused_by_name():
    with pytest.raises(srcad.TransformError, match=r"'\*\*d' passes keys that are not names"):
        srcad.grad(keys_not_names)(X)
    with pytest.raises(srcad.TransformError, match="pass its entries by name"):
        srcad.grad(beside_differentiated_values)(X, {"b": X, "scale": 0.5})
