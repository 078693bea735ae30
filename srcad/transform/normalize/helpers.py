"""Calls of the user's own functions written out in the caller, for code that will be
differentiated again (the gradient ``hessian``, ``hvp`` and ``grad(grad(f))`` transform):
its derivative then holds no calls of derivative handles, which srcad cannot differentiate
yet, only the helpers' bodies.

A helper is inlined when it is a plain Python function of the user's or a closure (no
``global``, ``with`` or ``yield``, no ``return`` leaving through ``finally``; its local
functions, lambdas and the functions its module's factories make inlined first, as for
the function itself; ``*args`` becomes the tuple of the call's arguments, ``**kwargs``
the dict of its other keywords; a recursive one only while the constants among its
arguments decide how deep it goes: they are folded into its body, normalize/folding.py,
and a recursive call with the same constants as a call it is inside, or beyond
``_MAX_UNROLLED`` calls, leaves the outermost call a call; a recursive call with no
constants stays a call; such calls are of the function's RecursiveCall where they can be,
recursive_calls.py), called where
it runs once per statement (not in a comprehension, a conditional expression, a
short-circuit operand or a ``while`` test). So are ``srcad.checkpoint(f)`` (as ``f``: at
second order nothing is rematerialized) and derivatives made by srcad (``srcad.grad(f)``
and ``srcad.jvp(f, ...)`` written inside the code: their generated code, itself written
out for differentiating again). Its parameters become fresh names bound to the arguments
(defaults as the function has them now; a default that is not a literal is bound as a
constant), its locals fresh names, its free names the objects they denote in its own
module or closure cell; ``return e`` becomes ``result = e`` and the exit of a once-only
loop (from inside a loop: a flag, then ``break`` out of each enclosing loop), so early
returns keep their meaning; a path that ends without a value raises NoOutputError when it
runs, as the helper's own derivative does. Anything else stays a call, as before. What the
inlined code depends on (the helper's code, defaults, globals and cells; a derivative's
snapshot) is recorded for the caller's snapshot, so a change is seen as for the caller's
own names.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable
from typing import Any

import gast

from srcad.adjoints.registry import lookup
from srcad.callables import unwrapped
from srcad.errors import NoOutputError, TransformError
from srcad.runtime.recursive_handles import not_again_reason
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import (
    Checkpointed,
    CustomJVP,
    CustomJVPAgain,
    CustomVJP,
    CustomVJPAgain,
    own_signature,
    user_callee,
)
from srcad.transform.frontend import MISSING, Source, parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.builtin_names import rename_builtin_variables
from srcad.transform.normalize.chains import split_chained_assignments
from srcad.transform.normalize.contexts import inline_errstate
from srcad.transform.normalize.derivatives import fold_derivatives
from srcad.transform.normalize.folding import constant_of, fold_block
from srcad.transform.normalize.functional import lower_functional
from srcad.transform.normalize.helper_results import shared_keys
from srcad.transform.normalize.namespaces import unbind_namespaces
from srcad.transform.normalize.stars import spread_call
from srcad.transform.normalize.updates import functional_updates
from srcad.transform.normalize.walk import RenameNames, is_docstring
from srcad.transform.recursive_calls import (
    RecursiveCall,
    recursion_of,
    recursive_call,
    returns_tuples,
)
from srcad.transform.snapshot import ABSENT, Snapshot, stored

_UNSUPPORTED = (
    gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal, gast.With,
    gast.Yield, gast.YieldFrom, gast.AsyncFunctionDef, gast.ClassDef,
)  # fmt: skip
_MAX_DEPTH = 8
#: the most calls of a recursive helper written out for one call of it
_MAX_UNROLLED = 64


class _NotUnrolled(Exception):
    """A recursive call whose depth is not decided by constants of the call."""

    def __init__(self, helper: Callable) -> None:
        super().__init__(helper)
        self.helper = helper


def inline_helpers(
    tree: gast.FunctionDef, source: Source, namer: Namer, given_functions: bool = False
) -> tuple[list[Callable], dict[str, Any]]:
    """Inline the calls of the user's helpers in ``tree`` (see module doc); the helpers
    inlined (their code and defaults the caller's snapshot checks) and the free names
    their bodies brought, with what each denotes. ``given_functions``: only the calls
    passing a function from outside (``layer(x, np.tanh)``), which a helper's own
    derivative could not call (at first order; the others stay calls)."""
    inliner = _Inliner(source, namer, given_functions)
    tree.body = inliner.block(tree.body, local_names(tree), [source.func])
    if inliner.errstates:
        setanno(tree, "inlined_errstate", inliner.errstates)
    return inliner.inlined, inliner.names


class _Inliner:
    def __init__(self, source: Source, namer: Namer, given_functions: bool = False) -> None:
        self.source = source
        self.namer = namer
        self.given_functions = given_functions
        self.inlined: list[Callable] = []
        self.names: dict[str, Any] = {}
        self.parsed: dict[Callable, Source | None] = {}
        self.again: dict[tuple[CustomVJP, int], CustomVJPAgain] = {}
        self.again_jvp: dict[CustomJVP, CustomJVPAgain] = {}
        #: names bound once to the display of a helper's ``*args`` or ``**kwargs``
        self.displays: dict[str, gast.expr] = {}
        #: the calls being written out (helper and constant arguments), outermost first,
        #: and how many calls of each helper its outermost call has written out
        self.unrolling: list[tuple[Callable, tuple]] = []
        self.unrolled: dict[Callable, int] = {}
        #: the RecursiveCall of each recursive function whose calls stay calls
        self.recursive: dict[Callable, RecursiveCall] = {}
        #: (settings, helper, call) of each helper written out from ``with np.errstate``
        self.errstates: list[tuple[dict, Callable, gast.Call]] = []

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
            elif isinstance(stmt, gast.Try):
                stmt.body = self.block(stmt.body, local, stack)
                for handler in stmt.handlers:
                    handler.body = self.block(handler.body, local, stack)
                stmt.finalbody = self.block(stmt.finalbody, local, stack)
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
            obj = self.source.resolve(expr.func, local)
            if isinstance(obj, CustomVJP) and not isinstance(obj, CustomVJPAgain):
                self.custom_vjp(expr, obj, _unpacked_into(origin, expr))
                return expr
            if isinstance(obj, CustomJVP) and not isinstance(obj, CustomJVPAgain):
                self.custom_jvp(expr, obj)
                return expr
            call = expr
            if (
                inspect.ismethod(obj)
                and inspect.isfunction(obj.__func__)
                and not inspect.isclass(obj.__self__)
                and isinstance(expr.func, gast.Attribute)
            ):
                # a method of an object (``layer.__call__``): its function, called with
                # the object (a constant of the code) for ``self``
                owner = self.constant(obj.__self__, expr.func.attr.strip("_") or "obj")
                call = gast.Call(func=expr.func, args=[owner, *expr.args], keywords=expr.keywords)
                obj = obj.__func__
            while isinstance(obj, functools.partial) and not any(
                isinstance(a, gast.Starred) for a in call.args
            ):
                # the arguments it binds are constants of the code; the call's keywords
                # replace its own, as Python's partial does
                given = {k.arg for k in call.keywords}
                fixed = [self.constant(v, "bound") for v in obj.args]
                named = [
                    gast.keyword(arg=k, value=self.constant(v, k))
                    for k, v in obj.keywords.items()
                    if k not in given
                ]
                call = gast.Call(
                    func=expr.func, args=[*fixed, *call.args], keywords=[*named, *call.keywords]
                )
                obj = obj.func
            helper = self.function_of(obj)
            parsed = self.inlinable(helper, stack)
            if parsed is not None:
                bound = _bind(helper, _spread(call, self.displays), self.constant)
                if bound is not None and (
                    not self.given_functions
                    or any(
                        isinstance(v, gast.Lambda) or self.function_given(v, local) is not None
                        for v in bound.values()
                    )
                ):
                    return self.written_out(helper, parsed, bound, expr, out, local, stack, origin)
        return expr

    def written_out(
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
        """The call inlined; a recursive helper unrolled while the constants among its
        arguments decide its branches (each call with other constants than the calls it
        is inside, at most ``_MAX_UNROLLED`` of them), else left a call: of its
        :class:`RecursiveCall` where it can be (see :meth:`call_again`), else refused by
        name at second order (see :func:`not_inlined_reason`)."""
        # (constants folded in every helper written out: a mutual recursion bottoms out too)
        constants = _constants(bound, parsed.tree)
        state = (
            helper,
            tuple(sorted((k, type(v).__name__, repr(v)) for k, v in constants.items())),
        )
        if helper in stack:  # a call inside the unrolling of ``helper`` (or a mutual one)
            if (
                not constants
                or state in self.unrolling
                or self.unrolled.get(helper, 0) >= _MAX_UNROLLED
            ):
                # how deep it goes is decided by data: this call stays a call, of the
                # helper's RecursiveCall where it can be (else, or where the constants
                # do not bottom out, the outermost call of the recursion stays a call)
                outermost = stack == [helper]  # the function's own body calling it
                if outermost or not constants:
                    if self.call_again(helper, call, origin) or outermost:
                        return call
                raise _NotUnrolled(helper)
        else:
            if not constants and _calls_itself(helper) and returns_tuples(parsed.tree):
                # (one level written out by its RecursiveCall: the inliner cannot write
                # out tuples returned from several places)
                if self.call_again(helper, call, origin):
                    return call
            self.unrolled[helper] = 0
        self.unrolling.append(state)
        self.unrolled[helper] = self.unrolled.get(helper, 0) + 1
        try:
            return self.inline(helper, parsed, bound, call, out, local, stack, origin, constants)
        except _NotUnrolled as exc:
            # how deep it goes is not decided here: the outermost call of the recursion (in
            # the function's own body, for the function itself) stays a call
            if (exc.helper is helper and helper not in stack) or (
                len(stack) == 1 and exc.helper is stack[0]
            ):
                self.call_again(helper, call, origin)
                return call
            raise
        finally:
            self.unrolling.pop()

    def call_again(self, helper: Callable, call: gast.Call, origin: gast.stmt) -> bool:
        """Whether a call of a recursive ``helper`` that stays a call was made a call of
        its :class:`RecursiveCall` (whose derivative is differentiated again): where it
        passes each parameter positionally and ``helper`` returns one value (else it is
        refused by name at second order, see :func:`not_inlined_reason`)."""
        parsed = self.parsed.get(helper)
        again = (
            recursive_call(helper, parsed.tree, call, _unpacked_into(origin, call))
            if parsed is not None
            else None
        )
        if again is None:
            return False
        again = self.recursive.setdefault(helper, again)
        name = helper.__name__ if helper.__name__.isidentifier() else "f"
        call.func = self.constant(again, f"{name}_again")
        return True

    def function_of(self, obj: Any) -> Any:
        """The Python function a call of ``obj`` runs the body of: ``obj`` itself, the
        function a checkpoint wraps, or a derivative's generated code (its snapshot
        recorded for the caller's)."""
        if isinstance(obj, Checkpointed):
            obj = obj.fun  # at second order nothing is rematerialized: the plain function
        obj = unwrapped(obj)  # a cache, or a decorator's wrapper that only forwards
        make = getattr(obj, "srcad_function", None)
        if not callable(make) or inspect.isfunction(obj):
            return obj
        try:
            function = make()  # a derivative made by srcad: code differentiated again
        except TypeError:
            return None  # (has_aux, a bound method: it stays a call, refused as before)
        snapshot = getattr(function, "__srcad_snapshot__", None)
        if snapshot is not None:
            self.source.reads.setdefault((id(snapshot), ""), [(snapshot, "", snapshot)])
        return function

    def custom_vjp(self, call: gast.Call, custom: CustomVJP, outputs: int) -> None:
        """A call of a custom_vjp function made a call of its :class:`CustomVJPAgain`,
        whose gradient code calls ``fwd`` and ``bwd`` as the user's functions (when they
        are; what they are now is recorded for the snapshot); ``outputs``: how many names
        the call's result is unpacked into."""
        if not (inspect.isfunction(custom.fwd) and inspect.isfunction(custom.bwd)):
            return  # no rule yet, or not Python functions: left as it was
        for attr in ("fwd", "bwd"):
            self.source.reads.setdefault((id(custom), attr), stored(custom, attr))
        again = self.again.get((custom, outputs))
        if again is None or (again.fwd, again.bwd) != (custom.fwd, custom.bwd):
            again = self.again[custom, outputs] = CustomVJPAgain(custom, outputs)
        name = getattr(custom, "__name__", "f")
        call.func = self.constant(again, name if name.isidentifier() else "f")

    def custom_jvp(self, call: gast.Call, custom: CustomJVP) -> None:
        """A call of a custom_jvp function of positional parameters, given by position or
        keyword (or left to their defaults), made a call of its :class:`CustomJVPAgain`
        (its gradient code then calls functions srcad reads); any other call is left as
        it was (refused by name at second order)."""
        if (
            custom.jvp is None
            or not inspect.isfunction(custom.fun)
            or any(k.arg is None for k in call.keywords)
            or any(isinstance(a, gast.Starred) for a in call.args)
        ):
            return
        try:
            signature = own_signature(custom.fun)
            signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except (TypeError, ValueError):
            return
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if any(p.kind not in kinds for p in signature.parameters.values()):
            return
        self.source.reads.setdefault((id(custom), "jvp"), stored(custom, "jvp"))
        again = self.again_jvp.get(custom)
        if again is None or again.jvp is not custom.jvp:
            again = self.again_jvp[custom] = CustomJVPAgain(custom)
        name = getattr(custom, "__name__", "f")
        call.func = self.constant(again, name if name.isidentifier() else "f")

    def function_given(self, value: gast.expr, local: set[str]) -> Any:
        """The function ``value`` names when it is one from outside the caller (a NumPy
        function, one of yours, a class), else None."""
        if not isinstance(value, (gast.Name, gast.Attribute)):
            return None
        obj = self.source.resolve(value, local)
        return obj if obj is not MISSING and callable(obj) else None

    def lambdas_given(
        self, bound: dict[str, gast.expr], stored: set[str], call: gast.Call
    ) -> dict[str, gast.Lambda]:
        """The parameters given a lambda (``apply(lambda t: t * t, x)``): each is written
        out where the helper calls it."""
        out = {}
        for param, value in bound.items():
            if not isinstance(value, gast.Lambda):
                continue
            args = value.args
            if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
                raise self.source.error(
                    "a lambda with defaults, '*args' or keyword-only parameters given to a "
                    "function is not supported yet",
                    value,
                )
            if param in stored:
                raise self.source.error(
                    f"a lambda is given for '{param}', which the function assigns; srcad "
                    "writes out a lambda given to your function only where that calls it",
                    value,
                )
            out[param] = value
        return out

    def constant(self, value: Any, preferred: str) -> gast.expr:
        """A name of the generated code bound to ``value`` (a default that is an object)."""
        name = self.source.bind(self.namer, value, preferred)
        self.names[name] = value
        return build.load(name)

    def inlinable(self, helper: Any, stack: list[Callable]) -> Source | None:
        if not inspect.isfunction(helper) or len(set(stack)) > _MAX_DEPTH:
            return None
        if (
            user_callee(helper) is None  # NumPy's, the standard library's, srcad's own
            or lookup(helper) is not None
        ):
            return None
        if helper not in self.parsed:
            parsed = _prepared(helper, self.namer)
            if parsed is not None:
                parsed = _local_functions_inlined(parsed, self.namer)
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
        constants: dict[str, Any] | None = None,
    ) -> gast.expr:
        tree = copy.deepcopy(parsed.tree)
        settings = getanno(parsed.tree, "errstate")
        if settings is not None:
            self.errstates.append((settings, helper, call))
        if constants:
            # parameters bound to constants read as those, and the branches they decide
            # taken: how a recursion bottoms out when its depth is an argument
            tree.body = fold_block(tree.body, constants)
        name = helper.__name__ if helper.__name__.isidentifier() else "helper"
        helper_locals = local_names(tree)
        stored = {
            n.id
            for n in gast.walk(tree)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }
        # a parameter given a function from outside (``layer(x, np.tanh)``, ``act=relu``)
        # and never bound again is that function: its calls are calls of it
        functions = {
            param: self.constant(obj, param).id
            for param, value in bound.items()
            if param not in stored and (obj := self.function_given(value, local)) is not None
        }
        lambdas = self.lambdas_given(bound, stored, call)
        renames = {n: self.namer.fresh(f"{name}_{n}") for n in sorted(helper_locals)}
        renames.update(functions)
        for free in sorted(_free_names(tree, helper_locals)):
            renames[free] = self.free_name(free, helper, parsed, local)
        body = [RenameNames(renames).visit(s) for s in tree.body if not is_docstring(s)]
        if lambdas:
            from srcad.transform.normalize.local_functions import (  # (it imports this module)
                inline_given_lambdas,
            )

            given = {renames[param]: lam for param, lam in lambdas.items()}
            body = inline_given_lambdas(body, given, self.namer, parsed)
        result = self.namer.fresh(f"{name}_result")
        emitted: list[gast.stmt] = []
        for param, value in bound.items():
            if param in functions or param in lambdas:
                continue
            emitted.append(build.assign(renames[param], value))
            if isinstance(value, (gast.Tuple, gast.Dict)) and param not in stored:
                self.displays[renames[param]] = value  # ``g(*args)`` in the body: spread
        keys = None
        if _ends_in_its_only_return(body):
            final = body.pop()
            body.append(build.assign(result, final.value))
        else:
            once = self.namer.fresh(f"{name}_once")
            range_name = self.source.bind(self.namer, range, "range")
            flag = self.namer.fresh(f"{name}_returned")
            error = self.source.bind(self.namer, NoOutputError, "NoOutputError")

            def raising(node: gast.AST, what: str) -> gast.stmt:
                message = str(
                    parsed.error(
                        f"{helper.__name__} returns None here ({what}); srcad "
                        "differentiates the value a function returns",
                        node,
                    )
                )
                stmt = gast.Raise(exc=build.call(error, build.const(message)), cause=None)
                return gast.copy_location(stmt, node)

            exits = _returns_as_exits(body, result, flag, raising)
            if _falls_through(exits):
                exits.append(raising(tree, "the end of the function, without a 'return'"))
            keys = _dicts_as_tuples(exits, result)
            loop = gast.For(
                target=gast.Name(once, gast.Store(), None, None),
                iter=build.call(build.load(range_name), build.const(1)),
                body=exits,
                orelse=[],
                type_comment=None,
            )
            body = [build.assign(result, _no_result(exits, result))]
            if any(isinstance(n, gast.Name) and n.id == flag for s in exits for n in gast.walk(s)):
                body.append(build.assign(flag, build.const(False)))
            body.append(loop)
        emitted.extend(body)
        inner_local = local | {renames[n] for n in helper_locals - set(functions)} | {result}
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
        if keys is not None:
            # the dict again, from the tuple of its values: one name per key (dicts.py)
            values = [
                gast.Subscript(build.load(result), build.const(k), gast.Load())
                for k in range(len(keys))
            ]
            display = gast.Dict(keys=[build.const(k) for k in keys], values=values)
            return gast.copy_location(display, call)
        return gast.copy_location(build.load(result), call)

    def free_name(
        self,
        free: str,
        helper: Callable,
        parsed: Source,
        local: frozenset[str] | set[str] = frozenset(),
    ) -> str:
        """The caller's name for what ``free`` denotes in the helper's module (a fresh one
        where the caller's own name means something else, or is one of its ``local``)."""
        # where the name lives in the helper's module, for the caller's snapshot
        cells = dict(zip(helper.__code__.co_freevars, helper.__closure__ or ()))
        if free in cells:  # a closure's: the cell (the snapshot reads its contents)
            cell = cells[free]
            try:
                contents = cell.cell_contents
            except ValueError:
                contents = ABSENT
            self.source.reads.setdefault((id(cell), free), [(cell, free, contents)])
        else:
            namespace = helper.__globals__
            key = (id(namespace), free)
            if key not in self.source.reads:
                self.source.reads[key] = [(namespace, free, namespace.get(free, ABSENT))]
        obj = parsed.lookup(free)
        name = free
        if obj is MISSING or self.source.lookup(free) is not obj or free in local:
            name = self.namer.fresh(free)
            self.source.namespace[name] = obj
        self.names[name] = obj
        # taken now: a later pass binding a helper of its own must not reuse the name
        self.namer.bind_user_global(name, obj)
        return name


