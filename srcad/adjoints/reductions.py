"""Adjoints of reductions: sum, mean, prod, max/min (ties split evenly), var, std, and the
cumulative cumsum and cumprod."""

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, tangent, xp
from srcad.runtime.accumulate import (
    count,
    extremum_share,
    prod_others,
    uncumsum,
    unit_if_zero,
    unreduce,
)


@adjoint(np.sum, Method("sum"))
def sum(y, x, axis=None, keepdims=False):
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims)


@adjoint(np.mean, Method("mean"))
def mean(y, x, axis=None, keepdims=False):
    d[x] = unreduce(d[y] / count(x, axis), x, axis=axis, keepdims=keepdims)


@adjoint(np.prod, Method("prod"))
def prod(y, x, axis=None, keepdims=False):
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims) * prod_others(x, axis)


@adjoint(np.max, np.amax, Method("max"), np.min, np.amin, Method("min"))
def max(y, x, axis=None, keepdims=False):
    d[x] = unreduce(d[y], x, axis=axis, keepdims=keepdims) * extremum_share(x, y, axis, keepdims)


@adjoint(np.var, Method("var"))
def var(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    scale = 2 / (count(x, axis) - ddof)
    d[x] = unreduce(d[y] * scale, x, axis=axis, keepdims=keepdims) * centred


@adjoint(np.std, Method("std"))
def std(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    # zero spread (one element, or all equal): centred is 0 there, and so the subgradient
    scale = d[y] / ((count(x, axis) - ddof) * unit_if_zero(y))
    d[x] = unreduce(scale, x, axis=axis, keepdims=keepdims) * centred


@adjoint(np.cumsum, Method("cumsum"))
def cumsum(y, x, axis=None):
    d[x] = uncumsum(d[y], x, axis)


@adjoint(np.cumprod, Method("cumprod"))
def cumprod(y, x, axis=None):
    # dy[k]/dx[j] (j <= k) is the product of x[:k+1] without x[j]; computed without dividing
    # by zeros: the product of the nonzero entries, divided by x[j] where x[j] is nonzero,
    # times that of the zero entries other than x[j]. The latter is 1 if there are none
    # and 0 if there are several, but written as the one zero's value x[f] (0) where there
    # is one, so that second derivatives through it are exact too.
    flat = xp.reshape(x, y.shape)
    zero = flat == 0
    zeros_so_far = xp.cumsum(zero, axis=axis)
    first = xp.sum(flat * (zero & (zeros_so_far == 1)), axis=axis, keepdims=True)
    second = xp.sum(flat * (zero & (zeros_so_far == 2)), axis=axis, keepdims=True)
    safe = xp.where(zero, 1, flat)
    weighted = xp.cumprod(safe, axis=axis) * d[y]
    # sums over k >= j of weighted[k], split by how many zeros x[:k+1] holds
    none = xp.flip(xp.cumsum(xp.flip(weighted * (zeros_so_far == 0), axis), axis), axis)
    one = xp.flip(xp.cumsum(xp.flip(weighted * (zeros_so_far == 1), axis), axis), axis)
    two = xp.flip(xp.cumsum(xp.flip(weighted * (zeros_so_far == 2), axis), axis), axis)
    other = xp.where(zeros_so_far == 1, second, first)
    d[x] = xp.reshape(xp.where(zero, one + two * other, (none + one * first) / safe), x.shape)


# ---- tangents ----


@tangent(np.sum, Method("sum"))
def sum_tangent(y, x, axis=None, keepdims=False):
    d[y] = xp.sum(d[x], axis=axis, keepdims=keepdims)


@tangent(np.mean, Method("mean"))
def mean_tangent(y, x, axis=None, keepdims=False):
    d[y] = xp.mean(d[x], axis=axis, keepdims=keepdims)


@tangent(np.prod, Method("prod"))
def prod_tangent(y, x, axis=None, keepdims=False):
    d[y] = xp.sum(d[x] * prod_others(x, axis), axis=axis, keepdims=keepdims)


@tangent(np.max, np.amax, Method("max"), np.min, np.amin, Method("min"))
def max_tangent(y, x, axis=None, keepdims=False):
    share = extremum_share(x, y, axis, keepdims)
    d[y] = xp.sum(d[x] * share, axis=axis, keepdims=keepdims)


@tangent(np.var, Method("var"))
def var_tangent(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    scale = 2 / (count(x, axis) - ddof)
    d[y] = xp.sum(d[x] * centred, axis=axis, keepdims=keepdims) * scale


@tangent(np.std, Method("std"))
def std_tangent(y, x, axis=None, ddof=0, keepdims=False):
    centred = x - xp.mean(x, axis=axis, keepdims=True)
    spread = (count(x, axis) - ddof) * unit_if_zero(y)
    d[y] = xp.sum(d[x] * centred, axis=axis, keepdims=keepdims) / spread


@tangent(np.cumsum, Method("cumsum"))
def cumsum_tangent(y, x, axis=None):
    d[y] = xp.cumsum(d[x], axis=axis)


@tangent(np.cumprod, Method("cumprod"))
def cumprod_tangent(y, x, axis=None):
    # the adjoint's derivatives applied forward: sum over j <= k of dx[j] * dy[k]/dx[j]
    flat = xp.reshape(x, y.shape)
    zero = flat == 0
    zeros_so_far = xp.cumsum(zero, axis=axis)
    at_first = zero & (zeros_so_far == 1)
    at_second = zero & (zeros_so_far == 2)
    first = xp.sum(flat * at_first, axis=axis, keepdims=True)
    second = xp.sum(flat * at_second, axis=axis, keepdims=True)
    safe = xp.where(zero, 1, flat)
    d[y] = xp.cumprod(safe, axis=axis) * (
        ((zeros_so_far == 0) + (zeros_so_far == 1) * first)
        * xp.cumsum(xp.reshape(d[x], y.shape) / safe * ~zero, axis=axis)
        + ((zeros_so_far == 1) + (zeros_so_far == 2) * second)
        * xp.sum(xp.reshape(d[x], y.shape) * at_first, axis=axis, keepdims=True)
        + (zeros_so_far == 2)
        * first
        * xp.sum(xp.reshape(d[x], y.shape) * at_second, axis=axis, keepdims=True)
    )
