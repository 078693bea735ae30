"""Issue #17's library breadth, one table: every NumPy/SciPy op the issue names, at a few
shapes and options, through ``srcad.check_grad`` in reverse and forward mode and at second
order (``sum(W * op(...) ** 2)``, so the gradient flowing into each rule varies), plus the
jvp of the op's own (array) result; each against central finite differences in float64.
np.fft and complex numbers have their own tests (test_fft.py, tests/test_complex.py)."""

import numpy as np
import pytest
from opcheck import check, check_jvp, make_function, rand

import srcad

pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402,F401
import scipy.signal  # noqa: E402,F401
import scipy.special  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401

RNG = np.random.default_rng(1717)
POS = dict(low=0.5, high=2.5)
UNIT = dict(low=0.1, high=0.9)


def spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def well(n, seed=0, batch=()):
    return rand(*batch, n, n, seed=seed) * 0.3 + np.eye(n)


def sym_distinct(n, seed=0):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return q @ np.diag(np.arange(1.0, n + 1) * 1.7) @ q.T


def real_eig(n, seed=0):
    """A non-symmetric matrix with real, well separated eigenvalues."""
    p = np.random.default_rng(seed).normal(size=(n, n)) * 0.3 + np.eye(n)
    return p @ np.diag(np.arange(1.0, n + 1) * 1.3) @ np.linalg.inv(p)


def upper(n, seed=0):
    return np.triu(rand(n, n, seed=seed)) + 3 * np.eye(n)


def simplex(k, n=None, seed=0):
    x = rand(*((k,) if n is None else (k, n)), seed=seed, **POS)
    return x / x.sum(axis=0)


