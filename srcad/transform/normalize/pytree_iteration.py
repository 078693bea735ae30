"""Loops over pytree parameters, resolved statically: what each iteration binds.

``for W in params[1:]``, ``for i, (W, b) in enumerate(zip(Ws, bs))``, ``for k, v in
d.items()`` and the like are unrolled by the pytree pass (``pytrees.py``); an
:class:`Iteration` tells the items such a loop binds: a :class:`View` (a sub-tree), a
:class:`Const` (a dict key, an index of ``enumerate``, a value of ``range``), or a tuple of
those (an item of ``zip``, ``enumerate`` or ``.items()``), in Python's order.
"""

from __future__ import annotations

from typing import Any

import gast

from srcad.transform import build
from srcad.transform.normalize.pytree_views import Const, Resolver, View, kind_label

DICT_VIEWS = ("keys", "values", "items")
#: constants a key or an index may be written as in generated code
_WRITABLE = (str, int, float, bool, type(None))


def has_jump(stmt: gast.For) -> bool:
    """Whether a loop holds ``break`` or ``continue`` (an unrolled loop cannot)."""
    return any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(stmt))


def indexes_with(body: list[gast.stmt], names: set[str]) -> bool:
    """Whether ``body`` indexes anything with one of ``names`` (``d[k]``, ``d.get(k)``)."""
    for node in (n for stmt in body for n in gast.walk(stmt)):
        index = None
        if isinstance(node, gast.Subscript):
            index = node.slice
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.args:
            index = node.args[0] if node.func.attr == "get" else None
        if isinstance(index, gast.Name) and index.id in names:
            return True
    return False


def _target_names(target: gast.expr) -> set[str]:
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


class Iteration(Resolver):
    """The items of loops over pytree parameters (see module doc)."""

    def items(self, expr: gast.expr, ranges: bool = False) -> list | None:
        """The items a loop over ``expr`` binds, when ``expr`` iterates a pytree argument
        (a :class:`View` or :class:`Const` each, a tuple of those for ``zip``,
        ``enumerate`` and ``.items()``); None for other iterables. With ``ranges``,
        ``range`` of constants counts too (inside ``zip``)."""
        view = self.resolve(expr)
        if view is not None:
            return None if view.is_leaf else self.view_items(view, expr)
        if isinstance(expr, (gast.Tuple, gast.List)):
            return self.display_items(expr, ranges)
        if not isinstance(expr, gast.Call):
            return None
        if isinstance(expr.func, gast.Attribute) and expr.func.attr in DICT_VIEWS:
            return self.dict_items(expr)
        if self.builtin(expr.func, "enumerate"):
            return self.enumerated(expr)
        if self.builtin(expr.func, "zip"):
            return self.zipped(expr)
        if self.builtin(expr.func, "reversed") and len(expr.args) == 1 and not expr.keywords:
            inner = self.items(expr.args[0])
            return None if inner is None else inner[::-1]
        if ranges and self.builtin(expr.func, "range") and not expr.keywords:
            bounds = [self.constant(a) for a in expr.args]
            if bounds and all(ok and type(v) is int for ok, v in bounds):
                return [Const(k) for k in range(*(v for _, v in bounds))]
        return None

    def display_items(self, display: gast.Tuple | gast.List, constants: bool) -> list | None:
        """A display of sub-trees and constants, holding one sub-tree at least (or
        constants alone, with ``constants``)."""
        items: list[Any] = []
        for elt in display.elts:
            view = self.resolve(elt)
            ok, value = self.constant(elt)
            if view is None and not (ok and isinstance(value, _WRITABLE)):
                return None
            items.append(view if view is not None else Const(value))
        if constants or any(isinstance(i, View) for i in items):
            return items
        return None

    def view_items(self, view: View, where: gast.AST) -> list:
        """A loop over a sub-tree: its children, or a dict's keys."""
        kind = view.treedef[0]
        if kind == "custom":
            raise self.error(
                f"a loop over a {kind_label(view)} argument runs its own __iter__, which srcad "
                "cannot read; read its children as attributes",
                where,
            )
        if kind == "dict":
            return [self.key(k, where) for k in view.labels()]
        if not view.is_sequence():
            raise self.error(f"a {kind} argument is not iterable", where)
        return view.children()

    def key(self, value: Any, where: gast.AST) -> Const:
        if not isinstance(value, _WRITABLE):
            raise self.error(
                f"a loop over a dict with the key {value!r}: srcad binds a dict's keys as "
                "constants, which must be strings or numbers",
                where,
            )
        return Const(value)

    def dict_items(self, expr: gast.Call) -> list | None:
        """``d.keys()``, ``d.values()``, ``d.items()`` of a pytree dict."""
        base = self.resolve(expr.func.value)
        if base is None or base.treedef[0] != "dict" or expr.args or expr.keywords:
            return None
        keys = [self.key(k, expr) for k in base.labels()]
        children = base.children()
        return {"keys": keys, "values": children, "items": list(zip(keys, children))}[
            expr.func.attr
        ]

    def enumerated(self, expr: gast.Call) -> list | None:
        """``enumerate(x[, start])`` of a pytree sequence."""
        given = [*expr.args[1:], *(k.value for k in expr.keywords if k.arg == "start")]
        if not expr.args or len(given) + 1 != len(expr.args) + len(expr.keywords):
            return None  # not enumerate(x) or enumerate(x, start): Python refuses it
        start = given[0] if given else build.const(0)
        inner = self.items(expr.args[0])
        if inner is None:
            return None
        ok, first = self.constant(start)
        if not ok or type(first) is not int:
            raise self.error("enumerate over a pytree argument needs a constant start", expr)
        return [(Const(first + k), item) for k, item in enumerate(inner)]

    def zipped(self, expr: gast.Call) -> list | None:
        """``zip(a, b, ...)`` of pytree sequences (and ``range`` of constants)."""
        if all(self.items(a) is None for a in expr.args):
            return None  # no pytree argument in it: an ordinary zip
        parts = [self.items(a, ranges=True) for a in expr.args]
        if any(p is None for p in parts):
            raise self.error(
                "zip over a pytree argument and a value srcad cannot unroll; zip pytree "
                "arguments, their slices, displays of constants and range() of constants",
                expr,
            )
        strict = [kw for kw in expr.keywords if kw.arg == "strict"]
        if len(strict) != len(expr.keywords):
            raise self.error("zip over a pytree argument takes no keywords but strict=", expr)
        if strict and len({len(p) for p in parts}) > 1:
            ok, value = self.constant(strict[0].value)
            if not ok or value:
                raise self.error("zip(strict=True) over sequences of different lengths", expr)
        return list(zip(*parts))

    def loop_items(self, stmt: gast.For) -> list | None:
        """The items of a loop srcad unrolls; None for a loop it keeps."""
        if not isinstance(stmt.iter, (gast.Tuple, gast.List)):
            return self.items(stmt.iter)
        # a display: unrolled when it holds sub-trees, or constants the body indexes with
        items = self.display_items(stmt.iter, constants=True)
        if not items:
            return None
        if any(isinstance(i, View) and not i.is_leaf for i in items):
            return items
        if all(isinstance(i, Const) for i in items) and not has_jump(stmt):
            if indexes_with(stmt.body, _target_names(stmt.target)):
                return items
        return None
