"""Constants folded into a helper's body where it is written out (normalize/helpers.py):
names bound to literal constants read as those, operations on literals computed, and an
``if`` (``while``, conditional expression) whose test became a constant replaced by the
branch it takes; what follows a ``return`` or ``raise`` dropped. This is how a recursive
helper whose depth is an argument (``rec(p, n - 1)``) bottoms out when it is unrolled.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import gast

from srcad.transform.nodes import Transformer

_LITERALS = (bool, int, float, str, type(None))

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
}  # fmt: skip
_UNARY: dict[type, Callable[[Any], Any]] = {
    gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
}  # fmt: skip
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
    gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Is: operator.is_, gast.IsNot: operator.is_not,
}  # fmt: skip


def constant_of(expr: gast.expr) -> tuple[Any] | None:
    """``(value,)`` when ``expr`` is a literal (after folding), else None."""
    folded = _Fold({}).visit(expr) if not isinstance(expr, gast.Constant) else expr
    if isinstance(folded, gast.Constant) and isinstance(folded.value, _LITERALS):
        return (folded.value,)
    return None


def fold_block(stmts: list[gast.stmt], constants: dict[str, Any]) -> list[gast.stmt]:
    """``stmts`` with ``constants`` (name -> literal) folded in (see module doc)."""
    folder = _Fold(constants)
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            stmt.test = folder.visit(stmt.test)
            decided = _decided(stmt.test)
            if decided is not None:
                out.extend(fold_block(stmt.body if decided else stmt.orelse, constants))
            else:
                stmt.body = fold_block(stmt.body, constants) or [gast.Pass()]
                stmt.orelse = fold_block(stmt.orelse, constants)
                out.append(stmt)
        elif isinstance(stmt, gast.While):
            stmt.test = folder.visit(stmt.test)
            if _decided(stmt.test) is False:
                out.extend(fold_block(stmt.orelse, constants))
            else:
                stmt.body = fold_block(stmt.body, constants) or [gast.Pass()]
                stmt.orelse = fold_block(stmt.orelse, constants)
                out.append(stmt)
        elif isinstance(stmt, gast.For):
            stmt.iter = folder.visit(stmt.iter)
            stmt.body = fold_block(stmt.body, constants) or [gast.Pass()]
            stmt.orelse = fold_block(stmt.orelse, constants)
            out.append(stmt)
        elif isinstance(stmt, gast.Try):
            stmt.body = fold_block(stmt.body, constants) or [gast.Pass()]
            for handler in stmt.handlers:
                handler.body = fold_block(handler.body, constants) or [gast.Pass()]
            stmt.orelse = fold_block(stmt.orelse, constants)
            stmt.finalbody = fold_block(stmt.finalbody, constants)
            out.append(stmt)
        else:
            out.append(folder.visit(stmt))
        if out and isinstance(out[-1], (gast.Return, gast.Raise)):
            break  # what follows never runs
    return out


def _decided(test: gast.expr) -> bool | None:
    if isinstance(test, gast.Constant) and isinstance(test.value, _LITERALS):
        return bool(test.value)
    return None


def _literal(value: Any, like: gast.AST) -> gast.expr | None:
    if type(value) not in _LITERALS:
        return None
    return gast.copy_location(gast.Constant(value=value, kind=None), like)


class _Fold(Transformer):
    """Names of ``constants`` replaced by their values; operations on literals computed."""

    def __init__(self, constants: dict[str, Any]) -> None:
        self.constants = constants

    def visit_Name(self, node: gast.Name) -> gast.expr:
        if isinstance(node.ctx, gast.Load) and node.id in self.constants:
            return _literal(self.constants[node.id], node) or node
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.expr:
        return node  # (its parameters may shadow the constants' names)

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        op = _BINARY.get(type(node.op))
        values = [_value(node.left), _value(node.right)]
        if op is None or None in values:
            return node
        return _computed(lambda: op(values[0][0], values[1][0]), node)

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        op, value = _UNARY.get(type(node.op)), _value(node.operand)
        if op is None or value is None:
            return node
        return _computed(lambda: op(value[0]), node)

    def visit_Compare(self, node: gast.Compare) -> gast.expr:
        self.generic_visit(node)
        values = [_value(node.left), *map(_value, node.comparators)]
        ops = [_COMPARE.get(type(op)) for op in node.ops]
        if None in values or None in ops:
            return node

        def compare() -> bool:
            return all(op(a[0], b[0]) for op, a, b in zip(ops, values, values[1:], strict=False))

        return _computed(compare, node)

    def visit_BoolOp(self, node: gast.BoolOp) -> gast.expr:
        self.generic_visit(node)
        values = [_value(v) for v in node.values]
        if None in values:
            return node
        is_and = isinstance(node.op, gast.And)
        for (value,) in values[:-1]:
            if bool(value) is not is_and:
                return _literal(value, node) or node
        return _literal(values[-1][0], node) or node

    def visit_IfExp(self, node: gast.IfExp) -> gast.expr:
        node.test = self.visit(node.test)
        decided = _decided(node.test)
        if decided is None:
            node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
            return node
        return self.visit(node.body if decided else node.orelse)


def _value(node: gast.expr) -> tuple[Any] | None:
    if isinstance(node, gast.Constant) and isinstance(node.value, _LITERALS):
        return (node.value,)
    return None


def _computed(compute: Callable[[], Any], node: gast.expr) -> gast.expr:
    try:
        value = compute()
    except Exception:  # noqa: BLE001 (left for Python to raise when it runs)
        return node
    return _literal(value, node) or node
