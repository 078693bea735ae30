"""Apply a statement-list rewrite to a body and every body nested in it."""

from __future__ import annotations

from collections.abc import Callable

import gast

BodyRewrite = Callable[[list[gast.stmt]], list[gast.stmt]]

_COMPOUND = (gast.If, gast.For, gast.While)


def rewrite_bodies(body: list[gast.stmt], rewrite: BodyRewrite) -> list[gast.stmt]:
    """``rewrite`` applied bottom-up to ``body`` and to the bodies of its compound statements."""
    for stmt in body:
        if isinstance(stmt, _COMPOUND):
            stmt.body = rewrite_bodies(stmt.body, rewrite)
            stmt.orelse = rewrite_bodies(stmt.orelse, rewrite)
    return rewrite(body)


def nested_bodies(stmt: gast.stmt) -> list[list[gast.stmt]]:
    """The statement lists directly inside a compound statement."""
    if isinstance(stmt, _COMPOUND):
        return [stmt.body, stmt.orelse]
    return []


def all_statements(body: list[gast.stmt]):
    """Every statement in ``body``, nested ones included, in source order."""
    for stmt in body:
        yield stmt
        for inner in nested_bodies(stmt):
            yield from all_statements(inner)


def is_docstring(stmt: gast.stmt) -> bool:
    """Whether ``stmt`` is a bare string (a docstring when it comes first)."""
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Constant)
        and isinstance(stmt.value.value, str)
    )


def merged_names(tree: gast.FunctionDef, extra: set[str] | None = None) -> set[str]:
    """Names assigned inside a top-level if/for/while (their values merge), plus ``extra``."""
    return {
        n.id
        for stmt in tree.body
        if isinstance(stmt, _COMPOUND)
        for n in gast.walk(stmt)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    } | set(extra or ())


class RenameNames(gast.NodeTransformer):
    """Rename Name nodes (loads and stores) per a mapping."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: gast.Name) -> gast.Name:
        if node.id in self.names:
            node.id = self.names[node.id]
        return node
