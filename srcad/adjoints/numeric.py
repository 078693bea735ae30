"""Adjoints of NumPy's numerical routines: np.interp, np.convolve and np.correlate,
np.polyval, np.vander, np.trapezoid, np.gradient, np.cov and np.corrcoef; and of the helpers
their derivative code calls (for derivatives of derivatives)."""

import numpy as np

from srcad.adjoints.registry import adjoint, d, linear, nondifferentiable, tangent, xp
from srcad.runtime.accumulate import real_like, undiff
from srcad.runtime.complexes import conj_if_complex
from srcad.runtime.numeric import (
    cov_rows,
    cov_rows_part,
    cov_rows_piece,
    cov_scale,
    full_padding,
    gradient_along,
    gradient_transposed,
    interp_fp_grad,
    interp_fp_jvp,
    interp_slope,
    interp_slope_grad,
    pair_sum,
    poly_powers,
    sample_points,
    sample_points_grad,
    sample_points_piece,
    symmetric,
    unpair_sum,
    vander_powers,
)

# integers and pad widths computed from shapes and constants
nondifferentiable(full_padding, cov_scale, poly_powers, vander_powers)

# np.trapz: NumPy 2.0 to 2.3's deprecated name of np.trapezoid (removed in 2.4)
TRAPEZOID = tuple(getattr(np, name) for name in ("trapezoid", "trapz") if hasattr(np, name))


@adjoint(np.interp)
def interp(y, x, xp, fp, left=None, right=None, period=None):
    # no gradient for xp, left, right, period: refused where they vary. At a breakpoint the
    # slope to its right (to its left at xp[-1]); 0 outside xp's range. The parameter xp
    # shadows the namespace: the interp templates call only helpers
    d[x] = d[y] * interp_slope(x, xp, fp, left, right, period)
    d[fp] = interp_fp_grad(d[y], x, xp, fp, left, right, period)


@adjoint(np.convolve)
def convolve(y, a, v, mode="full"):
    # the gradient of the full result is a correlation; other modes cut some of it off
    full = xp.pad(d[y], full_padding(a, v, mode))
    # (np.correlate conjugates its second argument: undone for complex values)
    d[a] = real_like(xp.correlate(full, conj_if_complex(v), "valid"), a)
    d[v] = real_like(xp.correlate(full, conj_if_complex(a), "valid"), v)


@adjoint(np.correlate)
def correlate(y, a, v, mode="valid"):
    # correlate(a, v, 'full') is convolve(a, flip(v), 'full')
    full = xp.pad(d[y], full_padding(a, v, mode, True))
    d[a] = real_like(xp.correlate(full, xp.flip(v), "valid"), a)
    # correlate(a, v) = convolve(a, flip(conj(v))): conjugate-linear in v
    d[v] = real_like(xp.flip(conj_if_complex(xp.correlate(full, conj_if_complex(a), "valid"))), v)


@adjoint(np.polyval)
def polyval(y, p, x):
    k = poly_powers(p)
    # (x may be a Python number)
    d[p] = real_like(xp.reshape(d[y], (-1,)) @ xp.reshape(xp.asarray(x), (-1, 1)) ** k, p)
    d[x] = real_like(d[y] * xp.polyval(p[:-1] * k[:-1], x), x)


@adjoint(np.vander)
def vander(y, x, N=None, increasing=False):
    k = vander_powers(x, N, increasing)
    # k * x ** (k - 1), with 0 for k = 0 (also at x = 0)
    d[x] = xp.sum(d[y] * k * xp.expand_dims(x, -1) ** xp.maximum(k - 1, 0), axis=-1)


@adjoint(*TRAPEZOID)
def trapezoid(r, y, x=None, dx=1.0, axis=-1):
    # r = sum over the axis of diff(X) * (y[1:] + y[:-1]) / 2, X the sample points
    points = sample_points(x, dx, y, axis)
    g = xp.expand_dims(d[r], axis)
    d[y] = unpair_sum(g * xp.diff(points, axis=axis), axis) / 2
    by_points = undiff(g * pair_sum(y, axis), points, 1, axis) / 2
    d[x] = sample_points_grad(by_points, x, y, axis, 0)
    d[dx] = sample_points_grad(by_points, x, y, axis, 1)


@adjoint(np.gradient)
def gradient(y, f, *varargs, axis=None, edge_order=1):
    # linear in f; a varying spacing is refused
    d[f] = gradient_transposed(d[y], varargs, axis, edge_order)


@adjoint(np.cov)
def cov(c, m, y=None, rowvar=True, bias=False, ddof=None):
    rows = cov_rows(m, y, rowvar)
    centred = rows - xp.mean(rows, axis=1, keepdims=True)
    g = xp.reshape(d[c], (rows.shape[0], rows.shape[0]))
    by_rows = symmetric(g) @ centred / cov_scale(rows, bias, ddof)
    d[m] = cov_rows_part(by_rows, m, y, rowvar, 0)
    d[y] = cov_rows_part(by_rows, m, y, rowvar, 1)


