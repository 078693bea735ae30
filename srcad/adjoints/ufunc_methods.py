"""Adjoints of ufunc methods: ``outer`` of add, subtract, multiply, divide, power, maximum,
minimum and logaddexp; ``reduce`` of add, multiply, maximum, minimum (np.sum, np.prod,
np.max, np.min, with their ``keepdims``, ``where`` and ``initial``) and logaddexp
(logsumexp); ``accumulate`` of add, multiply (np.cumsum, np.cumprod), maximum and minimum.

Rules are keyed on the bound methods themselves (``np.add.outer == np.add.outer``). Unlike
the NumPy functions they stand for, ``reduce`` and ``accumulate`` default to ``axis=0``: the
templates pass ``axis`` by position, so that a left-out axis is written out as 0.

Ties split the gradient evenly, as np.maximum and np.max do: in ``maximum.outer`` the two
operands take half each; in ``maximum.accumulate`` each running maximum goes in equal
shares to the entries equal to it since it was first reached.
"""

import types

import numpy as np

from srcad.adjoints import reductions
from srcad.adjoints.registry import adjoint, d, linear, tangent, xp
from srcad.runtime.accumulate import (
    extremum_share,
    initial_share,
    keep_reduced,
    prod_others,
    unbroadcast,
    uncumsum,
    unit_if_zero,
    unreduce,
)
from srcad.runtime.tangents import broadcast_like
from srcad.runtime.ufuncs import (
    running_extremum_grad,
    running_extremum_jvp,
    spread_outer,
    unouter,
)

# ---- outer: ufunc(a[..., None, ...], b), a's axes first; spread_outer(a, y) is a so
# broadcast, and unouter sums a gradient back to a's shape ----


@adjoint(np.add.outer, changes_shape=True)
def add_outer(y, a, b):
    d[a] = unouter(d[y], a)
    d[b] = unbroadcast(d[y], b)


@adjoint(np.subtract.outer, changes_shape=True)
def subtract_outer(y, a, b):
    d[a] = unouter(d[y], a)
    d[b] = -unbroadcast(d[y], b)


@adjoint(np.multiply.outer, changes_shape=True)
def multiply_outer(y, a, b):
    d[a] = unouter(d[y] * b, a)
    d[b] = unbroadcast(d[y] * spread_outer(a, y), b)


@adjoint(np.divide.outer, changes_shape=True)
def divide_outer(y, a, b):
    d[a] = unouter(d[y] / b, a)
    d[b] = unbroadcast(-d[y] * y / b, b)


@adjoint(np.power.outer, changes_shape=True)
def power_outer(y, a, b):
    # np.power's partials (zeros made ones where a term would be 0 * inf)
    base = spread_outer(a, y)
    d[a] = unouter(d[y] * b * base ** (unit_if_zero(b) - 1), a)
    d[b] = unbroadcast(d[y] * y * xp.log(unit_if_zero(base)), b)


@adjoint(np.maximum.outer, changes_shape=True)
def maximum_outer(y, a, b):
    base = spread_outer(a, y)
    share = xp.where(base > b, 1.0, xp.where(base == b, 0.5, 0.0))
    d[a] = unouter(d[y] * share, a)
    d[b] = unbroadcast(d[y] * (1 - share), b)


@adjoint(np.minimum.outer, changes_shape=True)
def minimum_outer(y, a, b):
    base = spread_outer(a, y)
    share = xp.where(base < b, 1.0, xp.where(base == b, 0.5, 0.0))
    d[a] = unouter(d[y] * share, a)
    d[b] = unbroadcast(d[y] * (1 - share), b)


@adjoint(np.logaddexp.outer, changes_shape=True)
def logaddexp_outer(y, a, b):
    d[a] = unouter(d[y] * xp.exp(spread_outer(a, y) - y), a)
    d[b] = unbroadcast(d[y] * xp.exp(b - y), b)


@tangent(np.add.outer)
def add_outer_tangent(y, a, b):
    d[y] = spread_outer(d[a], y)
    d[y] = broadcast_like(d[b], y)


@tangent(np.subtract.outer)
def subtract_outer_tangent(y, a, b):
    d[y] = spread_outer(d[a], y)
    d[y] = -broadcast_like(d[b], y)


@tangent(np.multiply.outer)
def multiply_outer_tangent(y, a, b):
    d[y] = spread_outer(d[a], y) * b
    d[y] = spread_outer(a, y) * d[b]


@tangent(np.divide.outer)
def divide_outer_tangent(y, a, b):
    d[y] = spread_outer(d[a], y) / b
    d[y] = -d[b] * y / b


@tangent(np.power.outer)
def power_outer_tangent(y, a, b):
    base = spread_outer(a, y)
    d[y] = spread_outer(d[a], y) * b * base ** (unit_if_zero(b) - 1)
    d[y] = d[b] * y * xp.log(unit_if_zero(base))


@tangent(np.maximum.outer)
def maximum_outer_tangent(y, a, b):
    base = spread_outer(a, y)
    share = xp.where(base > b, 1.0, xp.where(base == b, 0.5, 0.0))
    d[y] = spread_outer(d[a], y) * share
    d[y] = d[b] * (1 - share)


@tangent(np.minimum.outer)
def minimum_outer_tangent(y, a, b):
    base = spread_outer(a, y)
    share = xp.where(base < b, 1.0, xp.where(base == b, 0.5, 0.0))
    d[y] = spread_outer(d[a], y) * share
    d[y] = d[b] * (1 - share)


