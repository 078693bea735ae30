"""Same-shape facts: which names certainly share a shape, so no broadcast needs undoing."""

from __future__ import annotations

import gast
import numpy as np

from srcad.adjoints.registry import Attribute, Operator, Rule
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
        if _reduces(op.rule) and len(op.args) == 1:
            return _whole(op.keywords)
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


def _reduces(rule: Rule | None) -> bool:
    """Whether ``rule`` is a reduction's (declared ``reduces``, never told by its name)."""
    return rule is not None and rule.reduces


def _whole(keywords: dict[str, gast.expr]) -> bool:
    """Whether a reduction's keywords leave it reducing every axis to one number."""
    axis = keywords.get("axis")
    keep = keywords.get("keepdims")
    return (
        set(keywords) <= {"axis", "keepdims"}
        and (axis is None or (isinstance(axis, gast.Constant) and axis.value is None))
        and (keep is None or (isinstance(keep, gast.Constant) and keep.value is False))
    )


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


# ---------------------------------------------------------------- ranks, from argument facts

#: A value's rank fact: ``(ndim, full)``, where ``full`` means no axis has length 1 (so
#: broadcasting against it only adds leading axes, never stretches one of its own).
Rank = tuple[int, bool]
_TOP = "<any>"  # not computed yet (the optimistic start of the fixpoint)
_FULL_SCALAR: Rank = (0, True)
_CREATORS = (np.zeros, np.ones, np.empty, np.full)
_BROADCASTING = {"Add", "Sub", "Mult", "Div", "Pow", "Mod", "FloorDiv"}


def analyse_ranks(
    body: list[gast.stmt], source: Source, local: set[str], params: dict[str, Rank]
) -> dict[str, Rank]:
    """The ``(ndim, full)`` of every local name whose values all have one, given the
    parameters' (facts of the arguments the function is specialized for).

    Each name's values are joined over all its assignments; a name assigned from itself (a
    loop-carried value) starts optimistic and keeps a fact only if every assignment agrees
    with it, so each value has the fact because the values it is computed from do.
    """
    defs: dict[str, list[gast.expr]] = {}
    other: set[str] = set()
    counters: set[str] = set()
    for stmt in _all_statements(body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            if isinstance(stmt.targets[0], gast.Name):
                defs.setdefault(stmt.targets[0].id, []).append(stmt.value)
                continue
        if isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name):
            if _is_range(stmt.iter, source, local):
                counters.add(stmt.target.id)
                continue
        parts = [stmt.target] if isinstance(stmt, gast.For) else []
        if not isinstance(stmt, _COMPOUND):
            parts = [stmt]
        for part in parts:  # names bound some other way: unpacking, loop targets, ...
            for sub in gast.walk(part):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
                    other.add(sub.id)
    facts: dict[str, object] = {}
    for name in set(defs) | counters:
        facts[name] = _TOP
    for name in counters:
        facts[name] = _FULL_SCALAR if name not in defs else _TOP
    for name in other:
        facts[name] = None
    for name, rank in params.items():
        if name in other or name in counters:
            continue
        facts[name] = rank if name not in defs else _TOP
    starts = {n: r for n, r in params.items() if n in defs}
    evaluate = _RankOf(facts, source, local, counters)
    evaluate.shapes = {
        name: values[0]
        for name, values in defs.items()
        if len(values) == 1 and isinstance(values[0], gast.Attribute) and values[0].attr == "shape"
    }
    evaluate.lengths = {
        name: values[0]
        for name, values in defs.items()
        if len(values) == 1 and isinstance(values[0], gast.Subscript)
    }
    evaluate.params = {n: r for n, r in params.items() if n not in defs and n not in other}
    changed = True
    while changed:
        changed = False
        for name in defs:  # in program order: straight-line code settles in one round
            if facts[name] is None:
                continue
            joined: object = starts.get(name, _TOP)
            if name in counters:
                joined = _join(joined, _FULL_SCALAR)
            for value in defs[name]:
                joined = _join(joined, evaluate(value))
            if joined != facts[name]:
                facts[name] = joined
                changed = True
    return {n: r for n, r in facts.items() if r is not None and r is not _TOP}


def _join(a: object, b: object) -> object:
    if a is _TOP:
        return b
    if b is _TOP:
        return a
    if a is None or b is None or a[0] != b[0]:
        return None
    return (a[0], a[1] and b[1])


def _all_statements(body: list[gast.stmt]):
    for stmt in body:
        yield stmt
        if isinstance(stmt, _COMPOUND):
            yield from _all_statements(stmt.body)
            yield from _all_statements(stmt.orelse)


def _is_range(expr: gast.expr, source: Source, local: set[str]) -> bool:
    return (
        isinstance(expr, gast.Call)
        and isinstance(expr.func, gast.Name)
        and expr.func.id not in local
        and source.lookup(expr.func.id) is range
    )


