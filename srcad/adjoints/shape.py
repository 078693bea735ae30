"""Adjoints of shape ops: reshape, transpose, squeeze, expand_dims, concatenate, stack,
insert, delete, ediff1d, ..."""

import copy as copy_module

import numpy as np

from srcad.adjoints.registry import (
    Attribute,
    Method,
    adjoint,
    d,
    linear,
    nondifferentiable,
    partials,
    tangent,
    xp,
)
from srcad.runtime.accumulate import (
    PAD_MODES,
    add_at,
    along_axis_index,
    cast_gradient,
    inverse_axes,
    join_axis,
    joined_shape,
    joined_views,
    piece_of,
    rolled_position,
    unbroadcast,
    undiag,
    undiff,
    unpad,
    unrepeat,
    unsort,
    unstack,
    untake,
    untile,
)
from srcad.runtime.higher import reshape_like
from srcad.runtime.inplace import kept_dtype
from srcad.runtime.numeric import (
    delete_sources,
    ediff1d_parts,
    gather_sources,
    insert_sources,
    spread_sources,
)
from srcad.runtime.tangents import (
    broadcast_like,
    concatenated_piece,
    stacked_piece,
    transpose_axes,
)


# the reshape family is linear: the tangent is the op itself on the tangent (the same
# entries in the same order as reshaping it to y's shape)
@linear(np.reshape, moves=True, changes_shape=True)
def reshape(y, x, shape):
    d[x] = xp.reshape(d[y], xp.shape(x))


@adjoint(Method("reshape"), moves=True, changes_shape=True)
def reshape_method(y, x, *shape):
    d[x] = xp.reshape(d[y], xp.shape(x))


@linear(np.ravel, Method("ravel"), Method("flatten"), moves=True, changes_shape=True)
def ravel(y, x):
    d[x] = xp.reshape(d[y], xp.shape(x))


@linear(np.squeeze, Method("squeeze"), moves=True, changes_shape=True)
def squeeze(y, x, axis=None):
    d[x] = xp.reshape(d[y], xp.shape(x))


@linear(np.expand_dims, moves=True, changes_shape=True)
def expand_dims(y, x, axis):
    d[x] = xp.reshape(d[y], xp.shape(x))


@linear(np.transpose, moves=True, changes_shape=True)
def transpose(y, x, axes=None):
    d[x] = xp.transpose(d[y], inverse_axes(axes))


@adjoint(Method("transpose"), moves=True, changes_shape=True)
def transpose_method(y, x, *axes):
    d[x] = xp.transpose(d[y], inverse_axes(axes))


@adjoint(Attribute("T"), moves=True)
def transpose_attribute(y, x):
    d[x] = d[y].T


@linear(np.swapaxes, Method("swapaxes"), moves=True, changes_shape=True)
def swapaxes(y, x, axis1, axis2):
    d[x] = xp.swapaxes(d[y], axis1, axis2)


@linear(np.moveaxis, static=("source", "destination"), moves=True, changes_shape=True)
def moveaxis(y, x, source, destination):
    d[x] = xp.moveaxis(d[y], destination, source)


@adjoint(np.broadcast_to, changes_shape=True)
def broadcast_to(y, x, shape):
    d[x] = unbroadcast(d[y], x)


@adjoint(np.concatenate)
def concatenate(y, arrays, axis=0):
    for i, x in enumerate(arrays):
        d[x] = piece_of(d[y], arrays, i, axis)


@adjoint(np.hstack)
def hstack(y, arrays):
    views = joined_views(arrays, "h")
    for i, x in enumerate(arrays):
        d[x] = xp.reshape(piece_of(d[y], views, i, join_axis(arrays, "h")), xp.shape(x))


@adjoint(np.vstack)
def vstack(y, arrays):
    views = joined_views(arrays, "v")
    for i, x in enumerate(arrays):
        d[x] = xp.reshape(piece_of(d[y], views, i, 0), xp.shape(x))


@adjoint(np.dstack)
def dstack(y, arrays):
    views = joined_views(arrays, "d")
    for i, x in enumerate(arrays):
        d[x] = xp.reshape(piece_of(d[y], views, i, 2), xp.shape(x))


@adjoint(np.column_stack)
def column_stack(y, arrays):
    views = joined_views(arrays, "c")
    for i, x in enumerate(arrays):
        d[x] = xp.reshape(piece_of(d[y], views, i, 1), xp.shape(x))


@adjoint(np.append)
def numpy_append(y, arr, values, axis=None):
    d[arr] = piece_of(d[y], (arr, values), 0, axis)
    d[values] = piece_of(d[y], (arr, values), 1, axis)


