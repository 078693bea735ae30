"""Reductions with axis and keepdims against central finite differences."""

import numpy as np
import pytest
from opcheck import check, rand

AXES = [
    ((4,), None),
    ((2, 3), None),
    ((2, 3), 0),
    ((2, 3), 1),
    ((2, 3), -1),
    ((2, 3, 4), (0, 2)),
]


@pytest.mark.parametrize("func", ["sum", "mean", "prod", "max", "min", "amax", "var", "std"])
@pytest.mark.parametrize("shape, axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction(func, shape, axis, keepdims):
    x = rand(*shape, low=0.5, high=2.0)
    check(f"np.{func}(x, axis={axis!r}, keepdims={keepdims})", x)


@pytest.mark.parametrize("method", ["sum", "mean", "max", "min", "std", "var", "prod"])
def test_methods(method):
    check(f"x.{method}()", rand(2, 3, low=0.5))
    check(f"x.{method}(axis=0)", rand(2, 3, low=0.5))


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_ddof(ddof):
    check(f"np.var(x, axis=1, ddof={ddof})", rand(3, 4))
    check(f"np.std(x, axis=0, ddof={ddof})", rand(3, 4))


def test_prod_with_zeros_is_exact():
    check("np.prod(x)", np.array([1.5, 0.0, 2.0]))
    check("np.prod(x, axis=1)", np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]]))


def test_max_ties_split_evenly():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.5, 2.0]])
    # the two-sided difference of a tie is a kink; check the convention directly
    from opcheck import make_function

    import srcad

    f = make_function("np.sum(np.max(x, axis=1))", "x")
    np.testing.assert_allclose(srcad.grad(f)(x), [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])


def test_sum_positional_axis():
    check("np.sum(x, 0)", rand(2, 3))
    check("np.mean(x, 1)", rand(2, 3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "expr, shape",
    [
        ("np.cumprod(x)", (2, 3)),
        ("np.cumprod(x, axis=1)", (2, 3)),
        ("np.cumprod(x, axis=0)", (3, 2)),
        ("np.cumprod(x, -1)", (2, 2, 3)),
        ("x.cumprod()", (4,)),
        ("x.cumprod(axis=1)", (2, 3, 2)),
    ],
)
def test_cumprod(expr, shape, dtype):
    tol = {} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(expr, rand(*shape, low=0.5, high=1.5).astype(dtype), **tol)
    check(expr, rand(*shape, seed=3).astype(dtype), **tol)


@pytest.mark.parametrize(
    "x",
    [
        [1.5, 0.0, 2.0, -1.0],
        [0.0, 1.5, 0.0, 2.0, 0.0, -1.0],
        [[1.5, 0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 3.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 0.0]],
    ],
)
def test_cumprod_with_zeros_is_exact(x):
    # first and second derivatives, without dividing by the zeros
    check("np.cumprod(x, axis=-1)", np.array(x))
    check("np.cumprod(x)", np.array(x))