# (id, expression of x, y, z, ..., arguments, options: order, rtol, wrt)
CASES = [
    # ---- scipy.special ----
    ("logsumexp", "scipy.special.logsumexp(x)", (rand(3, 4),), {}),
    ("logsumexp-axis", "scipy.special.logsumexp(x, axis=1)", (rand(3, 4),), {}),
    ("logsumexp-b", "scipy.special.logsumexp(x, axis=0, b=y)", (rand(3, 4), rand(3, 4, **POS)), {}),
    ("logsumexp-keepdims", "scipy.special.logsumexp(x, axis=-1, keepdims=True)", (rand(2, 3),), {}),
    *[
        (name, f"scipy.special.{name}(x)", (rand(2, 3, **dom),), {})
        for name, dom in [
            ("expit", {}),
            ("logit", UNIT),
            ("erf", {}),
            ("erfc", {}),
            ("erfinv", dict(low=-0.8, high=0.8)),
            ("gammaln", POS),
            ("digamma", POS),
            ("gamma", POS),
            ("ndtr", {}),
            ("log_ndtr", {}),
        ]
    ],
    ("polygamma", "scipy.special.polygamma(1, x)", (rand(2, 3, **POS),), {}),
    ("betaln", "scipy.special.betaln(x, y)", (rand(3, **POS), rand(3, seed=1, **POS)), {}),
    ("xlogy", "scipy.special.xlogy(x, y)", (rand(3), rand(3, seed=1, **POS)), {}),
    ("xlog1py", "scipy.special.xlog1py(x, y)", (rand(3), rand(3, seed=1, **POS)), {}),
    ("softmax", "scipy.special.softmax(x, axis=1)", (rand(2, 3),), {}),
    ("log_softmax", "scipy.special.log_softmax(x, axis=0)", (rand(2, 3),), {}),
    # ---- scipy.stats ----
    (
        "norm.logpdf",
        "scipy.stats.norm.logpdf(x, y, z)",
        (rand(3), rand(3, seed=1), rand(3, **POS)),
        {},
    ),
    ("norm.pdf", "scipy.stats.norm.pdf(x, loc=y)", (rand(3), 0.3), {}),
    ("norm.cdf", "scipy.stats.norm.cdf(x, scale=y)", (rand(3), 1.3), {}),
    ("norm.logcdf", "scipy.stats.norm.logcdf(x)", (rand(3),), {}),
    ("t.logpdf", "scipy.stats.t.logpdf(x, y)", (rand(3), 3.5), {}),
    ("t.pdf", "scipy.stats.t.pdf(x, 4.0, y)", (rand(3), 0.2), {}),
    ("t.cdf", "scipy.stats.t.cdf(x, 4.0)", (rand(3),), {}),
    ("poisson.logpmf", "scipy.stats.poisson.logpmf(3, x)", (rand(3, **POS),), {}),
    ("poisson.cdf", "scipy.stats.poisson.cdf(2, x)", (rand(3, **POS),), {}),
    ("gamma.logpdf", "scipy.stats.gamma.logpdf(x, y)", (rand(3, **POS), 2.5), {}),
    ("gamma.cdf", "scipy.stats.gamma.cdf(x, 2.5)", (rand(3, **POS),), {}),
    ("beta.logpdf", "scipy.stats.beta.logpdf(x, y, 2.0)", (rand(3, **UNIT), 1.5), {}),
    ("beta.pdf", "scipy.stats.beta.pdf(x, 2.0, 3.0)", (rand(3, **UNIT),), {}),
    (
        "dirichlet.logpdf",
        "scipy.stats.dirichlet.logpdf(x, y)",
        (simplex(3), rand(3, **POS) + 1),
        dict(wrt=(1,)),
    ),
    (
        "mvn.logpdf",
        "scipy.stats.multivariate_normal.logpdf(x, y, z)",
        (rand(4, 3), rand(3, seed=1), spd(3)),
        {},
    ),
    (
        "mvn.pdf",
        "scipy.stats.multivariate_normal.pdf(x, y, z)",
        (rand(3), rand(3, seed=1), spd(3)),
        {},
    ),
    ("mvn.logpdf-defaults", "scipy.stats.multivariate_normal.logpdf(x)", (rand(3),), {}),
    (
        "mvn.logpdf-mean-only",
        "scipy.stats.multivariate_normal.logpdf(x, y)",
        (rand(4, 3), rand(3, seed=1)),
        {},
    ),
    (
        "mvn.logpdf-scalar-cov",
        "scipy.stats.multivariate_normal.logpdf(x, y, z)",
        (rand(4, 3), rand(3, seed=1), 1.7),
        {},
    ),
    (
        "mvn.logpdf-1d-cov",
        "scipy.stats.multivariate_normal.logpdf(x, y, z)",
        (rand(4, 3), rand(3, seed=1), rand(3, **POS)),
        {},
    ),
    (
        "mvn.pdf-1d-cov",
        "scipy.stats.multivariate_normal.pdf(x, y, cov=z)",
        (rand(3), rand(3, seed=1), rand(3, **POS)),
        {},
    ),
    (
        "mvn.logpdf-1d-scalar-cov",
        "scipy.stats.multivariate_normal.logpdf(x, cov=y)",
        (rand(4), 1.5),
        {},
    ),
    (
        "mvn.logpdf-cov-only",
        "scipy.stats.multivariate_normal.logpdf(x, cov=y)",
        (rand(4, 3), spd(3)),
        {},
    ),
    # ---- scipy.linalg and scipy.signal ----
    (
        "cho_solve(cho_factor)",
        "scipy.linalg.cho_solve(scipy.linalg.cho_factor(x), y)",
        (spd(3), rand(3, 2)),
        {},
    ),
    ("solve_triangular", "scipy.linalg.solve_triangular(x, y)", (upper(3), rand(3, 2)), {}),
    (
        "solve_triangular-lower-trans",
        "scipy.linalg.solve_triangular(x, y, trans=1, lower=True)",
        (np.ascontiguousarray(upper(3).T), rand(3)),
        {},
    ),
    (
        "solve_triangular-stacked",
        "scipy.linalg.solve_triangular(x, y)",
        (np.stack([upper(3), upper(3, 1)]), rand(2, 3, 2)),
        {},
    ),
    (
        "solve_triangular-stacked-b",
        "scipy.linalg.solve_triangular(x, y, lower=True)",
        (np.ascontiguousarray(np.stack([upper(3).T, upper(3, 1).T])), rand(2, 3, 1)),
        {},
    ),
    (
        "solve_triangular-stacked-a",
        "scipy.linalg.solve_triangular(x, y, trans='T')",
        (np.stack([upper(3), upper(3, 1)]), rand(3, 2)),
        {},
    ),
    (
        "solve_triangular-stacked-b-only",
        "scipy.linalg.solve_triangular(x, y, unit_diagonal=True)",
        (upper(3), rand(2, 3, 2)),
        {},
    ),
    ("scipy.cholesky", "scipy.linalg.cholesky(x)", (spd(3),), {}),
    ("sqrtm", "scipy.linalg.sqrtm(x)", (spd(3),), dict(rtol=1e-4)),
    ("signal.convolve", "scipy.signal.convolve(x, y)", (rand(5), rand(3, seed=1)), {}),
    (
        "signal.convolve-2d-same",
        "scipy.signal.convolve(x, y, mode='same')",
        (rand(4, 4), rand(2, 3, seed=1)),
        {},
    ),
    # ---- numpy.linalg ----
    ("svd-full-square", "np.linalg.svd(x)[1]", (rand(3, 3),), {}),
    (
        "svd-full-square-all",
        "np.linalg.svd(x)[0] ** 2 + np.linalg.svd(x)[1] + np.linalg.svd(x)[2] ** 2",
        (rand(3, 3),),
        {},
    ),
    ("svd-reduced-wide-vh", "np.linalg.svd(x, full_matrices=False)[2] ** 2", (rand(2, 4),), {}),
    ("svd-reduced-u", "np.abs(np.linalg.svd(x, full_matrices=False)[0])", (rand(4, 3),), {}),
    ("qr-r", "np.linalg.qr(x)[1]", (rand(4, 3),), {}),
    ("eigvalsh", "np.linalg.eigvalsh(x)", (sym_distinct(3),), {}),
    ("eigh-values", "np.linalg.eigh(x)[0]", (sym_distinct(3),), {}),
    ("eigh-vectors", "np.linalg.eigh(x, 'U')[1] ** 2", (sym_distinct(3, 1),), {}),
    (
        "eigh-stacked",
        "np.linalg.eigh(x)[1] ** 2",
        (np.stack([sym_distinct(3, 2), sym_distinct(3, 3)]),),
        {},
    ),
    ("eigvals-real", "np.linalg.eigvals(x)", (real_eig(3),), {}),
    ("eig-values", "np.linalg.eig(x)[0]", (real_eig(3),), {}),
    ("eigvals-stacked", "np.linalg.eigvals(x)", (np.stack([real_eig(3), real_eig(3, 1)]),), {}),
    (
        "eig-vectors-stacked",
        "np.linalg.eig(x)[1] ** 2",
        (np.stack([real_eig(3, 2), real_eig(3, 1)]),),
        {},
    ),
    ("eig-vectors", "np.abs(np.linalg.eig(x)[1])", (real_eig(3),), {}),
    ("lstsq-x", "np.linalg.lstsq(x, y)[0]", (rand(5, 3), rand(5, 2)), {}),
    ("lstsq-x-1d", "np.linalg.lstsq(x, y, rcond=None)[0]", (rand(5, 3), rand(5)), {}),
    ("lstsq-residuals", "np.linalg.lstsq(x, y)[1]", (rand(5, 3), rand(5, 2)), {}),
    ("lstsq-sv", "np.linalg.lstsq(x, y)[3]", (rand(5, 3), rand(5, 2)), {}),
    ("lstsq-wide", "np.linalg.lstsq(x, y)[0]", (rand(3, 5), rand(3, 2)), {}),
    (
        "lstsq-wide-residuals-empty",
        "np.linalg.lstsq(x, y)[0] + np.sum(np.linalg.lstsq(x, y)[1])",
        (rand(3, 5), rand(3)),
        {},
    ),
    ("lstsq-residuals-1d", "np.linalg.lstsq(x, y, rcond=1e-10)[1]", (rand(5, 2), rand(5)), {}),
    ("lstsq-square", "np.linalg.lstsq(x, y)[0]", (well(3), rand(3, 2)), {}),
    *[
        (f"norm-vector-{o}", f"np.linalg.norm(x, {o!r})", (rand(4),), {})
        for o in [None, 2, 1, 3, 0.5, -1.5]
    ],
    ("norm-vector-inf", "np.linalg.norm(x, np.inf)", (np.array([0.5, -2.0, 1.0]),), {}),
    ("norm-vector--inf", "np.linalg.norm(x, -np.inf)", (np.array([0.5, -2.0, 1.0]),), {}),
    *[
        (f"norm-matrix-{o}", f"np.linalg.norm(x, {o!r})", (rand(3, 4),), {})
        for o in [None, "fro", "nuc", 2, -2, 1, -1]
    ],
    ("norm-matrix-inf", "np.linalg.norm(x, np.inf)", (rand(3, 4),), {}),
    ("norm-matrix--inf", "np.linalg.norm(x, -np.inf)", (rand(3, 4),), {}),
    ("norm-axis-keepdims", "np.linalg.norm(x, axis=1, keepdims=True)", (rand(3, 4),), {}),
    ("norm-axis-pair", "np.linalg.norm(x, 'nuc', axis=(1, 2))", (rand(2, 3, 4),), {}),
    ("matrix_power", "np.linalg.matrix_power(x, 3)", (well(3),), {}),
    ("matrix_power-neg", "np.linalg.matrix_power(x, -2)", (well(3),), {}),
    (
        "multi_dot",
        "np.linalg.multi_dot([x, y, z])",
        (rand(2, 3), rand(3, 4, seed=1), rand(4, 2, seed=2)),
        {},
    ),
    (
        "einsum-ellipsis",
        "np.einsum('...ij,...jk->...ik', x, y)",
        (rand(2, 3, 4), rand(2, 4, 2, seed=1)),
        {},
    ),
    ("einsum-ellipsis-implicit", "np.einsum('...i,i', x, y)", (rand(2, 3), rand(3, seed=1)), {}),
    ("einsum-repeated-diag", "np.einsum('ii->i', x)", (rand(3, 3),), {}),
    ("einsum-repeated-trace", "np.einsum('ii', x)", (rand(3, 3),), {}),
    ("einsum-repeated-mixed", "np.einsum('iij,j->i', x, y)", (rand(3, 3, 2), rand(2, seed=1)), {}),
    (
        "einsum-ellipsis-broadcast",
        "np.einsum('...ij,...jk', x, y)",
        (rand(1, 3, 4), rand(2, 4, 2, seed=1)),
        {},
    ),
    (
        "einsum-ellipsis-middle",
        "np.einsum('i...j,j->...i', x, y)",
        (rand(2, 3, 4), rand(4, seed=1)),
        {},
    ),
    ("einsum-repeated-both", "np.einsum('ii,jj->ij', x, y)", (rand(3, 3), rand(2, 2, seed=1)), {}),
    ("einsum-repeated-three", "np.einsum('iii->i', x)", (rand(2, 2, 2),), {}),
    ("einsum-repeated-with-ellipsis", "np.einsum('...ii->...', x)", (rand(2, 3, 3),), {}),
    ("trace-offset", "np.trace(x, offset=1)", (rand(3, 4),), {}),
    ("trace-offset-neg", "np.trace(x, offset=-1, axis1=1, axis2=2)", (rand(2, 3, 3),), {}),
    # ---- numpy: signals, polynomials, products ----
    ("interp", "np.interp(x, XP, y)", (np.array([0.3, 1.7, 2.2]), rand(4, seed=3)), {}),
    ("convolve", "np.convolve(x, y)", (rand(5), rand(3, seed=1)), {}),
    ("convolve-same", "np.convolve(x, y, mode='same')", (rand(5), rand(3, seed=1)), {}),
    ("convolve-valid", "np.convolve(x, y, 'valid')", (rand(5), rand(3, seed=1)), {}),
    ("correlate", "np.correlate(x, y)", (rand(5), rand(3, seed=1)), {}),
    ("correlate-full", "np.correlate(x, y, mode='full')", (rand(5), rand(3, seed=1)), {}),
    ("polyval", "np.polyval(x, y)", (rand(4), rand(3, seed=1)), {}),
    ("cross", "np.cross(x, y)", (rand(2, 3), rand(2, 3, seed=1)), {}),
    ("cross-axis", "np.cross(x, y, axis=0)", (rand(3, 2), rand(3, 2, seed=1)), {}),
    ("kron", "np.kron(x, y)", (rand(2, 3), rand(2, 2, seed=1)), {}),
    (
        "tensordot",
        "np.tensordot(x, y, axes=([1, 2], [0, 1]))",
        (rand(2, 3, 4), rand(3, 4, 2, seed=1)),
        {},
    ),
    ("tensordot-int", "np.tensordot(x, y, 1)", (rand(2, 3), rand(3, 2, seed=1)), {}),
    # ---- reductions and scans ----
    ("cumprod", "np.cumprod(x)", (rand(4, **POS),), {}),
    ("cumprod-axis", "np.cumprod(x, axis=1)", (rand(2, 3),), {}),
    ("take_along_axis", "np.take_along_axis(x, IDX, axis=1)", (rand(2, 3),), {}),
    ("diff", "np.diff(x)", (rand(5),), {}),
    ("diff-n2-axis0", "np.diff(x, n=2, axis=0)", (rand(4, 3),), {}),
    ("var-ddof", "np.var(x, ddof=1)", (rand(5),), {}),
    ("std-ddof-axis", "np.std(x, axis=0, ddof=1)", (rand(4, 3),), {}),
    ("std-method", "x.std(axis=1, ddof=2, keepdims=True)", (rand(2, 5),), {}),
    ("nansum", "np.nansum(np.where(MASK, np.nan, x), axis=0)", (rand(3, 4),), {}),
    ("nanmean", "np.nanmean(np.where(MASK, np.nan, x))", (rand(3, 4),), {}),
    ("nanvar", "np.nanvar(np.where(MASK, np.nan, x), axis=1)", (rand(3, 4),), {}),
    ("nanstd", "np.nanstd(np.where(MASK, np.nan, x), axis=1, ddof=1)", (rand(3, 4),), {}),
    ("nanmax", "np.nanmax(np.where(MASK, np.nan, x), axis=1)", (rand(3, 4),), {}),
    ("nanmin", "np.nanmin(np.where(MASK, np.nan, x))", (rand(3, 4),), {}),
    ("nanprod", "np.nanprod(np.where(MASK, np.nan, x), axis=0)", (rand(3, 4),), {}),
    ("median", "np.median(x)", (rand(5),), {}),
    ("median-axis", "np.median(x, axis=1)", (rand(3, 4),), {}),
    # ---- splits ----
    ("split", "np.split(x, 3)[1]", (rand(6),), {}),
    ("array_split", "np.array_split(x, 3, axis=1)[2]", (rand(2, 5),), {}),
    ("hsplit", "np.hsplit(x, [1])[1]", (rand(3, 3),), {}),
    ("vsplit", "np.vsplit(x, 2)[0]", (rand(4, 3),), {}),
    ("dsplit", "np.dsplit(x, 2)[1]", (rand(2, 2, 4),), {}),
    # ---- np.max/min/prod on Python floats ----
    ("max-floats", "np.max([x, y])", (0.3, 1.2), {}),
    ("min-floats", "np.min([x, y, 2.0])", (0.3, 1.2), {}),
    ("prod-floats", "np.prod([x, y])", (0.3, 1.2), {}),
    ("max-float", "np.max(x)", (0.7,), {}),
    ("prod-float", "np.prod(x)", (0.7,), {}),
]

