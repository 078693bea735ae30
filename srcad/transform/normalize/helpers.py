"""Calls of the user's own functions written out in the caller, for code that will be
differentiated again (the gradient ``hessian``, ``hvp`` and ``grad(grad(f))`` transform):
its derivative then holds no calls of derivative handles, which srcad cannot differentiate
yet, only the helpers' bodies.

A helper is inlined when it is a plain Python function of the user's (no closure, no
``**kwargs``, not recursive, no local functions or lambdas, no ``global``, ``try``,
``with`` or ``yield``; ``*args`` becomes the tuple of the call's arguments), called where
it runs once per statement (not in a comprehension, a conditional expression, a
short-circuit operand or a ``while`` test), its
``return`` statements sit outside loops and every path returns a value (it ends in
``return <value>``). Its parameters become fresh names bound to the
arguments (defaults as the function has them now), its locals fresh names, its free names
the objects they denote in its own module; ``return e`` becomes ``result = e`` and the
exit of a once-only loop, so early returns keep their meaning. Anything else stays a call,
as before. What the inlined code depends on (the helper's code, defaults and globals) is
recorded for the caller's snapshot, so a change is seen as for the caller's own names.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

import gast

from srcad.adjoints.registry import lookup
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import user_callee
from srcad.transform.frontend import MISSING, Source, parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import RenameNames, is_docstring
from srcad.transform.snapshot import ABSENT

_UNSUPPORTED = (
    gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal, gast.Try, gast.With,
    gast.Yield, gast.YieldFrom, gast.AsyncFunctionDef, gast.ClassDef, gast.Starred,
)  # fmt: skip
_MAX_DEPTH = 8


def inline_helpers(
    tree: gast.FunctionDef, source: Source, namer: Namer
) -> tuple[list[Callable], dict[str, Any]]:
    """Inline the calls of the user's helpers in ``tree`` (see module doc); the helpers
    inlined (their code and defaults the caller's snapshot checks) and the free names
    their bodies brought, with what each denotes."""
    inliner = _Inliner(source, namer)
    tree.body = inliner.block(tree.body, local_names(tree), [source.func])
    return inliner.inlined, inliner.names


class _Inliner:
    def __init__(self, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer
        self.inlined: list[Callable] = []
        self.names: dict[str, Any] = {}
        self.parsed: dict[Callable, Source | None] = {}

    def block(
        self, stmts: list[gast.stmt], local: set[str], stack: list[Callable]
    ) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, (gast.If, gast.For)):
                header = "iter" if isinstance(stmt, gast.For) else "test"
                setattr(
                    stmt, header, self.expression(getattr(stmt, header), out, local, stack, stmt)
                )
                stmt.body = self.block(stmt.body, local, stack)
                stmt.orelse = self.block(stmt.orelse, local, stack)
            elif isinstance(stmt, gast.While):
                stmt.body = self.block(stmt.body, local, stack)
                stmt.orelse = self.block(stmt.orelse, local, stack)
            elif isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
                if stmt.value is not None:
                    stmt.value = self.expression(stmt.value, out, local, stack, stmt)
            out.append(stmt)
        return out

    def expression(
        self,
        expr: gast.expr,
        out: list[gast.stmt],
        local: set[str],
        stack: list[Callable],
        origin: gast.stmt,
    ) -> gast.expr:
        """``expr`` with the helper calls it runs once replaced by their results, the
        helpers' bodies appended to ``out``."""
        if isinstance(
            expr, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.Lambda)
        ):
            return expr
        if isinstance(expr, gast.IfExp):
            expr.test = self.expression(expr.test, out, local, stack, origin)
            return expr  # its branches run only when chosen
        if isinstance(expr, gast.BoolOp):
            expr.values[0] = self.expression(expr.values[0], out, local, stack, origin)
            return expr  # the other operands run only when reached
        for field, value in gast.iter_fields(expr):
            if isinstance(value, gast.expr):
                setattr(expr, field, self.expression(value, out, local, stack, origin))
            elif isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, gast.expr):
                        value[k] = self.expression(item, out, local, stack, origin)
                    elif isinstance(item, gast.keyword):
                        item.value = self.expression(item.value, out, local, stack, origin)
        if isinstance(expr, gast.Call):
            helper = self.source.resolve(expr.func, local)
            parsed = self.inlinable(helper, stack)
            if parsed is not None:
                bound = _bind(helper, expr)
                if bound is not None:
                    return self.inline(helper, parsed, bound, expr, out, local, stack, origin)
        return expr

    def inlinable(self, helper: Any, stack: list[Callable]) -> Source | None:
        if not inspect.isfunction(helper) or helper in stack or len(stack) > _MAX_DEPTH:
            return None
        if (
            user_callee(helper) is None  # NumPy's, the standard library's, srcad's own
            or lookup(helper) is not None
            or helper.__closure__
            or getattr(helper, "__wrapped__", None) is not None
        ):
            return None
        if helper not in self.parsed:
            try:
                parsed = parse_function(helper)
            except Exception:  # noqa: BLE001 (no source: it stays a call, refused as before)
                parsed = None
            if parsed is not None and not _simple(parsed.tree):
                parsed = None
            self.parsed[helper] = parsed
        return self.parsed[helper]

    def inline(
        self,
        helper: Callable,
        parsed: Source,
        bound: dict[str, gast.expr],
        call: gast.Call,
        out: list[gast.stmt],
        local: set[str],
        stack: list[Callable],
        origin: gast.stmt,
    ) -> gast.expr:
        tree = copy.deepcopy(parsed.tree)
        name = helper.__name__ if helper.__name__.isidentifier() else "helper"
        helper_locals = local_names(tree)
        renames = {n: self.namer.fresh(f"{name}_{n}") for n in sorted(helper_locals)}
        for free in sorted(_free_names(tree, helper_locals)):
            renames[free] = self.free_name(free, helper, parsed)
        body = [RenameNames(renames).visit(s) for s in tree.body if not is_docstring(s)]
        result = self.namer.fresh(f"{name}_result")
        emitted: list[gast.stmt] = []
        for param, value in bound.items():
            emitted.append(build.assign(renames[param], value))
        if _ends_in_its_only_return(body):
            final = body.pop()
            body.append(build.assign(result, final.value))
        else:
            once = self.namer.fresh(f"{name}_once")
            range_name = self.source.bind(self.namer, range, "range")
            loop = gast.For(
                target=gast.Name(once, gast.Store(), None, None),
                iter=build.call(build.load(range_name), build.const(1)),
                body=_returns_as_exits(body, result),
                orelse=[],
                type_comment=None,
            )
            body = [build.assign(result, build.const(None)), loop]
        emitted.extend(body)
        inner_local = local | {renames[n] for n in helper_locals} | {result}
        emitted = self.block(emitted, inner_local, [*stack, helper])
        for stmt in emitted:
            for node in gast.walk(stmt):
                if isinstance(node, (gast.stmt, gast.expr)):
                    gast.copy_location(node, call)
            setanno(stmt, "origin", getanno(origin, "origin", origin))
        out.extend(emitted)
        local.update(inner_local)
        if helper not in self.inlined:
            self.inlined.append(helper)
        return gast.copy_location(build.load(result), call)

    def free_name(self, free: str, helper: Callable, parsed: Source) -> str:
        """The caller's name for what ``free`` denotes in the helper's module."""
        # where the name lives in the helper's module, for the caller's snapshot
        namespace = helper.__globals__
        key = (id(namespace), free)
        if key not in self.source.reads:
            self.source.reads[key] = [(namespace, free, namespace.get(free, ABSENT))]
        obj = parsed.lookup(free)
        name = free
        if obj is MISSING or self.source.lookup(free) is not obj:
            name = self.namer.fresh(free)
            self.source.namespace[name] = obj
        self.names[name] = obj
        return name


