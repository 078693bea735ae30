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
        #: names reassigned, but a number (or 0-d array) every time
        self.always_scalar: set[str] = set()

    def tracked(self, name: str) -> bool:
        """Whether ``name`` has one value (and so one shape) everywhere."""
        return (
            self.stable is None
            or name in self.stable
            or name in (self.SCALAR, self.SHAPE)
            or name in self.always_scalar
        )

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
    for name in _always_scalar(body, source, local, stable):
        shapes.always_scalar.add(name)
        shapes.union(name, SameShape.SCALAR)
    return shapes


_REDUCTIONS = {"sum", "mean", "prod", "max"}


def _always_scalar(
    body: list[gast.stmt], source: Source, local: set[str], stable: frozenset[str] | None
) -> set[str]:
    """Names reassigned (in loops or branches) whose every value is a number: a numeric
    constant, a whole-array reduction, or elementwise arithmetic on such names. The largest
    such set: each value is computed from values assigned before it."""
    defs: dict[str, list[gast.expr]] = {}
    excluded: set[str] = set()
    for node in _walk_statements(body):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, gast.Name):
                defs.setdefault(target.id, []).append(node.value)
                continue
        if isinstance(node, _COMPOUND):
            parts = [node.target] if isinstance(node, gast.For) else []
        else:
            parts = [node]
        for part in parts:  # names bound some other way: unpacking, loop targets, ...
            for sub in gast.walk(part):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
                    excluded.add(sub.id)
    candidates = {n for n in defs if n not in excluded and (stable is None or n not in stable)}

    def scalar(expr: gast.expr) -> bool:
        if isinstance(expr, gast.Constant):
            return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
        if isinstance(expr, gast.Name):
            return expr.id in candidates
        op = classify(expr, source, local)
        rule = op.rule
        if rule is not None and rule.name in _REDUCTIONS:
            keywords = op.keywords
            return (
                len(op.args) == 1
                and set(keywords) <= {"axis", "keepdims"}
                and all(isinstance(v, gast.Constant) and not v.value for v in keywords.values())
            )
        if isinstance(op.key, Operator) and op.key.name in _ELEMENTWISE_BINARY | {"USub"}:
            return all(scalar(a) for a in op.args)
        return False

    changed = True
    while changed:
        changed = False
        for name in sorted(candidates):
            if not all(scalar(v) for v in defs[name]):
                candidates.discard(name)
                changed = True
    return candidates


_COMPOUND = (gast.If, gast.For, gast.While)


def _walk_statements(body: list[gast.stmt]):
    for stmt in body:
        yield stmt
        if isinstance(stmt, _COMPOUND):
            yield from _walk_statements(stmt.body)
            yield from _walk_statements(stmt.orelse)


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