NAMES = {
    "XP": np.array([0.0, 1.0, 2.0, 3.0]),
    "IDX": np.array([[2, 0, 0], [1, 2, 1]]),
    "MASK": np.array([[0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]], dtype=bool),
}


def is_float(a):
    return isinstance(a, float) or getattr(getattr(a, "dtype", None), "kind", "") == "f"


def _case(c):
    if hasattr(c, "marks"):  # a pytest.param: its id first among its values
        return pytest.param(*c.values[1:], id=c.values[0], marks=c.marks)
    return pytest.param(*c[1:], id=c[0])


@pytest.mark.parametrize("expr, args, options", [_case(c) for c in CASES])
def test_op(expr, args, options):
    options = dict(options)
    order = options.pop("order", 2)
    wrt = options.pop("wrt", tuple(k for k, a in enumerate(args) if is_float(a)))
    params = "xyzuvw"[: len(args)]
    params = ", ".join(params)
    probe = make_function(expr, params, NAMES)
    out = probe(*args)
    weights = RNG.uniform(0.5, 1.5, size=np.shape(out))
    loss = make_function(f"np.sum(W * ({expr}) ** 2)", params, {**NAMES, "W": weights})
    check_jvp(probe, args, wrt, **options)
    srcad.check_grad(loss, *args, wrt=wrt, modes=("rev", "fwd"), order=order, **options)


