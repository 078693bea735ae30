"""Python lists built inside differentiated code (``append``), and their gradients.

The gradient of a list is a list of the same length holding each element's gradient, or
``None`` where an element got none.
"""

from __future__ import annotations

from typing import Any

from srcad.runtime.accumulate import unbroadcast, zeros_like


def append(items: list, value: Any) -> list:
    """``items.append(value)``, returning the list (so the append reads as an assignment)."""
    items.append(value)
    return items


def drop_gradient(grads: list) -> list:
    """Take the last element's gradient off a list gradient (undoing an append), in place."""
    grads.pop()
    return grads


def element_gradient(grads: list, index: int, like: Any) -> Any:
    """The gradient of element ``index`` of a list gradient."""
    g = grads[index]
    return zeros_like(like) if g is None else g


def scatter_element(items: list, index: int, g: Any) -> list:
    """The gradient of ``items`` when only ``items[index]`` was read, with gradient ``g``."""
    grads: list[Any] = [None] * len(items)
    grads[index] = g
    return grads


def add_gradients(a: list, b: list) -> list:
    """Elementwise sum of two list gradients (``None`` is zero)."""
    return [y if x is None else x if y is None else x + y for x, y in zip(a, b)]


def unsum(g: Any, items: Any) -> Any:
    """The gradient of builtin ``sum(items)`` for a list, or an array summed over axis 0."""
    if isinstance(items, (list, tuple)):
        return [unbroadcast(g, item) for item in items]
    from srcad.runtime.backend import array_namespace

    xp = array_namespace(items)
    return xp.broadcast_to(xp.asarray(g, dtype=items.dtype), items.shape)
