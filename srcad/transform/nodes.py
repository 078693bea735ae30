"""Fast copies and walks of gast trees, for the passes that do them thousands of times.

``copy.deepcopy`` and ``gast.walk`` are general and slow (a memo, ``_fields`` looked up per
node); transforming a long function copies templates and reads names hundreds of
thousands of times. These do the same for the trees srcad builds.
"""

from __future__ import annotations

from ast import AST
from typing import Any

import gast

from srcad.transform.anno import _KEY

_Name = gast.Name
_Load = gast.Load
_Store = gast.Store


def clone(node: Any) -> Any:
    """A deep copy of ``node`` (a node or a list of nodes): every node copied, annotations
    copied one level (an annotation that is a node, such as a statement's origin, is
    shared, not copied)."""
    cls = type(node)
    if cls is list:
        return [clone(v) if isinstance(v, AST) else v for v in node]
    new = cls.__new__(cls)
    target = new.__dict__
    for key, value in node.__dict__.items():
        if isinstance(value, AST):
            value = clone(value)
        elif type(value) is list:
            value = [clone(v) if isinstance(v, AST) else v for v in value]
        elif key == _KEY:
            value = dict(value)
        target[key] = value
    return new


def _names(node: AST, out: list[gast.Name]) -> None:
    for value in node.__dict__.values():
        if isinstance(value, AST):
            if type(value) is _Name:
                out.append(value)
            else:
                _names(value, out)
        elif type(value) is list:
            for item in value:
                if type(item) is _Name:
                    out.append(item)
                elif isinstance(item, AST):
                    _names(item, out)


def names(node: AST) -> list[gast.Name]:
    """Every Name node inside ``node`` (``node`` itself included), in no particular order."""
    if type(node) is _Name:
        return [node]
    out: list[gast.Name] = []
    _names(node, out)
    return out


def loads(node: AST) -> list[str]:
    """Names read inside ``node``, with repeats."""
    return [n.id for n in names(node) if type(n.ctx) is _Load]


def stores(node: AST) -> list[str]:
    """Names bound inside ``node``, with repeats."""
    return [n.id for n in names(node) if type(n.ctx) is _Store]


_METHODS: dict[tuple[type, type], Any] = {}


def replace_node(tree: AST, old: AST, new: AST) -> None:
    """Put ``new`` where ``old`` sits in ``tree`` (its one place)."""
    for node in gast.walk(tree):
        for field, value in gast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
                return
            if isinstance(value, list):
                for k, child in enumerate(value):
                    if child is old:
                        value[k] = new
                        return


class Transformer:
    """``gast.NodeTransformer`` with the same contract (``visit_<Class>`` methods; a visit
    returns the node, a replacement, a list to splice into a statement list, or None to
    drop it), without its per-node overhead: nodes without a method of their own and with
    no fields (contexts, operators) are not visited at all."""

    def visit(self, node: AST) -> Any:
        key = (type(self), type(node))
        method = _METHODS.get(key, _METHODS)
        if method is _METHODS:
            method = _METHODS[key] = getattr(type(self), "visit_" + type(node).__name__, None)
        if method is None:
            return self.generic_visit(node)
        return method(self, node)

    def generic_visit(self, node: AST) -> AST:
        fields = node.__dict__
        for field in node._fields:
            old = fields.get(field)
            if type(old) is list:
                new_values: list[Any] = []
                for value in old:
                    if isinstance(value, AST) and (value._fields or self._handles(value)):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old[:] = new_values
            elif isinstance(old, AST) and (old._fields or self._handles(old)):
                new = self.visit(old)
                if new is None:
                    del fields[field]
                else:
                    fields[field] = new
        return node

    def _handles(self, node: AST) -> bool:
        key = (type(self), type(node))
        method = _METHODS.get(key, _METHODS)
        if method is _METHODS:
            method = _METHODS[key] = getattr(type(self), "visit_" + type(node).__name__, None)
        return method is not None
