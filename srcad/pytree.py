"""Pytrees: nested dicts, lists, tuples, namedtuples and dataclasses of arrays and floats.

A gradient with respect to a pytree argument is a pytree of the same structure, as in JAX.
"""

from __future__ import annotations

import dataclasses
from typing import Any

Treedef = Any  # ("leaf",) | (kind, type, keys, children)


def is_container(x: Any) -> bool:
    """Whether ``x`` is a pytree node (not a leaf)."""
    return (
        isinstance(x, (dict, list, tuple))
        or dataclasses.is_dataclass(x)
        and not isinstance(x, type)
    )


def flatten(x: Any) -> tuple[list[Any], Treedef]:
    """The leaves of ``x`` in a fixed order, and the structure to rebuild it."""
    leaves: list[Any] = []
    return leaves, _flatten(x, leaves)


def _flatten(x: Any, leaves: list[Any]) -> Treedef:
    if isinstance(x, dict):
        keys = tuple(x)
        return ("dict", type(x), keys, tuple(_flatten(x[k], leaves) for k in keys))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        fields = tuple(x._fields)
        return ("namedtuple", type(x), fields, tuple(_flatten(v, leaves) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, type(x), len(x), tuple(_flatten(v, leaves) for v in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = tuple(f.name for f in dataclasses.fields(x))
        children = tuple(_flatten(getattr(x, f), leaves) for f in fields)
        return ("dataclass", type(x), fields, children)
    leaves.append(x)
    return ("leaf",)


def unflatten(treedef: Treedef, leaves: list[Any]) -> Any:
    """Rebuild a pytree of structure ``treedef`` from ``leaves``."""
    it = iter(leaves)
    return _unflatten(treedef, it)


def _unflatten(treedef: Treedef, it: Any) -> Any:
    kind = treedef[0]
    if kind == "leaf":
        return next(it)
    _, cls, keys, children = treedef
    values = [_unflatten(child, it) for child in children]
    if kind == "dict":
        out = cls() if cls is not dict else {}
        out.update(zip(keys, values))
        return out
    if kind == "namedtuple":
        return cls(*values)
    if kind == "dataclass":
        return cls(**dict(zip(keys, values)))
    return cls(values)


def paths(treedef: Treedef, prefix: tuple = ()) -> list[tuple]:
    """The key path of every leaf, in leaf order."""
    if treedef[0] == "leaf":
        return [prefix]
    _, _, keys, children = treedef
    labels = keys if isinstance(keys, tuple) else range(keys)
    out = []
    for label, child in zip(labels, children):
        out.extend(paths(child, (*prefix, label)))
    return out
