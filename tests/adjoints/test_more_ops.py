"""Matrix functions, cumulative sums, flips, rolls, triangles, diagonals."""

import numpy as np
import pytest
from opcheck import check, rand


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
    from opcheck import make_function

    import srcad

    f = make_function("np.sum(np.linalg.cholesky(x))", "x")
    g = srcad.grad(f)(spd(3))
    assert np.all(g[np.triu_indices(3, 1)] == 0) and np.all(g[np.tril_indices(3)] != 0)


def test_pinv_hermitian_is_a_clear_error():
    # with hermitian=True NumPy reads one triangle only: a derivative srcad does not have
    from opcheck import make_function

    import srcad

    f = make_function("np.sum(np.linalg.pinv(x, hermitian=True))", "x")
    with pytest.raises(srcad.TransformError, match="hermitian"):
        srcad.grad(f)(spd(3))