def _prepared(helper: Callable, namer: Namer) -> Source | None:
    """``helper`` parsed, as the transform has a function's source before normalizing it:
    xp.f read as np.f, srcad.grad(g) / srcad.jvp(g, ...) in it made derivative objects,
    generated code's add_at updates made functional; None without source."""
    try:
        parsed = parse_function(helper)
    except Exception:  # noqa: BLE001 (no source: it stays a call, refused as before)
        return None
    unbind_namespaces(parsed)
    parsed.tree = split_chained_assignments(rename_builtin_variables(parsed.tree, namer))
    fold_derivatives(parsed, namer)
    functional_updates(parsed.tree, parsed, namer)
    try:
        parsed.tree, settings = inline_errstate(parsed.tree, parsed)
    except TransformError:
        return None  # settings that differ: it stays a call, refused by name
    if settings is not None:
        # its body written out; the caller's derivative runs under the settings (pipeline)
        setanno(parsed.tree, "errstate", settings)
    return parsed


def _local_functions_inlined(parsed: Source, namer: Namer) -> Source | None:
    """The helper's comprehensions as loops and its local functions (and functions its
    module's factories make) written out in it, as its own transformation does (a list
    comprehension stacked at second order was refused); None where that refuses (the call stays a
    call, refused by name at second order)."""
    from srcad.transform.normalize.local_functions import (  # (it imports this module)
        inline_local_functions,
        lambdas_as_defs,
    )

    try:
        tree = lower_functional(lambdas_as_defs(parsed.tree), parsed, namer)
        parsed.tree = inline_local_functions(tree, parsed, namer)
    except TransformError:
        return None
    return parsed


