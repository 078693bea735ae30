"""Adjoints of indexing reads: scatter the gradient into a zero array of the source's shape.

Indices are integers, slices or masks: no derivative flows to them (``static``), even where
an index comes from a value the analysis counts as varying (a loop index put on a tape
beside varied values, in generated code differentiated again)."""

import numpy as np

from srcad.adjoints.registry import (
    GETITEM,
    Operator,
    adjoint,
    d,
    linear,
    nondifferentiable,
    tangent,
    xp,
)
from srcad.runtime.accumulate import add_at, along_axis_index, unbroadcast
from srcad.runtime.inplace import scatter, scattered, setitem, surviving, zeroed
from srcad.runtime.puts import diagonal_positions, flat_positions, put_gathered, put_values


@adjoint(GETITEM, static=("index",), moves=True, scatters=True)
def getitem(y, x, index):
    dx = xp.zeros_like(x)
    dx[index] = d[y]
    d[x] = dx


@adjoint(Operator("SubscriptDynamic"), static=("index",), moves=True, scatters=True)
def getitem_dynamic(y, x, index):
    dx = xp.zeros_like(x)
    add_at(dx, index, d[y])
    d[x] = dx


@linear(np.take_along_axis, static=("indices",))
def take_along_axis(y, arr, indices, axis=-1):
    # repeated indices accumulate
    darr = xp.zeros_like(arr)
    add_at(darr, along_axis_index(arr, indices, axis), d[y])
    d[arr] = darr


# an index computed from shapes and integer indices only
nondifferentiable(along_axis_index)


# the writes are linear in the array and the value together: the tangent writes the value's
# tangent into the array's (where one does not vary its zeros are what is written)


@linear(setitem, static=("index",))
def setitem_adjoint(y, x, index, value):
    d[value] = unbroadcast(d[y][index], value)
    d[x] = zeroed(d[y], index)


@linear(scatter, static=("index",))
def scatter_adjoint(y, x, index, value):
    # of writes to one element only the last survives: the earlier ones get no gradient
    d[value] = unbroadcast(surviving(d[y][index], index, d[y]), value)
    d[x] = zeroed(d[y], index)


@linear(scattered, static=("index",))
def scattered_adjoint(y, x, index, value):
    d[value] = unbroadcast(surviving(d[y][index], index, d[y]), value)
    d[x] = zeroed(d[y], index)


# np.put and its relatives, lowered to put_values (transform/normalize/mutating_calls.py)
@linear(put_values, static=("indices", "mode"))
def put_values_adjoint(y, array, indices, values, mode="raise"):
    d[array] = put_values(d[y], indices, 0.0, mode)
    d[values] = put_gathered(d[y], indices, values, mode)


@linear(put_gathered, static=("indices", "values", "mode"))
def put_gathered_adjoint(y, g, indices, values, mode="raise"):
    d[g] = put_values(xp.zeros_like(g), indices, d[y], mode)


nondifferentiable(flat_positions, diagonal_positions)


# ---- tangents ----


@tangent(GETITEM, Operator("SubscriptDynamic"), static=("index",))
def getitem_tangent(y, x, index):
    d[y] = d[x][index]
