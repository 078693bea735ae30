"""NumPy breadth (issue #17): qr, eigvalsh, svdvals, matrix_power, multi_dot, vdot, norms of
every order, trace with an offset, NaN-ignoring reductions, median/quantile/percentile and
average, against finite differences in both modes and at second order."""

import numpy as np
import pytest
from opcheck import check, check_function_second_order, check_jvp, make_function, rand

import srcad

RNG = np.random.default_rng(17)
C = RNG.uniform(0.5, 1.5, size=(5, 5))


def well_conditioned(n, seed=0, batch=()):
    return rand(*batch, n, n, seed=seed) * 0.3 + np.eye(n)


def symmetric_distinct(n):
    q, _ = np.linalg.qr(RNG.normal(size=(n, n)))
    return q @ np.diag(np.arange(1.0, n + 1) * 1.7) @ q.T + 0.1 * RNG.normal(size=(n, n))


# ---- products and matrix functions ----


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.vdot(x, y)", (rand(4), rand(4, seed=1))),
        ("np.vdot(x, y)", (rand(2, 3), rand(3, 2, seed=1))),
        ("np.linalg.multi_dot([x, y, z])", (rand(2, 3), rand(3, 4, seed=1), rand(4, 2, seed=2))),
        ("np.linalg.multi_dot([x, y, z])", (rand(3), rand(3, 4, seed=1), rand(4, seed=2))),
        ("np.linalg.multi_dot([x, y])", (rand(3), rand(3, 4, seed=1))),
        ("np.linalg.multi_dot([x, y, x.T])", (rand(2, 3), rand(3, 3, seed=1))),
        ("np.linalg.matrix_power(x, 3)", (well_conditioned(3),)),
        ("np.linalg.matrix_power(x, 1)", (well_conditioned(3),)),
        ("np.linalg.matrix_power(x, 0)", (well_conditioned(2),)),
        ("np.linalg.matrix_power(x, -2)", (well_conditioned(3),)),
        ("np.linalg.matrix_power(x, 2)", (rand(2, 3, 3),)),
        ("np.trace(x, 1)", (rand(3, 4),)),
        ("np.trace(x, offset=-1)", (rand(3, 3),)),
        ("np.trace(x, 0, 1, 2)", (rand(2, 3, 3),)),
        ("x.trace()", (rand(3, 3),)),
    ],
)
def test_products_and_matrix_functions(expr, args):
    check(expr, *args, rtol=1e-4)


# ---- decompositions: eigvalsh, svdvals, qr ----


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.linalg.eigvalsh(x)", (symmetric_distinct(3),)),
        ("np.linalg.eigvalsh(x, 'U')", (symmetric_distinct(4),)),
        ("np.linalg.eigvalsh(x)", (np.stack([symmetric_distinct(3), symmetric_distinct(3)]),)),
        ("np.linalg.svdvals(x)", (rand(4, 3),)),
        ("np.linalg.svdvals(x)", (rand(3, 5),)),
        ("np.linalg.svdvals(x)", (rand(2, 3, 3),)),
    ],
)
def test_eigvalsh_and_svdvals(expr, args):
    check(expr, *args, rtol=1e-4)


def test_eigvalsh_reads_one_triangle_as_numpy_does():
    g = srcad.grad(make_function("np.sum(np.linalg.eigvalsh(x) ** 2)", "x"))(symmetric_distinct(3))
    assert np.all(np.triu(g, 1) == 0)


def qr_both(a):
    q, r = np.linalg.qr(a)
    m, n = q.shape[-2:]
    return np.sum(C[:m, :n] * q) + np.sum(np.sin(r) * C[:n, :n])


def qr_r_only(a):
    q, r = np.linalg.qr(a)
    return np.sum((r @ r) * C[:3, :3])


def qr_q_only(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.cos(q) * C[:5, :2])


def qr_stacked(a):
    q, r = np.linalg.qr(a)
    return np.sum(q[..., 0] * C[:2, :4]) + np.sum(r[..., 1] * C[:2, :3])


def qr_array(a):
    q, r = np.linalg.qr(a)
    return q[:, 0] * 2.0 + r[0, 0] * q[:, 1] + np.sin(q[:, 0] * r[1, 1])


@pytest.mark.parametrize(
    "f, a",
    [
        (qr_both, rand(4, 3)),
        (qr_both, rand(3, 3)),
        (qr_r_only, rand(3, 3)),
        (qr_q_only, rand(5, 2)),
        (qr_stacked, rand(2, 4, 3)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_qr(f, a):
    srcad.check_grad(f, a, modes=("fwd", "rev"), order=2)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3)])
