"""Helpers for the rules of generated code's own helpers (derivatives of derivatives)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from srcad.runtime.accumulate import filled, grad_einsum, unbroadcast, unbroadcast_to, unreduce
from srcad.runtime.backend import array_namespace
from srcad.runtime.lists import add_gradients, scatter_element
from srcad.runtime.tangents import einsum_replacing


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(getattr(x, "shape", ()))


def _as(value: Any, like: Any) -> Any:
    """``value`` with ``like``'s dtype (a Python float when ``like`` is a number)."""
    if not hasattr(like, "shape"):
        return float(value)
    if not hasattr(value, "dtype"):  # a Python number (a float y's cotangent, summed)
        return array_namespace(like).asarray(value, dtype=like.dtype)
    xp = array_namespace(value)
    return xp.astype(value, like.dtype) if value.dtype != like.dtype else value


def reduce_like(
    g: Any, like: Any, axis: Any = None, keepdims: bool = False, where: Any = True
) -> Any:
    """``g`` summed over ``axis`` as the reduction did (its entries in the mask ``where``),
    in the shape of ``like`` (the adjoint of broadcasting ``like`` back over the reduced
    axes)."""
    xp = array_namespace(g)
    g = filled(g, 0, where)
    if axis is None:
        # unreduce without an axis broadcasts ``like`` (a number, or an array whose axes
        # are x's last ones): summed over the axes it was broadcast along
        total = unbroadcast_to(g, _shape(like))
    else:
        total = xp.sum(g, axis=axis, keepdims=keepdims)
    if hasattr(like, "shape") and _shape(total) != _shape(like):
        total = xp.reshape(total, _shape(like))
    return _as(total, like)


def spread_like(g: Any, like: Any) -> Any:
    """``g`` brought to ``like``'s shape: broadcast where ``like`` is larger, summed where it
    is smaller (the adjoint of :func:`srcad.runtime.accumulate.unbroadcast`)."""
    if _shape(g) == _shape(like):
        return g
    if len(_shape(like)) < len(_shape(g)):
        g = unbroadcast(g, like)
        if _shape(g) == _shape(like):
            return g
    # axis by axis: summed where ``like`` has 1 and ``g`` more, broadcast where the other
    # way round (a name whose shape changes from one turn of a loop to the next mixes both)
    xp = array_namespace(g, like)
    g, target = xp.asarray(g), _shape(like)
    offset = len(target) - len(_shape(g))
    summed = tuple(k for k, n in enumerate(_shape(g)) if n != 1 and target[k + offset] == 1)
    if summed:
        g = xp.sum(g, axis=summed, keepdims=True)
    return xp.broadcast_to(g, target)


def reshape_like(g: Any, like: Any) -> Any:
    """``g`` (as many elements as ``like``) in ``like``'s shape."""
    if _shape(g) == _shape(like):
        return g
    return _as(array_namespace(g).reshape(g, _shape(like)), like)


def unreduce_like(
    g: Any, x: Any, axis: Any = None, keepdims: bool = False, where: Any = True
) -> Any:
    """The adjoint of :func:`reduce_like`: ``g`` spread back over ``x``'s reduced axes (the
    entries in the mask ``where``)."""
    if axis is not None:  # (without one, unreduce broadcasts g as it is)
        xp = array_namespace(g, x)
        reduced = xp.sum(x, axis=axis, keepdims=keepdims)
        if _shape(g) != _shape(reduced):
            g = xp.reshape(g, _shape(reduced))
    return unreduce(g, x, axis, keepdims, where)


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """The reduced axes of an ``ndim``-dimensional array, normalized and sorted."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(a % ndim for a in axis))


def grouped(x: Any, axis: Any = None) -> Any:
    """``x`` with the axes a reduction over ``axis`` combines moved last and flattened into
    one: each row of the result is one group of the reduction."""
    xp = array_namespace(x)
    x = xp.asarray(x)
    axes = _axes(axis, x.ndim)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    moved = xp.transpose(x, rest + axes)
    return xp.reshape(moved, tuple(x.shape[a] for a in rest) + (-1,))


def ungrouped(g: Any, x: Any, axis: Any = None) -> Any:
    """The inverse of :func:`grouped`: rows of groups back in ``x``'s shape."""
    xp = array_namespace(g, x)
    shape = _shape(x)
    axes = _axes(axis, len(shape))
    rest = tuple(a for a in range(len(shape)) if a not in axes)
    moved = xp.reshape(g, tuple(shape[a] for a in rest + axes))
    inverse = tuple(sorted(range(len(shape)), key=(rest + axes).__getitem__))
    return _as(xp.transpose(moved, inverse), x)