@adjoint(np.stack)
def stack(y, arrays, axis=0):
    pieces = unstack(d[y], axis)
    for i, x in enumerate(arrays):
        d[x] = pieces[i]


@adjoint(Method("astype"))
def astype(y, x, dtype):
    d[x] = cast_gradient(d[y], x, y)


@linear(kept_dtype, static=("target",))
def kept_dtype_adjoint(y, value, target):
    d[value] = cast_gradient(d[y], value, y)


@partials(
    Method("copy"),
    np.copy,
    copy_module.copy,
    copy_module.deepcopy,
    np.array,
    np.asarray,
    np.asanyarray,
    np.ascontiguousarray,
    shape_preserving=True,
    broadcast_transparent=True,
)
def copy(y, x):
    return 1


# a sequence's tangent is a sequence (``tuple(x)``'s is ``tuple(dx)``): the array made of
# it is made of the tangent too (its identity tangent repeated the tuple at ``* 2`` until
# stop 28); no dtype given, as the rule takes none (code differentiated again reads it)
@tangent(np.array, np.asarray, np.asanyarray, np.ascontiguousarray)
def as_array_tangent(y, x):
    d[y] = xp.asarray(d[x])


@linear(np.flip, moves=True)
def flip(y, x, axis=None):
    d[x] = xp.flip(d[y], axis=axis)


@linear(np.roll, static=("shift", "axis"), moves=True)
def roll(y, x, shift, axis=None):
    d[x] = xp.roll(d[y], -shift, axis=axis)


@linear(np.triu, static=("k",))
def triu(y, x, k=0):
    d[x] = xp.triu(d[y], k)


@linear(np.tril, static=("k",))
def tril(y, x, k=0):
    d[x] = xp.tril(d[y], k)


@linear(np.diag, changes_shape=True)
def diag(y, x, k=0):
    d[x] = undiag(d[y], x, k)


@adjoint(np.sort)
def sort(y, x, axis=-1):
    d[x] = unsort(d[y], x, axis)


@linear(np.repeat, Method("repeat"))
def repeat(y, x, repeats, axis=None):
    d[x] = unrepeat(d[y], x, repeats, axis)


@linear(np.tile)
def tile(y, x, reps):
    d[x] = untile(d[y], x, reps)


# the modes that copy entries (or a constant: no gradient flows to a constant_values that
# varies, refused as an argument without a derivative) fold the padding's gradient back
# onto the entries copied; the others (linear_ramp, maximum, mean, ...) are refused
@adjoint(np.pad, static=("mode",), choices={"mode": PAD_MODES})
def pad(y, x, pad_width, mode="constant", *, constant_values=0):
    d[x] = unpad(d[y], x, pad_width, mode=mode)


@tangent(np.pad, static=("mode",), choices={"mode": PAD_MODES})
def pad_tangent(y, x, pad_width, mode="constant", *, constant_values=0):
    d[y] = xp.pad(d[x], pad_width, mode=mode)


@linear(np.take, Method("take"), changes_shape=True)
def take(y, x, indices, axis=None):
    d[x] = untake(d[y], x, indices, axis)


@linear(np.flipud, moves=True)
def flipud(y, m):
    d[m] = xp.flipud(d[y])


@linear(np.fliplr, moves=True)
def fliplr(y, m):
    d[m] = xp.fliplr(d[y])


@linear(np.rot90, moves=True)
def rot90(y, m, k=1, axes=(0, 1)):
    d[m] = xp.rot90(d[y], -k, axes)


@linear(np.rollaxis, static=("axis", "start"))
def rollaxis(y, a, axis, start=0):
    d[a] = xp.moveaxis(d[y], rolled_position(a, axis, start), axis)


nondifferentiable(rolled_position)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d, moves=True)
def atleast_nd(y, x):
    # x may be a Python number
    d[x] = reshape_like(d[y], x)


@linear(np.diff)
def diff(y, a, n=1, axis=-1):
    d[a] = undiff(d[y], a, n, axis)


# undiff is linear and the transpose of diff


@linear(undiff, static=("x",))
def undiff_adjoint(r, g, x, n=1, axis=-1):
    d[g] = xp.diff(d[r], n, axis)


@adjoint(np.ediff1d)
def ediff1d(y, ary, to_end=None, to_begin=None):
    # y = concatenate([to_begin, diff(ravel(ary)), to_end])
    parts = ediff1d_parts(ary, to_end, to_begin)
    d[ary] = xp.reshape(undiff(piece_of(d[y], parts, 1), xp.ravel(ary)), xp.shape(ary))
    d[to_end] = reshape_like(piece_of(d[y], parts, 2), to_end)
    d[to_begin] = reshape_like(piece_of(d[y], parts, 0), to_begin)


