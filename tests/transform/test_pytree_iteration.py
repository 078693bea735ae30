"""Pytree parameters iterated, sliced, read as dicts and passed whole to helpers (issue #17,
"Parameter containers"): reverse and forward mode against finite differences, and what is
still refused. Every leaf holds different values (most have different shapes too), so a
derivative reading the wrong leaf differs from finite differences."""

import dataclasses
import functools
from collections import namedtuple

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(17)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def check(f, *args):
    """Both modes against finite differences, with respect to every argument; the value of
    the derivative's primal equals the function's."""
    srcad.check_grad(f, *args, wrt=tuple(range(len(args))), modes=("rev", "fwd"))
    value, _ = srcad.value_and_grad(f, wrt=tuple(range(len(args))))(*args)
    assert np.isclose(value, f(*args))


def square_weights(n=4):
    return [vec(3, 3) for _ in range(n)]


def layers():
    return [(vec(4, 3), vec(4)), (vec(2, 4), vec(2))]


def entries():
    return {"b": vec(3), "a": vec(3), "cc": vec(3)}


def named_layers():
    return {"W1": vec(4, 3), "b1": vec(4), "W2": vec(2, 4), "b2": vec(2)}


def sub_layers(first="z", second="a"):
    return {first: {"W": vec(2, 3), "b": vec(2)}, second: {"W": vec(4, 3), "b": vec(4)}}


def two_branches():
    return {"a": {"W": vec(3)}, "b": {"W": vec(3)}}


# ---- slices with constant bounds ------------------------------------------------------------


def middle_layers(params, x):
    h = params[0] @ x
    for W in params[1:-1]:
        h = np.tanh(W @ h)
    return np.sum(params[-1] @ h)


def every_other(params, x):
    return sum(np.sum(np.sin(W @ x)) for W in params[::2])


def first_two(params, x):
    total = 0.0
    for W in params[:2]:
        total = total + np.sum(np.tanh(W @ x) * np.arange(3.0))
    return total


def count_and_sum_of_slices(params, x):
    return np.sum(sum(params[1:]) @ x) * len(params[:-1])


def slice_by_a_constant_name(params, x):
    k = 3
    h = x
    for W in params[:k]:
        h = np.tanh(W @ h)
    return np.sum(h)


# ---- enumerate, zip, reversed, nested targets -----------------------------------------------


def enumerated(params, x):
    total = 0.0
    for i, W in enumerate(params):
        total = total + (i + 1.0) * np.sum(np.tanh(W @ x))
    return total


def enumerated_from(params, x):
    total = 0.0
    for i, W in enumerate(params, 2):
        total = total + i * np.sum(W @ x)
    return total


def enumerated_with_index_reads(params, x):
    total = 0.0
    for i, W in enumerate(params[:-1]):
        total = total + np.sum(np.tanh(W @ params[i + 1] @ x))
    return total


def neighbours(params, x):
    total = 0.0
    for A, B in zip(params[:-1], params[1:]):
        total = total + np.sum(np.tanh(A @ B @ x))
    return total


def weights_and_biases(Ws, bs, x):
    for W, b in zip(Ws, bs):
        x = np.tanh(W @ x + b)
    return np.sum(x)


def enumerated_pairs(Ws, bs, x):
    for i, (W, b) in enumerate(zip(Ws, bs)):
        x = np.tanh(W @ x + b) * (i + 1.0)
    return np.sum(x)


def zipped_with_a_range(params, x):
    total = 0.0
    for i, W in zip(range(3), params):
        total = total + (i + 1.0) * np.sum(np.cos(W @ x))
    return total


def zipped_with_constants(params, x):
    for (W, b), scale in zip(params, (0.5, 3.0)):
        x = scale * np.tanh(W @ x + b)
    return np.sum(x)


def list_of_pairs(params, x):
    for W, b in params:
        x = np.tanh(W @ x + b)
    return np.sum(x)


def backwards(params, x):
    for W in reversed(params):
        x = np.tanh(W @ x)
    return np.sum(x)


# ---- dicts ----------------------------------------------------------------------------------


def over_keys(d, x):
    h = x
    for k in d:  # the order matters: each step feeds the next
        h = np.tanh(d[k] * h) * len(k)
    return np.sum(h)


def over_keys_method(d, x):
    h = x
    for k in d.keys():
        h = np.sin(d[k] + h)
    return np.sum(h)


def over_items(d, x):
    h = x
    for k, w in d.items():
        h = np.tanh(w * h + len(k))
    return np.sum(h)


def over_values(d, x):
    h = x
    for w in d.values():
        h = np.cos(w * h)
    return np.sum(h)


def with_get(d, x):
    present = np.sum(d.get("a") * x) + np.sum(d.get("b", 7.0) ** 2)
    return present + np.sum(d.get("absent", 2.0) * x)