def module_factory(
    call: gast.Call, source: Source, namer: Namer, local: set[str]
) -> tuple[gast.FunctionDef, list[gast.expr]] | None:
    """For ``g = make(a)`` where ``make`` is a function of the user's module that returns
    a function it makes (``return lambda t: ...``, or a nested ``def`` returned by name):
    a copy of ``make``'s function, located at the call, whose free names are the caller's
    names for what they denote in ``make``'s module (recorded for the caller's snapshot,
    with ``make``'s code and defaults), and the arguments of its parameters, in order
    (defaults as ``make`` has them now). None for any other call."""
    helper = source.resolve(call.func, local)
    if not _makes_function(helper):
        return None
    parsed = _prepared(helper, namer)
    if parsed is None:
        return None
    last = next((s for s in reversed(parsed.tree.body) if not is_docstring(s)), None)
    if not (isinstance(last, gast.Return) and last.value is not None):
        return None
    returned = last.value
    if isinstance(returned, gast.Name):
        defs = [s for s in parsed.tree.body if isinstance(s, gast.FunctionDef)]
        if not any(d.name == returned.id for d in defs):
            return None
    elif not isinstance(returned, gast.Lambda):
        return None
    args = parsed.tree.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise source.error(
            f"{helper.__name__} makes a function, and srcad writes such a function out where "
            "it is called; with '*args', '**kwargs', keyword-only or positional-only "
            "parameters it cannot yet: give it plain parameters, or define it inside the "
            "differentiated function",
            call,
        )
    inliner = _Inliner(source, namer)
    bound = _bind(helper, call, inliner.constant)
    if bound is None:
        return None  # (Python raises the TypeError where it runs)
    tree = copy.deepcopy(parsed.tree)
    helper_locals = local_names(tree)
    renames = {
        free: inliner.free_name(free, helper, parsed, local)
        for free in sorted(_free_names(tree, helper_locals))
    }
    tree = RenameNames(renames).visit(tree)
    for node in gast.walk(tree):
        if isinstance(node, (gast.stmt, gast.expr)):
            gast.copy_location(node, call)
    own = Snapshot(helper, {})  # its code and defaults, as a helper written out
    source.reads.setdefault((id(helper), "factory"), [(own, "", own)])
    return tree, [bound[a.id] for a in args.args]


