"""Helpers the generated forward-mode code calls: zero tangents, broadcasting tangents."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from srcad.runtime.backend import array_namespace


def zero_tangent(x: Any) -> Any:
    """The tangent of a value that does not vary: ``0.0``, zeros, or a list of those."""
    if isinstance(x, (list, tuple)):
        return [zero_tangent(item) for item in x]
    if not hasattr(x, "shape"):
        return 0.0
    return array_namespace(x).zeros_like(x)


def broadcast_like(t: Any, y: Any) -> Any:
    """An operand's tangent ``t`` broadcast to the shape of the op's result ``y``."""
    shape = tuple(getattr(y, "shape", ()))
    if tuple(getattr(t, "shape", ())) == shape:
        return t
    xp = array_namespace(t, y)
    return xp.broadcast_to(xp.asarray(t, dtype=y.dtype), shape)


def concatenated_piece(t: Any, y: Any, arrays: Any, i: int, axis: int | None = 0) -> Any:
    """Zeros shaped like ``y = concatenate(arrays, axis)`` with ``t`` where ``arrays[i]`` went."""
    xp = array_namespace(t, y)
    if axis is None:
        t, sizes, axis = xp.reshape(t, (-1,)), [_size(a) for a in arrays], 0
    else:
        axis = axis % y.ndim
        sizes = [tuple(getattr(a, "shape", ()))[axis] for a in arrays]
    start = sum(sizes[:i])
    out = xp.zeros_like(y)
    out[(slice(None),) * axis + (slice(start, start + sizes[i]),)] = t
    return out


def stacked_piece(t: Any, y: Any, i: int, axis: int = 0) -> Any:
    """Zeros shaped like ``y = stack(arrays, axis)`` with ``t`` where ``arrays[i]`` went."""
    xp = array_namespace(t, y)
    out = xp.zeros_like(y)
    out[(slice(None),) * (axis % y.ndim) + (i,)] = t
    return out


def einsum_replacing(subscripts: str, operands: Sequence[Any], i: int, t: Any) -> Any:
    """``einsum(subscripts, *operands)`` with ``operands[i]`` replaced by ``t`` (one term of
    the product rule)."""
    xp = array_namespace(t, *operands)
    return xp.einsum(subscripts, *operands[:i], t, *operands[i + 1 :])


def transpose_axes(axes: tuple) -> tuple[int, ...] | None:
    """The permutation of ``x.transpose(*axes)`` as ``transpose(x, axes)`` takes it."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return tuple(axes) if axes else None


def _size(x: Any) -> int:
    return math.prod(getattr(x, "shape", ()))
