"""Pytree arguments: dicts, lists, tuples, namedtuples and dataclasses of arrays."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(5)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def mlp(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2)


def nested(params, x):
    layer = params["hidden"]
    h = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(h * params["scale"])


def stacked(weights, x):
    h = x
    for W in weights:
        h = np.tanh(h @ W)
    return np.sum(h) * len(weights)


def unpacked(pair, x):
    W, b = pair
    return np.sum(np.sin(x @ W + b))


Params = namedtuple("Params", ["W", "b"])


@dataclasses.dataclass
class Linear:
    W: np.ndarray
    b: np.ndarray


def fields(p, x):
    return np.sum(np.tanh(x @ p.W + p.b))


def whole_dict(params, x):
    return np.sum(helper(params, x))


def helper(params, x):
    return x @ params["W"]


def dynamic_key(params, x, key):
    return np.sum(params[key] * x)


def make_mlp():
    return {"W1": vec(3, 4), "b1": vec(4), "W2": vec(4, 2)}


def flat_check(fn, tree, *rest):
    """Finite differences leaf by leaf, against srcad's pytree gradient."""
    g = srcad.grad(fn)(tree, *rest)
    leaves, treedef = srcad.pytree.flatten(tree)
    got, got_def = srcad.pytree.flatten(g)
    assert got_def == treedef
    eps = 1e-6
    for k, leaf in enumerate(leaves):
        numeric = np.zeros_like(leaf)
        for idx in np.ndindex(leaf.shape):
            for sign in (1, -1):
                bumped = [lf.copy() for lf in leaves]
                bumped[k][idx] += sign * eps
                numeric[idx] += sign * fn(srcad.pytree.unflatten(treedef, bumped), *rest)
        np.testing.assert_allclose(got[k], numeric / (2 * eps), rtol=1e-5, atol=1e-7)
    return g


def test_dict_of_parameters():
    g = flat_check(mlp, make_mlp(), vec(5, 3))
    assert isinstance(g, dict) and list(g) == ["W1", "b1", "W2"]


def test_nested_dict_and_alias():
    params = {"hidden": {"W": vec(3, 2), "b": vec(2)}, "scale": vec(2)}
    g = flat_check(nested, params, vec(4, 3))
    assert set(g["hidden"]) == {"W", "b"}


def test_list_of_arrays_loop_and_len():
    g = flat_check(stacked, [vec(3, 3), vec(3, 2)], vec(4, 3))
    assert isinstance(g, list) and len(g) == 2


def test_tuple_unpacking():
    g = flat_check(unpacked, (vec(3, 2), vec(2)), vec(4, 3))
    assert isinstance(g, tuple)


def test_namedtuple_and_dataclass_fields():
    g = flat_check(fields, Params(vec(3, 2), vec(2)), vec(4, 3))
    assert isinstance(g, Params)
    g = flat_check(fields, Linear(vec(3, 2), vec(2)), vec(4, 3))
    assert isinstance(g, Linear)


def test_pytree_together_with_array_argument():
    params, x = make_mlp(), vec(5, 3)
    gp, gx = srcad.grad(mlp, wrt=(0, 1))(params, x)
    assert isinstance(gp, dict) and gx.shape == x.shape
    srcad.check_grad(mlp, params, x, wrt=1)


def test_generated_source_names_leaves():
    d = srcad.grad(mlp)
    d(make_mlp(), vec(5, 3))
    (gen,) = d._generated.values()
    assert "def value_and_grad_mlp(params_W1, params_b1, params_W2, x):" in gen.source
    code = [line for line in gen.source.splitlines() if not line.strip().startswith("#")]
    assert not any("params[" in line for line in code)


def test_vjp_with_pytree_primal():
    params, x = make_mlp(), vec(5, 3)
    out, pullback = srcad.vjp(mlp, params, x)
    gp, gx = pullback(1.0)
    expected = srcad.grad(mlp, wrt=(0, 1))(params, x)
    for key in params:
        np.testing.assert_allclose(gp[key], expected[0][key])
    np.testing.assert_allclose(gx, expected[1])


def whole_dict_to_numpy(params, x):
    return np.sum(np.stack(params)) * np.sum(x)