class _RankOf:
    """The rank fact of an expression (``_TOP`` when an operand is not computed yet)."""

    def __init__(self, facts: dict, source: Source, local: set[str], ints: set[str]) -> None:
        self.facts = facts
        self.source = source
        self.local = local
        self.ints = ints
        self.shapes: dict[str, gast.expr] = {}
        self.lengths: dict[str, gast.expr] = {}
        self.params: dict[str, Rank] = {}

    def __call__(self, expr: gast.expr) -> object:
        if isinstance(expr, gast.Constant):
            value = expr.value
            return _FULL_SCALAR if isinstance(value, (int, float)) else None
        if isinstance(expr, gast.Name):
            return self.facts.get(expr.id) if expr.id in self.local else None
        if isinstance(expr, gast.UnaryOp):
            return self(expr.operand) if isinstance(expr.op, (gast.USub, gast.UAdd)) else None
        if isinstance(expr, gast.BinOp):
            a, b = self(expr.left), self(expr.right)
            if a is None or b is None:
                return None
            if a is _TOP or b is _TOP:
                return _TOP
            name = type(expr.op).__name__
            if name in _BROADCASTING:
                n = max(a[0], b[0])
                return (n, (a[1] and a[0] == n) or (b[1] and b[0] == n))
            if name == "MatMult" and a[0] in (1, 2) and b[0] in (1, 2):
                n = a[0] + b[0] - 2
                return (n, (a[1] or a[0] == 1) and (b[1] or b[0] == 1))
            return None
        if isinstance(expr, gast.Attribute):
            if expr.attr in ("ndim", "size"):
                return _FULL_SCALAR
            if expr.attr == "T":
                x = self(expr.value)
                return x if x is _TOP or x is None or x[0] <= 2 else None
            return None
        if isinstance(expr, gast.Subscript):
            return self.subscript(expr)
        if isinstance(expr, gast.Call):
            return self.call(expr)
        return None

    def subscript(self, expr: gast.Subscript) -> object:
        base, index = expr.value, expr.slice
        if self.is_shape(base):
            return _FULL_SCALAR if _is_int(index) else None
        integer = _is_int(index) or (isinstance(index, gast.Name) and index.id in self.ints)
        x = self(base)
        if not integer or x is None or x is _TOP:
            return x if x is _TOP and integer else None
        return (x[0] - 1, x[1]) if x[0] >= 1 else None

    def nonunit(self, expr: gast.expr) -> bool:
        """Whether ``expr`` is a length of an axis of a parameter with no axis of length 1."""
        if isinstance(expr, gast.Name):
            found = self.lengths.get(expr.id)
            if found is None:
                return False
            expr = found
        if not (isinstance(expr, gast.Subscript) and _is_int(expr.slice)):
            return False
        base = expr.value
        if isinstance(base, gast.Name):
            base = self.shapes.get(base.id, base)
        if not (isinstance(base, gast.Attribute) and isinstance(base.value, gast.Name)):
            return False
        rank = self.params.get(base.value.id)
        return base.attr == "shape" and rank is not None and rank[1]

    def is_shape(self, expr: gast.expr) -> bool:
        """Whether ``expr`` is an array's shape (``x.shape``, or a name assigned it)."""
        if isinstance(expr, gast.Name):
            expr = self.shapes.get(expr.id, expr)
        return isinstance(expr, gast.Attribute) and expr.attr == "shape"

    def call(self, expr: gast.Call) -> object:
        op = classify(expr, self.source, self.local)
        if op.callee is float or getattr(op.callee, "__module__", None) == "math":
            return _FULL_SCALAR  # on NumPy arrays and numbers, math gives a float
        rule = op.rule
        if _reduces(rule) and len(op.args) == 1:
            return self.reduction(op.args[0], op.keywords)
        # the op itself, not a rule's name: what np.concatenate makes is NumPy's
        if op.key is np.concatenate and len(op.args) == 1 and isinstance(op.args[0], gast.List):
            parts = [self(e) for e in op.args[0].elts]
            if not parts or any(p is None for p in parts):
                return None
            if any(p is _TOP for p in parts):
                return _TOP
            if len({p[0] for p in parts}) != 1 or parts[0][0] == 0:
                return None
            return (parts[0][0], all(p[1] for p in parts))
        if rule is not None and rule.shape_preserving and len(op.args) == 1 and not op.keywords:
            return self(op.args[0])
        callee = op.callee
        if callee in _CREATORS and op.args and isinstance(op.args[0], gast.Tuple):
            dims = op.args[0].elts
            return (len(dims), all(self.nonunit(d) for d in dims))
        if (
            getattr(callee, "__name__", None) == "stop_gradient"
            and getattr(callee, "__module__", None) == "srcad.api"
            and len(op.args) == 1
        ):
            return self(op.args[0])
        return None

    def reduction(self, x: gast.expr, keywords: dict[str, gast.expr]) -> object:
        if not set(keywords) <= {"axis", "keepdims"}:
            return None
        axis = keywords.get("axis", build_none())
        keep = keywords.get("keepdims", gast.Constant(value=False, kind=None))
        if not isinstance(keep, gast.Constant) or keep.value not in (True, False):
            return None
        if isinstance(axis, gast.Constant) and axis.value is None:
            return _FULL_SCALAR if not keep.value else None
        if not _is_int(axis):
            return None
        rank = self(x)
        if rank is None or rank is _TOP:
            return rank
        if rank[0] == 0:
            return None
        return (rank[0], False) if keep.value else (rank[0] - 1, rank[1])


def build_none() -> gast.Constant:
    return gast.Constant(value=None, kind=None)


def _is_int(node: gast.expr) -> bool:
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )
