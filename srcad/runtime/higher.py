"""Helpers for the rules of generated code's own helpers (derivatives of derivatives)."""

from __future__ import annotations

from typing import Any

from srcad.runtime.accumulate import unbroadcast, unreduce
from srcad.runtime.backend import array_namespace


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(getattr(x, "shape", ()))


def _as(value: Any, like: Any) -> Any:
    """``value`` with ``like``'s dtype (a Python float when ``like`` is a number)."""
    if not hasattr(like, "shape"):
        return float(value)
    xp = array_namespace(value)
    return xp.astype(value, like.dtype) if value.dtype != like.dtype else value


def reduce_like(g: Any, like: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``g`` summed over ``axis`` as the reduction did, in the shape of ``like`` (the
    adjoint of broadcasting ``like`` back over the reduced axes)."""
    xp = array_namespace(g)
    total = xp.sum(g, axis=axis, keepdims=keepdims)
    if hasattr(like, "shape") and _shape(total) != _shape(like):
        total = xp.reshape(total, _shape(like))
    return _as(total, like)


def spread_like(g: Any, like: Any) -> Any:
    """``g`` brought to ``like``'s shape: broadcast where ``like`` is larger, summed where it
    is smaller (the adjoint of :func:`srcad.runtime.accumulate.unbroadcast`)."""
    if _shape(g) == _shape(like):
        return g
    if len(_shape(like)) >= len(_shape(g)):
        xp = array_namespace(g, like)
        return xp.broadcast_to(xp.asarray(g), _shape(like))
    return unbroadcast(g, like)


def reshape_like(g: Any, like: Any) -> Any:
    """``g`` (as many elements as ``like``) in ``like``'s shape."""
    if _shape(g) == _shape(like):
        return g
    return _as(array_namespace(g).reshape(g, _shape(like)), like)


def unreduce_like(g: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The adjoint of :func:`reduce_like`: ``g`` spread back over ``x``'s reduced axes."""
    xp = array_namespace(g, x)
    reduced = xp.sum(x, axis=axis, keepdims=keepdims)
    if _shape(g) != _shape(reduced):
        g = xp.reshape(g, _shape(reduced))
    return unreduce(g, x, axis, keepdims)
