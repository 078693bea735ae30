"""Adjoints of indexing reads: scatter the gradient into a zero array of the source's shape.

Indices are integers, slices or masks: no derivative flows to them (``static``), even where
an index comes from a value the analysis counts as varying (a loop index put on a tape
beside varied values, in generated code differentiated again)."""

import numpy as np

from srcad.adjoints.registry import GETITEM, Operator, adjoint, d, nondifferentiable, tangent, xp
from srcad.runtime.accumulate import add_at, along_axis_index, unbroadcast
from srcad.runtime.inplace import scatter, scattered, setitem, surviving, zeroed
from srcad.runtime.puts import diagonal_positions, flat_positions, put_gathered, put_values


@adjoint(GETITEM, static=("index",))
def getitem(y, x, index):
    dx = xp.zeros_like(x)
    dx[index] = d[y]
    d[x] = dx


@adjoint(Operator("SubscriptDynamic"), static=("index",))
def getitem_dynamic(y, x, index):
    dx = xp.zeros_like(x)
    add_at(dx, index, d[y])
    d[x] = dx


@adjoint(np.take_along_axis, static=("indices",))
def take_along_axis(y, arr, indices, axis=-1):
    # repeated indices accumulate
    darr = xp.zeros_like(arr)
    add_at(darr, along_axis_index(arr, indices, axis), d[y])
    d[arr] = darr


# an index computed from shapes and integer indices only
nondifferentiable(along_axis_index)


@adjoint(setitem, static=("index",))
def setitem_(y, x, index, value):
    d[value] = unbroadcast(d[y][index], value)
    d[x] = zeroed(d[y], index)


@adjoint(scatter, static=("index",))
def scatter_(y, x, index, value):
    # of writes to one element only the last survives: the earlier ones get no gradient
    d[value] = unbroadcast(surviving(d[y][index], index, d[y]), value)
    d[x] = zeroed(d[y], index)


@adjoint(scattered, static=("index",))
def scattered_adjoint(y, x, index, value):
    d[value] = unbroadcast(surviving(d[y][index], index, d[y]), value)
    d[x] = zeroed(d[y], index)


# np.put and its relatives, lowered to put_values (transform/normalize/mutating_calls.py)
@adjoint(put_values, static=("indices", "mode"))
def put_values_adjoint(y, array, indices, values, mode="raise"):
    d[array] = put_values(d[y], indices, 0.0, mode)
    d[values] = put_gathered(d[y], indices, values, mode)


@adjoint(put_gathered, static=("indices", "values", "mode"))
def put_gathered_adjoint(y, g, indices, values, mode="raise"):
    d[g] = put_values(xp.zeros_like(g), indices, d[y], mode)


nondifferentiable(flat_positions, diagonal_positions)


# ---- tangents ----


@tangent(GETITEM, Operator("SubscriptDynamic"), static=("index",))
def getitem_tangent(y, x, index):
    d[y] = d[x][index]


@tangent(setitem, static=("index",))
def setitem_tangent(y, x, index, value):
    # one contribution reading both: where one does not vary its zeros are what is written
    d[y] = setitem(d[x], index, d[value])


@tangent(scatter, static=("index",))
def scatter_tangent(y, x, index, value):
    d[y] = scatter(d[x], index, d[value])


@tangent(scattered, static=("index",))
def scattered_tangent(y, x, index, value):
    d[y] = scattered(d[x], index, d[value])


@tangent(np.take_along_axis, static=("indices",))
def take_along_axis_tangent(y, arr, indices, axis=-1):
    d[y] = xp.take_along_axis(d[arr], indices, axis=axis)


@tangent(put_values, static=("indices", "mode"))
def put_values_tangent(y, array, indices, values, mode="raise"):
    # one contribution reading both: where one does not vary its zeros are what is written
    d[y] = put_values(d[array], indices, d[values], mode)


@tangent(put_gathered, static=("indices", "values", "mode"))
def put_gathered_tangent(y, g, indices, values, mode="raise"):
    d[y] = put_gathered(d[g], indices, values, mode)