@adjoint(np.corrcoef)
def corrcoef(r, x, y=None, rowvar=True):
    # r = u @ u.T for the rows u of the centred variables scaled to unit length
    rows = cov_rows(x, y, rowvar)
    centred = rows - xp.mean(rows, axis=1, keepdims=True)
    norms = xp.sqrt(xp.sum(centred * centred, axis=1, keepdims=True))
    unit = centred / norms
    by_unit = symmetric(xp.reshape(d[r], (rows.shape[0], rows.shape[0]))) @ unit
    by_rows = (by_unit - unit * xp.sum(unit * by_unit, axis=1, keepdims=True)) / norms
    d[x] = cov_rows_part(by_rows, x, y, rowvar, 0)
    d[y] = cov_rows_part(by_rows, x, y, rowvar, 1)


# ---- tangents ----


@tangent(np.interp)
def interp_tangent(y, x, xp, fp, left=None, right=None, period=None):
    d[y] = d[x] * interp_slope(x, xp, fp, left, right, period)
    d[y] = interp_fp_jvp(d[fp], x, xp, left, right, period)


@tangent(np.convolve)
def convolve_tangent(y, a, v, mode="full"):
    d[y] = xp.convolve(d[a], v, mode)
    d[y] = xp.convolve(a, d[v], mode)


@tangent(np.correlate)
def correlate_tangent(y, a, v, mode="valid"):
    d[y] = xp.correlate(d[a], v, mode)
    d[y] = xp.correlate(a, d[v], mode)


@tangent(np.polyval)
def polyval_tangent(y, p, x):
    k = poly_powers(p)
    d[y] = xp.polyval(d[p], x)
    d[y] = d[x] * xp.polyval(p[:-1] * k[:-1], x)


@tangent(np.vander)
def vander_tangent(y, x, N=None, increasing=False):
    k = vander_powers(x, N, increasing)
    d[y] = xp.expand_dims(d[x], -1) * k * xp.expand_dims(x, -1) ** xp.maximum(k - 1, 0)


@tangent(*TRAPEZOID)
def trapezoid_tangent(r, y, x=None, dx=1.0, axis=-1):
    d[r] = xp.trapezoid(d[y], x, dx, axis)
    # moving the points by t: the trapezoid rule of y over the points t
    d[r] = xp.trapezoid(y, sample_points_piece(d[x], x, y, axis, 0), axis=axis)
    d[r] = xp.trapezoid(y, sample_points_piece(d[dx], x, y, axis, 1), axis=axis)


@tangent(np.gradient)
def gradient_tangent(y, f, *varargs, axis=None, edge_order=1):
    d[y] = gradient_along(d[f], varargs, axis, edge_order)


@tangent(np.cov)
def cov_tangent(c, m, y=None, rowvar=True, bias=False, ddof=None):
    rows = cov_rows(m, y, rowvar)
    centred = rows - xp.mean(rows, axis=1, keepdims=True)
    scale = cov_scale(rows, bias, ddof)
    # (the tangent's rows need no centring: centred's rows sum to 0)
    d[c] = xp.reshape(
        symmetric(cov_rows_piece(d[m], m, y, rowvar, 0) @ centred.T) / scale, xp.shape(c)
    )
    d[c] = xp.reshape(
        symmetric(cov_rows_piece(d[y], m, y, rowvar, 1) @ centred.T) / scale, xp.shape(c)
    )


@tangent(np.corrcoef)
def corrcoef_tangent(r, x, y=None, rowvar=True):
    rows = cov_rows(x, y, rowvar)
    centred = rows - xp.mean(rows, axis=1, keepdims=True)
    norms = xp.sqrt(xp.sum(centred * centred, axis=1, keepdims=True))
    unit = centred / norms
    # the tangent t of the rows moves unit by (t - unit * sum(t * unit)) / norms
    tx = cov_rows_piece(d[x], x, y, rowvar, 0)
    ty = cov_rows_piece(d[y], x, y, rowvar, 1)
    d[r] = xp.reshape(
        symmetric((tx - unit * xp.sum(tx * unit, axis=1, keepdims=True)) / norms @ unit.T),
        xp.shape(r),
    )
    d[r] = xp.reshape(
        symmetric((ty - unit * xp.sum(ty * unit, axis=1, keepdims=True)) / norms @ unit.T),
        xp.shape(r),
    )


# ---- the helpers of these rules: each linear in its first argument (interp_slope in fp),
# and the transpose of another; the interpolation's slopes are piecewise constant in x ----

_INTERP = ("x", "xp", "left", "right", "period")