def _makes_function(obj: Any) -> bool:
    """Whether ``obj`` is a function of the user's whose code makes a function."""
    return (
        inspect.isfunction(obj)
        and any(inspect.iscode(c) for c in obj.__code__.co_consts)
        and user_callee(obj) is not None
        and lookup(obj) is None
        and getattr(obj, "__wrapped__", None) is None
    )


_WHAT = {
    gast.FunctionDef: "a local function", gast.Lambda: "a lambda", gast.Global: "'global'",
    gast.Nonlocal: "'nonlocal'", gast.Try: "'try'", gast.With: "'with'",
    gast.Yield: "'yield'", gast.YieldFrom: "'yield'", gast.ClassDef: "a class",
    gast.Starred: "a '*' argument",
}  # fmt: skip


def not_inlined_reason(helper: Callable) -> str | None:
    """Why the inliner leaves calls of ``helper`` as calls, where its body tells."""
    recursion = recursion_of(helper)  # srcad's own, for a derivative of a recursion
    if recursion is not None:
        return "it is srcad's derivative code for a recursion: " + not_again_reason(recursion)
    if _calls_itself(helper):
        code = helper.__code__
        return (
            f"it calls itself ({code.co_filename}:{code.co_firstlineno}: recursion whose "
            "depth depends on data: not decided by constant arguments of the call, or deeper "
            f"than {_MAX_UNROLLED} calls), which srcad follows to second order only, from a "
            "gradient, where the function has no '*args', '**kwargs' or keyword-only "
            "parameters and returns one value or a tuple each call unpacks: write it so, "
            "or write the depth as a constant, or a loop"
        )
    try:
        parsed = parse_function(helper)
        tree, _ = inline_errstate(parsed.tree, parsed)  # np.errstate is written out
    except Exception:  # noqa: BLE001 (its source is unavailable: said where it is read)
        return None
    if tree.args.posonlyargs:
        return "it has positional-only parameters"
    for node in gast.walk(gast.Module(body=tree.body, type_ignores=[])):
        if isinstance(node, _UNSUPPORTED):
            return f"it holds {_WHAT.get(type(node), type(node).__name__)}"
    if not _simple(tree):
        return "it never returns a value"
    return None


