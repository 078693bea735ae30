"""Redundant broadcasting helpers: ``unbroadcast(e, a)`` where ``e`` has ``a``'s shape already.

The sweep reduces a loose adjoint's terms to the variable's shape when they add up, and a
rule's term may be reduced already::

    dc = unbroadcast(dc, c) + unbroadcast(unbroadcast(d_t48 * a, c), c)     # before
    dc = unbroadcast(dc, c) + unbroadcast(d_t48 * a, c)                      # after

``unbroadcast(_, a)`` has ``a``'s shape, so does a name assigned it once when ``a`` is never
assigned again (same-shape classes of analyses/shapes.py), and unbroadcasting such a value
to ``a`` again changes nothing but, for a 0-d array ``a``, whether a number comes back as a
0-d array: arithmetic makes both a number, so only the operands of arithmetic are
simplified.
"""

from __future__ import annotations

import gast

from srcad.runtime import accumulate
from srcad.transform.analyses.shapes import SameShape
from srcad.transform.anno import setanno
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.optimize.fold import FOLDED
from srcad.transform.optimize.usage import counts, in_loops


def drop_redundant_unbroadcasts(
    tree: gast.FunctionDef, namer: Namer, with_shapes: bool = True
) -> bool:
    """Replace ``unbroadcast(e, a)`` by ``e`` where ``e`` has ``a``'s shape (an operand of
    arithmetic only); whether anything changed. Without ``with_shapes``, only where ``e``
    is itself ``unbroadcast(_, a)`` (what inlining makes; cheap enough for every round)."""
    helpers = {n for n, obj in namer.globals.items() if obj is accumulate.unbroadcast}
    if not helpers:
        return False
    simplify = _Simplify(helpers, tree if with_shapes else None)
    simplify.visit(tree)
    return simplify.changed


def _reduced_shapes(tree: gast.FunctionDef, helpers: set[str]) -> SameShape:
    """``t`` and ``a`` in one class for each ``t = unbroadcast(_, a)``, both bound once and
    ``a`` outside loops (one value, so one shape, wherever ``t`` is read)."""
    pairs = []
    for node in gast.walk(tree):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not tree:
            return SameShape(frozenset())  # names a nested function binds: none trusted
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
            and _unbroadcast_to(node.value, helpers) is not None
        ):
            pairs.append((node.targets[0].id, node.value.args[1].id))
    if not pairs:
        return SameShape(frozenset())
    _, written = counts(tree)
    looped = in_loops(tree)
    shapes = SameShape(frozenset(n for n, k in written.items() if k == 1))
    for target, like in pairs:
        if shapes.tracked(target) and shapes.tracked(like) and like not in looped:
            shapes.union(target, like)
    return shapes


def _unbroadcast_to(node: gast.expr, helpers: set[str]) -> gast.expr | None:
    """``e`` of ``unbroadcast(e, a)`` with ``a`` a name, else None."""
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Name)
        and node.func.id in helpers
        and len(node.args) == 2
        and not node.keywords
        and isinstance(node.args[1], gast.Name)
    ):
        return node.args[0]
    return None


class _Simplify(Transformer):
    def __init__(self, helpers: set[str], tree: gast.FunctionDef | None) -> None:
        self.helpers = helpers
        self.tree = tree
        self._shapes: SameShape | None = None
        self.changed = False
        self.statement: gast.stmt | None = None

    @property
    def shapes(self) -> SameShape:
        """The shape classes, computed when first asked (most unbroadcasts wrap an
        expression, whose shape they do not tell; the pass runs every optimize round)."""
        if self._shapes is None:
            self._shapes = _reduced_shapes(self.tree, self.helpers)
        return self._shapes

    def visit_Assign(self, node: gast.Assign) -> gast.AST:
        self.statement = node
        return self.generic_visit(node)

    visit_Expr = visit_Return = visit_Assign

    def visit_BinOp(self, node: gast.BinOp) -> gast.AST:
        self.generic_visit(node)
        node.left = self.reduced(node.left)
        node.right = self.reduced(node.right)
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.AST:
        self.generic_visit(node)
        node.operand = self.reduced(node.operand)
        return node

    def reduced(self, node: gast.expr) -> gast.expr:
        """``node`` without the outer ``unbroadcast`` calls that change nothing."""
        while True:
            value = _unbroadcast_to(node, self.helpers)
            if value is None:
                return node
            like = node.args[1]
            inner = _unbroadcast_to(value, self.helpers)
            nested = inner is not None and value.args[1].id == like.id
            atom = isinstance(value, (gast.Name, gast.Constant, gast.UnaryOp))
            if not (nested or (atom and self.tree is not None and self.shapes.same(value, like))):
                return node
            self.changed = True
            if self.statement is not None:
                setanno(self.statement, FOLDED, False)  # folding may see more now
            node = value
