"""NumPy breadth (issue #17), numerical routines: interp, convolve, correlate, polyval, vander,
trapezoid, gradient, cov, corrcoef, insert, delete, select, ediff1d, cumulative_sum, against
finite differences in both modes and at second order; what is refused is refused clearly."""

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad
from srcad.runtime.numeric import gradient_transposed, interp_fp_jvp

XP = np.array([-1.7, -0.9, -0.4, 0.25, 0.85, 1.8])
NS = {"XP": XP}


def check_with(expr, *args, namespace, **tol):
    """:func:`check` of an expression that reads the constants in ``namespace``."""
    body = expr
    for name, value in namespace.items():
        body = body.replace(name, f"np.array({np.asarray(value).tolist()!r})")
    return check(body, *args, **tol)


# ---- convolution and correlation ----

CONVOLVE_SHAPES = [(5, 3), (3, 6), (4, 4), (2, 5), (6, 1)]


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", CONVOLVE_SHAPES, ids=str)
def test_convolve_and_correlate(op, mode, shapes):
    a, v = rand(shapes[0]), rand(shapes[1], seed=1)
    check(f"np.{op}(x, y, {mode!r})", a, v, rtol=1e-4)


def test_default_modes_and_mode_by_keyword():
    check("np.convolve(x, y)", rand(4), rand(3, seed=1))
    check("np.correlate(x, y)", rand(4), rand(3, seed=1))
    check("np.correlate(x, y, mode='same') * y", rand(4), rand(7, seed=1))
    check("np.convolve(x, y, 1)", rand(3), rand(4, seed=1))  # NumPy's number for 'same'
    check("np.correlate(x, y, 1)", rand(3), rand(4, seed=1))


@pytest.mark.parametrize("op", ["convolve", "correlate"])
def test_convolve_and_correlate_every_length_pair(op):
    # first order for many length pairs and parities, against the exact Jacobian (the op is
    # linear in each operand): the window each mode keeps of the full result
    for mode in ("full", "same", "valid"):
        f = make_function(f"np.sum(z * np.{op}(x, y, {mode!r}))", "x, y, z")
        for m in range(1, 8):
            for n in range(1, 8):
                a, v = rand(m, seed=m), rand(n, seed=10 + n)
                w = rand(np.shape(getattr(np, op)(a, v, mode))[0], seed=3)
                da, dv = srcad.grad(f, wrt=(0, 1))(a, v, w)
                ja = np.stack([getattr(np, op)(e, v, mode) for e in np.eye(m)], axis=1)
                jv = np.stack([getattr(np, op)(a, e, mode) for e in np.eye(n)], axis=1)
                np.testing.assert_allclose(da, w @ ja, atol=1e-12, err_msg=f"{mode} {m} {n}")
                np.testing.assert_allclose(dv, w @ jv, atol=1e-12, err_msg=f"{mode} {m} {n}")


# ---- interpolation ----


@pytest.mark.parametrize(
    "expr, x",
    [
        ("np.interp(x, XP, y)", np.array([-1.5, -0.3, 0.2, 0.9, 1.6, 1.75])),
        ("np.interp(x, XP, y)", np.array([[-2.5, -0.3, 0.2], [1.9, 1.6, 3.0]])),
        ("np.interp(x, XP, y)", 0.37),
        ("np.interp(x, XP, y, left=-3.0, right=4.0)", np.array([-2.5, -0.3, 1.9, 3.0])),
        ("np.interp(x, XP, y, None, 4.0)", np.array([-2.5, -0.3, 1.9, 3.0])),
        ("np.interp(x, XP, y, period=2.5)", np.array([-3.14, -0.3, 0.2, 2.6, 4.0])),
        ("np.interp(x, XP, y, period=-2.5)", np.array([-3.14, -0.3, 0.2, 2.6, 4.0])),
        ("np.interp(x * x, XP, y * y)", np.array([-1.1, 0.3, 0.7])),
    ],
)
def test_interp(expr, x):
    check_with(expr, x, rand(6, seed=6), namespace=NS, rtol=1e-4)


def test_interp_with_one_point():
    check("np.interp(x, np.array([0.5]), y, left=-1.0)", np.array([-1.0, 0.7]), rand(1))


