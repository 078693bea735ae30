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
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.helpers import module_factory
from srcad.transform.normalize.walk import RenameNames, is_docstring


class _Local:
    def __init__(self, name: str, params: list[str], body: list[gast.stmt], result: gast.expr):
        self.name = name
        self.params = params
        self.body = body
        self.result = result

    @property
    def makes_function(self) -> bool:
        """Whether it returns a lambda (a factory: ``g = make(a)`` makes ``g`` local)."""
        return isinstance(self.result, gast.Lambda)


def _collect(tree: gast.FunctionDef, source: Source) -> dict[str, _Local]:
    found: dict[str, _Local] = {}
    for stmt in tree.body:
        if not isinstance(stmt, gast.FunctionDef):
            continue  # (an assigned lambda is a def by now: lambdas_as_defs)
        args = stmt.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            raise source.error(
                "a local function with defaults, '*args' or keyword-only parameters is not "
                "supported yet",
                stmt,
            )
        if stmt.name in found:
            raise source.error(f"the local function '{stmt.name}' is defined twice", stmt)
        found[stmt.name] = _local_of(stmt, source, "local function")
    return found


def _local_of(node: gast.FunctionDef, source: Source, what: str) -> _Local:
    """``node`` (a local function, or a function of the module that makes one) as a
    :class:`_Local`: its body, and the value its final return gives."""
    name = node.name
    params = [a.id for a in node.args.args]
    body = list(node.body)
    if body and is_docstring(body[0]):
        body = body[1:]
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        raise source.error(f"the {what} '{name}' must end in 'return <value>'", node)
    inner = _returned_def(body[:-1], body[-1].value)
    if any(isinstance(n, gast.Return) for s in body[:-1] if s is not inner for n in gast.walk(s)):
        raise source.error(
            f"the {what} '{name}' returns early; only a final return is "
            "supported in local functions",
            node,
        )
    result = body[-1].value
    body = body[:-1]
    if inner is not None:  # ``def g(t): return e`` then ``return g``: a lambda
        body = [s for s in body if s is not inner]
        lam = gast.Lambda(args=inner.args, body=inner.body[-1].value)
        result = gast.copy_location(lam, inner)
    return _Local(name, params, body, result)


def _returned_def(body: list[gast.stmt], result: gast.expr) -> gast.FunctionDef | None:
    """The nested ``def`` a local function returns, when it is one ``return <value>``."""
    if not isinstance(result, gast.Name):
        return None
    for stmt in body:
        if isinstance(stmt, gast.FunctionDef) and stmt.name == result.id:
            own = [s for s in stmt.body if not is_docstring(s)]
            if len(own) == 1 and isinstance(own[0], gast.Return) and own[0].value is not None:
                stmt.body = own
                return stmt
    return None


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
            # a local function or lambda given to a call: written out by the inliner of
            # your functions where it is given to one (normalize/helpers.py), else refused
            node.func = self.visit(func)
            node.args = [self.given(a) for a in node.args]
            for kw in node.keywords:
                kw.value = self.given(kw.value)
            return node
        local = self.locals[func.id]
        if local.makes_function:
            raise self.source.error(
                f"the function '{local.name}' makes is used other than by assigning it to a "
                f"name ('g = {local.name}(...)') and calling that",
                node,
            )
        return self.call(node, local)

    def given(self, arg: gast.expr) -> gast.expr:
        """An argument, a local function given as one written as its lambda."""
        if isinstance(arg, gast.Name) and arg.id in self.locals:
            local = self.locals[arg.id]
            if local.makes_function:
                raise self.source.error(
                    f"the local function '{arg.id}' makes a function and is given to a call; "
                    "srcad writes out a local function given to one of yours where that "
                    "calls it",
                    arg,
                )
            args = gast.arguments(
                args=[build.param(p) for p in local.params],
                posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                defaults=[],
            )  # fmt: skip
            arg = gast.copy_location(gast.Lambda(args, copy.deepcopy(local.result)), arg)
            # (its statements before the return ride along: inline_given_lambdas)
            setanno(arg, "local_function", (local.name, copy.deepcopy(local.body)))
        if isinstance(arg, gast.Lambda):
            _, body = getanno(arg, "local_function", (None, []))
            for node in [n for part in [arg.body, *body] for n in gast.walk(part)]:
                if isinstance(node, gast.Name) and node.id in self.locals:
                    raise self.source.error(
                        f"a lambda given to a call reads the local function '{node.id}'; "
                        "call it outside the lambda",
                        node,
                    )
            return arg
        return self.visit(arg)

    def call(self, node: gast.Call, local: _Local, keep_lambda: bool = False) -> gast.AST:
        """The call's result, ``local``'s body hoisted before it (its parameters bound)."""
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
        result = rename.visit(copy.deepcopy(local.result))
        if keep_lambda:
            return result  # its body is inlined where the function it makes is called
        result = inner.visit(result)
        self.hoisted.extend(inner.hoisted)
        return result

    def emit(self, stmt: gast.stmt) -> None:
        gast.copy_location(stmt, self.origin)
        setanno(stmt, "origin", getanno(self.origin, "origin", self.origin))
        self.hoisted.append(stmt)