def test_qr_all_four_second_orders(shape):
    a = rand(*shape, seed=3)
    check_jvp(qr_array, (a,), (0,))
    check_function_second_order(qr_array, (a,))


def qr_wide(a):
    q, r = np.linalg.qr(a)
    return np.sum(r)


def test_qr_of_a_wide_matrix_is_refused():
    for mode in ("fwd", "rev"):
        with pytest.raises(ValueError, match="square or tall"):
            srcad.check_grad(qr_wide, rand(2, 4), modes=(mode,))


# ---- norms ----

INF = float("inf")


@pytest.mark.parametrize(
    "expr, shape",
    [
        ("np.linalg.norm(x, 1)", (4,)),
        ("np.linalg.norm(x, float('inf'))", (4,)),
        ("np.linalg.norm(x, -float('inf'))", (4,)),
        ("np.linalg.norm(x, 2)", (4,)),
        ("np.linalg.norm(x, 3)", (4,)),
        ("np.linalg.norm(x, 1.5)", (4,)),
        ("np.linalg.norm(x, -2)", (4,)),
        ("np.linalg.norm(x, 3, axis=0)", (3, 2)),
        ("np.linalg.norm(x, 1, axis=1, keepdims=True)", (3, 2)),
        ("np.linalg.norm(x, 'fro')", (2, 3)),
        ("np.linalg.norm(x, 'nuc')", (3, 2)),
        ("np.linalg.norm(x, 2)", (3, 4)),
        ("np.linalg.norm(x, -2)", (3, 4)),
        ("np.linalg.norm(x, 1)", (3, 4)),
        ("np.linalg.norm(x, -1)", (3, 4)),
        ("np.linalg.norm(x, float('inf'))", (3, 4)),
        ("np.linalg.norm(x, -float('inf'))", (3, 4)),
        ("np.linalg.norm(x, 'nuc', axis=(0, 2))", (3, 2, 4)),
        ("np.linalg.norm(x, 2, axis=(2, 0), keepdims=True)", (3, 2, 4)),
        ("np.linalg.norm(x, float('inf'), axis=(1, 2))", (2, 3, 4)),
        ("np.linalg.vector_norm(x)", (2, 3)),
        ("np.linalg.vector_norm(x, axis=(0, 1), ord=3)", (2, 3, 2)),
        ("np.linalg.vector_norm(x, ord=1)", (2, 3)),
        ("np.linalg.vector_norm(x, axis=1, keepdims=True, ord=float('inf'))", (2, 3)),
        ("np.linalg.matrix_norm(x)", (2, 3, 4)),
        ("np.linalg.matrix_norm(x, ord='nuc')", (2, 3, 4)),
        ("np.linalg.matrix_norm(x, keepdims=True, ord=2)", (2, 3, 4)),
        ("np.linalg.matrix_norm(x, ord=1)", (3, 4)),
    ],
)
def test_norms(expr, shape):
    check(expr, rand(*shape), rtol=1e-4)


def test_norm_with_np_inf_first_order():
    # (reverse over reverse of an argument written np.inf: see test_norm_orders_np_inf)
    for shape in [(4,), (3, 4)]:
        f = make_function("np.linalg.norm(x, np.inf) * 2.0", "x")
        check_jvp(f, (rand(*shape),), (0,))
        srcad.check_grad(make_function("np.linalg.norm(x, -np.inf)", "x"), rand(*shape))


def test_norm_orders_np_inf():
    # an operand written np.inf reached a vjp's backward function as xp.inf, where xp was
    # not among the residuals (NameError); tests/test_crashes.py has the first-order case
    check("np.linalg.norm(x, np.inf)", rand(4))


def test_norm_kinks_follow_the_conventions():
    g = srcad.grad(make_function("np.linalg.norm(x, np.inf)", "x"))(np.array([3.0, -3.0, 1.0]))
    np.testing.assert_array_equal(g, [0.5, -0.5, 0.0])  # ties split evenly
    g = srcad.grad(make_function("np.linalg.norm(x, 1)", "x"))(np.array([2.0, 0.0, -1.0]))
    np.testing.assert_array_equal(g, [1.0, 0.0, -1.0])  # sign(0) = 0
    g = srcad.grad(make_function("np.linalg.norm(x, 3)", "x"))(np.zeros(3))
    np.testing.assert_array_equal(g, np.zeros(3))  # a zero norm: the subgradient 0


