"""Python lists built inside differentiated code (``append``), and their gradients.

The gradient of a list is a list of the same length holding each element's gradient, or
``None`` where an element got none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from srcad.runtime.accumulate import unbroadcast, zeros_like
from srcad.runtime.backend import array_namespace


def append(items: list, value: Any) -> list:
    """``items.append(value)``, returning the list (so the append reads as an assignment)."""
    items.append(value)
    return items


def drop_gradient(grads: list) -> list:
    """Take the last element's gradient off a list gradient (undoing an append), in place."""
    grads.pop()
    return grads


def dropped_gradient(grads: list) -> list:
    """:func:`drop_gradient` into a new list, leaving ``grads`` as it was: generated code
    differentiated again reads each list gradient it made (normalize/updates.py)."""
    return list(grads[:-1])


def regrown_gradient(g: list) -> list:
    """``g`` with no gradient (``None``) for one more element at its end: the adjoint of
    :func:`dropped_gradient`."""
    from srcad.runtime.higher import GradientList  # (it imports this module)

    return GradientList([*g, None])


def static_list(items: list) -> list:
    """``items`` as a helper of generated code reads it: for its length and its elements'
    shapes, with no derivative flowing back (normalize/lists.py)."""
    return items


def element_gradient(grads: list, index: int, like: Any) -> Any:
    """The gradient of element ``index`` of a list gradient."""
    g = grads[index]
    return zeros_like(like) if g is None else g


def scatter_element(items: list, index: int, g: Any) -> list:
    """The gradient of ``items`` when only ``items[index]`` was read, with gradient ``g``."""
    grads: list[Any] = [None] * len(items)
    grads[index] = g
    return grads


def is_zero_gradient(g: Any) -> bool:
    """Whether ``g`` is a zero gradient with no list form: ``None``, or the number zero that
    ``zeros_like`` gives a name holding no list yet (the value before its first assignment,
    which code differentiated again pushes on a tape like any other)."""
    if g is None:
        return True
    if isinstance(g, (list, tuple)) or len(getattr(g, "shape", ())) != 0:
        return False
    return isinstance(g, (int, float, complex)) and g == 0


def add_gradients(a: Any, b: Any) -> Any:
    """Elementwise sum of two list gradients (``None`` is zero). Either may be a zero number
    (:func:`is_zero_gradient`) or one array stacking the elements' gradients along its
    first axis (generated code indexing a list it did not build makes that form)."""
    if is_zero_gradient(b):
        return list(a) if isinstance(a, list) else a
    if is_zero_gradient(a):
        return list(b) if isinstance(b, list) else b
    # a zero made from a list appended to in place has the list's final length: longer
    # than the gradient of the list as it was, by elements that have no gradient
    n = min(len(a), len(b))
    if any(g is not None for g in [*a[n:], *b[n:]]):
        raise ValueError(f"list gradients of {len(a)} and {len(b)} elements cannot be added")
    return [y if x is None else x if y is None else _added(x, y) for x, y in zip(a, b)]


def _added(x: Any, y: Any) -> Any:
    """Two elements' gradients added: the gradients of lists inside a list (``[[u, v], w]``)
    added as lists, not joined."""
    if isinstance(x, list) or isinstance(y, list):
        return add_gradients(x, y)
    return x + y


def unsum(g: Any, items: Any) -> Any:
    """The gradient of builtin ``sum(items)`` for a list, or an array summed over axis 0."""
    if isinstance(items, (list, tuple)):
        return [unbroadcast(g, item) for item in items]
    from srcad.runtime.backend import array_namespace

    xp = array_namespace(items)
    return xp.broadcast_to(xp.asarray(g, dtype=items.dtype), items.shape)


def joined_as(how: str, x: Any) -> tuple[Any, int]:
    """How ``np.<how>`` joins ``x``: the array it concatenates (``x`` given the dimensions
    the function adds) and the axis it concatenates along."""
    xp = array_namespace(x)
    x = xp.asarray(x)
    if how == "vstack":
        return (xp.reshape(x, (1, -1)) if x.ndim < 2 else x), 0
    if how == "hstack":
        return (xp.reshape(x, (1,)) if x.ndim == 0 else x), (0 if x.ndim <= 1 else 1)
    if how == "dstack":
        if x.ndim < 3:
            x = xp.reshape(x, (1, -1, 1)) if x.ndim < 2 else x[..., None]
        return x, 2
    # column_stack: 1-d arrays become columns
    return (xp.reshape(x, (-1, 1)) if x.ndim < 2 else x), 1


def unjoined(g: Any, xs: Sequence[Any], how: str) -> list[Any]:
    """Split the gradient of ``np.<how>(xs)`` (vstack, hstack, dstack, column_stack) into
    one piece per input, each in its input's shape."""
    xp = array_namespace(g)
    joined = [joined_as(how, x) for x in xs]
    axis = joined[0][1]
    bounds = []
    total = 0
    for piece, _ in joined[:-1]:
        total += piece.shape[axis]
        bounds.append(total)
    return [
        xp.reshape(part, tuple(getattr(x, "shape", ())))
        for part, x in zip(xp.split(g, bounds, axis=axis), xs)
    ]


def list_gradient(g: Any, items: Any) -> list:
    """The gradient of ``items`` in ``tuple(items)`` / ``list(items)``: the list of its
    elements' gradients for a list the function built; for an array, whose rows the
    sequence holds, their gradients stacked (zeros for rows nothing read)."""
    if hasattr(items, "shape") and getattr(items, "ndim", 0) > 0:
        xp = array_namespace(items)
        rows = [
            xp.zeros_like(items[k]) if gk is None else xp.asarray(gk, dtype=items.dtype)
            for k, gk in enumerate(g)
        ]
        return xp.stack(rows)
    if not isinstance(items, list):
        raise TypeError(
            f"tuple()/list() of a {type(items).__name__} cannot be differentiated; build a list "
            "(a comprehension or appends) or index the array"
        )
    return list(g)


def relisted_gradient(gs: list, g: Any) -> Any:
    """The elements' gradients ``gs`` in the form of ``g`` (the adjoint of
    :func:`list_gradient`): stacked like ``g`` when it is an array, else a list."""
    from srcad.runtime.higher import GradientList, restack

    if isinstance(g, (list, tuple)):
        return GradientList(gs)
    return restack(gs, list(g))


def gradient_list(g: list) -> list:
    """The list gradient ``g``, added to another element by element (``None`` is zero)."""
    from srcad.runtime.higher import GradientList

    return g if isinstance(g, GradientList) else GradientList(g)


def residual(residuals: list, index: int) -> Any:
    """Element ``index`` of a list of residuals that generated code passes between the
    forward and backward functions of a call (srcad/transform/recursive_calls.py)."""
    return residuals[index]