def with_get_none(d, x):
    w = d.get("absent")
    if w is None:
        w = d.get("cc")
    return np.sum(np.sin(w * x))


def length_and_sum(d, x):
    return np.sum(np.tanh(sum(d.values()) * x)) * len(d)


def generator_over_literal_keys(d, x):
    return sum(np.sum(np.sin(d[k] * x)) for k in ("a", "cc"))


def comprehension_over_the_dict(d, x):
    return np.sum(np.stack([d[k] * x for k in d]) ** 2)


def constant_key_name(d, x):
    k = "cc"
    return np.sum(d[k] * x)


def nested_dict_loop(params, x):
    total = 0.0
    for name, layer in params.items():
        total = total + np.sum(np.tanh(layer["W"] @ x + layer["b"])) * len(name)
    return total


def integer_keys(d, x):
    total = 0.0
    for k, w in d.items():
        total = total + k * np.sum(np.sin(w * x))
    return total


# ---- containers passed to the user's own functions ------------------------------------------


def mlp(params, x, scale=2.0):
    for W, b in params:
        x = np.tanh(W @ x + b)
    return scale * np.sum(x)


def whole_to_a_helper(params, x):
    return mlp(params, x)


def whole_by_keyword(params, x):
    y = 2.0 * x
    return mlp(params, x=y)


def predict(p, x):
    return np.sum(np.tanh(p["W"] @ x + p["b"]))


def sub_tree_to_a_helper(params, x):
    return predict(params["enc"], x) + np.sum(params["scale"] * x)


def sub_tree_by_get(params, x):
    return predict(params.get("enc"), x)


def display_to_a_helper(params, x):
    return mlp([(params["W1"], params["b1"]), (params["W2"], params["b2"] * 2.0)], x)


def named_display_to_a_helper(params, x):
    pairs = [(params["W1"], params["b1"]), (params["W2"], params["b2"] * 2.0)]
    return mlp(pairs, x) + np.sum(pairs[1][1])


def tuple_of_parts(params, x):
    pair = (params["W1"], np.sin(params["b1"]))
    W, b = pair
    return np.sum(np.tanh(W @ x + b)) + predict({"W": pair[0], "b": params["b1"]}, x)


def slice_to_a_helper(params, x):
    return mlp(params[1:], params[0][0] @ x)


def through_two_helpers(params, x):
    return encoder(params, x)


def encoder(params, x):
    return 2.0 * predict(params["enc"], x) + mlp(params["layers"], x)


def helper_in_a_loop(params, x):
    for _ in range(3):
        x = x + 0.1 * mlp(params, x)
    return np.sum(x)


def helper_in_a_branch(params, x):
    if np.sum(x) > 0:
        return mlp(params, x)
    return mlp(params[:1], x, 0.5)


def helper_over_keys(params, x):
    total = 0.0
    for k in params:
        total = total + predict(params[k], x)
    return total


Pair = namedtuple("Pair", ["W", "b"])


@dataclasses.dataclass
class Linear:
    W: np.ndarray
    b: np.ndarray


def linear(p, x):
    return np.sum(np.tanh(p.W @ x + p.b))


def record_to_a_helper(p, x):
    return linear(p, x)


def records_to_a_helper(ps, x):
    return sum(linear(p, x) for p in ps)


class Affine:
    """A registered class with named children and static data, passed whole to a helper."""

    def __init__(self, W, b, gain=1.5):
        self.W, self.b, self.gain = W, b, gain


srcad.register_pytree_node(
    Affine, lambda a: ((a.W, a.b), a.gain), lambda gain, c: Affine(*c, gain), names=("W", "b")
)


def affine(a, x):
    return np.sum(np.tanh(a.W @ x + a.b))


def registered_to_a_helper(a, x):
    return affine(a, x) * 2.0


# ---- arrays read through the container, helpers whose results are not differentiated ---------


def leaf_attributes_and_indexing(params, x):
    gram = params["W"][1:].T @ params["W"][1:]
    return np.sum(gram @ x) + np.sum(params["W"].T @ x * params["W"][0])


def concatenated_with_an_axis(params, x):
    return np.sum(np.concatenate(params, 0) ** 2) + np.sum(np.stack(params[:2], axis=1) @ x[:2])


def width(params):
    return params[0][0].shape[0]


def helper_giving_an_integer(params, x):
    unused = width(params)  # noqa: F841
    return np.sum(np.tanh(params[0][0] @ x)) * width(params)


