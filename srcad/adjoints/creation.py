"""Adjoints of arrays made from values: np.full_like, np.linspace, np.logspace,
np.geomspace, np.r_[...], np.c_[...]; np.arange refuses a differentiable argument (its
length jumps with them)."""

import numpy as np

from srcad.adjoints.registry import adjoint, d, nondifferentiable, tangent, xp
from srcad.runtime.accumulate import (
    joined_shape,
    joined_views,
    linspace_weights,
    piece_of,
    unbroadcast,
)
from srcad.runtime.tangents import broadcast_like, concatenated_piece

# index objects (slices) and the weights of linspace samples: no values flow through them
nondifferentiable(np.s_, np.index_exp, linspace_weights)


@adjoint(np.full_like, static=("a", "dtype"))
def full_like(y, a, fill_value, dtype=None):
    d[fill_value] = unbroadcast(d[y], fill_value)


@adjoint(np.linspace, static=("num", "endpoint", "retstep", "dtype", "axis", "device"))
def linspace(
    y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None
):
    t = linspace_weights(y, num, endpoint, axis)
    d[start] = unbroadcast(xp.sum(d[y] * (1 - t), axis), start)
    d[stop] = unbroadcast(xp.sum(d[y] * t, axis), stop)


@adjoint(np.logspace, static=("num", "endpoint", "dtype", "axis"))
def logspace(y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    # y = base ** linspace(start, stop): a varying base is refused
    t = linspace_weights(y, num, endpoint, axis)
    g = d[y] * y * xp.log(base)
    d[start] = unbroadcast(xp.sum(g * (1 - t), axis), start)
    d[stop] = unbroadcast(xp.sum(g * t, axis), stop)


@adjoint(np.geomspace, static=("num", "endpoint", "dtype", "axis"))
def geomspace(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    # y = start * (stop / start) ** t
    t = linspace_weights(y, num, endpoint, axis)
    d[start] = unbroadcast(xp.sum(d[y] * y * (1 - t), axis) / start, start)
    d[stop] = unbroadcast(xp.sum(d[y] * y * t, axis) / stop, stop)


@adjoint(np.arange, static=("dtype",))
def arange(y, start, stop=None, step=None, dtype=None):
    # no contribution: a differentiable argument is refused, naming it (write
    # start + step * np.arange(n) with an integer n instead)
    pass


@adjoint(np.r_)
def index_rows(y, arrays):
    views = joined_views(arrays, "r")
    for i, x in enumerate(arrays):
        d[x] = xp.reshape(piece_of(d[y], views, i, 0), xp.shape(x))


@adjoint(np.c_)
def index_columns(y, arrays):
    views = joined_views(arrays, "c")
    for i, x in enumerate(arrays):
        d[x] = xp.reshape(piece_of(d[y], views, i, -1), xp.shape(x))


# ---- tangents ----


@tangent(np.full_like, static=("a", "dtype"))
def full_like_tangent(y, a, fill_value, dtype=None):
    d[y] = broadcast_like(d[fill_value], y)


@tangent(np.linspace, static=("num", "endpoint", "retstep", "dtype", "axis", "device"))
def linspace_tangent(
    y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None
):
    t = linspace_weights(y, num, endpoint, axis)
    d[y] = broadcast_like(xp.expand_dims(d[start], axis) * (1 - t), y)
    d[y] = broadcast_like(xp.expand_dims(d[stop], axis) * t, y)


@tangent(np.logspace, static=("num", "endpoint", "dtype", "axis"))
def logspace_tangent(y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    t = linspace_weights(y, num, endpoint, axis)
    d[y] = y * xp.log(base) * (xp.expand_dims(d[start], axis) * (1 - t))
    d[y] = y * xp.log(base) * (xp.expand_dims(d[stop], axis) * t)


@tangent(np.geomspace, static=("num", "endpoint", "dtype", "axis"))
def geomspace_tangent(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    t = linspace_weights(y, num, endpoint, axis)
    d[y] = y * (1 - t) * xp.expand_dims(d[start] / start, axis)
    d[y] = y * t * xp.expand_dims(d[stop] / stop, axis)


@tangent(np.arange, static=("dtype",))
def arange_tangent(y, start, stop=None, step=None, dtype=None):
    pass


@tangent(np.r_)
def index_rows_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(
            xp.reshape(d[x], joined_shape(x, "r")), y, joined_views(arrays, "r"), i, 0
        )


@tangent(np.c_)
def index_columns_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = concatenated_piece(
            xp.reshape(d[x], joined_shape(x, "c")), y, joined_views(arrays, "c"), i, -1
        )