def _calls_itself(helper: Callable) -> bool:
    """Whether ``helper``'s code names ``helper`` (a global or a closure's cell)."""
    code = helper.__code__
    cells = dict(zip(code.co_freevars, helper.__closure__ or ()))
    named = {n: helper.__globals__.get(n) for n in code.co_names}
    named.update((n, c.cell_contents) for n, c in cells.items() if _filled(c))
    return any(obj is helper for obj in named.values())


def _unpacked_into(origin: gast.stmt, call: gast.Call) -> int:
    """How many names ``a, b = call`` unpacks the call's value into (1 for any other use)."""
    if isinstance(origin, gast.Assign) and origin.value is call and len(origin.targets) == 1:
        target = origin.targets[0]
        if isinstance(target, (gast.Tuple, gast.List)):
            return len(target.elts)
    return 1


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _simple(tree: gast.FunctionDef) -> bool:
    """Whether the helper's body has nothing the inliner cannot write out in a caller."""
    args = tree.args
    if args.posonlyargs:
        return False
    for node in gast.walk(gast.Module(body=tree.body, type_ignores=[])):
        if isinstance(node, _UNSUPPORTED):
            return False
        if isinstance(node, gast.Try) and node.finalbody:
            # a return leaving through 'finally' runs it first: not written out
            if any(isinstance(n, gast.Return) for n in gast.walk(node)):
                return False
    # never a value: left to refuse_none_returns (the helper's own derivative refuses it)
    return any(
        isinstance(n, gast.Return) and n.value is not None and not _is_none(n.value)
        for n in gast.walk(tree)
    )