def lstsq_all(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b)
    return np.sum(x**2) + np.sum(np.sin(res)) + rank * np.sum(sv**3)


@pytest.mark.parametrize("bshape", [(5,), (5, 2)])
def test_lstsq_all_four_results(bshape):
    srcad.check_grad(
        lstsq_all, rand(5, 3), rand(*bshape), wrt=(0, 1), modes=("rev", "fwd"), order=2
    )


def lstsq_x(a, b):
    return np.sum(np.linalg.lstsq(a, b)[0] ** 2)


def lstsq_cut(a, b):
    return np.sum(np.linalg.lstsq(a, b, rcond=0.5)[0] ** 2)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_lstsq_of_a_rank_deficient_matrix_is_refused(mode):
    a = rand(5, 3)
    a[:, 2] = a[:, 0] + a[:, 1]  # rank 2: the fit jumps with rcond, no derivative
    with pytest.raises(ValueError, match="full rank only.*rank 2"):
        srcad.check_grad(lstsq_x, a, rand(5), wrt=(0, 1), modes=(mode,))
    small = np.diag([2.0, 0.1, 3.0])  # rank 3, but rcond=0.5 cuts below 1.5
    with pytest.raises(ValueError, match="rank 2"):
        srcad.check_grad(lstsq_cut, small, rand(3), wrt=(0, 1), modes=(mode,))