X = vec(3)
CASES = [
    (middle_layers, lambda: (square_weights(), X)),
    (every_other, lambda: (square_weights(5), X)),
    (first_two, lambda: (square_weights(), X)),
    (count_and_sum_of_slices, lambda: (square_weights(), X)),
    (slice_by_a_constant_name, lambda: (square_weights(), X)),
    (enumerated, lambda: (square_weights(3), X)),
    (enumerated_from, lambda: (square_weights(3), X)),
    (enumerated_with_index_reads, lambda: (square_weights(3), X)),
    (neighbours, lambda: (square_weights(), X)),
    (weights_and_biases, lambda: ([vec(4, 3), vec(2, 4)], [vec(4), vec(2)], X)),
    (enumerated_pairs, lambda: ([vec(4, 3), vec(2, 4)], [vec(4), vec(2)], X)),
    (zipped_with_a_range, lambda: (square_weights(), X)),
    (zipped_with_constants, lambda: (layers(), X)),
    (list_of_pairs, lambda: (layers(), X)),
    (backwards, lambda: ([vec(3, 2), vec(2, 3)], X)),
    (over_keys, lambda: (entries(), X)),
    (over_keys_method, lambda: (entries(), X)),
    (over_items, lambda: (entries(), X)),
    (over_values, lambda: (entries(), X)),
    (with_get, lambda: (entries(), X)),
    (with_get_none, lambda: (entries(), X)),
    (length_and_sum, lambda: (entries(), X)),
    (generator_over_literal_keys, lambda: (entries(), X)),
    (comprehension_over_the_dict, lambda: (entries(), X)),
    (constant_key_name, lambda: (entries(), X)),
    (nested_dict_loop, lambda: (sub_layers(), X)),
    (integer_keys, lambda: ({3: vec(3), 5: vec(3)}, X)),
    (whole_to_a_helper, lambda: (layers(), X)),
    (whole_by_keyword, lambda: (layers(), X)),
    (sub_tree_to_a_helper, lambda: ({"enc": {"W": vec(2, 3), "b": vec(2)}, "scale": vec(3)}, X)),
    (sub_tree_by_get, lambda: ({"enc": {"W": vec(2, 3), "b": vec(2)}}, X)),
    (display_to_a_helper, lambda: (named_layers(), X)),
    (named_display_to_a_helper, lambda: (named_layers(), X)),
    (tuple_of_parts, lambda: ({"W1": vec(4, 3), "b1": vec(4)}, X)),
    (slice_to_a_helper, lambda: ([(vec(3, 3), vec(3)), *layers()], X)),
    (through_two_helpers, lambda: ({"enc": {"W": vec(2, 3), "b": vec(2)}, "layers": layers()}, X)),
    (helper_in_a_loop, lambda: ([(vec(3, 3), vec(3))], X)),
    (helper_in_a_branch, lambda: (layers(), np.abs(X))),
    (helper_in_a_branch, lambda: (layers(), -np.abs(X))),
    (helper_over_keys, lambda: (sub_layers("u", "v"), X)),
    (record_to_a_helper, lambda: (Pair(vec(2, 3), vec(2)), X)),
    (record_to_a_helper, lambda: (Linear(vec(2, 3), vec(2)), X)),
    (records_to_a_helper, lambda: ([Linear(vec(2, 3), vec(2)), Linear(vec(4, 3), vec(4))], X)),
    (registered_to_a_helper, lambda: (Affine(vec(2, 3), vec(2)), X)),
    (leaf_attributes_and_indexing, lambda: ({"W": vec(3, 3)}, X)),
    (concatenated_with_an_axis, lambda: ([vec(3), vec(3), vec(3)], X)),
    (helper_giving_an_integer, lambda: (layers(), X)),
]  # fmt: skip


@pytest.mark.parametrize(("f", "make"), CASES, ids=[f.__name__ for f, _ in CASES])
def test_against_finite_differences(f, make):
    check(f, *make())


def test_dict_loops_follow_the_key_order():
    x = vec(3)
    ab, ba = {"a": vec(3), "b": vec(3)}, {}
    ba["b"], ba["a"] = ab["b"], ab["a"]
    value_ab, g_ab = srcad.value_and_grad(over_keys)(ab, x)
    value_ba, g_ba = srcad.value_and_grad(over_keys)(ba, x)
    assert np.isclose(value_ab, over_keys(ab, x)) and np.isclose(value_ba, over_keys(ba, x))
    assert list(g_ba) == ["b", "a"]
    assert not np.allclose(g_ab["a"], g_ba["a"])  # composed the other way round


def test_vjp_and_jvp_through_a_helper():
    params, x = layers(), vec(3)
    out, pullback = srcad.vjp(whole_to_a_helper, params, x)
    g_params, g_x = pullback(1.0)
    expected = srcad.grad(whole_to_a_helper, wrt=(0, 1))(params, x)
    np.testing.assert_allclose(g_params[1][0], expected[0][1][0])
    np.testing.assert_allclose(g_x, expected[1])
    assert np.isclose(out, whole_to_a_helper(params, x))
    tangents = ([(vec(4, 3), vec(4)), (vec(2, 4), vec(2))], vec(3))
    _, derivative = srcad.jvp(whole_to_a_helper, (params, x), tangents)
    inner = sum(
        np.sum(g * t)
        for g, t in zip(srcad.pytree.tree_leaves(expected), srcad.pytree.tree_leaves(tangents))
    )
    assert np.isclose(derivative, inner)