def test_interp_weights_give_numpys_values():
    # the weights the derivatives use, applied to fp itself: breakpoints, ends, repeated
    # points, outside the range, periodic
    xs = np.array([-3.0, -1.7, -0.9, -0.5, 0.25, 1.0, 1.8, 2.0, 7.3])
    for xp in (XP, np.array([-1.0, 0.0, 0.0, 1.8, 1.8])):
        fp = rand(len(xp), seed=4)
        for left, right, period in [(None, None, None), (-5.0, 6.0, None), (None, None, 2.2)]:
            expected = np.interp(xs, xp, fp, left, right, period)
            outside = (
                0.0
                if period
                else np.where(xs < xp[0], left or 0.0, 0.0)
                + np.where(xs > xp[-1], right or 0.0, 0.0)
            )
            got = interp_fp_jvp(fp, xs, xp, left, right, period) + outside
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


def test_interp_takes_the_slope_right_of_a_breakpoint_in_both_modes():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 8.0])  # slopes 2, then 3
    f = make_function("np.interp(x, XP, FP)", "x", {"XP": xp, "FP": fp})
    x = np.array([-1.0, 0.0, 1.0, 3.0, 4.0])
    expected = [0.0, 2.0, 3.0, 3.0, 0.0]  # outside xp's range: flat; xp[-1]: from the left
    _, by_reverse = srcad.vjp(f, x)
    np.testing.assert_array_equal(by_reverse(np.ones(5))[0], expected)
    for k in range(5):
        _, tangent = srcad.jvp(f, (x,), (np.eye(5)[k],))
        assert tangent[k] == expected[k]
    # fp: the value at a breakpoint is fp there
    g = srcad.grad(make_function("np.interp(1.0, XP, fp)", "fp", {"XP": xp}))(fp)
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])


# ---- polynomials ----


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.polyval(x, y)", (rand(4), rand(5, seed=1))),
        ("np.polyval(x, y)", (rand(3), rand(2, 3, seed=1))),
        ("np.polyval(x, y)", (rand(1), rand(3, seed=1))),
        ("np.polyval(x, y)", (rand(3), 0.7)),
        ("np.polyval(x * 2.0, np.sin(y))", (rand(5), rand(4, seed=1))),
        ("np.vander(x)", (rand(4),)),
        ("np.vander(x, 3, True)", (rand(4),)),
        ("np.vander(x, N=5)", (rand(3),)),
        ("np.vander(x, increasing=True)", (np.array([0.0, 1.3, -0.4]),)),
    ],
)
def test_polynomials(expr, args):
    check(expr, *args, rtol=1e-4)


# ---- integration and differences ----


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.trapezoid(x)", (rand(5),)),
        ("np.trapezoid(x, y)", (rand(5), np.sort(rand(5, seed=2)))),
        ("np.trapezoid(x, dx=y)", (rand(5), 0.3)),
        ("np.trapezoid(x, None, y, 0)", (rand(4, 3), 0.7)),
        ("np.trapezoid(x, y, axis=0)", (rand(4, 3), np.sort(rand(4, seed=2)))),
        ("np.trapezoid(x, y, axis=1)", (rand(4, 3), rand(4, 3, seed=2))),
        ("np.trapezoid(x, y, axis=0)", (rand(4, 3), rand(4, 1, seed=2))),
        ("np.trapezoid(x, y, axis=-2)", (rand(2, 4, 3), rand(4, 3, seed=2))),
        ("np.trapezoid(x, y, 5.0)", (rand(3, 4), rand(4, seed=2))),  # dx ignored
        ("np.trapezoid(x * x, np.exp(x))", (rand(6),)),
        ("np.gradient(x)", (rand(6),)),
        ("np.gradient(x, 0.3)", (rand(6),)),
        ("np.gradient(x, edge_order=2)", (rand(6),)),
        ("np.gradient(x, np.array([0.0, 0.5, 1.1, 1.2, 2.0, 3.0]), edge_order=2)", (rand(6),)),
        ("np.gradient(x, np.array([0.0, 0.5, 1.1, 1.2, 2.0, 3.0]))", (rand(6),)),
        ("np.gradient(x, axis=1)", (rand(3, 5),)),
        ("np.gradient(x, 2.0, axis=0, edge_order=2)", (rand(4, 3),)),
        ("np.gradient(x, axis=(-1,))", (rand(2, 2),)),
        ("np.gradient(x)", (rand(2),)),
        ("np.ediff1d(x)", (rand(6),)),
        ("np.ediff1d(x)", (rand(2, 3),)),
        ("np.ediff1d(x, to_end=y, to_begin=z)", (rand(5), rand(2, seed=1), 0.4)),
        ("np.ediff1d(x, y)", (rand(5), rand(2, seed=1))),
        ("np.ediff1d(x, None, y)", (rand(5), rand(2, 1, seed=1))),
        ("np.cumulative_sum(x)", (rand(5),)),
        ("np.cumulative_sum(x, include_initial=True)", (rand(5),)),
        ("np.cumulative_sum(x, axis=1)", (rand(3, 4),)),
        ("np.cumulative_sum(x, axis=0, include_initial=True)", (rand(3, 4),)),
        ("np.cumulative_sum(x, axis=-1, include_initial=True)", (rand(2, 3, 2),)),
    ],
)
def test_integration_and_differences(expr, args):
    check(expr, *args, rtol=1e-4)