def _free_names(tree: gast.FunctionDef, helper_locals: set[str]) -> set[str]:
    return {
        n.id
        for n in gast.walk(tree)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in helper_locals
    }


def _spread(call: gast.Call, displays: dict[str, gast.expr]) -> gast.Call:
    """``g(*args, **kwargs)`` with ``args``/``kwargs`` a helper's own, bound to displays:
    their elements as arguments (other stars stay, and keep the call a call)."""

    def shown(value: gast.expr, kind: type) -> gast.expr:
        found = displays.get(value.id) if isinstance(value, gast.Name) else None
        return copy.deepcopy(found) if isinstance(found, kind) else value

    for arg in call.args:
        if isinstance(arg, gast.Starred):
            arg.value = shown(arg.value, gast.Tuple)
    for kw in call.keywords:
        if kw.arg is None:
            kw.value = shown(kw.value, gast.Dict)
    return spread_call(call)


def _bind(
    helper: Callable, call: gast.Call, constant: Callable[[Any, str], gast.expr]
) -> dict[str, gast.expr] | None:
    """Every parameter of ``helper`` with the argument node or default for this call (an
    object default by ``constant``), or None when the call does not fit (srcad then keeps
    it a call)."""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    try:
        signature = own_signature(helper)
        bound = signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except (TypeError, ValueError):
        return None
    out: dict[str, gast.expr] = {}
    for param in signature.parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            # *args: the tuple written out (a name holding it is split into one per element)
            elts = list(bound.arguments.get(param.name, ()))
            out[param.name] = gast.Tuple(elts=elts, ctx=gast.Load())
        elif param.kind is param.VAR_KEYWORD:
            # **kwargs: the dict of the call's other keywords, written out
            given = bound.arguments.get(param.name, {})
            keys = [build.const(k) for k in given]
            out[param.name] = gast.Dict(keys=keys, values=list(given.values()))
        elif param.name in bound.arguments:
            out[param.name] = bound.arguments[param.name]
        elif param.default is not param.empty and _is_literal(param.default):
            out[param.name] = build.const(param.default)
        elif param.default is not param.empty:
            # an object (an array, a function): the very object, as the helper sees it
            out[param.name] = constant(param.default, f"{helper.__name__}_{param.name}")
        else:
            return None  # a parameter without argument or default: Python raises
    return out