@linear(interp_slope, static=_INTERP)
def interp_slope_adjoint(s, x, xp, fp, left=None, right=None, period=None):
    d[fp] = interp_slope_grad(d[s], x, xp, fp, left, right, period)


@linear(interp_slope_grad, static=(*_INTERP, "fp"))
def interp_slope_grad_adjoint(r, g, x, xp, fp, left=None, right=None, period=None):
    d[g] = interp_slope(x, xp, d[r], left, right, period)


# the weights move with x (the indices and slopes do not): by x, interp_fp_jvp changes at
# the rate interp_slope, interp_fp_grad at that of interp_slope_grad

_WEIGHTS = ("xp", "left", "right", "period")


@adjoint(interp_fp_jvp, static=_WEIGHTS)
def interp_fp_jvp_adjoint(r, t, x, xp, left=None, right=None, period=None):
    d[t] = interp_fp_grad(d[r], x, xp, t, left, right, period)
    d[x] = d[r] * interp_slope(x, xp, t, left, right, period)


@tangent(interp_fp_jvp, static=_WEIGHTS)
def interp_fp_jvp_tangent(r, t, x, xp, left=None, right=None, period=None):
    d[r] = interp_fp_jvp(d[t], x, xp, left, right, period)
    d[r] = d[x] * interp_slope(x, xp, t, left, right, period)


@adjoint(interp_fp_grad, static=(*_WEIGHTS, "fp"))
def interp_fp_grad_adjoint(r, g, x, xp, fp, left=None, right=None, period=None):
    d[g] = interp_fp_jvp(d[r], x, xp, left, right, period)
    d[x] = g * interp_slope(x, xp, d[r], left, right, period)


@tangent(interp_fp_grad, static=(*_WEIGHTS, "fp"))
def interp_fp_grad_tangent(r, g, x, xp, fp, left=None, right=None, period=None):
    d[r] = interp_fp_grad(d[g], x, xp, fp, left, right, period)
    d[r] = interp_slope_grad(g * d[x], x, xp, fp, left, right, period)


@adjoint(sample_points, static=("y",))
def sample_points_adjoint(p, x, dx, y, axis=-1):
    d[x] = sample_points_grad(d[p], x, y, axis, 0)
    d[dx] = sample_points_grad(d[p], x, y, axis, 1)


@tangent(sample_points, static=("y",))
def sample_points_tangent(p, x, dx, y, axis=-1):
    d[p] = sample_points_piece(d[x], x, y, axis, 0)
    d[p] = sample_points_piece(d[dx], x, y, axis, 1)


@linear(sample_points_piece, static=("x", "y"))
def sample_points_piece_adjoint(r, t, x, y, axis=-1, which=0):
    d[t] = sample_points_grad(d[r], x, y, axis, which)


@linear(sample_points_grad, static=("x", "y"))
def sample_points_grad_adjoint(r, g, x, y, axis=-1, which=0):
    d[g] = sample_points_piece(d[r], x, y, axis, which)


@linear(pair_sum)
def pair_sum_adjoint(r, v, axis=-1):
    d[v] = unpair_sum(d[r], axis)


@linear(unpair_sum)
def unpair_sum_adjoint(r, s, axis=-1):
    d[s] = pair_sum(d[r], axis)


@linear(gradient_along, static=("spacing",))
def gradient_along_adjoint(r, t, spacing=(), axis=None, edge_order=1):
    d[t] = gradient_transposed(d[r], spacing, axis, edge_order)


@linear(gradient_transposed, static=("spacing",))
def gradient_transposed_adjoint(r, g, spacing=(), axis=None, edge_order=1):
    d[g] = gradient_along(d[r], spacing, axis, edge_order)


@adjoint(cov_rows)
def cov_rows_adjoint(r, m, y=None, rowvar=True):
    d[m] = cov_rows_part(d[r], m, y, rowvar, 0)
    d[y] = cov_rows_part(d[r], m, y, rowvar, 1)


@tangent(cov_rows)
def cov_rows_tangent(r, m, y=None, rowvar=True):
    d[r] = cov_rows_piece(d[m], m, y, rowvar, 0)
    d[r] = cov_rows_piece(d[y], m, y, rowvar, 1)


@linear(cov_rows_part, static=("m", "y"))
def cov_rows_part_adjoint(r, g, m, y=None, rowvar=True, which=0):
    d[g] = cov_rows_piece(d[r], m, y, rowvar, which)


@linear(cov_rows_piece, static=("m", "y"))
def cov_rows_piece_adjoint(r, t, m, y=None, rowvar=True, which=0):
    d[t] = cov_rows_part(d[r], m, y, rowvar, which)


@linear(symmetric)
def symmetric_adjoint(r, a):
    d[a] = symmetric(d[r])