def test_the_transpose_of_np_gradient_is_exact():
    coordinates = np.array([0.0, 0.4, 1.1, 1.3, 2.0, 2.2, 3.5])
    for n in range(2, 8):
        for spacing in [(), (0.7,), (coordinates[:n],)]:
            for edge_order in (1, 2) if n > 2 else (1,):
                matrix = np.gradient(np.eye(n), *spacing, axis=0, edge_order=edge_order)
                g = rand(n, 2, seed=n)
                got = gradient_transposed(g, spacing, 0, edge_order)
                np.testing.assert_allclose(got, matrix.T @ g, atol=1e-12)


# ---- covariance and correlation ----


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.cov(x)", (rand(3, 5),)),
        ("np.cov(x)", (rand(5),)),
        ("np.cov(x, rowvar=False)", (rand(5, 3),)),
        ("np.cov(x, y)", (rand(5), rand(5, seed=1))),
        ("np.cov(x, y, bias=True)", (rand(2, 5), rand(5, seed=1))),
        ("np.cov(x, ddof=0)", (rand(2, 5),)),
        ("np.cov(x, y, False, ddof=2)", (rand(6, 2), rand(6, seed=1))),
        ("np.cov(x, y, rowvar=False)", (rand(6, 1), rand(6, 2, seed=1))),
        ("np.corrcoef(x)", (rand(3, 5),)),
        ("np.corrcoef(x, y)", (rand(5), rand(5, seed=1))),
        ("np.corrcoef(x, rowvar=False)", (rand(6, 3),)),
        ("np.corrcoef(x, y, rowvar=False)", (rand(6, 2), rand(6, 1, seed=1))),
        ("np.corrcoef(x, y, False)", (rand(6, 2), rand(6, seed=1))),
    ],
)
def test_cov_and_corrcoef(expr, args):
    check(expr, *args, rtol=1e-4)


def test_corrcoef_of_one_variable_is_flat():
    g = srcad.grad(make_function("np.corrcoef(x)", "x"))(rand(5))
    np.testing.assert_allclose(g, 0.0, atol=1e-12)


# ---- insert, delete, select ----

