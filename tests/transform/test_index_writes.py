"""Index writes whose index may select an element twice (issue #16): NumPy keeps the last
write of an element, so only that write gets a gradient; ``y[idx] op= v`` is
``y[idx] = y[idx] op v`` (each element updated once, by its last occurrence)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import srcad
from srcad.runtime.inplace import overwritten, surviving

X3 = np.array([0.3, -0.7, 1.1])
W3 = np.array([1.0, 2.0, 3.0])
RNG = np.random.default_rng(16)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


# ---- the reproductions of the issue, with the gradients NumPy's semantics give ----


def repeated_write(x):
    y = np.zeros(2)
    y[[0, 0]] = x[:2]
    return np.sum(y * np.array([1.0, 2.0]))


def repeated_add(x):
    y = np.zeros(2)
    idx = np.array([0, 0, 1])
    y[idx] += x
    return np.sum(y * np.array([1.0, 2.0]))


def negative_alias(x):
    y = np.zeros(3)
    y[[0, -3]] = x[:2]
    return np.sum(y * np.array([1.0, 2.0, 3.0]))


REPRODUCTIONS = [
    (repeated_write, [0.0, 1.0, 0.0]),
    (repeated_add, [0.0, 1.0, 2.0]),
    (negative_alias, [0.0, 1.0, 0.0]),
]


@pytest.mark.parametrize("fn, expected", REPRODUCTIONS, ids=[r[0].__name__ for r in REPRODUCTIONS])
def test_reproductions_reverse(fn, expected):
    np.testing.assert_allclose(srcad.grad(fn)(X3.copy()), expected)
    _, pullback = srcad.vjp(fn, X3.copy())
    np.testing.assert_allclose(pullback(1.0)[0], expected)


@pytest.mark.parametrize("fn, expected", REPRODUCTIONS, ids=[r[0].__name__ for r in REPRODUCTIONS])
def test_reproductions_forward(fn, expected):
    for k in range(3):
        tangent = np.eye(3)[k]
        _, derivative = srcad.jvp(fn, (X3.copy(),), (tangent,))
        np.testing.assert_allclose(derivative, expected[k])


# ---- more shapes of the class: augmented ops, 2-d and mixed fancy indices, run-time indices


def subtract_repeated(x):
    y = x**2
    idx = np.array([2, 0, 2, -1])
    y[idx] -= x[[0, 1, 2, 0]] ** 3
    return np.sum(y * y * W3)


def multiply_repeated(x):
    y = np.sin(x)
    idx = np.array([1, 1, 0])
    y[idx] *= x
    return np.sum(y * y * W3)


def divide_repeated(x):
    y = np.cos(x)
    idx = np.array([1, -2, 0])
    y[idx] /= x + 3.0
    return np.sum(y * y * W3)


def literal_list_add(x):
    y = x * 2.0
    y[[0, 0]] += x[:2] ** 2
    return np.sum(y * y * W3)


def scalar_to_repeats(x):
    y = x * 1.0
    y[[0, 0]] = 2.0 * x[1]
    return np.sum(y * y * W3)


def rows_repeated(x):
    y = np.zeros((2, 3))
    y[[1, 1]] = x
    return np.sum(y * y * np.array([[1.0], [2.0]]) * W3)


def pairs_repeated(a):
    y = a * 2.0
    y[[0, 1, 0], [2, 2, -1]] = a[0] ** 2
    return np.sum(y * y)


def rows_and_slice(a):
    y = a * 2.0
    y[[1, -1, 0], :] = a[[0, 1, 1]] ** 2
    return np.sum(y * y * W3)


def columns_repeated(a):
    y = a * 2.0
    y[:, [2, 0, -1]] = a**3
    return np.sum(y * y * W3)


def broadcast_index_arrays(a):
    y = a * 1.0
    r = np.array([[0, 1], [0, 1]])
    c = np.array([[1, 1], [1, 1]])
    y[r, c] = a[:, :2] ** 2
    return np.sum(y * y * W3)


def repeated_rows_then_slice(a):
    y = a * 1.0
    y[[0, 0], 1:] = a[:, :2] ** 2
    return np.sum(y * y * W3)


def index_computed_at_run_time(x):
    y = x * 1.0
    idx = np.argsort(x) % 2
    y[idx] = x**2
    return np.sum(y * y * W3)


def index_from_names(x):
    y = x * 1.0
    i = 2
    y[[i, i - 3]] = x[:2] ** 2
    return np.sum(y * y * W3)


def repeated_writes_in_a_loop(x):
    y = x * 1.0
    for i in range(3):
        y[[i, 0]] = x[[i, 2]] * y[[1, 2]]
    return np.sum(y * y * W3)


def mask_write(x):
    y = x * 2.0
    y[x > 0] = x[x > 0] ** 2
    return np.sum(y * y * W3)


def repeated_read(x):
    return np.sum(x[[0, 0, 2]] ** 2 * W3)


A = vec(2, 3)
CASES = [
    (subtract_repeated, X3),
    (multiply_repeated, X3),
    (divide_repeated, X3),
    (literal_list_add, X3),
    (scalar_to_repeats, X3),
    (rows_repeated, X3),
    (pairs_repeated, A),
    (rows_and_slice, A),
    (columns_repeated, A),
    (broadcast_index_arrays, A),
    (repeated_rows_then_slice, A),
    (index_computed_at_run_time, X3),
    (index_from_names, X3),
    (repeated_writes_in_a_loop, X3),
    (mask_write, X3),
    (repeated_read, X3),
]


@pytest.mark.parametrize("fn, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_both_modes_against_finite_differences(fn, x):
    srcad.check_grad(fn, x.copy(), modes=("rev", "fwd"))


SECOND_ORDER = [
    scalar_to_repeats,
    rows_repeated,
    pairs_repeated,
    rows_and_slice,
    columns_repeated,
    broadcast_index_arrays,
    index_computed_at_run_time,
    repeated_read,
]


@pytest.mark.parametrize("fn", SECOND_ORDER, ids=[f.__name__ for f in SECOND_ORDER])
def test_second_order(fn):
    x = dict(CASES)[fn]
    srcad.check_grad(fn, x.copy(), modes=("rev", "fwd"), order=2)


def test_hessian_of_a_repeated_write():
    def f(x):
        y = x * 1.0
        y[[1, 1, -1]] = x**2
        return np.sum(y * y)

    # y = [x0, x1**2, x2**2]: the write of x0**2 to y[1] is overwritten
    expected = np.diag([2.0, 12 * X3[1] ** 2, 12 * X3[2] ** 2])
    np.testing.assert_allclose(srcad.hessian(f)(X3.copy()), expected)


def test_hessian_of_a_slice_write():
    def f(x):
        y = x * 1.0
        y[1:] = x[:2] ** 2
        return np.sum(y * y * W3)

    # y = [x0, x0**2, x1**2]; forward over reverse once saw the tangent the update changed
    expected = np.diag([2 + 24 * X3[0] ** 2, 36 * X3[1] ** 2, 0.0])
    np.testing.assert_allclose(srcad.hessian(f)(X3.copy()), expected)


def test_forward_mode_leaves_the_tangent_alone():
    def f(x):
        y = x * 1.0
        y[1:] = x[:2] ** 2
        return np.sum(y * y * W3)

    tangent = np.array([1.0, 0.0, 0.0])
    _, derivative = srcad.jvp(f, (X3.copy(),), (tangent,))
    np.testing.assert_array_equal(tangent, [1.0, 0.0, 0.0])
    assert derivative == pytest.approx(2 * X3[0] + 8 * X3[0] ** 3)


@pytest.mark.parametrize("f", [subtract_repeated, multiply_repeated])
def test_second_order_through_a_restored_update(f):
    # the backward pass puts back what the update overwrote, in place; differentiated
    # again, that is an update like the user's own (was refused, issue #17)
    srcad.check_grad(f, X3.copy(), order=2, modes=("fwd", "rev"))


def test_inputs_are_never_mutated():
    x, tangent = X3.copy(), np.ones(3)
    srcad.grad(repeated_writes_in_a_loop)(x)
    srcad.jvp(repeated_writes_in_a_loop, (x,), (tangent,))
    np.testing.assert_array_equal(x, X3)
    np.testing.assert_array_equal(tangent, np.ones(3))


# ---- the write is decided statically where it can be: unique indices stay plain ----


def slice_and_loop_writes(x):
    y = x * 1.0
    y[1:] = x[:2] ** 2
    for i in range(2):
        y[i, ...] = y[i + 1] * x[len(x) - 1 - i]
    return np.sum(y * y)


def test_unique_indices_keep_the_plain_update():
    text = srcad.source(slice_and_loop_writes)
    assert "setitem(" in text
    assert "scatter" not in text and "surviving" not in text
    srcad.check_grad(slice_and_loop_writes, X3.copy(), modes=("rev", "fwd"))


def test_index_arrays_get_the_repeat_aware_update():
    text = srcad.source(repeated_add)
    assert "scatter(" in text and "surviving(" in text


# ---- the runtime helper ----


@pytest.mark.parametrize(
    "index, shape, expected",
    [
        ([0, -3], (3,), [True, False]),
        (np.array([2, 0, 2, -1]), (3,), [True, False, True, False]),
        (np.array([[1, 1], [0, 1]]), (2,), [[True, True], [False, False]]),
        (([0, 1, 0], [2, 2, -1]), (2, 3), [True, False, False]),
        ((slice(None), [0, 0]), (2, 2), [[True, False], [True, False]]),
    ],
)
def test_overwritten(index, shape, expected):
    lost = overwritten(index, shape)
    target = np.zeros(shape)[index]
    np.testing.assert_array_equal(
        np.broadcast_to(lost, target.shape), np.broadcast_to(expected, target.shape)
    )


@pytest.mark.parametrize(
    "index",
    [1, slice(0, 2), (0, slice(None)), np.array([True, False, True]), [2, 0, 1], ..., None],
)
def test_overwritten_is_none_when_nothing_repeats(index):
    assert overwritten(index, (3,)) is None


def test_surviving_keeps_only_the_last_write():
    g = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(surviving(g[[2, 0, -1]], [2, 0, -1], g), [0.0, 10.0, 30.0])


# ---- properties: random index arrays with repeats and negative entries ----


def write_1d(x, idx, w):
    y = np.cos(x)
    y[idx] = np.sin(x[: idx.shape[0]]) * 2.0
    return np.sum(y * y * w)


def add_1d(x, idx, w):
    y = np.cos(x)
    y[idx] += x[: idx.shape[0]] ** 2
    return np.sum(y * y * w)


def subtract_1d(x, idx, w):
    y = np.cos(x)
    y[idx] -= np.sin(x[: idx.shape[0]])
    return np.sum(y * y * w)


def multiply_1d(x, idx, w):
    y = np.cos(x)
    y[idx] *= x[: idx.shape[0]] + 2.0
    return np.sum(y * y * w)


def divide_1d(x, idx, w):
    y = np.cos(x)
    y[idx] /= x[: idx.shape[0]] ** 2 + 1.0
    return np.sum(y * y * w)


def write_rows(a, rows, w):
    y = np.cos(a)
    y[rows] = a[: rows.shape[0]] ** 2
    return np.sum(y * y * w)


def write_pairs(a, rows, w):
    y = np.cos(a)
    y[rows, rows[::-1]] = a[0, : rows.shape[0]] ** 3
    return np.sum(y * y * w)


def add_pairs(a, rows, w):
    y = np.tanh(a)
    y[rows[::-1], rows] += a[1, : rows.shape[0]] ** 2
    return np.sum(y * y * w)


def write_columns_after_slice(a, cols, w):
    y = np.tanh(a)
    y[1:, cols] = a[1:, : cols.shape[0]] * 3.0
    return np.sum(y * y * w)


N = 4
INDICES = st.lists(st.integers(-N, N - 1), min_size=1, max_size=N).map(np.array)
SEEDS = st.integers(0, 2**16)


def _values(seed, shape):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, size=shape), rng.uniform(0.5, 2.0, size=shape)


@given(
    fn=st.sampled_from([write_1d, add_1d, subtract_1d, multiply_1d, divide_1d]),
    idx=INDICES,
    seed=SEEDS,
)
def test_random_index_arrays_1d(fn, idx, seed):
    x, w = _values(seed, (N,))
    srcad.check_grad(fn, x, idx, w, modes=("rev", "fwd"))


@given(
    fn=st.sampled_from([write_rows, write_pairs, add_pairs, write_columns_after_slice]),
    idx=INDICES,
    seed=SEEDS,
)
def test_random_index_arrays_2d(fn, idx, seed):
    a, w = _values(seed, (N, N))
    srcad.check_grad(fn, a, idx, w, modes=("rev", "fwd"))


@settings(max_examples=20)
@given(fn=st.sampled_from([write_1d, write_rows, write_pairs]), idx=INDICES, seed=SEEDS)
def test_random_index_arrays_second_order(fn, idx, seed):
    shape = (N,) if fn is write_1d else (N, N)
    x, w = _values(seed, shape)
    srcad.check_grad(fn, x, idx, w, modes=("rev", "fwd"), order=2)