def test_third_derivative_of_a_curved_norm():
    # a vector p-norm differentiates to any order (its slope is written with ops that have
    # rules), and so does a norm of singular values (singular_slope's rules use svd)
    f = make_function("np.linalg.norm(x * V + W, 3)", "x", {"V": rand(3), "W": rand(3, seed=1)})
    second = srcad.grad(srcad.grad(f))
    expected = (second(0.4 + 1e-5) - second(0.4 - 1e-5)) / 2e-5
    assert srcad.grad(second)(0.4) == pytest.approx(expected, rel=1e-6)
    shift = {"V": rand(2, 2), "W": rand(2, 2, seed=1)}
    nuclear = make_function("np.linalg.norm(x * V + W, 'nuc')", "x", shift)
    second = srcad.grad(srcad.grad(nuclear))
    expected = (second(0.4 + 1e-5) - second(0.4 - 1e-5)) / 2e-5
    assert srcad.grad(second)(0.4) == pytest.approx(expected, rel=1e-6)


# ---- NaN-ignoring reductions ----

XN = rand(3, 4)
XN[0, 1] = XN[2, 3] = np.nan


@pytest.mark.parametrize(
    "expr",
    [
        "np.nansum(x)",
        "np.nansum(x, axis=1)",
        "np.nanmean(x)",
        "np.nanmean(x, axis=0, keepdims=True)",
        "np.nanmax(x, axis=1)",
        "np.nanmin(x, axis=0, keepdims=True)",
        "np.nanmax(x)",
        "np.nanprod(x, axis=0)",
        "np.nanvar(x, axis=1)",
        "np.nanvar(x, ddof=1)",
        "np.nanstd(x)",
        "np.nanstd(x, axis=0, keepdims=True)",
    ],
)
def test_nan_reductions(expr):
    check(expr, XN, rtol=1e-4)
    check(expr, rand(2, 3), rtol=1e-4)  # no NaN: as the plain reduction


def test_nan_entries_get_no_gradient():
    f = make_function("np.nansum(x) + np.nanmax(x) + np.nanmean(x) + np.nanstd(x)", "x")
    g = srcad.grad(f)(XN)
    assert g[0, 1] == 0 and g[2, 3] == 0 and np.all(np.isfinite(g))


# ---- order statistics and averages ----


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.median(x)", (rand(5),)),
        ("np.median(x)", (rand(6),)),
        ("np.median(x, axis=0)", (rand(4, 3),)),
        ("np.median(x, axis=(0, 2), keepdims=True)", (rand(2, 3, 3),)),
        ("np.quantile(x, 0.3)", (rand(7),)),
        ("np.quantile(x, [0.1, 0.5, 0.95], axis=1)", (rand(3, 5),)),
        ("np.quantile(x, 0.7, axis=0, keepdims=True)", (rand(4, 3),)),
        ("np.percentile(x, 40)", (rand(6),)),
        ("np.percentile(x, [10, 90], axis=-1)", (rand(2, 5),)),
        ("np.average(x)", (rand(2, 3),)),
        ("np.average(x, axis=1)", (rand(2, 3),)),
        ("np.average(x, weights=y)", (rand(2, 3), rand(2, 3, low=0.5, seed=1))),
        ("np.average(x, axis=1, weights=y)", (rand(2, 3), rand(3, low=0.5, seed=1))),
        ("np.average(x, 0, y, keepdims=True)", (rand(2, 3), rand(2, low=0.5, seed=1))),
        ("np.average(x, axis=(0, 1), weights=y)", (rand(2, 3), rand(2, 3, low=0.5, seed=1))),
    ],
)
def test_order_statistics_and_average(expr, args):
    check(expr, *args, rtol=1e-4)


def test_median_ties_split_evenly():
    g = srcad.grad(make_function("np.median(x)", "x"))(np.array([1.0, 1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [0.25, 0.25, 0.5, 0.0])


@pytest.mark.parametrize(
    "expr, match",
    [
        ("np.quantile(x, 0.3, method='nearest')", "method='linear'"),
        ("np.average(x, weights=y, returned=True)[0]", "returned"),
        ("np.quantile(x, y[0, 0])", "'q'"),
    ],
)
def test_what_is_refused_is_refused_clearly(expr, match):
    f = make_function(f"np.sum({expr})", "x, y")
    with pytest.raises((srcad.TransformError, ValueError), match=match):
        srcad.grad(f, wrt=(0, 1))(rand(2, 3), rand(2, 3, seed=1))