def test_whole_pytree_passed_to_a_helper():
    srcad.check_grad(whole_dict, {"W": vec(3, 2)}, vec(4, 3), wrt=(0, 1), modes=("rev", "fwd"))


def test_whole_pytree_use_is_refused():
    with pytest.raises(srcad.TransformError, match="used as a whole"):
        srcad.grad(whole_dict_to_numpy)({"W": vec(3, 2)}, vec(4, 3))


def test_dynamic_key_is_refused():
    with pytest.raises(srcad.TransformError, match="constant keys"):
        srcad.grad(dynamic_key)({"W": vec(3)}, vec(3), "W")


def test_integer_leaf_is_refused():
    with pytest.raises(TypeError, match=r"params\['n'\]"):
        srcad.grad(mlp)({"W1": vec(3, 4), "b1": vec(4), "W2": vec(4, 2), "n": 3}, vec(5, 3))


def two_outputs(x, W):
    h = np.tanh(W @ x)
    return {"h": h, "norm": np.sum(h * h)}


def pair_with_early_return(x):
    if np.sum(x) > 0:
        return np.sin(x), np.sum(x)
    return x * 2.0, np.sum(x * x)


@pytest.mark.parametrize("x", [np.array([0.5, 0.2]), np.array([-0.5, 0.2])])
def test_vjp_of_a_tuple_output_with_early_return(x):
    (a, b), pullback = srcad.vjp(pair_with_early_return, x)
    ga, gb = np.array([1.0, 2.0]), 3.0
    (gx,) = pullback((ga, gb))
    if np.sum(x) > 0:
        expected = ga * np.cos(x) + gb
    else:
        expected = ga * 2.0 + gb * 2 * x
    np.testing.assert_allclose(gx, expected)


def test_vjp_of_a_dict_output():
    x, W = vec(3), vec(2, 3)
    out, pullback = srcad.vjp(two_outputs, x, W)
    assert set(out) == {"h", "norm"}
    gh = vec(2)
    gx, gW = pullback({"h": gh, "norm": 0.5})
    h = np.tanh(W @ x)
    dpre = (gh + 0.5 * 2 * h) * (1 - h * h)
    np.testing.assert_allclose(gx, W.T @ dpre)
    np.testing.assert_allclose(gW, np.outer(dpre, x))
    with pytest.raises(ValueError, match="structure"):
        pullback({"h": gh})


def test_grad_of_a_container_output_is_refused():
    with pytest.raises(srcad.TransformError, match="returning one scalar"):
        srcad.grad(two_outputs)(vec(3), vec(2, 3))


def nested_output(x):
    return {"pair": (np.sin(x), x * 2.0), "total": np.sum(x)}


def test_vjp_of_a_nested_container_output():
    x = vec(3)
    out, pullback = srcad.vjp(nested_output, x)
    assert isinstance(out["pair"], tuple)
    g1, g2 = vec(3), vec(3)
    (gx,) = pullback({"pair": (g1, g2), "total": 2.0})
    np.testing.assert_allclose(gx, g1 * np.cos(x) + 2.0 * g2 + 2.0)


def loop_over_dict(params, x):
    total = 0.0
    for key in params:  # noqa: B007
        total = total + np.sum(x)
    return total


def test_loop_over_a_dict_argument_unrolls_over_its_keys():
    params, x = {"W": vec(3), "b": vec(3)}, vec(3)
    value, g = srcad.value_and_grad(loop_over_dict)(params, x)
    assert value == loop_over_dict(params, x)
    np.testing.assert_array_equal(g["W"], 0.0)
    srcad.check_grad(loop_over_dict, params, x, wrt=1)


def element_of_argument_updated(params, x):
    W = params["W"]
    params["W"] += x
    return np.sum(W * x)


def test_an_element_of_a_pytree_argument_changed_is_refused_as_an_argument():
    # (the message said "a global or a closure's variable" until stop 31)
    params, x = {"W": vec(3)}, vec(3)
    with pytest.raises(srcad.TransformError, match="'params' is an argument holding a dict"):
        srcad.grad(element_of_argument_updated)(params, x)
