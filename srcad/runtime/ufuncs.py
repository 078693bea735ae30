"""Helpers the derivatives of ufunc methods call: ``ufunc.outer``'s operands spread and
summed back, and the running max/min's gradient routed to the entries that set it.

Each is linear in its first argument; the others are read for shapes or as fixed weights.
"""

from __future__ import annotations

from typing import Any

from srcad.runtime.accumulate import real_like
from srcad.runtime.backend import array_namespace


def _ndim(x: Any) -> int:
    return len(getattr(x, "shape", ()))


def spread_outer(a: Any, like: Any) -> Any:
    """``a`` as ``ufunc.outer(a, b)`` pairs it with ``b``, broadcast to ``like`` (the
    result's shape): ``a``'s axes first, then ``b``'s."""
    xp = array_namespace(a, like)
    a = xp.asarray(a)
    lifted = xp.reshape(a, tuple(a.shape) + (1,) * (_ndim(like) - a.ndim))
    return xp.broadcast_to(lifted, tuple(like.shape))


def unouter(g: Any, a: Any) -> Any:
    """``g`` summed over its trailing axes down to ``a``'s shape (the adjoint of
    :func:`spread_outer`): the gradient of ``ufunc.outer``'s first operand."""
    xp = array_namespace(g)
    g = xp.sum(xp.asarray(g), axis=tuple(range(_ndim(a), _ndim(g))))
    if not hasattr(a, "shape"):
        return real_like(g[()], a)  # a Python number: a number
    return real_like(xp.reshape(g, tuple(a.shape)), a)


def _plateaus(x: Any, y: Any) -> tuple[Any, Any, Any]:
    """For ``y`` the running max/min of ``x`` along the last axis: where ``x`` set or tied
    the running value (``hit``), where a new value starts (``start``), and the index of
    each position's start (a running value is constant from its start on)."""
    xp = array_namespace(x, y)
    hit = x == y
    start = xp.concatenate([xp.ones_like(hit[..., :1]), y[..., 1:] != y[..., :-1]], axis=-1)
    index = xp.arange(y.shape[-1]) * start
    first = xp.maximum.accumulate(index, axis=-1)
    return hit, start, first


def _segment_cumsum(v: Any, first: Any) -> Any:
    """The sums of ``v`` from each position's segment start (``first``) up to it."""
    xp = array_namespace(v)
    total = xp.cumsum(v, axis=-1)
    before = xp.take_along_axis(total - v, first, axis=-1)
    return total - before


def running_extremum_jvp(t: Any, x: Any, y: Any, axis: int = 0) -> Any:
    """The tangent of ``y``, the running max/min of ``x`` along ``axis``: each step moves
    with the entries equal to it since its value was first reached, ties split evenly."""
    xp = array_namespace(t, x, y)
    t = xp.moveaxis(xp.broadcast_to(t, x.shape), axis, -1)
    x, y = xp.moveaxis(x, axis, -1), xp.moveaxis(y, axis, -1)
    hit, _, first = _plateaus(x, y)
    ties = _segment_cumsum(xp.astype(hit, x.dtype), first)
    return xp.moveaxis(_segment_cumsum(xp.where(hit, t, 0), first) / ties, -1, axis)


def running_extremum_grad(g: Any, x: Any, y: Any, axis: int = 0) -> Any:
    """The gradient of ``x`` from that of ``y``, its running max/min along ``axis`` (the
    adjoint of :func:`running_extremum_jvp`)."""
    xp = array_namespace(g, x, y)
    x, y = xp.moveaxis(x, axis, -1), xp.moveaxis(y, axis, -1)
    g = xp.moveaxis(g, axis, -1)
    hit, _, first = _plateaus(x, y)
    ties = _segment_cumsum(xp.astype(hit, x.dtype), first)
    # each step's share, summed over the steps at or after each entry in its segment: the
    # same sums taken from the other end (segments reversed are segments)
    share = xp.flip(g / ties, axis=-1)
    _, _, last = _plateaus(xp.flip(x, axis=-1), xp.flip(y, axis=-1))
    later = xp.flip(_segment_cumsum(share, last), axis=-1)
    return xp.moveaxis(xp.where(hit, later, 0), -1, axis)
