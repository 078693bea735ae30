"""Matrix functions, cumulative sums, flips, rolls, triangles, diagonals."""

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad


def well_conditioned(n, seed=0):
    return rand(n, n, seed=seed) * 0.3 + np.eye(n) * 2.0


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.linalg.inv(x)", (well_conditioned(3),)),
        ("np.linalg.inv(x)", (np.stack([well_conditioned(2), well_conditioned(2, 1)]),)),
        ("np.linalg.solve(x, y)", (well_conditioned(3), rand(3, seed=2))),
        ("np.linalg.solve(x, y)", (well_conditioned(3), rand(3, 2, seed=2))),
        ("np.linalg.det(x)", (well_conditioned(3),)),
        ("np.linalg.det(x)", (np.stack([well_conditioned(2), well_conditioned(2, 1)]),)),
        ("np.linalg.norm(x)", (rand(4),)),
        ("np.linalg.norm(x)", (rand(2, 3),)),
        ("np.trace(x)", (rand(3, 3),)),
        ("np.trace(x)", (rand(2, 3),)),
        ("np.cumsum(x)", (rand(2, 3),)),
        ("np.cumsum(x, axis=1)", (rand(2, 3),)),
        ("x.cumsum(axis=0)", (rand(3, 2),)),
        ("np.flip(x)", (rand(2, 3),)),
        ("np.flip(x, axis=1)", (rand(2, 3),)),
        ("np.roll(x, 2)", (rand(5),)),
        ("np.roll(x, -1, axis=0)", (rand(3, 2),)),
        ("np.triu(x)", (rand(3, 3),)),
        ("np.tril(x, -1)", (rand(3, 4),)),
        ("np.diag(x)", (rand(3),)),
        ("np.diag(x)", (rand(3, 3),)),
        ("np.diag(x, 1)", (rand(3, 4),)),
    ],
)
def test_against_finite_differences(expr, args):
    check(expr, *args, rtol=1e-4)


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.arcsinh(x)", (rand(3),)),
        ("np.arccosh(x)", (rand(3, low=1.5, high=3.0),)),
        ("np.arctanh(x)", (rand(3, low=-0.8, high=0.8),)),
        ("np.exp2(x)", (rand(3),)),
        ("np.cbrt(x)", (rand(3, low=0.5, high=2.0),)),
        ("np.reciprocal(x)", (rand(3, low=0.5, high=2.0),)),
        ("np.fabs(x)", (rand(3),)),
        ("np.deg2rad(x) + np.rad2deg(x)", (rand(3),)),
        ("np.hypot(x, y)", (rand(3), rand(2, 3, seed=1))),
        ("np.arctan2(x, y)", (rand(3), rand(3, low=0.5, high=2.0, seed=1))),
        ("np.logaddexp(x, y)", (rand(2, 3), rand(3, seed=1))),
        ("np.sort(x)", (rand(5),)),
        ("np.sort(x, axis=0)", (rand(3, 2),)),
        ("np.repeat(x, 3)", (rand(2, 2),)),
        ("np.repeat(x, 2, axis=1)", (rand(2, 3),)),
        # a count per element, or one in a list (a TypeError in reverse mode until stop 31)
        ("np.repeat(x, [1, 2, 0])", (rand(3),)),
        ("np.repeat(x, [2])", (rand(3),)),
        ("np.repeat(x, np.array([1, 0, 2]), axis=1)", (rand(2, 3),)),
        ("np.repeat(x, (3, 1), axis=0)", (rand(2, 3),)),
        ("np.repeat(x, np.array(2))", (rand(2, 2),)),
        ("np.tile(x, 3)", (rand(2),)),
        ("np.tile(x, (2, 1, 2))", (rand(2, 3),)),
        ("np.pad(x, 1)", (rand(2, 3),)),
        ("np.pad(x, ((0, 1), (2, 0)))", (rand(2, 3),)),
        ("np.take(x, [0, 2, 2])", (rand(2, 3),)),
        ("np.take(x, [1, 1, 0], axis=1)", (rand(2, 3),)),
    ],
)
def test_more_elementwise_and_shape_ops(expr, args):
    check(expr, *args, rtol=1e-4)


