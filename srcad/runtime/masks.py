"""Helpers the vectorized form of an elementwise function calls: compaction by masks.

Arrays carry the elements on their last axis (partials have one leading axis per
differentiated input), even when there is one element; a number or a 0-d array is the
same for every element and is never gathered.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from srcad.runtime.backend import array_namespace


def flat_broadcast(*args: Any) -> tuple[tuple[int, ...], list[Any]]:
    """The broadcast shape of ``args`` and each of them as a flat array of that size
    (a list of one-element arrays, for numbers alone)."""
    arrays = [a for a in args if hasattr(a, "shape")]
    xp = array_namespace(*arrays) if arrays else array_namespace(0.0)
    shape = tuple(xp.broadcast_shapes(*[tuple(a.shape) for a in arrays])) if arrays else ()
    flat = [xp.reshape(xp.broadcast_to(xp.asarray(a), shape), (-1,)) for a in args]
    return shape, flat


def split(mask: Any, size: int) -> tuple[Any, Any]:
    """The positions (among ``size`` elements) where ``mask`` holds and where it does not
    (gathering by positions is much faster in NumPy than by a boolean mask)."""
    xp = array_namespace(mask) if hasattr(mask, "shape") else array_namespace(0.0)
    mask = xp.broadcast_to(xp.asarray(mask, dtype=bool), (size,))
    return xp.nonzero(mask)[0], xp.nonzero(~mask)[0]


def count(positions: Any) -> int:
    """How many positions there are."""
    return positions.shape[0]


def take(value: Any, where: Any) -> Any:
    """``value`` at the positions ``where`` (on its last axis), unless it is uniform (a
    number, a 0-d array, a namespace). An array's last axis always holds the elements, even
    when there is one of them: reading a length-1 axis as "the same for every element"
    took one element's value (or position) for a selection of none."""
    shape = getattr(value, "shape", None)
    if not isinstance(shape, tuple) or not shape:
        return value
    return array_namespace(value).take(value, where, axis=-1)


def merge(size: int, *parts: Any) -> Any:
    """One array of ``size`` elements from ``(positions, values)`` pairs that cover it."""
    pairs = [(parts[k], parts[k + 1]) for k in range(0, len(parts), 2)]
    arrays = [v for _, v in pairs if hasattr(v, "shape")]
    xp = array_namespace(*arrays) if arrays else array_namespace(0.0)
    lead = max((tuple(v.shape[:-1]) for v in arrays if v.ndim), key=len, default=())
    dtype = xp.result_type(*[v.dtype for v in arrays]) if arrays else float
    if any(getattr(v, "dtype", None) is not None and v.dtype == bool for v in arrays):
        dtype = bool if all(v.dtype == bool for v in arrays) else dtype
    out = xp.empty(lead + (size,), dtype=dtype)
    for where, values in pairs:
        if lead:
            out[..., where] = values
        else:
            out[where] = values
    return out


def finish(value: Any, shape: tuple[int, ...]) -> Any:
    """A flat result (or a number, the same everywhere) in the broadcast ``shape``."""
    xp = array_namespace(value) if hasattr(value, "shape") else array_namespace(0.0)
    size = 1
    for n in shape:
        size *= n
    value = xp.asarray(value)
    if value.dtype.kind != "f":
        value = xp.astype(value, float)
    return xp.reshape(xp.broadcast_to(value, (size,)), shape)


def finish_partials(shape: tuple[int, ...], *partials: Any) -> Any:
    """The partial derivatives, each in the broadcast ``shape``, stacked on a leading axis."""
    parts = [finish(p, shape) for p in partials]
    xp = array_namespace(*parts) if parts else array_namespace(0.0)
    return xp.stack(parts) if parts else xp.zeros((0, *shape))


def smaller(a: Any, b: Any) -> Any:
    """Python's ``min(a, b)``, element by element (``a`` where they are equal, as Python)."""
    return _namespace(a, b).where(b < a, b, a)


def larger(a: Any, b: Any) -> Any:
    """Python's ``max(a, b)``, element by element (``a`` where they are equal, as Python)."""
    return _namespace(a, b).where(b > a, b, a)


def negated(mask: Any) -> Any:
    """``not mask``, element by element."""
    return _namespace(mask).logical_not(mask)


def _namespace(*values: Any) -> Any:
    """The arrays' namespace, NumPy's where the values are all Python numbers."""
    arrays = [v for v in values if hasattr(v, "shape")]
    return array_namespace(*arrays) if arrays else array_namespace(0.0)


class _ElementwiseMath:
    """``math``'s functions on arrays, for srcad.elementwise's vectorized code: the arrays'
    own where their namespace has one (``sin``), else SciPy's (``erf``), else ``math``'s
    applied element by element."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp

    def __getattr__(self, name: str) -> Any:
        own = getattr(self.xp, name, None)
        if own is not None:
            return own
        try:
            import scipy.special

            special = getattr(scipy.special, name, None)
        except ImportError:
            special = None
        if special is not None:
            return special
        return numpy.vectorize(getattr(math, name), otypes=[float])


def elementwise_math(*args: Any) -> Any:
    """What ``math`` is in the vectorized code of an elementwise function (see above)."""
    return _ElementwiseMath(array_namespace(*args))
