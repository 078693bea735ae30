"""List, dict and set comprehensions and generator expressions become loops filling a
fresh list, dict or set.

``[f(v) for v in seq if c]`` becomes ``_items = []`` and ``for v_1 in seq: if c_1:
_items.append(f(v_1))`` before the statement, which then reads ``_items``; ``{k: f(v) for
k, v in d.items()}`` becomes ``_items = {}`` and ``for k_1, v_1 in d.items():
_items[k_1] = f(v_1)`` (a dict with constant keys once its loop is unrolled, see dicts.py
and pytrees.py). This runs before
local functions are inlined, so a helper called in the element is inlined inside the loop,
where the loop variable exists. Nested comprehensions (in the element, a condition or a
later ``for``) become nested loops; the body of each local ``def`` is lowered too.
"""

from __future__ import annotations

import copy

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import RenameNames, rewrite_bodies

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp)


class _Lower:
    def __init__(self, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer

    def mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            if isinstance(stmt, gast.FunctionDef):
                stmt.body = rewrite_bodies(stmt.body, self.block)
            elif isinstance(stmt, gast.While):
                if any(isinstance(n, _COMPREHENSIONS) for n in gast.walk(stmt.test)):
                    raise self.source.error(
                        "a comprehension in a while condition is not supported yet; "
                        "assign it to a name first",
                        stmt.test,
                    )
            elif isinstance(stmt, gast.For):
                stmt.iter = self.hoist(stmt.iter, out, stmt)  # evaluated once, before the loop
                stmt.iter = self.named_display(stmt.iter, out, stmt)
            elif isinstance(stmt, gast.If):
                stmt.test = self.hoist(stmt.test, out, stmt)
            elif self.named_dict(stmt):
                # ``d = {k: ... for ...}`` fills ``d`` itself: a dict has no second name
                self.hoist_within(stmt.value, out, stmt)
                self.lower(stmt.value, out, stmt, stmt.targets[0].id)
                continue
            else:
                self.hoist_within(stmt, out, stmt)
            out.append(stmt)
        return out

    @staticmethod
    def named_dict(stmt: gast.stmt) -> bool:
        """``d = {k: v for ...}`` whose comprehension does not read ``d``."""
        if not (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.DictComp)
        ):
            return False
        name = stmt.targets[0].id
        return not any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt.value))

    def hoist(self, node: gast.expr, out: list[gast.stmt], origin: gast.stmt) -> gast.expr:
        if isinstance(node, _COMPREHENSIONS):
            return build.load(self.lower(node, out, origin))
        self.hoist_within(node, out, origin)
        return node

    def hoist_within(self, node: gast.AST, out: list[gast.stmt], origin: gast.stmt) -> None:
        for field, value in gast.iter_fields(node):
            if isinstance(value, list):
                for k, child in enumerate(value):
                    if isinstance(child, gast.expr) and not isinstance(child, gast.Lambda):
                        value[k] = self.hoist(child, out, origin)
                    elif isinstance(child, gast.AST) and not isinstance(child, gast.Lambda):
                        self.hoist_within(child, out, origin)
            elif isinstance(value, gast.expr) and not isinstance(value, gast.Lambda):
                setattr(node, field, self.hoist(value, out, origin))
            elif isinstance(value, gast.AST) and not isinstance(value, gast.Lambda):
                self.hoist_within(value, out, origin)

    def named_display(self, iterable: gast.expr, out: list[gast.stmt], origin: gast.stmt):
        """A dict display iterated (``{"a": x}.items()``) given a name first, bound before
        the loop: the dict the function builds, which dicts.py follows."""
        display = iterable
        if (
            isinstance(iterable, gast.Call)
            and isinstance(iterable.func, gast.Attribute)
            and iterable.func.attr in ("items", "keys", "values")
            and not iterable.args
            and not iterable.keywords
        ):
            display = iterable.func.value
        if not isinstance(display, gast.Dict) or None in display.keys:
            return iterable
        name = self.namer.fresh_temp("_dict")
        out.append(self.mark(build.assign(name, display), origin))
        if display is iterable:
            return build.load(name)
        iterable.func.value = build.load(name)
        return iterable

    def lower(
        self, comp: gast.AST, out: list[gast.stmt], origin: gast.stmt, result: str | None = None
    ) -> str:
        """Append to ``out`` the statements building ``comp``'s list or dict (named
        ``result``, else a fresh name); its name."""
        result = result or self.namer.fresh_temp("_items")
        renames: dict[str, str] = {}
        headers = []
        for k, gen in enumerate(comp.generators):
            if gen.is_async:
                raise self.source.error("async comprehensions cannot be differentiated", comp)
            # the first iterable is evaluated outside the comprehension's scope
            iterable = copy.deepcopy(gen.iter)
            if k:
                iterable = RenameNames(dict(renames)).visit(iterable)
            else:
                iterable = self.named_display(iterable, out, origin)
            for target in gast.walk(gen.target):
                if isinstance(target, gast.Name):
                    renames[target.id] = self.namer.fresh(target.id)
            rename = RenameNames(dict(renames))
            target = rename.visit(copy.deepcopy(gen.target))
            conditions = [rename.visit(copy.deepcopy(c)) for c in gen.ifs]
            headers.append((target, iterable, conditions))
        if isinstance(comp, gast.DictComp):
            key = RenameNames(dict(renames)).visit(copy.deepcopy(comp.key))
            value = RenameNames(renames).visit(copy.deepcopy(comp.value))
            entry = gast.Subscript(value=build.load(result), slice=key, ctx=gast.Store())
            fill: gast.stmt = gast.Assign(targets=[entry], value=value, type_comment=None)
            empty: gast.expr = gast.Dict(keys=[], values=[])
        elif isinstance(comp, gast.SetComp):
            # ``_items = _items | {v}``: a set display of differentiable values is refused
            # by name (hints.py), one of constants (keys, options) is Python's
            element = RenameNames(renames).visit(copy.deepcopy(comp.elt))
            one = gast.copy_location(gast.Set(elts=[element]), comp)
            joined = gast.copy_location(build.binop(build.load(result), gast.BitOr(), one), comp)
            fill = build.assign(result, joined)
            empty = build.call(build.load(self.source.bind(self.namer, set, "set")))
        else:
            element = RenameNames(renames).visit(copy.deepcopy(comp.elt))
            push = build.call(build.attr(build.load(result), "append"), element)
            fill, empty = gast.Expr(value=push), gast.List(elts=[], ctx=gast.Load())
        inner: list[gast.stmt] = [self.mark(fill, origin)]
        for target, iterable, conditions in reversed(headers):
            for condition in reversed(conditions):
                inner = [self.mark(gast.If(test=condition, body=inner, orelse=[]), origin)]
            loop = gast.For(target=target, iter=iterable, body=inner, orelse=[], type_comment=None)
            inner = [self.mark(loop, origin)]
        out.append(self.mark(build.assign(result, empty), origin))
        out.extend(rewrite_bodies(inner, self.block))
        return result


def lower_comprehensions(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite every list and dict comprehension and generator expression of ``tree`` into
    a loop (see module doc)."""
    tree.body = rewrite_bodies(tree.body, _Lower(source, namer).block)
    return tree