def _constants(bound: dict[str, gast.expr], tree: gast.FunctionDef) -> dict[str, Any]:
    """The parameters bound to a literal constant and never assigned in the body."""
    stored = {
        n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }
    out = {}
    for param, value in bound.items():
        found = constant_of(value)
        if param not in stored and found is not None:
            out[param] = found[0]
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


def _no_result(exits: list[gast.stmt], result: str) -> gast.expr:
    """What ``result`` holds before a ``return`` runs: None, or a tuple of as many Nones
    when every ``return`` gives a tuple display of one length (so that split_tuples makes
    the result one name per element, as for a helper with one ``return``)."""
    values = [
        node.value
        for stmt in exits
        for node in gast.walk(stmt)
        if isinstance(node, gast.Assign)
        and isinstance(node.targets[0], gast.Name)
        and node.targets[0].id == result
    ]
    lengths = {len(v.elts) if isinstance(v, gast.Tuple) else None for v in values}
    if len(lengths) != 1 or None in lengths:
        return build.const(None)
    return build.tuple_([build.const(None) for _ in range(lengths.pop())])


def _dicts_as_tuples(exits: list[gast.stmt], result: str) -> tuple | None:
    """Where every ``return`` gives a dict display of the same constant keys: each made a
    tuple of the values in key order (split_tuples follows a name assigned tuples in
    branches, dicts.py a dict made once); the keys, or None (nothing changed)."""
    assigned = [
        node
        for stmt in exits
        for node in gast.walk(stmt)
        if isinstance(node, gast.Assign)
        and isinstance(node.targets[0], gast.Name)
        and node.targets[0].id == result
    ]
    keys = shared_keys([a.value for a in assigned])
    if keys is None:
        return None
    for a in assigned:
        a.value = gast.copy_location(build.tuple_(a.value.values), a.value)
    return keys


