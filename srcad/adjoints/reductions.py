"""Adjoints of reductions: sum, mean, prod, max/min (ties split evenly), var, std, their
NaN-ignoring forms (no gradient at NaN entries), median, quantile, percentile, average, and
the cumulative cumsum, cumulative_sum and cumprod.

sum, mean, prod, max and min take NumPy's mask ``where=`` (entries outside it get no
gradient), max and min an ``initial=`` value: where it is the result it is one more tie,
taking its even share of the gradient (all of it where it alone wins; a constant takes its
share nowhere)."""

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, linear, nondifferentiable, tangent, xp
from srcad.runtime.accumulate import (
    count,
    extremum_share,
    initial_share,
    keep_reduced,
    piece_of,
    prod_others,
    unbroadcast,
    uncumsum,
    unit_if_zero,
    unreduce,
)
from srcad.runtime.complexes import conj_if_complex, real_part
from srcad.runtime.numeric import initial_parts
from srcad.runtime.statistics import gather_weights, quantile_grad, quantile_jvp, spread_weights

#: operands that say which axes, not values: integers, however they were computed (a loop
#: counter popped off a tape at third order must not be taken to vary)
_AXES = ("axis", "keepdims", "where")
_SPREAD = ("axis", "ddof", "keepdims")


@linear(np.sum, Method("sum"), static=_AXES, changes_shape=True, reduces=True)
def sum(y, x, axis=None, keepdims=False, *, where=True):
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims, where=where)


@linear(np.mean, Method("mean"), static=_AXES, changes_shape=True, reduces=True)
def mean(y, x, axis=None, keepdims=False, *, where=True):
    d[x] = unreduce(
        d[y] / count(x, axis, keepdims=keepdims, where=where),
        x,
        axis=axis,
        keepdims=keepdims,
        where=where,
    )


@adjoint(np.prod, Method("prod"), static=_AXES, changes_shape=True, reduces=True)
def prod(y, x, axis=None, keepdims=False, *, where=True):
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims, where=where) * prod_others(
        x, axis, where=where
    )


@adjoint(
    np.max, np.amax, Method("max"), np.min, np.amin, Method("min"),
    static=_AXES, changes_shape=True, reduces=True,
)  # fmt: skip
def max(y, x, axis=None, keepdims=False, *, initial=None, where=True):
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims, where=where) * extremum_share(
        x, y, axis, keepdims, initial=initial, where=where
    )
    d[initial] = unbroadcast(d[y] * initial_share(x, y, initial, axis, keepdims, where), initial)


