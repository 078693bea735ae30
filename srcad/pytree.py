"""Pytrees: nested dicts, lists, tuples, namedtuples, dataclasses and registered classes.

A gradient with respect to a pytree argument is a pytree of the same structure, as in JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

# ("leaf",) | (kind, type, keys, children) | ("custom", type, keys, children, aux)
Treedef = tuple[Any, ...]


class _Registration(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, Iterable[Any]], Any]
    names: tuple[str, ...] | None


_registry: dict[type, _Registration] = {}


def register_pytree_node(
    cls: type,
    flatten: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten: Callable[[Any, Iterable[Any]], Any],
    names: Sequence[str] | None = None,
) -> None:
    """Make instances of ``cls`` pytree nodes: ``flatten(obj) -> (children, aux)`` and
    ``unflatten(aux, children) -> obj``, as in JAX; ``aux`` must be hashable.

    ``names`` are the attributes holding the children, in order (``obj.W`` is child
    ``names.index("W")``): with them a differentiated function may read ``obj.W``; without
    them it can only pass the object on to ``flatten``-aware srcad calls.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_node needs a class, got {cls!r}")
    if not callable(flatten) or not callable(unflatten):
        raise TypeError("register_pytree_node needs callable flatten and unflatten functions")
    if cls in _registry or is_container_type(cls):
        raise ValueError(f"{cls.__name__} is already a pytree node type")
    if names is not None:
        names = tuple(names)
        if not all(isinstance(n, str) and n.isidentifier() for n in names):
            raise TypeError(f"names must be attribute names (identifiers), got {names!r}")
    _registry[cls] = _Registration(flatten, unflatten, names)


def is_container_type(cls: type) -> bool:
    """Whether instances of ``cls`` are built-in pytree nodes (not registered ones)."""
    return issubclass(cls, (dict, list, tuple)) or dataclasses.is_dataclass(cls)


def is_container(x: Any) -> bool:
    """Whether ``x`` is a pytree node (not a leaf)."""
    return (
        type(x) in _registry
        or isinstance(x, (dict, list, tuple))
        or dataclasses.is_dataclass(x)
        and not isinstance(x, type)
    )


def flatten(x: Any) -> tuple[list[Any], Treedef]:
    """The leaves of ``x`` in a fixed order, and the structure to rebuild it."""
    leaves: list[Any] = []
    return leaves, _flatten(x, leaves)


def _flatten(x: Any, leaves: list[Any]) -> Treedef:
    registration = _registry.get(type(x))
    if registration is not None:
        return _flatten_registered(x, registration, leaves)
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


def _flatten_registered(x: Any, registration: _Registration, leaves: list[Any]) -> Treedef:
    name = type(x).__name__
    result = registration.flatten(x)
    if not isinstance(result, tuple) or len(result) != 2:
        raise TypeError(f"the pytree flatten function of {name} must return (children, aux)")
    children, aux = list(result[0]), result[1]
    try:
        hash(aux)
    except TypeError:
        raise TypeError(
            f"the aux data that {name}'s flatten function returns must be hashable, "
            f"got {type(aux).__name__}"
        ) from None
    keys: tuple[str, ...] | int = len(children)
    if registration.names is not None:
        keys = registration.names
        if len(keys) != len(children):
            raise ValueError(
                f"{name} was registered with {len(keys)} names {keys!r}, but its flatten "
                f"function returned {len(children)} children"
            )
        for key, child in zip(keys, children):
            # the transform maps obj.key to this child: it must really be that attribute
            if getattr(x, key, None) is not child:
                raise ValueError(
                    f"{name} was registered with names {keys!r}, but child "
                    f"{keys.index(key)} of its flatten function is not {name}.{key}"
                )
    subtrees = tuple(_flatten(child, leaves) for child in children)
    return ("custom", type(x), keys, subtrees, aux)


def unflatten(treedef: Treedef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of structure ``treedef`` from ``leaves``."""
    return _unflatten(treedef, iter(leaves))


def _unflatten(treedef: Treedef, it: Iterator[Any]) -> Any:
    kind = treedef[0]
    if kind == "leaf":
        return next(it)
    cls, keys, children = treedef[1:4]
    values = [_unflatten(child, it) for child in children]
    if kind == "custom":
        return _registry[cls].unflatten(treedef[4], values)
    if kind == "dict":
        out = cls() if cls is not dict else {}
        out.update(zip(keys, values))
        return out
    if kind == "namedtuple":
        return cls(*values)
    if kind == "dataclass":
        return cls(**dict(zip(keys, values)))
    return cls(values)


def count(treedef: Treedef) -> int:
    """The number of leaves of a pytree of structure ``treedef``."""
    return 1 if treedef[0] == "leaf" else sum(count(c) for c in treedef[3])


def paths(treedef: Treedef, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The key path of every leaf, in leaf order."""
    if treedef[0] == "leaf":
        return [prefix]
    keys, children = treedef[2:4]
    labels = keys if isinstance(keys, tuple) else range(keys)
    out = []
    for label, child in zip(labels, children):
        out.extend(paths(child, (*prefix, label)))
    return out


def tree_flatten(tree: Any) -> tuple[list[Any], Treedef]:
    """``(leaves, treedef)``: the leaves of ``tree`` in a fixed order and its structure."""
    return flatten(tree)


def tree_unflatten(treedef: Treedef, leaves: Iterable[Any]) -> Any:
    """The pytree of structure ``treedef`` (from :func:`tree_flatten`) holding ``leaves``."""
    if not isinstance(treedef, tuple) or not treedef or not isinstance(treedef[0], str):
        raise TypeError(f"treedef must come from srcad.tree_flatten, got {treedef!r}")
    leaves = list(leaves)
    if len(leaves) != count(treedef):
        raise ValueError(f"the structure has {count(treedef)} leaves, but {len(leaves)} were given")
    return unflatten(treedef, leaves)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree``, in :func:`tree_flatten`'s order."""
    return flatten(tree)[0]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """The pytree of ``f(leaf, *leaves of rest)`` for each leaf of ``tree``; every tree in
    ``rest`` must have the structure of ``tree``."""
    leaves, treedef = flatten(tree)
    others = []
    for k, other in enumerate(rest, 1):
        other_leaves, other_def = flatten(other)
        if other_def != treedef:
            raise ValueError(
                f"tree_map needs trees of one structure: tree {k} of rest differs from the "
                f"first ({_describe(other_def)} vs {_describe(treedef)})"
            )
        others.append(other_leaves)
    return unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def _describe(treedef: Treedef) -> str:
    if treedef[0] == "leaf":
        return "a leaf"
    name = treedef[1].__name__
    keys = treedef[2]
    inner = ", ".join(
        f"{label!r}: {_describe(child)}" if isinstance(keys, tuple) else _describe(child)
        for label, child in zip(keys if isinstance(keys, tuple) else range(keys), treedef[3])
    )
    return f"{name}({inner})"