THREE = (rand(6), rand(6, seed=1), rand(6, seed=2))


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.insert(x, 2, y)", (rand(5), 0.7)),
        ("np.insert(x, [1, 3], y)", (rand(5), rand(2, seed=1))),
        ("np.insert(x, [1, 3], 2.5)", (rand(5),)),
        ("np.insert(x, 1, y, axis=0)", (rand(3, 4), rand(4, seed=1))),
        ("np.insert(x, [0, 2, 2], y, axis=1)", (rand(3, 4), rand(3, 1, seed=1))),
        ("np.insert(x, 1, y, axis=1)", (rand(3, 4), rand(3, seed=1))),
        ("np.insert(x, 1, y, axis=-1)", (rand(3, 4), rand(2, 3, seed=1))),
        ("np.insert(x, slice(0, 3), y)", (rand(2, 2), rand(3, seed=1))),
        ("np.insert(x, [4, 0], y)", (rand(4), rand(2, seed=1))),
        ("np.delete(x, 2)", (rand(5),)),
        ("np.delete(x, [0, 2], axis=1)", (rand(3, 4),)),
        ("np.delete(x, slice(1, None, 2), 0)", (rand(5, 2),)),
        ("np.delete(x, [1, 5])", (rand(2, 3),)),
        ("np.delete(x, np.array([True, False, True]), 1)", (rand(2, 3),)),
        ("np.select([x > 0, x < -1], [x ** 2, y], default=z)", THREE),
        ("np.select([x > 0.5, x > 0], [x * y, np.sin(x)])", (rand(3, 4), rand(4, seed=1))),
        ("np.select([x > 0], [y], 2.0)", (rand(5), 1.5)),
        ("np.select([x > 0, x > 1], [y, x], y[0])", (rand(5), rand(5, seed=3))),
        ("np.select([[True, False, True], x > 0], [y, x])", (rand(3), rand(3, seed=3))),
    ],
)
def test_insert_delete_select(expr, args):
    check(expr, *args, rtol=1e-4)


def test_select_gives_the_first_true_condition_the_gradient():
    f = make_function("np.sum(np.select([x > 0, x > -5], [x * y, 3.0 * x], y))", "x, y")
    dx, dy = srcad.grad(f, wrt=(0, 1))(np.array([1.0, -1.0, -9.0]), np.array([2.0, 4.0, 6.0]))
    np.testing.assert_array_equal(dx, [2.0, 3.0, 0.0])
    np.testing.assert_array_equal(dy, [1.0, 0.0, 1.0])


# ---- refused ----

X = np.array([0.3, -0.2])
COUNTS = np.arange(1, 5)


@pytest.mark.parametrize(
    "expr, args, wrt, match",
    [
        ("np.interp(x, y, z)", (X, XP, rand(6)), (0, 1, 2), "'xp'"),
        ("np.interp(x, XP, z, left=y[0])", (X, XP, rand(6)), (0, 1, 2), "'left'"),
        ("np.interp(x, XP, z, period=y[0])", (X, XP, rand(6)), (0, 1), "'period'"),
        ("np.cov(x, aweights=y)", (rand(2, 4), rand(4, low=0.5)), (0, 1), "aweights"),
        ("np.cov(x, None, True, False, None, z)", (rand(2, 4), 0.0, COUNTS), (0,), "fweights"),
        ("np.cov(x, dtype=np.float32)", (rand(2, 4),), (0,), "dtype"),
        ("np.corrcoef(x, dtype=np.float32)", (rand(2, 4),), (0,), "dtype"),
        ("np.gradient(x)", (rand(3, 4),), (0,), "along one axis"),
        ("np.gradient(x, y)", (rand(4), 0.5), (0, 1), "'varargs'"),
        ("np.cumulative_sum(x, dtype=np.float32)", (rand(4),), (0,), "dtype"),
        ("np.polyval(x, y)", (rand(3, 2), rand(2)), (0, 1), "1-d coefficients"),
        ("np.trapezoid(x, y)", (rand(3, 4), rand(2, 3, 4)), (1,), "x 1-D along the axis"),
        ("np.trapezoid(x, dx=y)", (rand(3, 4), rand(3, 3)), (1,), "a number for dx"),
        ("np.select([x > 0], c)", (rand(3),), (0,), "choicelist|list 'c'"),
    ],
)
def test_what_is_refused_is_refused_clearly(expr, args, wrt, match):
    params = ", ".join("xyz"[: len(args)])
    f = make_function(f"np.sum({expr})", params, {"XP": XP}, before="c = [x, 2.0 * x]")
    with pytest.raises((srcad.TransformError, ValueError), match=match):
        srcad.grad(f, wrt=wrt)(*args)
    tangents = tuple(np.ones_like(a) if k in wrt else None for k, a in enumerate(args))
    with pytest.raises((srcad.TransformError, ValueError), match=match):
        srcad.jvp(f, args, tangents)
