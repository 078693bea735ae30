"""Algebraic folding: constant arithmetic, ``1 * e``, ``e ** 1``, ``--e``, helper defaults."""

from __future__ import annotations

import inspect
import operator
from typing import Any

import gast

from srcad.runtime import accumulate
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer

_ARITHMETIC = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.Pow: operator.pow,
}
#: Runtime helpers that may be evaluated at transform time on constant arguments.
_FOLDABLE = {accumulate.inverse_axes, accumulate.unit_if_zero}


def constant_value(node: gast.expr) -> Any:
    """The Python value of a numeric constant node (``-c`` included), else None."""
    if isinstance(node, gast.Constant):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        return None
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = constant_value(node.operand)
        return None if inner is None else -inner
    return None


def _literal(node: gast.expr) -> tuple[bool, Any]:
    try:
        return True, _literal_value(node)
    except ValueError:
        return False, None


def _literal_value(node: gast.expr) -> Any:
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        return tuple(_literal_value(e) for e in node.elts)
    value = constant_value(node)
    if value is None:
        raise ValueError
    return value


def _to_node(value: Any) -> gast.expr:
    if isinstance(value, tuple):
        return build.tuple_([_to_node(v) for v in value])
    return build.const(value)


#: Annotation of a statement that folding left unchanged (cleared when a rename edits it).
FOLDED = "folded"


class _Fold(Transformer):
    def __init__(self, namer: Namer) -> None:
        self.namer = namer
        self.changed = False
        # identities (x * 1 -> x) only in generated code: in the user's code ``y = x * 1.0``
        # makes a new array that may be updated in place, and ``y = x`` would not
        self.identities = True

    def visit_stmt(self, node: gast.stmt) -> gast.AST:
        if getanno(node, FOLDED):
            return node  # folded in an earlier round, and not changed since
        saved, changed = self.identities, self.changed
        # (nor in generated code reading an array updated in place later: its copy must stay)
        self.identities = bool(getanno(node, "generated")) and not getanno(node, "copies")
        self.changed = False
        try:
            node = self.generic_visit(node)
            if not self.changed:
                setanno(node, FOLDED, True)
            return node
        finally:
            self.identities = saved
            self.changed |= changed

    visit_Assign = visit_Expr = visit_Return = visit_stmt

    def _done(self, node: gast.AST) -> gast.AST:
        self.changed = True
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.AST:
        self.generic_visit(node)
        if isinstance(node.op, gast.USub) and self.identities:
            inner = node.operand
            if isinstance(inner, gast.UnaryOp) and isinstance(inner.op, gast.USub):
                return self._done(inner.operand)
        return node

    def visit_BinOp(self, node: gast.BinOp) -> gast.AST:
        self.generic_visit(node)
        left, right = constant_value(node.left), constant_value(node.right)
        fn = _ARITHMETIC.get(type(node.op))
        if left is not None and right is not None and fn is not None:
            try:
                value = fn(left, right)
            except (ZeroDivisionError, OverflowError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                if isinstance(value, float) and value.is_integer() and isinstance(left, int):
                    value = int(value) if isinstance(right, int) else value
                return self._done(build.const(value))
        op = type(node.op)
        if (
            op in (gast.Add, gast.Sub)
            and isinstance(node.right, gast.UnaryOp)
            and isinstance(node.right.op, gast.USub)
        ):
            # a + -b is a - b exactly (and a - -b is a + b)
            flipped = gast.Sub() if op is gast.Add else gast.Add()
            return self._done(build.binop(node.left, flipped, node.right.operand))
        if not self.identities:
            return node
        if op is gast.Mult:
            if left == 1:
                return self._done(node.right)
            if right == 1:
                return self._done(node.left)
        if op in (gast.Div, gast.Pow) and right == 1:
            return self._done(node.left)
        if op is gast.Add and left == 0:
            return self._done(node.right)
        if op in (gast.Add, gast.Sub) and right == 0:
            return self._done(node.left)
        return node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, gast.Name):
            return node
        helper = self.namer.globals.get(func.id)
        if helper in _FOLDABLE and not node.keywords:
            values = [_literal(a) for a in node.args]
            if all(ok for ok, _ in values):
                return self._done(_to_node(helper(*[v for _, v in values])))
        if callable(helper) and (getattr(helper, "__module__", None) or "").startswith(
            "srcad.runtime"
        ):
            params = inspect.signature(helper).parameters
            positional = list(params.values())
            while node.args and len(node.args) <= len(positional):
                param = positional[len(node.args) - 1]
                ok, value = _literal(node.args[-1])
                if not (ok and param.default is not inspect.Parameter.empty):
                    break
                if value != param.default or type(value) is not type(param.default):
                    break
                node.args.pop()
                self.changed = True
            kept = []
            for kw in node.keywords:
                ok, value = _literal(kw.value)
                param = params.get(kw.arg)
                if ok and param is not None and param.default is not inspect.Parameter.empty:
                    if value == param.default and type(value) is type(param.default):
                        self.changed = True
                        continue
                kept.append(kw)
            node.keywords = kept
        return node


def fold(tree: gast.FunctionDef, namer: Namer) -> bool:
    """Fold constants and identities in ``tree`` in place; whether anything changed."""
    folder = _Fold(namer)
    folder.visit(tree)
    return folder.changed