def test_a_helper_with_respect_to_another_argument():
    srcad.check_grad(whole_to_a_helper, layers(), vec(3), wrt=1, modes=("rev", "fwd"))


def test_export_of_a_helper_taking_a_container():
    from srcad.export import export_source

    params, x = layers(), vec(3)
    text = export_source(srcad.grad(whole_to_a_helper), example_args=(params, x))
    namespace: dict = {}
    exec(compile(text, "exported.py", "exec"), namespace)
    got = namespace[namespace["__all__"][0]](params, x)
    want = srcad.grad(whole_to_a_helper)(params, x)
    for a, b in zip(srcad.pytree.tree_leaves(got), srcad.pytree.tree_leaves(want)):
        np.testing.assert_allclose(a, b)


# ---- still refused --------------------------------------------------------------------------


def loop_with_break(params, x):
    total = 0.0
    for W in params:
        total = total + np.sum(W @ x)
        if total > 10.0:
            break
    return total


def sliced_by_an_argument(params, x, n):
    return sum(np.sum(W @ x) for W in params[:n])


def alias_in_branches(params, x):
    if np.sum(x) > 0:
        layer = params["a"]
    else:
        layer = params["b"]
    return np.sum(layer["W"] * x)


def alias_changed_by_a_loop(params, x):
    layer = params["a"]
    for _ in range(2):
        x = x * layer["W"]
        layer = params["b"]
    return np.sum(x)


def enumerate_into_one_name(params, x):
    total = 0.0
    for pair in enumerate(params):
        total = total + np.sum(pair[1] @ x)
    return total


def zip_with_a_runtime_list(params, x, scales):
    total = 0.0
    for W, s in zip(params, scales):
        total = total + s * np.sum(W @ x)
    return total


def zip_strict_unequal(params, x):
    total = 0.0
    for A, B in zip(params, params[1:], strict=True):
        total = total + np.sum(A @ B @ x)
    return total


def with_star_args(*layers_and_x):
    return np.sum(layers_and_x[0][0] @ layers_and_x[1])


def whole_to_star_args(params, x):
    return with_star_args(params, x)


scaled_mlp = functools.partial(mlp, scale=3.0)


def whole_to_a_partial(params, x):
    return scaled_mlp(params, x)


def whole_to_numpy(params, x):
    return np.sum(np.asarray(params) @ x)


def first_of_first(items, x):
    return np.sum(items[0][0] @ x)


def runtime_container_in_a_display(params, x, extra):
    return first_of_first([params[0], extra], x)


REFUSED = [
    (loop_with_break, lambda: (square_weights(), X), "break/continue in a loop over a pytree"),
    (sliced_by_an_argument, lambda: (square_weights(), X, 2), "constant bounds"),
    (alias_in_branches, lambda: (two_branches(), X), "different paths"),
    (alias_changed_by_a_loop, lambda: (two_branches(), X), "different paths"),
    (enumerate_into_one_name, lambda: (square_weights(), X), "unpack the items of enumerate"),
    (zip_with_a_runtime_list, lambda: (square_weights(), X, [1.0, 2.0]), "a value srcad cannot"),
    (zip_strict_unequal, lambda: (square_weights(), X), r"zip\(strict=True\)"),
    (whole_to_star_args, lambda: (layers(), X), "passed whole to with_star_args"),
    (whole_to_a_partial, lambda: (layers(), X), "passed whole to"),
    (whole_to_numpy, lambda: (square_weights(), X), "used as a whole"),
]  # fmt: skip


@pytest.mark.parametrize(("f", "make", "message"), REFUSED, ids=[f.__name__ for f, *_ in REFUSED])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_refused(f, make, message, mode):
    args = make()
    with pytest.raises(srcad.TransformError, match=message):
        if mode == "rev":
            srcad.grad(f)(*args)
        else:
            tangent = srcad.pytree.tree_map(np.ones_like, args[0])
            srcad.jvp(f, args, (tangent, *[None] * (len(args) - 1)))


def test_a_container_in_place_of_a_leaf_is_refused_when_run():
    params, x = [(vec(3, 3), vec(3)), (vec(3, 3), vec(3))], vec(3)
    with pytest.raises(TypeError, match="another structure at run time"):
        srcad.grad(runtime_container_in_a_display)(params, x, (vec(2, 3), vec(2)))
