"""Same-shape facts: which names certainly share a shape, so no broadcast needs undoing."""

from __future__ import annotations

import gast

from srcad.adjoints.registry import Attribute, Operator
from srcad.transform.frontend import Source
from srcad.transform.ops import classify

_ELEMENTWISE_BINARY = {"Add", "Sub", "Mult", "Div", "Pow", "Mod"}


class SameShape:
    """Union-find over names; ``SCALAR`` is the class of Python numbers."""

    SCALAR = "<scalar>"
    SHAPE = "<shape tuple>"

    def __init__(self, stable: frozenset[str] | None = None) -> None:
        self.parent: dict[str, str] = {}
        self.stable = stable

    def tracked(self, name: str) -> bool:
        """Whether ``name`` has one value (and so one shape) everywhere."""
        return self.stable is None or name in self.stable or name in (self.SCALAR, self.SHAPE)

    def find(self, name: str) -> str:
        """Representative of ``name``'s class."""
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def union(self, a: str, b: str) -> None:
        """Record that ``a`` and ``b`` have one shape."""
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            if rb in (self.SCALAR, self.SHAPE):
                ra, rb = rb, ra
            self.parent[rb] = ra

    def key(self, expr: gast.expr) -> str | None:
        """The class of an atom, or None when unknown."""
        if isinstance(expr, gast.Constant) and isinstance(expr.value, (int, float)):
            return self.SCALAR
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.operand, gast.Constant):
            return self.SCALAR
        if isinstance(expr, gast.Name):
            return self.find(expr.id) if self.tracked(expr.id) else None
        return None

    def same(self, a: gast.expr, b: gast.expr) -> bool:
        """Whether atoms ``a`` and ``b`` certainly have one shape."""
        ka, kb = self.key(a), self.key(b)
        return ka is not None and ka == kb


def analyse_shapes(
    body: list[gast.stmt],
    source: Source,
    local: set[str],
    stable: frozenset[str] | None = None,
    scalar_output: str | None = None,
) -> SameShape:
    """Shape classes implied by elementwise ops, scalars and copies in ``body``.

    ``scalar_output`` names a value known to be a scalar (a gradient's output): operands of
    elementwise ops with a scalar result are scalars too. Only ``stable`` names (one value
    for the whole function) take part; names reassigned in loops or branches stay unknown.
    """
    shapes = SameShape(stable)
    if scalar_output is not None and shapes.tracked(scalar_output):
        shapes.union(scalar_output, SameShape.SCALAR)
    for stmt in body:
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        if not shapes.tracked(stmt.targets[0].id):
            continue
        target = stmt.targets[0].id
        op = classify(stmt.value, source, local)
        rule = op.rule
        if op.key in (Attribute("ndim"), Attribute("size")):
            shapes.union(target, SameShape.SCALAR)
        elif op.key == Attribute("shape"):
            shapes.union(target, SameShape.SHAPE)
        elif (
            isinstance(stmt.value, gast.Subscript)
            and shapes.key(stmt.value.value) == SameShape.SHAPE
            and not isinstance(stmt.value.slice, (gast.Slice, gast.Tuple))
        ):
            shapes.union(target, SameShape.SCALAR)
        elif rule is not None and rule.shape_preserving and len(op.args) == 1:
            key = shapes.key(op.args[0])
            if key is not None:
                shapes.union(target, key)
        elif isinstance(op.key, Operator) and op.key.name in _ELEMENTWISE_BINARY:
            a, b = (shapes.key(x) for x in op.args)
            if a is not None and (a == b or b == SameShape.SCALAR):
                shapes.union(target, a)
            elif b is not None and a == SameShape.SCALAR:
                shapes.union(target, b)
        elif op.key == Operator("Square"):
            key = shapes.key(op.args[0])
            if key is not None:
                shapes.union(target, key)
    _scalar_operands(body, source, local, shapes)
    return shapes


def _scalar_operands(
    body: list[gast.stmt], source: Source, local: set[str], shapes: SameShape
) -> None:
    """Broadcasting never shrinks: operands of an elementwise op with a scalar result are scalar."""
    for stmt in reversed(body):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        if shapes.find(stmt.targets[0].id) != SameShape.SCALAR:
            continue
        op = classify(stmt.value, source, local)
        rule = op.rule
        elementwise = (isinstance(op.key, Operator) and op.key.name in _ELEMENTWISE_BINARY) or (
            rule is not None and rule.shape_preserving and len(op.args) == 1
        )
        if elementwise or op.key == Operator("Square"):
            for arg in op.args:
                if isinstance(arg, gast.Name):
                    shapes.union(arg.id, SameShape.SCALAR)
