"""Functions defined inside the differentiated function (``def`` or ``f = lambda ...``) are
inlined where they are called, so their bodies are differentiated with the caller's.

A local function must be defined once, at the top level of the body, and only called
(``helper(a, b)``); a ``def`` must end in its only ``return``. Inlining keeps Python's
late binding: the body reads the enclosing variables as they are at the call. A call in a
loop body (comprehensions are loops by now) is inlined inside that loop, so the body sees
the loop's variables.
"""

from __future__ import annotations

import copy

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import RenameNames, is_docstring


class _Local:
    def __init__(self, name: str, params: list[str], body: list[gast.stmt], result: gast.expr):
        self.name = name
        self.params = params
        self.body = body
        self.result = result


def _collect(tree: gast.FunctionDef, source: Source) -> dict[str, _Local]:
    found: dict[str, _Local] = {}
    for stmt in tree.body:
        if not isinstance(stmt, gast.FunctionDef):
            continue  # (an assigned lambda is a def by now: lambdas_as_defs)
        node, name = stmt, stmt.name
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            raise source.error(
                "a local function with defaults, '*args' or keyword-only parameters is not "
                "supported yet",
                stmt,
            )
        if name in found:
            raise source.error(f"the local function '{name}' is defined twice", stmt)
        params = [a.id for a in args.args]
        body = list(node.body)
        if body and is_docstring(body[0]):
            body = body[1:]
        if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
            raise source.error(f"the local function '{name}' must end in 'return <value>'", node)
        if any(isinstance(n, gast.Return) for s in body[:-1] for n in gast.walk(s)):
            raise source.error(
                f"the local function '{name}' returns early; only a final return is "
                "supported in local functions",
                node,
            )
        found[name] = _Local(name, params, body[:-1], body[-1].value)
    return found


class _Inline(gast.NodeTransformer):
    """Replace calls of local functions inside one statement, hoisting their bodies."""

    def __init__(self, locals_: dict[str, _Local], namer: Namer, source: Source, origin):
        self.locals = locals_
        self.namer = namer
        self.source = source
        self.origin = origin
        self.hoisted: list[gast.stmt] = []

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id in self.locals and isinstance(node.ctx, gast.Load):
            raise self.source.error(
                f"the local function '{node.id}' is used other than by calling it", node
            )
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.AST:
        raise self.source.error("a lambda that is not assigned to a name is not supported", node)

    def visit_Call(self, node: gast.Call) -> gast.AST:
        func = node.func
        if not (isinstance(func, gast.Name) and func.id in self.locals):
            return self.generic_visit(node)
        local = self.locals[func.id]
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [gast.keyword(arg=k.arg, value=self.visit(k.value)) for k in node.keywords]
        if any(isinstance(a, gast.Starred) for a in node.args):
            raise self.source.error("'*args' in a call of a local function", node)
        bound = dict(zip(local.params, node.args))
        for kw in node.keywords:
            bound[kw.arg] = kw.value
        if set(bound) != set(local.params) or len(node.args) > len(local.params):
            raise self.source.error(f"wrong arguments in the call of '{local.name}'", node)
        renames = {}
        for param in local.params:
            renames[param] = self.namer.fresh(f"{local.name}_{param}")
            self.emit(build.assign(renames[param], bound[param]))
        stores = {
            n.id
            for s in local.body
            for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }
        for name in stores - set(renames):
            renames[name] = self.namer.fresh(f"{local.name}_{name}")
        rename = RenameNames(renames)
        body = [rename.visit(stmt) for stmt in copy.deepcopy(local.body)]
        # calls inside the body's loops and branches are inlined there, not before them
        for stmt in _inline_block(body, self.locals, self.namer, self.source):
            self.emit(stmt)
        inner = _Inline(self.locals, self.namer, self.source, self.origin)
        result = inner.visit(rename.visit(copy.deepcopy(local.result)))
        self.hoisted.extend(inner.hoisted)
        return result

    def emit(self, stmt: gast.stmt) -> None:
        gast.copy_location(stmt, self.origin)
        setanno(stmt, "origin", getanno(self.origin, "origin", self.origin))
        self.hoisted.append(stmt)


def lambdas_as_defs(tree: gast.FunctionDef) -> gast.FunctionDef:
    """``f = lambda v: e`` at the top level of ``tree`` becomes ``def f(v): return e``, so
    the later passes see one kind of local function (comprehensions in ``e`` included)."""
    for k, stmt in enumerate(tree.body):
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Lambda)
        ):
            result = gast.copy_location(build.ret(stmt.value.body), stmt)
            new = gast.FunctionDef(
                name=stmt.targets[0].id,
                args=stmt.value.args,
                body=[result],
                decorator_list=[],
                returns=None,
                type_comment=None,
                type_params=[],
            )
            tree.body[k] = gast.copy_location(new, stmt)
    return tree


def inline_local_functions(
    tree: gast.FunctionDef, source: Source, namer: Namer
) -> gast.FunctionDef:
    """Inline the calls of every local function of ``tree`` (see module doc)."""
    locals_ = _collect(tree, source)
    if not locals_:
        return tree
    tree.body = [s for s in tree.body if not isinstance(s, gast.FunctionDef)]
    tree.body = _inline_block(tree.body, locals_, namer, source)
    return tree


def _inline_block(body, locals_, namer, source) -> list[gast.stmt]:
    out: list[gast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            header = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            inline = _Inline(locals_, namer, source, stmt)
            new_header = inline.visit(header)
            if inline.hoisted:
                if isinstance(stmt, gast.While):
                    raise source.error(
                        "a call of a local function in a while condition is not supported yet",
                        header,
                    )
                out.extend(inline.hoisted)
            if isinstance(stmt, gast.For):
                stmt.iter = new_header
            else:
                stmt.test = new_header
            stmt.body = _inline_block(stmt.body, locals_, namer, source)
            stmt.orelse = _inline_block(stmt.orelse, locals_, namer, source)
            out.append(stmt)
            continue
        inline = _Inline(locals_, namer, source, stmt)
        new = inline.visit(stmt)
        out.extend(inline.hoisted)
        out.append(new)
    return out