def _simple(tree: gast.FunctionDef) -> bool:
    """Whether the helper's body has nothing the inliner cannot write out in a caller."""
    args = tree.args
    if args.kwarg or args.posonlyargs:
        return False
    for node in gast.walk(gast.Module(body=tree.body, type_ignores=[])):
        if isinstance(node, _UNSUPPORTED):
            return False
    for stmt in tree.body:
        for loop in gast.walk(stmt):
            if isinstance(loop, (gast.For, gast.While)):
                if any(isinstance(n, gast.Return) for n in gast.walk(loop)):
                    return False  # a return inside a loop: not the once-only loop's exit
    body = [s for s in tree.body if not is_docstring(s)]
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return False  # a path may end without a value: left to refuse_none_returns
    bare = [n for n in gast.walk(tree) if isinstance(n, gast.Return) and n.value is None]
    return not bare


def _free_names(tree: gast.FunctionDef, helper_locals: set[str]) -> set[str]:
    return {
        n.id
        for n in gast.walk(tree)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in helper_locals
    }


def _bind(helper: Callable, call: gast.Call) -> dict[str, gast.expr] | None:
    """Every parameter of ``helper`` with the argument node or default for this call, or
    None when the call does not fit (srcad then keeps it a call)."""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    try:
        signature = inspect.signature(helper)
        bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except (TypeError, ValueError):
        return None
    out: dict[str, gast.expr] = {}
    for param in signature.parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            # *args: the tuple written out (a name holding it is split into one per element)
            elts = list(bound.arguments.get(param.name, ()))
            out[param.name] = gast.Tuple(elts=elts, ctx=gast.Load())
        elif param.name in bound.arguments:
            out[param.name] = bound.arguments[param.name]
        elif param.default is not param.empty and _is_literal(param.default):
            out[param.name] = build.const(param.default)
        else:
            return None  # a default that is not a literal: keep the call
    return out


def _is_literal(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(map(_is_literal, value))
    return value is None or isinstance(value, (bool, int, float, str))


def _ends_in_its_only_return(body: list[gast.stmt]) -> bool:
    returns = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Return)]
    return (
        len(returns) == 1
        and isinstance(body[-1], gast.Return)
        and body[-1] is returns[0]
        and body[-1].value is not None
    )


def _returns_as_exits(body: list[gast.stmt], result: str) -> list[gast.stmt]:
    """``return e`` as ``result = e; break`` (in the once-only loop; not inside loops)."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.Return):
                value = stmt.value if stmt.value is not None else build.const(None)
                out += [build.assign(result, value), gast.Break()]
                break  # what follows a return never runs
            if isinstance(stmt, gast.If):
                stmt.body = block(stmt.body)
                stmt.orelse = block(stmt.orelse)
            out.append(stmt)
        return out

    return block(body)
