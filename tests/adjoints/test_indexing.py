"""Basic indexing reads: integers, negatives, slices, steps, None, multi-axis."""

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad


@pytest.mark.parametrize(
    "expr, shape",
    [
        ("x[0]", (3, 2)),
        ("x[-1]", (3, 2)),
        ("x[1:4]", (5,)),
        ("x[::2]", (5,)),
        ("x[::-1]", (5,)),
        ("x[:, 1]", (2, 3)),
        ("x[None, :]", (3,)),
        ("x[:, None] * x[None, :]", (3,)),
        ("x[..., 0]", (2, 3, 2)),
        ("x[1, 1:, ::2]", (2, 3, 4)),
        ("x[0] + x[1] * x[0]", (3, 2)),
        ("x[0, 0]", (2, 2)),
    ],
)
def test_static_index(expr, shape):
    check(expr, rand(*shape))


def test_index_from_variables():
    f = make_function("np.sum(x[n:m] ** 2) + x[k] * 2.0", "x, n, m, k")
    srcad.check_grad(f, rand(6), 1, 4, 5)


def test_index_with_integer_array_accumulates_repeats():
    f = make_function("np.sum(x[idx] ** 2)", "x, idx")
    x = rand(4)
    idx = np.array([0, 2, 2, 3])
    srcad.check_grad(f, x, idx)
    expected = np.zeros(4)
    np.add.at(expected, idx, 2 * x[idx])
    np.testing.assert_allclose(srcad.grad(f)(x, idx), expected)


def test_constant_fancy_index_with_repeats():
    check("x[(0, 0), :]", rand(2, 3))
    check("x[[0, 0, 1]]", rand(3))
    check("x[(1, 1, 0),]", rand(3))
    f = make_function("np.sum(x[(0, 0), :])", "x")
    np.testing.assert_allclose(srcad.grad(f)(np.ones((2, 3))), [[2.0] * 3, [0.0] * 3])


@pytest.mark.parametrize(
    "expr, args",
    [
        ("x[y:z] ** 2 * x[u]", (rand(6), 1, 4, 5)),
        ("x[y] ** 2", (rand(4), np.array([0, 2, 2, 3]))),
        ("x[y]", (rand(5), np.array([True, False, True, True, False]))),
    ],
)
def test_index_from_arguments(expr, args):
    # indices that are arguments: dynamic slices, repeated integers (accumulated), a mask
    check(expr, *args)


def test_boolean_mask():
    f = make_function("np.sum(x[mask] ** 2)", "x, mask")
    x = rand(5)
    mask = np.array([True, False, True, True, False])
    srcad.check_grad(f, x, mask)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "expr, shape",
    [
        ("np.take_along_axis(x, np.array([[0, 2, 2], [1, 1, 0]]), 1)", (2, 3)),
        ("np.take_along_axis(x, np.array([[0], [2], [1]]), axis=-1)", (3, 3)),
        ("np.take_along_axis(x, np.array([[1, 0, 1]]), 0)", (2, 3)),
        ("np.take_along_axis(x, np.array([[[1]], [[0]]]), axis=1)", (2, 3, 2)),
        ("np.take_along_axis(x, np.array([3, 0, 5, 5, -1]), None)", (2, 3)),
        ("np.take_along_axis(x, np.argsort(x, axis=0), axis=0)", (3, 2)),
    ],
)
def test_take_along_axis(expr, shape, dtype):
    tol = {} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(expr, rand(*shape).astype(dtype), **tol)


def test_take_along_axis_repeats_accumulate():
    f = make_function("np.sum(np.take_along_axis(x, np.array([[2, 2, 0]]), 1))", "x")
    np.testing.assert_allclose(srcad.grad(f)(np.ones((1, 3))), [[1.0, 0.0, 2.0]])
