"""Adjoints of reductions: sum, mean, prod, max/min (ties split evenly), var, std."""

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, tangent, xp
from srcad.runtime.accumulate import (
    count,
    extremum_share,
    prod_others,
    uncumsum,
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
    scale = d[y] / ((count(x, axis) - ddof) * y)
    d[x] = unreduce(scale, x, axis=axis, keepdims=keepdims) * centred


@adjoint(np.cumsum, Method("cumsum"))
def cumsum(y, x, axis=None):
    d[x] = uncumsum(d[y], x, axis)


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
    d[y] = xp.sum(d[x] * centred, axis=axis, keepdims=keepdims) / ((count(x, axis) - ddof) * y)


@tangent(np.cumsum, Method("cumsum"))
def cumsum_tangent(y, x, axis=None):
    d[y] = xp.cumsum(d[x], axis=axis)
