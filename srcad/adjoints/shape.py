"""Adjoints of shape ops: reshape, transpose, squeeze, expand_dims, concatenate, stack, ..."""

import numpy as np

from srcad.adjoints.registry import Attribute, Method, adjoint, d, xp
from srcad.runtime.accumulate import (
    inverse_axes,
    unbroadcast,
    unconcatenate,
    undiag,
    unpad,
    unrepeat,
    unsort,
    unstack,
    untake,
    untile,
)


@adjoint(np.reshape)
def reshape(y, x, shape):
    d[x] = xp.reshape(d[y], x.shape)


@adjoint(Method("reshape"))
def reshape_method(y, x, *shape):
    d[x] = xp.reshape(d[y], x.shape)


@adjoint(np.ravel, Method("ravel"), Method("flatten"))
def ravel(y, x):
    d[x] = xp.reshape(d[y], x.shape)


@adjoint(np.squeeze, Method("squeeze"))
def squeeze(y, x, axis=None):
    d[x] = xp.reshape(d[y], x.shape)


@adjoint(np.expand_dims)
def expand_dims(y, x, axis):
    d[x] = xp.reshape(d[y], x.shape)


@adjoint(np.transpose)
def transpose(y, x, axes=None):
    d[x] = xp.transpose(d[y], inverse_axes(axes))


@adjoint(Method("transpose"))
def transpose_method(y, x, *axes):
    d[x] = xp.transpose(d[y], inverse_axes(axes))


@adjoint(Attribute("T"))
def transpose_attribute(y, x):
    d[x] = d[y].T


@adjoint(np.swapaxes, Method("swapaxes"))
def swapaxes(y, x, axis1, axis2):
    d[x] = xp.swapaxes(d[y], axis1, axis2)


@adjoint(np.moveaxis)
def moveaxis(y, x, source, destination):
    d[x] = xp.moveaxis(d[y], destination, source)


@adjoint(np.broadcast_to)
def broadcast_to(y, x, shape):
    d[x] = unbroadcast(d[y], x)


@adjoint(np.concatenate)
def concatenate(y, arrays, axis=0):
    pieces = unconcatenate(d[y], arrays, axis)
    for i, x in enumerate(arrays):
        d[x] = pieces[i]


@adjoint(np.stack)
def stack(y, arrays, axis=0):
    pieces = unstack(d[y], axis)
    for i, x in enumerate(arrays):
        d[x] = pieces[i]


@adjoint(Method("astype"))
def astype(y, x, dtype):
    d[x] = xp.astype(d[y], x.dtype)


@adjoint(Method("copy"), np.copy, np.array, np.asarray, shape_preserving=True)
def copy(y, x):
    d[x] = d[y]


@adjoint(np.flip)
def flip(y, x, axis=None):
    d[x] = xp.flip(d[y], axis=axis)


@adjoint(np.roll)
def roll(y, x, shift, axis=None):
    d[x] = xp.roll(d[y], -shift, axis=axis)


@adjoint(np.triu)
def triu(y, x, k=0):
    d[x] = xp.triu(d[y], k)


@adjoint(np.tril)
def tril(y, x, k=0):
    d[x] = xp.tril(d[y], k)


@adjoint(np.diag)
def diag(y, x, k=0):
    d[x] = undiag(d[y], x, k)


@adjoint(np.sort)
def sort(y, x, axis=-1):
    d[x] = unsort(d[y], x, axis)


@adjoint(np.repeat)
def repeat(y, x, repeats, axis=None):
    d[x] = unrepeat(d[y], x, repeats, axis)


@adjoint(np.tile)
def tile(y, x, reps):
    d[x] = untile(d[y], x, reps)


@adjoint(np.pad)
def pad(y, x, pad_width):
    d[x] = unpad(d[y], x, pad_width)


@adjoint(np.take)
def take(y, x, indices, axis=None):
    d[x] = untake(d[y], x, indices, axis)
