"""A chained assignment (``a = b = v``) becomes one assignment per target, each later target
bound to the first (``a = v; b = a``): one object under every name, as Python binds it,
which the later passes (the alias checks, unpacking) then see."""

from __future__ import annotations

import copy

import gast


def split_chained_assignments(tree: gast.FunctionDef) -> gast.FunctionDef:
    """``tree`` with each chained assignment to names (or displays of names) split."""
    return _Split().visit(tree)


class _Split(gast.NodeTransformer):
    def visit_Assign(self, node: gast.Assign) -> gast.stmt | list[gast.stmt]:
        first = node.targets[0]
        if len(node.targets) < 2 or not _names_only(first):
            return node  # (an element or field first: refused by the fence, one at a time)
        out = [gast.Assign(targets=[first], value=node.value, type_comment=None)]
        # (``a, b = b, a = v`` too: the display is read before its names are bound again)
        out += [
            gast.Assign(targets=[other], value=_read(first), type_comment=None)
            for other in node.targets[1:]
        ]
        return [gast.copy_location(stmt, node) for stmt in out]


def _names_only(target: gast.expr) -> bool:
    if isinstance(target, gast.Name):
        return True
    if isinstance(target, gast.Starred):
        return _names_only(target.value)
    return isinstance(target, (gast.Tuple, gast.List)) and all(map(_names_only, target.elts))


def _read(target: gast.expr) -> gast.expr:
    """The target as an expression reading what it bound."""
    value = copy.deepcopy(target)
    for node in gast.walk(value):
        if hasattr(node, "ctx"):
            node.ctx = gast.Load()
    return value