def _filled(gs: Any, pieces: Any) -> list[Any]:
    """List gradient ``gs`` with ``None`` (and numbers) made arrays like ``pieces``."""
    out = []
    for g, piece in zip(gs, pieces):
        xp = array_namespace(piece)
        if g is None:
            out.append(xp.zeros_like(piece))
        elif _shape(g) != _shape(piece):
            out.append(xp.broadcast_to(xp.asarray(g, dtype=piece.dtype), _shape(piece)))
        else:
            out.append(g)
    return out


def reconcatenate(gs: Any, pieces: Any, axis: int = 0) -> Any:
    """The pieces' gradients ``gs`` joined along ``axis`` (the adjoint of
    :func:`srcad.runtime.accumulate.unconcatenate`)."""
    return array_namespace(*pieces).concatenate(_filled(gs, pieces), axis=axis)


def rejoined(gs: Any, pieces: Any, how: str) -> Any:
    """The pieces' gradients ``gs`` joined by ``np.<how>`` (vstack, hstack, dstack,
    column_stack: the adjoint of :func:`srcad.runtime.lists.unjoined`)."""
    return getattr(array_namespace(*pieces), how)(_filled(gs, pieces))


def restack(gs: Any, pieces: Any, axis: int = 0) -> Any:
    """The pieces' gradients ``gs`` stacked along ``axis`` (the adjoint of
    :func:`srcad.runtime.accumulate.unstack`)."""
    return array_namespace(*pieces).stack(_filled(gs, pieces), axis=axis)


def concatenated_part(g: Any, t: Any, arrays: Any, i: int, axis: int | None = 0) -> Any:
    """The part of ``g`` (shaped like ``concatenate(arrays, axis)``) where ``arrays[i]``
    went, in ``t``'s shape (the adjoint of
    :func:`srcad.runtime.tangents.concatenated_piece`)."""
    xp = array_namespace(g)
    sizes = [math.prod(_shape(a)) if axis is None else _shape(a)[axis] for a in arrays]
    start = sum(sizes[:i])
    if axis is None:
        part = xp.reshape(g, (-1,))[start : start + sizes[i]]
    else:
        part = g[(slice(None),) * (axis % g.ndim) + (slice(start, start + sizes[i]),)]
    return reshape_like(part, t)


def stacked_part(g: Any, t: Any, i: int, axis: int = 0) -> Any:
    """Slice ``i`` along ``axis`` of ``g`` (shaped like ``stack(arrays, axis)``), in
    ``t``'s shape (the adjoint of :func:`srcad.runtime.tangents.stacked_piece`)."""
    return reshape_like(g[(slice(None),) * (axis % g.ndim) + (i,)], t)


def _replaced(operands: Sequence[Any], i: int, t: Any) -> list[Any]:
    return [t if k == i else op for k, op in enumerate(operands)]


def grad_einsum_replacing(
    subscripts: str, g: Any, operands: Sequence[Any], i: int, j: int, t: Any
) -> Any:
    """The gradient of ``einsum`` with respect to operand ``i``, with operand ``j``
    replaced by ``t``; zeros when ``j == i`` (that gradient does not read operand ``i``)."""
    if i == j:
        return array_namespace(operands[i]).zeros_like(operands[i])
    return grad_einsum(subscripts, g, _replaced(operands, j, t), i)


def einsum_replacing_two(
    subscripts: str, operands: Sequence[Any], i: int, t: Any, j: int, u: Any
) -> Any:
    """``einsum`` with operand ``i`` replaced by ``t`` and operand ``j`` by ``u``; zeros when
    ``j == i`` (a term of the product rule that does not exist)."""
    out = einsum_replacing(subscripts, _replaced(operands, j, u), i, t)
    return out * 0 if i == j else out


def resum(gs: Any, g: Any) -> Any:
    """The adjoint of :func:`srcad.runtime.lists.unsum`: the elements' gradients (a list
    gradient, or an array's gradient along axis 0) summed into ``g``'s shape."""
    if isinstance(gs, (list, tuple)):
        total = sum(spread_like(item, g) for item in gs if item is not None)
        return array_namespace(g).zeros_like(g) if isinstance(total, int) else total
    return reduce_like(gs, g, 0)


class GradientList(list):
    """A list gradient whose ``+`` adds element by element (``None`` is zero), as gradients
    add: code that accumulates a list's gradient with ``+`` must not join the lists."""

    # an array on the left (the elements' gradients stacked, the form generated code
    # indexing the list makes) leaves ``+`` to this class, rather than reading the list
    # as an array of objects (``None + float``)
    __array_ufunc__ = None

    def __add__(self, other: Any) -> GradientList:  # type: ignore[override]
        return GradientList(add_gradients(self, other))

    __radd__ = __add__


def scattered_gradient(items: Any, index: int, g: Any) -> GradientList:
    """The gradient of ``items`` when only ``items[index]`` was read, with gradient ``g``:
    :func:`srcad.runtime.lists.scatter_element` as a :class:`GradientList`."""
    return GradientList(scatter_element(items, index, g))
