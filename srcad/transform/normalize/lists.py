"""Lists built in the function: ``xs.append(v)`` and comprehensions become assignments.

``xs.append(v)`` becomes ``xs = append(xs, v)`` (the same list, appended in place), so the
reverse pass sees an assignment whose adjoint pops the element's gradient off the list's
gradient. ``[f(x) for x in seq if c]`` becomes a loop appending to a fresh list.
"""

from __future__ import annotations

import copy

import gast

from srcad.runtime import lists
from srcad.transform import build
from srcad.transform.analyses.tbr import may_precede, positions
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import (
    RenameNames,
    all_statements,
    own_parts,
    rewrite_bodies,
)

_READS_ALLOWED = {"len", "stack", "concatenate", "sum"}


class _Lower:
    def __init__(self, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer
        self.append = namer.bind_global(lists.append, "append")
        source.namespace[self.append] = lists.append

    def mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def append_call(self, items: str, value: gast.expr) -> gast.expr:
        return build.call(self.append, build.load(items), value)

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                header = stmt.iter if isinstance(stmt, gast.For) else stmt.test
                if any(
                    isinstance(n, (gast.ListComp, gast.GeneratorExp)) for n in gast.walk(header)
                ):
                    raise self.source.error(
                        "a comprehension in a loop header or condition is not supported yet; "
                        "assign it to a name first",
                        header,
                    )
                out.append(stmt)
                continue
            hoisted: list[gast.stmt] = []
            self.comprehensions(stmt, hoisted, stmt)
            out.extend(hoisted)
            if (
                isinstance(stmt, gast.Expr)
                and isinstance(stmt.value, gast.Call)
                and isinstance(stmt.value.func, gast.Attribute)
                and stmt.value.func.attr == "append"
                and isinstance(stmt.value.func.value, gast.Name)
                and len(stmt.value.args) == 1
                and not stmt.value.keywords
            ):
                items = stmt.value.func.value.id
                new = build.assign(items, self.append_call(items, stmt.value.args[0]))
                out.append(self.mark(new, stmt))
                continue
            out.append(stmt)
        return out

    def comprehensions(self, node: gast.AST, hoisted: list[gast.stmt], origin: gast.stmt) -> None:
        for field, value in gast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for k, child in enumerate(children):
                if isinstance(child, (gast.ListComp, gast.GeneratorExp)):
                    name = self.lower(child, hoisted, origin)
                    if isinstance(value, list):
                        value[k] = build.load(name)
                    else:
                        setattr(node, field, build.load(name))
                elif isinstance(child, gast.AST) and not isinstance(child, gast.Lambda):
                    self.comprehensions(child, hoisted, origin)

    def lower(self, comp: gast.AST, hoisted: list[gast.stmt], origin: gast.stmt) -> str:
        """Statements building the comprehension's list into a fresh name."""
        result = self.namer.fresh_temp("_items")
        renames: dict[str, str] = {}
        for gen in comp.generators:
            if gen.is_async:
                raise self.source.error("async comprehensions cannot be differentiated", comp)
            for target in gast.walk(gen.target):
                if isinstance(target, gast.Name):
                    renames[target.id] = self.namer.fresh(target.id)
        renamer = RenameNames(renames)
        element = renamer.visit(copy.deepcopy(comp.elt))
        inner: list[gast.stmt] = [
            self.mark(build.assign(result, self.append_call(result, element)), origin)
        ]
        for gen in reversed(comp.generators):
            for condition in reversed(gen.ifs):
                test = renamer.visit(copy.deepcopy(condition))
                inner = [self.mark(gast.If(test=test, body=inner, orelse=[]), origin)]
            loop = gast.For(
                target=renamer.visit(copy.deepcopy(gen.target)),
                iter=renamer.visit(copy.deepcopy(gen.iter)),
                body=inner,
                orelse=[],
                type_comment=None,
            )
            inner = [self.mark(loop, origin)]
        self.comprehensions_in(inner, hoisted, origin)
        hoisted.append(self.mark(build.assign(result, gast.List(elts=[], ctx=gast.Load())), origin))
        hoisted.extend(inner)
        return result

    def comprehensions_in(self, stmts: list[gast.stmt], hoisted: list[gast.stmt], origin) -> None:
        for stmt in all_statements(stmts):
            if isinstance(stmt, gast.For):
                self.comprehensions(stmt.iter, hoisted, origin)


def lower_lists(tree: gast.FunctionDef, source: Source, namer: Namer) -> set[str]:
    """Rewrite appends and comprehensions of ``tree`` (see module doc); the list names."""
    lower = _Lower(source, namer)
    tree.body = rewrite_bodies(tree.body, lower.block)
    names = _list_names(tree, lower.append)
    _check_built_before_read(tree, source, names, lower.append)
    return names


def _list_names(tree: gast.FunctionDef, append: str) -> set[str]:
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for stmt in all_statements(tree.body):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
                continue
            value = stmt.value
            is_list = (
                isinstance(value, gast.List)
                or (
                    isinstance(value, gast.Call)
                    and isinstance(value.func, gast.Name)
                    and value.func.id == append
                )
                or (isinstance(value, gast.Name) and value.id in names)
            )
            if is_list and stmt.targets[0].id not in names:
                names.add(stmt.targets[0].id)
                changed = True
    return names


def _check_built_before_read(
    tree: gast.FunctionDef, source: Source, names: set[str], append: str
) -> None:
    """An element read of a list that may later grow is refused: its gradient would be
    placed by the final list's length, not the length at the time of the read."""
    places = list(positions(tree.body))
    for name in names:
        appends = [
            (stmt, loops, path)
            for stmt, loops, _, _, path in places
            if isinstance(stmt, gast.Assign)
            and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Name)
            and stmt.value.func.id == append
            and isinstance(stmt.value.args[0], gast.Name)
            and stmt.value.args[0].id == name
        ]
        for stmt, loops, _, _, path in places:
            reads = [
                n
                for part in own_parts(stmt)
                for n in gast.walk(part)
                if isinstance(n, gast.Subscript)
                and isinstance(n.value, gast.Name)
                and n.value.id == name
            ]
            if (
                isinstance(stmt, gast.For)
                and isinstance(stmt.iter, gast.Name)
                and stmt.iter.id == name
            ):
                reads.append(stmt.iter)
            if not reads:
                continue
            for _, append_loops, append_path in appends:
                shared = {id(lp) for lp in loops} & {id(lp) for lp in append_loops}
                if shared or may_precede(path, append_path):
                    raise source.error(
                        f"reading an element of the list '{name}' while it is still being "
                        "appended to is not supported yet; build the list first, then read it",
                        reads[0],
                    )
