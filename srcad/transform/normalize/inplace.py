"""Element updates ``y[i] = v`` become ``y = setitem(y, i, v)``: still in place, but an
assignment the reverse pass can see (its adjoint, and the values it must save first).

Only arrays made inside the function may be updated: an update of an argument, or of a
view of one, would change the caller's data, so it is refused.
"""

from __future__ import annotations

import gast

from srcad.runtime import inplace
from srcad.transform import build
from srcad.transform.analyses.aliasing import viewed_name
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import all_statements, rewrite_bodies
from srcad.transform.ops import index_expression


def lower_setitems(tree: gast.FunctionDef, source: Source, namer: Namer) -> set[str]:
    """Rewrite element updates of ``tree`` (see module doc); the names updated in place."""
    helper = namer.bind_global(inplace.setitem, "setitem")
    source.namespace[helper] = inplace.setitem
    inputs = _input_aliases(tree)
    updated: set[str] = set()

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            if not isinstance(target, gast.Subscript):
                out.append(stmt)
                continue
            name = target.value.id
            if name in inputs:
                raise source.error(
                    f"in-place update of '{name}', which is (or views) an argument: srcad never "
                    "changes its inputs; copy it first (y = x.copy())",
                    stmt,
                )
            updated.add(name)
            call = build.call(helper, build.load(name), index_expression(target.slice), stmt.value)
            new = gast.copy_location(build.assign(name, call), stmt)
            setanno(new, "origin", getanno(stmt, "origin", stmt))
            out.append(new)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    setanno(tree, "setitem", helper)
    return updated


def _input_aliases(tree: gast.FunctionDef) -> set[str]:
    """Parameters and every name that may be (a view of) one."""
    args = tree.args
    names = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    changed = True
    while changed:
        changed = False
        for stmt in all_statements(tree.body):
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                source = viewed_name(stmt.value)
                if source in names and stmt.targets[0].id not in names:
                    names.add(stmt.targets[0].id)
                    changed = True
    return names


def alias_groups(body: list[gast.stmt], names: set[str]) -> dict[str, set[str]]:
    """For each name updated in place, every name that may share its memory."""
    edges: dict[str, set[str]] = {}
    for stmt in all_statements(body):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            source = viewed_name(stmt.value)
            if source is not None:
                edges.setdefault(source, set()).add(stmt.targets[0].id)
                edges.setdefault(stmt.targets[0].id, set()).add(source)
    groups = {}
    for name in names:
        seen = {name}
        todo = [name]
        while todo:
            for other in edges.get(todo.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        groups[name] = seen
    return groups
