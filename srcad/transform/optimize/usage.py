"""Where names are read, assigned and mutated in a function: shared by the optimizers."""

from __future__ import annotations

from collections import Counter

import gast

from srcad.transform.normalize.walk import own_parts


def reads(node: gast.AST) -> list[str]:
    """Names loaded inside ``node``, with repeats."""
    return [
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    ]


_COMPOUND = (gast.If, gast.For, gast.While)


def assigned(stmt: gast.stmt) -> list[str]:
    """Names a statement binds, anywhere inside it (not counting element stores)."""
    if isinstance(stmt, gast.FunctionDef):
        return [stmt.name]
    return [
        n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    ]


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
    names: set[str] = set()
    for node in gast.walk(tree):
        if isinstance(node, (gast.For, gast.While)):
            for inner in node.body:
                names.update(assigned(inner))
            if isinstance(node, gast.For):
                names.update(assigned(gast.Assign(targets=[node.target], value=None)))
    return names


def counts(tree: gast.FunctionDef) -> tuple[Counter, Counter]:
    """How often each name is read, and assigned, anywhere in ``tree``."""
    read: Counter = Counter()
    written: Counter = Counter()
    for body in bodies(tree):
        for stmt in body:
            if isinstance(stmt, gast.FunctionDef):
                written[stmt.name] += 1
                continue
            for part in own_parts(stmt):
                read.update(reads(part))
                for n in gast.walk(part):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        written[n.id] += 1
    return read, written


class Rename(gast.NodeTransformer):
    """Replace Name ids (loads and stores) per a mapping, or loads by an expression."""

    def __init__(self, names: dict[str, str] | None = None, loads: dict | None = None) -> None:
        self.names = names or {}
        self.loads = loads or {}

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if isinstance(node.ctx, gast.Load) and node.id in self.loads:
            import copy

            return copy.deepcopy(self.loads[node.id])
        if node.id in self.names:
            node.id = self.names[node.id]
        return node
