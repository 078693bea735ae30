"""Where names are read, assigned and mutated in a function: shared by the optimizers."""

from __future__ import annotations

from collections import Counter

import gast

from srcad.transform.anno import _KEY as _ANNO
from srcad.transform.nodes import clone, loads, names, stores
from srcad.transform.normalize.walk import own_parts

_Name = gast.Name
_Store = gast.Store


def reads(node: gast.AST) -> list[str]:
    """Names loaded inside ``node``, with repeats."""
    return loads(node)


_COMPOUND = (gast.If, gast.For, gast.While)


def assigned(stmt: gast.stmt) -> list[str]:
    """Names a statement binds, anywhere inside it (not counting element stores)."""
    if isinstance(stmt, gast.FunctionDef):
        return [stmt.name]
    return stores(stmt)


def mutated(stmt: gast.stmt) -> list[str]:
    """Names whose value a statement may change in place: ``b[i] = v``, ``f(b)``."""
    names = []
    if isinstance(stmt, gast.Assign):
        for target in stmt.targets:
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                names.append(target.value.id)
    elif isinstance(stmt, gast.Expr):
        names.extend(reads(stmt))
    elif isinstance(stmt, _COMPOUND):
        for inner in stmt.body + stmt.orelse:
            names.extend(mutated(inner))
    return names


def bodies(tree: gast.AST) -> list[list[gast.stmt]]:
    """The statement lists of ``tree`` and of every statement nested in it."""
    out = [tree.body]
    for stmt in tree.body:
        if isinstance(stmt, gast.FunctionDef):
            out.extend(bodies(stmt))
        elif isinstance(stmt, _COMPOUND):
            out.extend(bodies(_Block(stmt.body)))
            if stmt.orelse:
                out.extend(bodies(_Block(stmt.orelse)))
    return out


class _Block:
    def __init__(self, body: list[gast.stmt]) -> None:
        self.body = body


def in_loops(tree: gast.AST) -> set[str]:
    """Names assigned anywhere inside a loop."""
    found: set[str] = set()
    for body in bodies(tree):
        for node in body:
            if isinstance(node, (gast.For, gast.While)):
                for inner in node.body:
                    found.update(assigned(inner))
                if isinstance(node, gast.For):
                    found.update(stores(node.target))
    return found


def counts(tree: gast.FunctionDef) -> tuple[Counter, Counter]:
    """How often each name is read, and assigned (parameters included), in ``tree``."""
    read: Counter = Counter()
    # a parameter is assigned on entry: one more assignment makes it a name of two values
    args = tree.args
    written: Counter = Counter(a.id for a in args.posonlyargs + args.args + args.kwonlyargs)
    for body in bodies(tree):
        for stmt in body:
            if isinstance(stmt, gast.FunctionDef):
                written[stmt.name] += 1
                continue
            for part in own_parts(stmt):
                for n in names(part):
                    if type(n.ctx) is _Store:
                        written[n.id] += 1
                    elif isinstance(n.ctx, gast.Load):
                        read[n.id] += 1
    return read, written


class Rename:
    """Replace Name ids (loads and stores) per a mapping, or loads by (a copy of) an
    expression; ``visit`` changes the tree in place and returns it (or the replacement,
    for a Name)."""

    def __init__(self, names: dict[str, str] | None = None, loads: dict | None = None) -> None:
        self.names = names or {}
        self.loads = loads or {}

    #: the statement being visited: an edit inside it clears its folded mark
    _stmt: gast.stmt | None = None

    def visit(self, node: gast.AST) -> gast.AST:
        if type(node) is _Name:
            return self._name(node)
        self._inside(node)
        return node

    def _name(self, node: gast.Name) -> gast.AST:
        if node.id in self.loads and isinstance(node.ctx, gast.Load):
            self._edited()
            return clone(self.loads[node.id])
        if node.id in self.names:
            node.id = self.names[node.id]
            self._edited()
        return node

    def _edited(self) -> None:
        anno = getattr(self._stmt, _ANNO, None)
        if anno:
            anno.pop("folded", None)

    def _inside(self, node: gast.AST) -> None:
        if isinstance(node, gast.stmt):
            outer, self._stmt = self._stmt, node
            self._fields(node)
            self._stmt = outer
        else:
            self._fields(node)

    def _fields(self, node: gast.AST) -> None:
        fields = node.__dict__
        for key, value in fields.items():
            if type(value) is _Name:
                fields[key] = self._name(value)
            elif type(value) is list:
                for k, item in enumerate(value):
                    if type(item) is _Name:
                        value[k] = self._name(item)
                    elif isinstance(item, gast.AST):
                        self._inside(item)
            elif isinstance(value, gast.AST):
                self._inside(value)