def _is_none(value: gast.expr) -> bool:
    return isinstance(value, gast.Constant) and value.value is None


def _returns_as_exits(
    body: list[gast.stmt], result: str, flag: str, raising: Callable[[gast.AST, str], gast.stmt]
) -> list[gast.stmt]:
    """``return e`` as ``result = e; break`` (the once-only loop's exit); inside a loop,
    ``result = e; flag = True; break``, and ``if flag: break`` after each loop holding one,
    out to the once-only loop. A return without a value raises (``raising``)."""

    def block(stmts: list[gast.stmt], depth: int) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.Return):
                if stmt.value is None or _is_none(stmt.value):
                    out.append(raising(stmt, "a 'return' without a value"))
                    break
                out.append(build.assign(result, stmt.value))
                if depth:
                    out.append(build.assign(flag, build.const(True)))
                out.append(gast.Break())
                break  # what follows a return never runs
            if isinstance(stmt, gast.If):
                stmt.body = block(stmt.body, depth)
                stmt.orelse = block(stmt.orelse, depth)
            elif isinstance(stmt, gast.Try):  # (without 'finally': see _simple)
                stmt.body = block(stmt.body, depth)
                for handler in stmt.handlers:
                    handler.body = block(handler.body, depth)
            elif isinstance(stmt, (gast.For, gast.While)):
                returns = any(isinstance(n, gast.Return) for s in stmt.body for n in gast.walk(s))
                stmt.body = block(stmt.body, depth + 1)
                stmt.orelse = block(stmt.orelse, depth)  # (a break there leaves the outer loop)
                out.append(stmt)
                if returns:
                    exit_ = gast.If(test=build.load(flag), body=[gast.Break()], orelse=[])
                    out.append(gast.copy_location(exit_, stmt))
                continue
            out.append(stmt)
        return out

    return block(body, 0)


def _falls_through(body: list[gast.stmt]) -> bool:
    """Whether running ``body`` (the once-only loop's) may reach its end."""
    if not body:
        return True
    last = body[-1]
    if isinstance(last, (gast.Raise, gast.Break)):
        return False
    if isinstance(last, gast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    if isinstance(last, gast.Try) and not last.finalbody:
        return _falls_through(last.body) or any(_falls_through(h.body) for h in last.handlers)
    return True
