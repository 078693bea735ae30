"""In-place element updates (``y[i] = v``) in generated code, and what their adjoints need."""

from __future__ import annotations

import math
from typing import Any

import numpy

from srcad.runtime.backend import array_namespace


def setitem(array: Any, index: Any, value: Any) -> Any:
    """``array[index] = value`` in place, returning the array (so it reads as an assignment)."""
    array[index] = value
    return array


def scatter(array: Any, index: Any, value: Any) -> Any:
    """:func:`setitem` for an index that may select an element more than once (integer
    arrays): NumPy keeps the last write of a repeated element."""
    array[index] = value
    return array


def scattered(array: Any, index: Any, value: Any) -> Any:
    """:func:`scatter` on a copy: a restore of generated code differentiated again, as a
    new value (no name sharing the old memory sees it change)."""
    out = array.copy()
    out[index] = value
    return out


def surviving(values: Any, index: Any, like: Any) -> Any:
    """``values`` (shaped like ``like[index]``) with zeros where a later position of
    ``index`` selects the same element of ``like``: the writes a repeated index overwrote."""
    lost = overwritten(index, tuple(like.shape))
    if lost is None:
        return values
    xp = array_namespace(values, like)
    zero = xp.zeros((), dtype=getattr(values, "dtype", like.dtype))
    return xp.where(xp.asarray(lost), zero, values)


def overwritten(index: Any, shape: tuple[int, ...]) -> Any:
    """Where writing ``array[index] = v`` (``array`` of ``shape``) is overwritten by a later
    write of the same element, as a boolean array shaped like (or broadcasting to)
    ``array[index]``; None when ``index`` selects no element twice."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [item for item in items if not _is_basic_item(item)]
    if not arrays or all(_is_mask(item) for item in arrays):
        return None  # ints, slices and boolean masks select each element at most once
    if not isinstance(index, tuple) and len(shape) >= 1:
        # one integer array on the first axis: its entries, with negative ones wrapped
        xp = _namespace_of_index(index)
        lost = _not_last(xp.asarray(index) % shape[0])
        if lost is None:
            return None
        return xp.reshape(lost, tuple(lost.shape) + (1,) * (len(shape) - 1))
    xp = _namespace_of_index(index)
    positions = xp.reshape(xp.arange(math.prod(shape)), shape)[index]
    return _not_last(positions)


def _not_last(positions: Any) -> Any:
    """Where an entry of ``positions`` is repeated later (in C order); None if none is."""
    xp = array_namespace(positions)
    flat = xp.reshape(positions, (-1,))
    m = flat.shape[0]
    if m < 2:
        return None
    # positions in order, ties by occurrence (a unique key: no stable sort needed)
    flat = flat.astype(numpy.int64, copy=False)
    order = xp.argsort(flat * m + xp.arange(m))
    ranked = flat[order]
    repeated = ranked[:-1] == ranked[1:]
    if not bool(xp.any(repeated)):
        return None
    lost = xp.zeros(m, dtype=bool)
    lost[order[:-1][repeated]] = True
    return xp.reshape(lost, tuple(positions.shape))


def _is_basic_item(item: Any) -> bool:
    return item is None or item is Ellipsis or isinstance(item, (int, slice, numpy.integer))


def _is_mask(item: Any) -> bool:
    if isinstance(item, list):
        item = numpy.asarray(item)
    return isinstance(item, bool) or getattr(getattr(item, "dtype", None), "kind", "") == "b"


def _namespace_of_index(index: Any) -> Any:
    """NumPy for indices on the host (ints, slices, lists, NumPy arrays), else the
    namespace of the index arrays."""
    items = index if isinstance(index, tuple) else (index,)
    return array_namespace(*[item for item in items if hasattr(item, "shape")])


def saved(array: Any, index: Any) -> Any:
    """A copy of ``array[index]``, taken before an update overwrites it."""
    return _copy(array[index])


def restore(array: Any, index: Any, values: Any) -> None:
    """Put values saved by :func:`saved` back."""
    array[index] = values


def zeroed(g: Any, index: Any) -> Any:
    """``g`` with ``g[index]`` set to zero (the overwritten part had no further use)."""
    out = _copy(g)
    out[index] = 0
    return out


def copied(array: Any) -> Any:
    """A copy of ``array`` that updates in place will not share with the original."""
    return _copy(array)


def reset(array: Any, values: Any) -> None:
    """Write ``values`` (a copy taken earlier) back into ``array``'s own memory."""
    if getattr(getattr(array, "flags", None), "writeable", True) is False or not hasattr(
        array, "shape"
    ):
        # the name was rebound after its updates, to a read-only view or to a number (the
        # zeros of a value a tape gave back as None): nothing to put back
        return
    array[...] = values


def kept_dtype(value: Any, target: Any) -> Any:
    """``value`` (of ``target op= v``, written ``target = target op v``) in ``target``'s
    dtype when ``target`` is a NumPy array: NumPy computes an augmented assignment into the
    array itself, so a float32 ``u += np.float64(...)`` stays float32."""
    if (
        type(target) is numpy.ndarray
        and getattr(value, "dtype", target.dtype) != target.dtype
        and target.dtype.kind in "fc"
    ):
        return value.astype(target.dtype)
    return value


def restores_in_place(backward: Any) -> bool:
    """Whether the generated ``backward`` puts arrays back in place (:func:`restore`):
    running it changes the arrays of its residuals."""
    known = getattr(backward, "srcad_restores", None)
    if known is None:
        code, names = getattr(backward, "__code__", None), getattr(backward, "__globals__", {})
        known = code is not None and any(names.get(n) is restore for n in code.co_names)
        try:
            backward.srcad_restores = known  # (asked on every call of a callee's handle)
        except AttributeError:
            pass
    return known


class KeptResiduals:
    """Around one run of a backward pass that restores arrays in place: every writable
    array in its residuals (tape entries included) is put back as it was afterwards, so a
    pullback gives the same result however often it is called."""

    def __init__(self, residuals: Any) -> None:
        found: dict[int, Any] = {}
        _arrays(residuals, found)
        self.saved = [(a, _copy(a)) for a in found.values()]

    def __enter__(self) -> KeptResiduals:
        return self

    def __exit__(self, *exc: object) -> None:
        for array, values in self.saved:
            array[...] = values


def _arrays(value: Any, found: dict[int, Any]) -> None:
    if isinstance(value, (tuple, list)):
        for item in value:
            _arrays(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _arrays(item, found)
    elif (
        hasattr(value, "shape")
        and hasattr(value, "__setitem__")
        and getattr(getattr(value, "flags", None), "writeable", True)
        and id(value) not in found
    ):
        found[id(value)] = value


def _copy(x: Any) -> Any:
    if hasattr(x, "copy"):
        return x.copy()
    if hasattr(x, "shape"):
        from srcad.runtime.backend import array_namespace

        return array_namespace(x).asarray(x, copy=True)
    return x