def eig_both(a):
    w, v = np.linalg.eig(a)
    return np.sum(w * np.sum(v**2 * C, axis=0)) + np.sum(np.abs(v[0]))


C = RNG.uniform(0.5, 1.5, size=(3, 3))


def test_eig_both_results():
    srcad.check_grad(eig_both, real_eig(3, 4), modes=("rev", "fwd"), order=2)


def eigvals_sum(a):
    return np.sum(np.real(np.linalg.eigvals(a) ** 2))


def eig_real_part(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w * v[0]))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("f", [eig_real_part, eigvals_sum])
def test_eig_with_complex_eigenvalues_is_refused(f, mode):
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    with pytest.raises((ValueError, srcad.TransformError), match="complex"):
        srcad.check_grad(f, rotation, modes=(mode,))


def svd_s_of_tall(a):
    return np.sum(np.linalg.svd(a)[1] ** 2)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_full_svd_of_a_non_square_matrix_is_refused(mode):
    # its extra columns of u (or vh) are any orthonormal completion: JAX refuses it too
    with pytest.raises(ValueError, match="full_matrices=False"):
        srcad.check_grad(svd_s_of_tall, rand(4, 3), modes=(mode,))


def svd_values_only(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 2)


def test_svd_compute_uv_false():
    srcad.check_grad(svd_values_only, rand(4, 3), modes=("rev", "fwd"), order=2)


# the rules added for this issue, also differentiated in the two orders check_grad does not
# take (reverse-over-forward, forward-over-forward): opcheck.check runs all four
NEW_RULES = [
    "einsum-ellipsis",
    "einsum-ellipsis-broadcast",
    "einsum-repeated-diag",
    "einsum-repeated-mixed",
    "einsum-repeated-with-ellipsis",
    "eigvals-real",
    "eig-vectors-stacked",
    "eigh-vectors",
    "lstsq-x",
    "lstsq-wide",
    "lstsq-residuals",
    "lstsq-sv",
    "svd-full-square-all",
    "svd-reduced-u",
    "mvn.logpdf-defaults",
    "mvn.logpdf-scalar-cov",
    "mvn.pdf-1d-cov",
    "solve_triangular-stacked",
    "solve_triangular-stacked-a",
]


@pytest.mark.parametrize("name", NEW_RULES)
def test_new_rules_in_all_four_second_orders(name):
    (case,) = [c for c in CASES if not hasattr(c, "marks") and c[0] == name]
    _, expr, args, options = case
    wrt = tuple(k for k, a in enumerate(args) if is_float(a))
    check(expr, *args, wrt=wrt, **options)
