"""Where names are read, assigned and mutated in a function: shared by the optimizers."""

from __future__ import annotations

from collections import Counter

import gast


def reads(node: gast.AST) -> list[str]:
    """Names loaded inside ``node``, with repeats."""
    return [
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    ]


def assigned(stmt: gast.stmt) -> list[str]:
    """Names a statement binds (not counting element stores)."""
    if isinstance(stmt, gast.Assign):
        return [
            n.id
            for t in stmt.targets
            for n in gast.walk(t)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        ]
    if isinstance(stmt, gast.FunctionDef):
        return [stmt.name]
    return []


def mutated(stmt: gast.stmt) -> list[str]:
    """Names whose value a statement may change in place: ``b[i] = v``, ``f(b)``."""
    names = []
    if isinstance(stmt, gast.Assign):
        for target in stmt.targets:
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                names.append(target.value.id)
    elif isinstance(stmt, gast.Expr):
        names.extend(reads(stmt))
    return names


def bodies(tree: gast.FunctionDef) -> list[list[gast.stmt]]:
    """The statement lists of ``tree`` and of the functions nested in it."""
    out = [tree.body]
    for stmt in tree.body:
        if isinstance(stmt, gast.FunctionDef):
            out.extend(bodies(stmt))
    return out


def counts(tree: gast.FunctionDef) -> tuple[Counter, Counter]:
    """How often each name is read, and assigned, anywhere in ``tree``."""
    read: Counter = Counter()
    written: Counter = Counter()
    for body in bodies(tree):
        for stmt in body:
            if isinstance(stmt, gast.FunctionDef):
                written[stmt.name] += 1
                continue
            read.update(reads(stmt))
            written.update(assigned(stmt))
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