# np.insert and np.delete with constant indices: each element of the result came from one
# of the operands, or (insert) from one element of values that it broadcast


@linear(np.insert, static=("obj",))
def insert(y, arr, obj, values, axis=None):
    d[arr] = gather_sources(d[y], insert_sources(arr, obj, values, axis, 0), arr)
    d[values] = gather_sources(d[y], insert_sources(arr, obj, values, axis, 1), values)


@linear(np.delete, static=("obj",))
def delete(y, arr, obj, axis=None):
    d[arr] = gather_sources(d[y], delete_sources(arr, obj, axis), arr)


nondifferentiable(ediff1d_parts, insert_sources, delete_sources)


@linear(gather_sources, static=("sources", "like"))
def gather_sources_adjoint(r, g, sources, like):
    d[g] = spread_sources(d[r], sources)


@linear(spread_sources, static=("sources",))
def spread_sources_adjoint(r, t, sources):
    d[t] = gather_sources(d[r], sources, t)


@adjoint(np.partition)
def partition(y, a, kth, axis=-1):
    # argpartition moves the entries as partition does: each gradient goes back to its entry
    da = xp.zeros_like(a)
    add_at(da, along_axis_index(a, xp.argpartition(a, kth, axis=axis), axis), d[y])
    d[a] = da


@adjoint(np.full, static=("shape",))
def full(y, shape, fill_value, dtype=None):
    d[fill_value] = unbroadcast(d[y], fill_value)


# ---- tangents ----


@tangent(Method("reshape"))
def reshape_method_tangent(y, x, *shape):
    d[y] = xp.reshape(d[x], xp.shape(y))


@tangent(Method("transpose"))
def transpose_method_tangent(y, x, *axes):
    d[y] = xp.transpose(d[x], transpose_axes(axes))


@tangent(Attribute("T"))
def transpose_attribute_tangent(y, x):
    d[y] = d[x].T


@tangent(np.broadcast_to)
def broadcast_to_tangent(y, x, shape):
    d[y] = broadcast_like(d[x], y)


# an operand list written out in the call is unrolled: one contribution per array, each
# the array's tangent in its own place and zeros elsewhere


@tangent(np.concatenate)
def concatenate_tangent(y, arrays, axis=0):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(d[x], y, arrays, i, axis)


@tangent(np.hstack)
def hstack_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(
            xp.reshape(d[x], joined_shape(x, "h")),
            y,
            joined_views(arrays, "h"),
            i,
            join_axis(arrays, "h"),
        )


@tangent(np.vstack)
def vstack_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(
            xp.reshape(d[x], joined_shape(x, "v")), y, joined_views(arrays, "v"), i, 0
        )


@tangent(np.dstack)
def dstack_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(
            xp.reshape(d[x], joined_shape(x, "d")), y, joined_views(arrays, "d"), i, 2
        )


@tangent(np.column_stack)
def column_stack_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(
            xp.reshape(d[x], joined_shape(x, "c")), y, joined_views(arrays, "c"), i, 1
        )


@tangent(np.append)
def numpy_append_tangent(y, arr, values, axis=None):
    d[y] = concatenated_piece(d[arr], y, (arr, values), 0, axis)
    d[y] = concatenated_piece(d[values], y, (arr, values), 1, axis)


@tangent(np.stack)
def stack_tangent(y, arrays, axis=0):
    for i, x in enumerate(arrays):
        d[y] = stacked_piece(d[x], y, i, axis)


@tangent(Method("astype"))
def astype_tangent(y, x, dtype):
    d[y] = cast_gradient(d[x], y, x)


@tangent(np.sort)
def sort_tangent(y, x, axis=-1):
    d[y] = xp.take_along_axis(d[x], xp.argsort(x, axis=axis), axis=axis)


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_tangent(y, x):
    d[y] = reshape_like(d[x], y)


@tangent(np.ediff1d)
def ediff1d_tangent(y, ary, to_end=None, to_begin=None):
    parts = ediff1d_parts(ary, to_end, to_begin)
    # (axis None: the ends flattened, and they may be Python numbers)
    d[y] = concatenated_piece(xp.diff(xp.ravel(d[ary])), y, parts, 1, None)
    d[y] = concatenated_piece(d[to_end], y, parts, 2, None)
    d[y] = concatenated_piece(d[to_begin], y, parts, 0, None)


@tangent(np.partition)
def partition_tangent(y, a, kth, axis=-1):
    d[y] = xp.take_along_axis(d[a], xp.argpartition(a, kth, axis=axis), axis=axis)


@tangent(np.full, static=("shape",))
def full_tangent(y, shape, fill_value, dtype=None):
    d[y] = broadcast_like(d[fill_value], y)
