"""In-place element updates (``y[i] = v``) in generated code, and what their adjoints need."""

from __future__ import annotations

from typing import Any


def setitem(array: Any, index: Any, value: Any) -> Any:
    """``array[index] = value`` in place, returning the array (so it reads as an assignment)."""
    array[index] = value
    return array


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
    if getattr(getattr(array, "flags", None), "writeable", True) is False:
        # the name was rebound to a read-only view after its updates: nothing to put back
        return
    array[...] = values


def _copy(x: Any) -> Any:
    if hasattr(x, "copy"):
        return x.copy()
    if hasattr(x, "shape"):
        from srcad.runtime.backend import array_namespace

        return array_namespace(x).asarray(x, copy=True)
    return x