def spd(n, seed=0, batch=()):
    """A well-conditioned symmetric positive definite matrix (or stack of them)."""
    a = rand(*batch, n, n, seed=seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.linalg.cholesky(x)", (spd(1),)),
        ("np.linalg.cholesky(x)", (spd(3),)),
        ("np.linalg.cholesky(x)", (spd(2, batch=(3,)),)),
        # A built inside: the symmetric upper half varies with the lower one
        ("np.linalg.cholesky(x @ x.T + 3 * np.eye(3))", (rand(3, 3),)),
        ("np.linalg.pinv(x)", (rand(3, 2),)),
        ("np.linalg.pinv(x)", (rand(2, 4),)),
        ("np.linalg.pinv(x)", (well_conditioned(3),)),
        ("np.linalg.pinv(x)", (rand(2, 3, 2),)),
        ("np.linalg.pinv(x, rcond=1e-10)", (rand(3, 2),)),
        ("np.diagonal(x)", (rand(3, 3),)),
        ("np.diagonal(x, 1)", (rand(3, 4),)),
        ("np.diagonal(x, -1, 0, 2)", (rand(3, 2, 4),)),
        ("x.diagonal()", (rand(2, 3),)),
    ],
)
def test_matrix_functions(expr, args, dtype):
    args = tuple(a.astype(dtype) for a in args)
    tol = {"rtol": 1e-4} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(expr, *args, **tol)


def test_cholesky_reads_the_lower_triangle():
    # NumPy ignores the strict upper triangle: its gradient there is zero
    f = make_function("np.sum(np.linalg.cholesky(x))", "x")
    g = srcad.grad(f)(spd(3))
    assert np.all(g[np.triu_indices(3, 1)] == 0) and np.all(g[np.tril_indices(3)] != 0)


def test_pinv_hermitian_is_a_clear_error():
    # with hermitian=True NumPy reads one triangle only: a derivative srcad does not have
    f = make_function("np.sum(np.linalg.pinv(x, hermitian=True))", "x")
    with pytest.raises(srcad.TransformError, match="hermitian"):
        srcad.grad(f)(spd(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.logaddexp2(x, y)", (rand(2, 3), rand(3, seed=1))),
        ("np.fmax(x, y)", (rand(2, 3), rand(3, seed=1))),
        ("np.fmin(x, y)", (rand(3), rand(2, 3, seed=1))),
        ("np.sinc(x)", (rand(2, 3),)),
        ("np.sinc(x)", (np.array([0.0, 0.5, -1.5]),)),
        # around the switch to the Taylor series near 0
        ("np.sinc(x)", (np.array([0.005, -0.009, 0.011, -0.012, 1e-7]),)),
        ("np.nan_to_num(x)", (rand(3),)),
        ("np.real(x) + np.real_if_close(x)", (rand(3),)),
        ("np.conj(x) * x.conj() + x.conjugate()", (rand(2, 3),)),
    ],
)
def test_more_elementwise(expr, args, dtype):
    args = tuple(a.astype(dtype) for a in args)
    tol = {"rtol": 1e-4} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(expr, *args, **tol)


def test_fmax_fmin_nan_loses():
    # the number wins over a NaN, and gets the whole gradient
    nan = np.array([1.0, np.nan, -0.5])
    check("np.fmax(x, y)", rand(3), nan, wrt=(0,))
    check("np.fmin(y, x)", rand(3), nan, wrt=(0,))
    f = make_function("np.sum(np.fmax(x, y))", "x, y")
    gx, gy = srcad.grad(f, wrt=(0, 1))(np.array([1.0, 2.0, 3.0]), np.array([np.nan, 2.0, 0.0]))
    np.testing.assert_array_equal(gx, [1.0, 0.5, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 0.5, 0.0])


def test_nan_to_num_replaced_entries_have_no_gradient():
    f = make_function("np.sum(np.nan_to_num(x) * 3.0)", "x")
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
    np.testing.assert_array_equal(srcad.grad(f)(x), [3.0, 0.0, 0.0, 0.0, 3.0])
    _, tangent = srcad.jvp(make_function("np.nan_to_num(x)", "x"), (x,), (np.ones(5),))
    np.testing.assert_array_equal(tangent, [1.0, 0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "expr, shape",
    [
        ("np.linalg.norm(x, axis=1)", (2, 3)),
        ("np.linalg.norm(x, axis=0, keepdims=True)", (2, 3)),
        ("np.linalg.norm(x, axis=(0, 2))", (2, 3, 2)),
        ("np.linalg.norm(x, axis=-1, keepdims=True)", (2, 2, 3)),
    ],
)
def test_norm_along_axes(expr, shape, dtype):
    tol = {} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(expr, rand(*shape).astype(dtype), **tol)


def test_the_two_norm_differentiates_to_third_order():
    # (the other orders, tested in test_numpy_breadth.py, stop at the second)
    f = make_function("np.linalg.norm(x * V + W)", "x", {"V": rand(3), "W": rand(3, seed=1)})
    g2, g3 = srcad.grad(srcad.grad(f)), srcad.grad(srcad.grad(srcad.grad(f)))
    np.testing.assert_allclose(g3(0.4), (g2(0.4 + 1e-5) - g2(0.4 - 1e-5)) / 2e-5, rtol=1e-5)
