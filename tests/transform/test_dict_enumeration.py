"""Loops over a dict the function builds with constant keys, through enumerate, zip, list,
tuple, sorted, reversed and the dict's views (issue #17): the keys are known when
transforming, so the loop is unrolled and ``d[k]`` reads a constant key. Each form against
finite differences in both modes and at second order, its value against Python's, and
what stays refused."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])
W = np.array([2.0, -3.0])


def enumerate_keys(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for i, k in enumerate(d):
        s = s + (i + 1) * np.sum(np.sin(d[k]))
    return s


def enumerate_keys_view_with_start(x):
    d = {"a": np.cos(x), "b": x * x}
    s = 0.0
    for i, k in enumerate(d.keys(), 2):
        s = s + i * np.sum(d[k] * x)
    return s


def plain_keys(x):
    d = {"a": x, "b": np.sin(x)}
    s = 0.0
    for k in d:
        s = s + np.sum(d[k] ** 2)
    return s


def zip_with_an_array(x, w):
    d = {"a": x, "b": x * x}
    s = 0.0
    for k, wk in zip(d, w):
        s = s + wk * np.sum(d[k])
    return s


def zip_with_the_differentiated_array(x):
    d = {"p": np.sin(x), "q": np.exp(x)}
    s = 0.0
    for k, row in zip(d.keys(), x):  # x[0], x[1]: the shorter is the dict
        s = s + row * np.sum(d[k])
    return s


def zip_of_views_and_a_range(x):
    d = {"a": x, "b": np.tanh(x)}
    s = 0.0
    for j, (k, v) in zip(range(1, 3), d.items()):
        s = s + j * np.sum(v * d[k])
    return s


def enumerate_items(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for i, (k, v) in enumerate(d.items()):
        s = s + (i + len(k)) * np.sum(v * d[k])
    return s


def enumerate_values(x):
    d = {"a": x, "b": np.sin(x)}
    s = 0.0
    for i, v in enumerate(d.values()):
        s = s + (i + 1.0) * np.sum(v**2)
    return s


def sorted_keys(x):
    d = {"b": x, "a": np.cos(x)}
    s = 0.0
    for j, k in enumerate(sorted(d)):
        s = s + (j + 1) * np.sum(d[k])  # "a" first
    return s


def sorted_backwards_in_a_generator(x):
    d = {"a": x, "b": 2 * x, "c": np.sin(x)}
    weights = {"a": 1.0, "b": 2.0, "c": 3.0}
    return sum(weights[k] * np.sum(d[k] ** 2) for k in sorted(d, reverse=True))


def list_and_tuple_of_keys(x):
    d = {"b": x, "a": np.cos(x)}
    names = list(d.keys())
    s = np.sum(d["a"]) * len(names) + np.sum(d["b"]) * (names[0] == "b")
    for k in tuple(d):
        s = s + np.sum(d[k] * x)
    return s


def reversed_items(x):
    d = {"a": x, "b": x * x}
    s = 0.0
    for i, (k, v) in enumerate(reversed(d.items())):
        s = s + (i + 1) * np.sum(np.sin(v)) * (k == "a")
    return s


def sorted_items_and_reversed_keys(x):
    d = {"b": x, "a": np.cos(x)}
    s = 0.0
    for j, (k, v) in enumerate(sorted(d.items())):
        s = s + (j + 1) * np.sum(v * d[k])
    for j, k in enumerate(reversed(d)):
        s = s + (j + 3) * np.sum(np.sin(d[k]))
    return s


def update_each_key(x):
    d = {"a": x, "b": 2 * x}
    for k in d:
        d[k] = np.tanh(d[k])
    return np.sum(d["a"] * d["b"])


def live_view_sees_updates(x):
    # the values view reads "b" after the first turn changed it, as Python does
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for _k, v in d.items():
        d["b"] = d["b"] * v
        s = s + np.sum(v)
    return s + np.sum(d["b"])


def list_of_values_is_a_snapshot(x):
    # list() reads every value before the loop: the second turn sees the old "b"
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for v in list(d.values()):
        d["b"] = d["b"] * np.sin(v)
        s = s + np.sum(v)
    return s + np.sum(d["b"])


def nested_loops_over_one_dict(x):
    d = {"a": x, "b": np.sin(x)}
    s = 0.0
    for i, k in enumerate(d):
        for j, m in enumerate(d):
            s = s + (i + 2 * j + 1) * np.sum(d[k] * d[m])
    return s


def built_in_a_range_loop(x):
    s = 0.0
    for i in range(3):
        d = {"u": x[i], "v": x[(i + 1) % 3]}
        for n, k in enumerate(d):
            s = s + (n + 1) * d[k] * d["u"]
    return s


def inside_a_branch(x):
    d = {"a": x, "b": x * x}
    s = np.sum(x)
    if s > 0:
        for i, k in enumerate(d):
            s = s + i * np.sum(d[k])
    else:
        for k, c in zip(d, (3.0, 5.0)):
            s = s - c * np.sum(d[k])
    return s


def keys_stored_before_the_loop(x):
    d = {}
    d["a"] = x * 2.0
    d["b"] = np.cos(x)
    s = 0.0
    for i, k in enumerate(d):
        s = s + (i + 1) * np.sum(d[k] ** 2)
    return s * len(d.keys()) * ("a" in d.keys()) * ("z" not in d)


def membership_of_a_loop_key(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for k in ("a", "z", "b"):
        if k in d:
            s = s + np.sum(d[k] ** 2)
    return s


def literal_keys_enumerated(x):
    d = {"a": x, "b": np.sin(x)}
    s = 0.0
    for i, k in enumerate(("b", "a")):
        s = s + (i + 1) * np.sum(d[k])
    return s


def with_an_else_and_the_key_after(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for i, k in enumerate(d):
        s = s + i * np.sum(d[k])
    else:
        s = s * 2.0
    return s * len(k)  # k keeps its last value, as in Python


def empty_dict(x):
    d = {}
    s = np.sum(x)
    for i, k in enumerate(d):
        s = s + i * np.sum(d[k])
    return s


CASES = [
    (enumerate_keys, (X,)),
    (enumerate_keys_view_with_start, (X,)),
    (plain_keys, (X,)),
    (zip_with_an_array, (X, W)),
    (zip_with_an_array, (X, W[:1])),  # w is the shorter: one turn
    (zip_with_the_differentiated_array, (X,)),
    (zip_of_views_and_a_range, (X,)),
    (enumerate_items, (X,)),
    (enumerate_values, (X,)),
    (sorted_keys, (X,)),
    (sorted_backwards_in_a_generator, (X,)),
    (list_and_tuple_of_keys, (X,)),
    (reversed_items, (X,)),
    (sorted_items_and_reversed_keys, (X,)),
    (update_each_key, (X,)),
    (live_view_sees_updates, (X,)),
    (list_of_values_is_a_snapshot, (X,)),
    (nested_loops_over_one_dict, (X,)),
    (built_in_a_range_loop, (X,)),
    (inside_a_branch, (X,)),
    (inside_a_branch, (-X,)),
    (keys_stored_before_the_loop, (X,)),
    (membership_of_a_loop_key, (X,)),
    (literal_keys_enumerated, (X,)),
    (with_an_else_and_the_key_after, (X,)),
    (empty_dict, (X,)),
]
IDS = [f"{f.__name__}-{len(a[-1])}" for f, a in CASES]


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_first_order_in_both_modes(f, args):
    value, _ = srcad.value_and_grad(f)(*args)
    assert np.isclose(value, f(*args), rtol=1e-12)
    assert srcad.check_grad(f, *args, modes=("rev", "fwd")) < 1e-6


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_second_order_in_both_modes(f, args):
    assert srcad.check_grad(f, *args, order=2, modes=("rev", "fwd")) < 1e-5


def test_the_loop_is_unrolled_with_constant_keys():
    text = srcad.source(srcad.grad(enumerate_keys))
    assert "for " not in text and "d_a" in text and "d_b" in text


def test_values_known_by_hand():
    # (i + 1) * sum(sin(d[k])): 1 * sin(x) + 2 * sin(2x)
    g = srcad.grad(enumerate_keys)(X)
    np.testing.assert_allclose(g, np.cos(X) + 4 * np.cos(2 * X), rtol=1e-12)
    # the live view: v_b = 2x * x, d["b"] = 2x * x * (2x * x)
    g = srcad.grad(live_view_sees_updates)(X)
    np.testing.assert_allclose(g, 1 + 4 * X + 16 * X**3, rtol=1e-12)


# ---- a literal display is evaluated before its loop (loops.py) ----


def display_read_by_the_body(x):
    # Python evaluates (s, 2.0 * s) once: the second item is 2x, not 2 * (the new s)
    s = x
    for v in (s, 2.0 * s):
        s = s + v
    return np.sum(s * s)


def test_a_literal_display_is_evaluated_before_the_loop():
    # (it was unrolled reading the body's new s: value and gradient silently wrong)
    value, g = srcad.value_and_grad(display_read_by_the_body)(X)
    np.testing.assert_allclose(value, np.sum(16 * X * X), rtol=1e-12)
    np.testing.assert_allclose(g, 32 * X, rtol=1e-12)
    assert srcad.check_grad(display_read_by_the_body, X, order=2, modes=("rev", "fwd")) < 1e-5


# ---- refused ------------------------------------------------------------------------------


def variable_keys(x, name):
    d = {name: x, "b": 2 * x}
    s = 0.0
    for i, k in enumerate(d):
        s = s + i * np.sum(d[k])
    return s


def break_in_the_loop(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for k in sorted(d):
        if k == "b":
            break
        s = s + np.sum(d[k])
    return s


def new_key_while_looping(x):
    d = {"a": x, "b": 2 * x}
    for k in d:
        d["c"] = d[k]
    return np.sum(d["a"])


def keys_depend_on_the_path(x):
    d = {"a": x}
    if x[0] > 0:
        d["b"] = x * 2.0
    s = 0.0
    for i, k in enumerate(d):
        s = s + i * np.sum(d[k])
    return s


def keys_kept_in_a_name(x):
    d = {"a": x, "b": 2 * x}
    names = sorted(d)
    s = 0.0
    for k in names:  # a list the loop runs over: not written out
        s = s + np.sum(d[k])
    return s


def values_outside_a_loop(x):
    # (refused until stop 27: the values are written out where a call takes them)
    d = {"a": x, "b": 2 * x}
    return np.sum(np.stack(list(d.values())))


def test_values_passed_to_a_call_are_written_out():
    srcad.check_grad(values_outside_a_loop, X, modes=("rev", "fwd"))


def sorted_values(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for v in sorted(d.values()):
        s = s + np.sum(v)
    return s


# a dict never changed that srcad cannot follow is left a dict (a dict of options passed
# on works): one holding differentiable values is then refused where it is built, or where
# it is used (reverse mode meets the use first, forward mode the dict)
CONTAINER = "building a container of differentiable values"
REFUSED = [
    (variable_keys, CONTAINER, {2}),
    (break_in_the_loop, "break/continue in a loop over a dict", {4}),
    (new_key_while_looping, "the key 'c' is new", {4}),
    (keys_depend_on_the_path, "depend on the path taken", {6}),
    (keys_kept_in_a_name, CONTAINER, {2}),
    (sorted_values, rf"no adjoint rule for method \.values\(\)|{CONTAINER}", {2, 4}),
]


@pytest.mark.parametrize("f, message, lines", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_refused_with_file_and_line(f, message, lines, mode):
    args = (X, "a") if f is variable_keys else (X,)
    with pytest.raises(srcad.TransformError, match=message) as info:
        if mode == "rev":
            srcad.grad(f)(*args)
        else:
            srcad.jvp(f, args, (X,) + (None,) * (len(args) - 1))
    first = f.__code__.co_firstlineno
    places = [f"test_dict_enumeration.py:{first + line - 1}:" for line in lines]
    assert any(p in str(info.value) for p in places), str(info.value)