@tangent(np.logaddexp.outer)
def logaddexp_outer_tangent(y, a, b):
    d[y] = spread_outer(d[a], y) * xp.exp(spread_outer(a, y) - y)
    d[y] = d[b] * xp.exp(b - y)


# ---- reduce: np.sum, np.prod, np.max, np.min and logsumexp along axis (0 by default);
# dtype and out are refused as the functions' are ----

_REDUCE = ("axis", "keepdims", "where")


@adjoint(np.add.reduce, static=_REDUCE, changes_shape=True)
def add_reduce(y, array, axis=0, *, keepdims=False, where=True):
    d[array] = unreduce(d[y], array, axis, keepdims=keepdims, where=where)


@adjoint(np.multiply.reduce, static=_REDUCE, changes_shape=True)
def multiply_reduce(y, array, axis=0, *, keepdims=False, where=True):
    d[array] = unreduce(d[y], array, axis, keepdims=keepdims, where=where) * prod_others(
        array, axis, where=where
    )


@adjoint(np.maximum.reduce, np.minimum.reduce, static=_REDUCE, changes_shape=True)
def maximum_reduce(y, array, axis=0, *, keepdims=False, initial=None, where=True):
    d[array] = unreduce(d[y], array, axis, keepdims=keepdims, where=where) * extremum_share(
        array, y, axis, keepdims, initial=initial, where=where
    )
    won = initial_share(array, y, initial, axis, keepdims, where)
    d[initial] = unbroadcast(d[y] * won, initial)


@adjoint(np.logaddexp.reduce, static=("axis", "keepdims"), changes_shape=True)
def logaddexp_reduce(y, array, axis=0, *, keepdims=False):
    weights = xp.exp(array - keep_reduced(y, array, axis, keepdims))
    d[array] = unreduce(d[y], array, axis, keepdims=keepdims) * weights


@tangent(np.add.reduce, static=_REDUCE)
def add_reduce_tangent(y, array, axis=0, *, keepdims=False, where=True):
    d[y] = xp.sum(d[array], axis, keepdims=keepdims, where=where)


@tangent(np.multiply.reduce, static=_REDUCE)
def multiply_reduce_tangent(y, array, axis=0, *, keepdims=False, where=True):
    others = prod_others(array, axis, where=where)
    d[y] = xp.sum(d[array] * others, axis, keepdims=keepdims, where=where)


@tangent(np.maximum.reduce, np.minimum.reduce, static=_REDUCE)
def maximum_reduce_tangent(y, array, axis=0, *, keepdims=False, initial=None, where=True):
    share = extremum_share(array, y, axis, keepdims, initial=initial, where=where)
    d[y] = xp.sum(d[array] * share, axis, keepdims=keepdims, where=where)
    d[y] = d[initial] * initial_share(array, y, initial, axis, keepdims, where)


@tangent(np.logaddexp.reduce, static=("axis", "keepdims"))
def logaddexp_reduce_tangent(y, array, axis=0, *, keepdims=False):
    weights = xp.exp(array - keep_reduced(y, array, axis, keepdims))
    d[y] = xp.sum(d[array] * weights, axis, keepdims=keepdims)


# ---- accumulate: np.cumsum and np.cumprod along axis (0 by default), the running max/min ----


@adjoint(np.add.accumulate, static=("axis",))
def add_accumulate(y, array, axis=0):
    d[array] = uncumsum(d[y], array, axis)


@tangent(np.add.accumulate, static=("axis",))
def add_accumulate_tangent(y, array, axis=0):
    d[y] = xp.cumsum(d[array], axis)


def _along_first_axis(template: types.FunctionType, name: str) -> types.FunctionType:
    """``template`` (its source: the same rule) with ``axis`` defaulting to 0, reading this
    module's names (the template must use none but ``d`` and ``xp``)."""
    return types.FunctionType(template.__code__, globals(), name, (0,))


adjoint(np.multiply.accumulate)(_along_first_axis(reductions.cumprod, "multiply_accumulate"))
tangent(np.multiply.accumulate)(
    _along_first_axis(reductions.cumprod_tangent, "multiply_accumulate_tangent")
)


@adjoint(np.maximum.accumulate, np.minimum.accumulate, static=("axis",))
def maximum_accumulate(y, array, axis=0):
    d[array] = running_extremum_grad(d[y], array, y, axis)


@tangent(np.maximum.accumulate, np.minimum.accumulate, static=("axis",))
def maximum_accumulate_tangent(y, array, axis=0):
    d[y] = running_extremum_jvp(d[array], array, y, axis)


# ---- the helpers of these rules: linear in their first argument, each other's adjoints
# (the running extremum's weights are piecewise constant in x: no derivative through them) ----


@linear(spread_outer, static=("like",))
def spread_outer_adjoint(r, a, like):
    d[a] = unouter(d[r], a)


@linear(unouter, static=("a",))
def unouter_adjoint(r, g, a):
    d[g] = spread_outer(d[r], g)


@linear(running_extremum_grad, static=("x", "y", "axis"))
def running_extremum_grad_adjoint(r, g, x, y, axis=0):
    d[g] = running_extremum_jvp(d[r], x, y, axis)


@linear(running_extremum_jvp, static=("x", "y", "axis"))
def running_extremum_jvp_adjoint(r, t, x, y, axis=0):
    d[t] = running_extremum_grad(d[r], x, y, axis)