@adjoint(np.var, Method("var"), static=_SPREAD)
def var(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    scale = 2 / (count(x, axis) - ddof)
    d[x] = unreduce(real_part(d[y]) * scale, x, axis=axis, keepdims=keepdims) * conj_if_complex(
        centred
    )


@adjoint(np.std, Method("std"), static=_SPREAD)
def std(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    # zero spread (one element, or all equal): centred is 0 there, and so the subgradient
    scale = real_part(d[y]) / ((count(x, axis) - ddof) * unit_if_zero(y))
    d[x] = unreduce(scale, x, axis=axis, keepdims=keepdims) * conj_if_complex(centred)


# ---- NaN-ignoring reductions: NaN entries are left out, and get no gradient (as JAX);
# ddof and keepdims by keyword only (NumPy's dtype and out come before them) ----


@adjoint(np.nansum)
def nansum(y, x, axis=None, *, keepdims=False):
    d[x] = xp.where(xp.isnan(x), 0.0, unreduce(d[y], x, axis=axis, keepdims=keepdims))


@adjoint(np.nanmax, np.nanmin)
def nanmax(y, x, axis=None, *, keepdims=False):
    # NaN entries never equal the max: their share is 0
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims) * extremum_share(x, y, axis, keepdims)


@adjoint(np.nanmean)
def nanmean(y, x, axis=None, *, keepdims=False):
    n = xp.sum(~xp.isnan(x), axis=axis, keepdims=True)
    d[x] = xp.where(xp.isnan(x), 0.0, unreduce(d[y], x, axis=axis, keepdims=keepdims) / n)


@adjoint(np.nanprod)
def nanprod(y, x, axis=None, *, keepdims=False):
    others = prod_others(xp.where(xp.isnan(x), 1.0, x), axis)
    d[x] = xp.where(xp.isnan(x), 0.0, unreduce(d[y], x, axis=axis, keepdims=keepdims) * others)


@adjoint(np.nanvar)
def nanvar(y, x, axis=None, *, ddof=0, keepdims=False):
    kept = ~xp.isnan(x)
    centred = xp.where(kept, x - xp.nanmean(x, axis=axis, keepdims=True), 0.0)
    scale = 2 / (xp.sum(kept, axis=axis, keepdims=True) - ddof)
    d[x] = (
        unreduce(real_part(d[y]), x, axis=axis, keepdims=keepdims)
        * scale
        * conj_if_complex(centred)
    )


@adjoint(np.nanstd)
def nanstd(y, x, axis=None, *, ddof=0, keepdims=False):
    kept = ~xp.isnan(x)
    centred = xp.where(kept, x - xp.nanmean(x, axis=axis, keepdims=True), 0.0)
    spread = (xp.sum(kept, axis=axis, keepdims=True) - ddof) * keep_reduced(
        unit_if_zero(y), x, axis, keepdims
    )
    g = unreduce(real_part(d[y]), x, axis=axis, keepdims=keepdims)
    d[x] = g * conj_if_complex(centred) / spread


# ---- order statistics: near any input a fixed weighted sum of entries ----


@adjoint(np.quantile)
def quantile(y, x, q, axis=None, *, method="linear", keepdims=False):
    d[x] = quantile_grad(d[y], x, q, axis, keepdims, method)


@adjoint(np.percentile)
def percentile(y, x, q, axis=None, *, method="linear", keepdims=False):
    d[x] = quantile_grad(d[y], x, q, axis, keepdims, method, True)


@adjoint(np.median)
def median(y, x, axis=None, *, keepdims=False):
    d[x] = quantile_grad(d[y], x, 0.5, axis, keepdims)


@adjoint(np.average)
def average(y, a, axis=None, weights=None, *, keepdims=False):
    # y = sum(a w) / sum(w): dy/da = w / sum(w), dy/dw = (a - y) / sum(w)
    w = spread_weights(weights, a, axis)
    g = keep_reduced(d[y], a, axis, keepdims) / xp.sum(w, axis=axis, keepdims=True)
    d[a] = g * w
    d[weights] = gather_weights(g * (a - keep_reduced(y, a, axis, keepdims)), weights, a, axis)


@linear(np.cumsum, Method("cumsum"), changes_shape=True)
def cumsum(y, x, axis=None):
    d[x] = uncumsum(d[y], x, axis)


nondifferentiable(initial_parts)


@linear(np.cumulative_sum)
def cumulative_sum(y, x, *, axis=None, include_initial=False):
    # the leading zero include_initial adds gets no gradient
    d[x] = uncumsum(piece_of(d[y], initial_parts(x, axis, include_initial), 1, axis), x, axis)


@adjoint(np.cumprod, Method("cumprod"))
def cumprod(y, x, axis=None):
    # dy[k]/dx[j] (j <= k) is the product of x[:k+1] without x[j]; computed without dividing
    # by zeros: the product of the nonzero entries, divided by x[j] where x[j] is nonzero,
    # times that of the zero entries other than x[j]. The latter is 1 if there are none
    # and 0 if there are several, but written as the one zero's value x[f] (0) where there
    # is one, so that second derivatives through it are exact too. (``axis`` by position
    # throughout: np.multiply.accumulate reuses this template with its default 0.)
    flat = xp.reshape(x, y.shape)
    zero = flat == 0
    zeros_so_far = xp.cumsum(zero, axis)
    first = xp.sum(flat * (zero & (zeros_so_far == 1)), axis, keepdims=True)
    second = xp.sum(flat * (zero & (zeros_so_far == 2)), axis, keepdims=True)
    safe = xp.where(zero, 1, flat)
    weighted = xp.cumprod(safe, axis) * d[y]
    # sums over k >= j of weighted[k], split by how many zeros x[:k+1] holds
    none = xp.flip(xp.cumsum(xp.flip(weighted * (zeros_so_far == 0), axis), axis), axis)
    one = xp.flip(xp.cumsum(xp.flip(weighted * (zeros_so_far == 1), axis), axis), axis)
    two = xp.flip(xp.cumsum(xp.flip(weighted * (zeros_so_far == 2), axis), axis), axis)
    other = xp.where(zeros_so_far == 1, second, first)
    d[x] = xp.reshape(xp.where(zero, one + two * other, (none + one * first) / safe), x.shape)


# ---- tangents ----


@tangent(np.prod, Method("prod"), static=_AXES)
def prod_tangent(y, x, axis=None, keepdims=False, *, where=True):
    others = prod_others(x, axis, where=where)
    d[y] = xp.sum(d[x] * others, axis=axis, keepdims=keepdims, where=where)


@tangent(np.max, np.amax, Method("max"), np.min, np.amin, Method("min"), static=_AXES)
def max_tangent(y, x, axis=None, keepdims=False, *, initial=None, where=True):
    share = extremum_share(x, y, axis, keepdims, initial=initial, where=where)
    d[y] = xp.sum(d[x] * share, axis=axis, keepdims=keepdims, where=where)
    d[y] = d[initial] * initial_share(x, y, initial, axis, keepdims, where)


@tangent(np.var, Method("var"), static=_SPREAD)
def var_tangent(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    scale = 2 / (count(x, axis) - ddof)
    d[y] = xp.real(xp.sum(d[x] * conj_if_complex(centred), axis=axis, keepdims=keepdims)) * scale


@tangent(np.std, Method("std"), static=_SPREAD)
def std_tangent(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    spread = (count(x, axis) - ddof) * unit_if_zero(y)
    d[y] = xp.real(xp.sum(d[x] * conj_if_complex(centred), axis=axis, keepdims=keepdims)) / spread


@tangent(np.cumprod, Method("cumprod"))
def cumprod_tangent(y, x, axis=None):
    # the adjoint's derivatives applied forward: sum over j <= k of dx[j] * dy[k]/dx[j]
    flat = xp.reshape(x, y.shape)
    zero = flat == 0
    zeros_so_far = xp.cumsum(zero, axis)
    at_first = zero & (zeros_so_far == 1)
    at_second = zero & (zeros_so_far == 2)
    first = xp.sum(flat * at_first, axis, keepdims=True)
    second = xp.sum(flat * at_second, axis, keepdims=True)
    safe = xp.where(zero, 1, flat)
    d[y] = xp.cumprod(safe, axis) * (
        ((zeros_so_far == 0) + (zeros_so_far == 1) * first)
        * xp.cumsum(xp.reshape(d[x], y.shape) / safe * ~zero, axis)
        + ((zeros_so_far == 1) + (zeros_so_far == 2) * second)
        * xp.sum(xp.reshape(d[x], y.shape) * at_first, axis, keepdims=True)
        + (zeros_so_far == 2)
        * first
        * xp.sum(xp.reshape(d[x], y.shape) * at_second, axis, keepdims=True)
    )


@tangent(np.nansum)
def nansum_tangent(y, x, axis=None, *, keepdims=False):
    d[y] = xp.sum(xp.where(xp.isnan(x), 0.0, d[x]), axis=axis, keepdims=keepdims)


@tangent(np.nanmax, np.nanmin)
def nanmax_tangent(y, x, axis=None, *, keepdims=False):
    share = extremum_share(x, y, axis, keepdims)
    d[y] = xp.sum(xp.where(xp.isnan(x), 0.0, d[x]) * share, axis=axis, keepdims=keepdims)


@tangent(np.nanmean)
def nanmean_tangent(y, x, axis=None, *, keepdims=False):
    n = xp.sum(~xp.isnan(x), axis=axis, keepdims=keepdims)
    d[y] = xp.sum(xp.where(xp.isnan(x), 0.0, d[x]), axis=axis, keepdims=keepdims) / n


@tangent(np.nanprod)
def nanprod_tangent(y, x, axis=None, *, keepdims=False):
    others = prod_others(xp.where(xp.isnan(x), 1.0, x), axis)
    d[y] = xp.sum(xp.where(xp.isnan(x), 0.0, d[x] * others), axis=axis, keepdims=keepdims)


@tangent(np.nanvar)
def nanvar_tangent(y, x, axis=None, *, ddof=0, keepdims=False):
    kept = ~xp.isnan(x)
    centred = xp.where(kept, x - xp.nanmean(x, axis=axis, keepdims=True), 0.0)
    scale = 2 / (xp.sum(kept, axis=axis, keepdims=keepdims) - ddof)
    terms = xp.where(kept, d[x], 0.0) * conj_if_complex(centred)
    d[y] = xp.real(xp.sum(terms, axis=axis, keepdims=keepdims)) * scale


@tangent(np.nanstd)
def nanstd_tangent(y, x, axis=None, *, ddof=0, keepdims=False):
    kept = ~xp.isnan(x)
    centred = xp.where(kept, x - xp.nanmean(x, axis=axis, keepdims=True), 0.0)
    spread = (xp.sum(kept, axis=axis, keepdims=keepdims) - ddof) * unit_if_zero(y)
    terms = xp.where(kept, d[x], 0.0) * conj_if_complex(centred)
    d[y] = xp.real(xp.sum(terms, axis=axis, keepdims=keepdims)) / spread


@tangent(np.quantile)
def quantile_tangent(y, x, q, axis=None, *, method="linear", keepdims=False):
    d[y] = quantile_jvp(d[x], x, q, axis, keepdims, method)


@tangent(np.percentile)
def percentile_tangent(y, x, q, axis=None, *, method="linear", keepdims=False):
    d[y] = quantile_jvp(d[x], x, q, axis, keepdims, method, True)


@tangent(np.median)
def median_tangent(y, x, axis=None, *, keepdims=False):
    d[y] = quantile_jvp(d[x], x, 0.5, axis, keepdims)


@tangent(np.average)
def average_tangent(y, a, axis=None, weights=None, *, keepdims=False):
    w = spread_weights(weights, a, axis)
    total = xp.sum(w, axis=axis, keepdims=keepdims)
    d[y] = xp.sum(d[a] * w, axis=axis, keepdims=keepdims) / total
    d[y] = (
        xp.sum(
            spread_weights(d[weights], a, axis) * (a - keep_reduced(y, a, axis, keepdims)),
            axis=axis,
            keepdims=keepdims,
        )
        / total
    )


# ---- the helpers of these rules: linear in their first argument, each other's adjoints;
# the quantile's weights are piecewise constant in x (no derivative through them) ----


@linear(quantile_grad, static=("x",))
def quantile_grad_adjoint(r, g, x, q, axis=None, keepdims=False, method="linear", percent=False):
    d[g] = quantile_jvp(d[r], x, q, axis, keepdims, method, percent)


@linear(quantile_jvp, static=("x",))
def quantile_jvp_adjoint(r, t, x, q, axis=None, keepdims=False, method="linear", percent=False):
    d[t] = quantile_grad(d[r], x, q, axis, keepdims, method, percent)


@linear(spread_weights, static=("a",))
def spread_weights_adjoint(r, weights, a, axis=None):
    d[weights] = gather_weights(d[r], weights, a, axis)


@linear(gather_weights, static=("weights", "a"))
def gather_weights_adjoint(r, g, weights, a, axis=None):
    d[g] = spread_weights(d[r], a, axis)
