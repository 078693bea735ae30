"""Apply a statement-list rewrite to a body and every body nested in it."""

from __future__ import annotations

from collections.abc import Callable

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.nodes import Transformer

BodyRewrite = Callable[[list[gast.stmt]], list[gast.stmt]]

_COMPOUND = (gast.If, gast.For, gast.While)


def rewrite_bodies(body: list[gast.stmt], rewrite: BodyRewrite) -> list[gast.stmt]:
    """``rewrite`` applied bottom-up to ``body`` and to the bodies of its compound statements."""
    for stmt in body:
        if isinstance(stmt, _COMPOUND):
            stmt.body = rewrite_bodies(stmt.body, rewrite)
            stmt.orelse = rewrite_bodies(stmt.orelse, rewrite)
        elif isinstance(stmt, gast.Try):
            # passes that run before ``try`` is lowered (and on generated code differentiated
            # again, which keeps it) must see its statements too, as a helper's ``with``
            stmt.body = rewrite_bodies(stmt.body, rewrite)
            for handler in stmt.handlers:
                handler.body = rewrite_bodies(handler.body, rewrite)
            stmt.orelse = rewrite_bodies(stmt.orelse, rewrite)
            stmt.finalbody = rewrite_bodies(stmt.finalbody, rewrite)
        elif isinstance(stmt, gast.With):
            stmt.body = rewrite_bodies(stmt.body, rewrite)
    return rewrite(body)


def nested_bodies(stmt: gast.stmt) -> list[list[gast.stmt]]:
    """The statement lists directly inside a compound statement."""
    if isinstance(stmt, _COMPOUND):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, gast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, gast.With):
        return [stmt.body]
    return []


def own_parts(stmt: gast.stmt) -> list[gast.AST]:
    """The parts of a statement outside its nested bodies (a loop's header, an if's test)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return [stmt.test]
    if isinstance(stmt, gast.For):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, gast.Try):
        return [part for h in stmt.handlers for part in (h.type, h.name) if part is not None]
    if isinstance(stmt, gast.With):
        return list(stmt.items)
    return [stmt]


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


class RenameNames(Transformer):
    """Rename Name nodes (loads and stores) per a mapping."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: gast.Name) -> gast.Name:
        if node.id in self.names:
            node.id = self.names[node.id]
        return node


def returns_to_assignments(
    tree: gast.FunctionDef, pairs: Callable[[gast.Return], list[tuple[str, gast.expr]]]
) -> bool:
    """Replace each ``return`` by ``n1 = e1; n2 = e2; ...; return n1`` with the pairs given
    for it; whether some return sat inside a branch or loop."""
    nested = any(
        isinstance(inner, gast.Return)
        for stmt in tree.body
        if isinstance(stmt, _COMPOUND)
        for inner in gast.walk(stmt)
    )

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if not isinstance(stmt, gast.Return):
                out.append(stmt)
                continue
            assigned = pairs(stmt)
            origin = getanno(stmt, "origin", stmt)
            new = [build.assign(name, value) for name, value in assigned]
            new.append(build.ret(build.load(assigned[0][0])))
            for node in new:
                gast.copy_location(node, stmt)
                setanno(node, "origin", origin)
            out.extend(new)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return nested


def binds_name(stmt: gast.stmt) -> bool:
    """``name = value``: one target, a plain name."""
    return (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
    )


def rename_until(body: list[gast.stmt], first: int, later: int, fresh: str) -> None:
    """The name ``body[first]`` binds renamed ``fresh`` there, in the statements up to
    ``body[later]`` and in that statement's value (which reads it before rebinding it)."""
    rename = RenameNames({body[first].targets[0].id: fresh})
    body[first].targets[0] = rename.visit(body[first].targets[0])
    for between in body[first + 1 : later]:
        rename.visit(between)
    body[later].value = rename.visit(body[later].value)