def inline_given_lambdas(
    body: list[gast.stmt], lambdas: dict[str, gast.Lambda], namer: Namer, source: Source
) -> list[gast.stmt]:
    """``body`` (a function of yours being written out) with the calls of each parameter in
    ``lambdas`` written out: the lambda (or local function) given for it, read where it is
    called (late binding, as Python's); passed on to another call, it is given there as
    the lambda."""
    locals_ = {
        name: _Local(
            name,
            [a.id for a in lam.args.args],
            getanno(lam, "local_function", (None, []))[1],
            lam.body,
        )
        for name, lam in lambdas.items()
    }
    return _inline_block(body, locals_, namer, source)


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
    local = local_names(tree)
    locals_ = _collect(tree, source)
    factories = _ModuleFactories(source, namer, local, locals_)
    for made in locals_.values():
        made.body = factories.block(made.body)
    tree.body = factories.block(tree.body)
    if not locals_:
        return tree
    tree.body = [s for s in tree.body if not isinstance(s, gast.FunctionDef)]
    tree.body = _inline_block(tree.body, locals_, namer, source)
    return tree


class _ModuleFactories:
    """``g = make(a)`` where ``make`` is a function of the module that returns a function
    it makes: ``make`` becomes a local function of its own (free names bound to what they
    denote in its module, by normalize/helpers.py), so ``g`` is a local function too."""

    def __init__(
        self, source: Source, namer: Namer, local: set[str], locals_: dict[str, _Local]
    ) -> None:
        self.source = source
        self.namer = namer
        self.local = local
        self.locals = locals_

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                    setattr(stmt, field, self.block(inner))
            for handler in getattr(stmt, "handlers", ()):
                handler.body = self.block(handler.body)
            if (
                isinstance(stmt, gast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Call)
                and not (
                    isinstance(stmt.value.func, gast.Name) and stmt.value.func.id in self.locals
                )
            ):
                self.made(stmt)
            elif not isinstance(stmt, gast.FunctionDef):
                self.refuse_other_uses(stmt)
        return stmts

    def refuse_other_uses(self, stmt: gast.stmt) -> None:
        """``make(a)(b)``: a function a factory of the module makes, called at once."""
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Call):
                inner = node.func
                if module_factory(inner, self.source, self.namer, self.local) is not None:
                    name = getattr(inner.func, "id", None) or getattr(inner.func, "attr", "make")
                    raise self.source.error(
                        f"the function {name} makes is used other than by assigning it to a "
                        f"name and calling that: write 'g = {name}(...)', then 'g(...)'",
                        node,
                    )

    def made(self, stmt: gast.Assign) -> None:
        found = module_factory(stmt.value, self.source, self.namer, self.local)
        if found is None:
            return
        tree, args = found
        body = [s for s in tree.body if not is_docstring(s)]
        returned = body[-1].value  # (module_factory: a lambda, or the name of a def)
        if not (isinstance(returned, gast.Lambda) or _returned_def(body[:-1], returned)):
            raise self.source.error(
                f"{tree.name} makes a function srcad cannot write out where it is called: "
                "end it in 'return lambda ...', or in 'return g' of a 'def g' whose body is "
                "one 'return'",
                stmt,
            )
        factory = _local_of(tree, self.source, f"function {tree.name} (it makes a function)")
        name = self.namer.fresh(tree.name)
        self.locals[name] = _Local(name, factory.params, factory.body, factory.result)
        call = gast.Call(func=build.load(name), args=list(args), keywords=[])
        stmt.value = gast.copy_location(call, stmt.value)


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
        if isinstance(stmt, gast.Try):
            # a call in the body is written out there: its exceptions stay the handler's
            stmt.body = _inline_block(stmt.body, locals_, namer, source)
            for handler in stmt.handlers:
                handler.body = _inline_block(handler.body, locals_, namer, source)
            stmt.orelse = _inline_block(stmt.orelse, locals_, namer, source)
            stmt.finalbody = _inline_block(stmt.finalbody, locals_, namer, source)
            out.append(stmt)
            continue
        made = _made_function(stmt, locals_)
        if made is not None:
            out.extend(_make(stmt, made, locals_, namer, source))
            continue
        inline = _Inline(locals_, namer, source, stmt)
        new = inline.visit(stmt)
        out.extend(inline.hoisted)
        out.append(new)
    return out


def _made_function(stmt: gast.stmt, locals_: dict[str, _Local]) -> _Local | None:
    """The factory of ``g = make(a)``, when ``make`` is a local function returning a lambda."""
    if (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Name)
        and stmt.value.func.id in locals_
        and locals_[stmt.value.func.id].makes_function
    ):
        return locals_[stmt.value.func.id]
    return None


def _make(
    stmt: gast.Assign, factory: _Local, locals_: dict[str, _Local], namer: Namer, source: Source
) -> list[gast.stmt]:
    """``g = make(a)``: the factory's body inlined here, and ``g`` a local function whose
    body is the lambda's, reading the factory's variables of this call."""
    name = stmt.targets[0].id
    if name in locals_:
        raise source.error(f"the local function '{name}' is defined twice", stmt)
    inline = _Inline(locals_, namer, source, stmt)
    made = inline.call(stmt.value, factory, keep_lambda=True)
    args = made.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        raise source.error(
            "a lambda with defaults, '*args' or keyword-only parameters is not supported yet",
            made,
        )
    locals_[name] = _Local(name, [a.id for a in args.args], [], made.body)
    return inline.hoisted
