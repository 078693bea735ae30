"""Calls of a recursive function whose depth depends on data, in code whose derivative is
differentiated again (the inliner, normalize/helpers.py, cannot write them out).

Such a call becomes a call of a :class:`RecursiveCall`. In reverse mode its handle calls
Python functions srcad reads, so that the next transformation follows the recursion as
JAX's tracing would: the forward pass calls the function and keeps its arguments (a list
of them, read back by ``residual``); the backward pass is ``srcad.grad`` of the
function's body with each ``return v`` made ``return np.sum(v * g)`` (``return a, b``:
``np.sum(a * g0) + np.sum(b * g1)``, for a call unpacking a tuple), the call's vjp,
recomputing the call. That body is one level of the recursion written out, its own calls
calls of the :class:`RecursiveCall`: each level is differentiated in turn, recomputing
the levels below it (work quadratic in the depth). Calls may pass parameters by keyword
or leave them to their defaults (the forward function has the function's parameters).

For a function returning one value the backward function is a :class:`RecursionBackward`,
whose reverse-mode handle is built the same way from it (its residuals passed one by one):
so the second derivative's code, reverse over reverse, is differentiated once more, in
either mode (a third derivative). Forward mode at second order calls the recursion's own
forward-mode derivative, the next level's backward is called as it is, and a tuple
result's forward function goes through :class:`TupleForwardVJP`: what differentiates those
again is refused, naming the recursion (srcad.runtime.recursive_handles.not_again_reason).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from srcad.runtime.calls import Functions, flat_wrt
from srcad.runtime.lists import residual
from srcad.runtime.recursive_handles import TupleForwardVJP
from srcad.transform.calls import CallJVP, CallVJP, own_signature
from srcad.transform.codegen import compile_source, to_source
from srcad.transform.frontend import parse_function

_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class RecursiveCall:
    """``fun`` called where the call could not be written out (see module doc); its value
    is one value, or (``packed``) a tuple of ``outputs`` values the call unpacks."""

    def __init__(self, fun: Callable, outputs: int = 1, packed: bool = False) -> None:
        self.fun = fun
        self.outputs = outputs
        self.packed = packed
        #: what the forward function calls: ``fun``, or the object whose calls stay calls
        #: where code calling the forward function is written out (see RecursionBackward)
        self.callee: Any = fun
        #: the user's recursive function (``fun`` itself, or the one ``fun`` is srcad's
        #: derivative code for): what refusals name
        self.recursion: Callable = recursion_of(fun) or fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """What generated code calls: in reverse mode ``forward`` and ``backward`` are
        Python functions srcad reads; forward mode calls the function's own derivative."""
        if mode != "vjp":
            return CallJVP(self.calling_function(), wrt)
        forward: Any = self.forward_function()
        if self.packed:
            forward = _TupleForward(forward, self.recursion)
        backward: Any = self.backward_for(wrt)
        count = len(own_signature(self.fun).parameters)
        if self.again():
            flat = self.backward_for(wrt, flat=True) if count > 1 else None
            backward = RecursionBackward(backward, self.recursion, len(wrt), flat, count)
        else:  # (an object all the same: code calling it, written out, keeps it a call)
            backward = RecursionBackward(backward, self.recursion, len(wrt), again=False)
        return Functions(forward, backward, self.outputs)

    def again(self) -> bool:
        """Whether the backward function's own calls get handles srcad differentiates
        again (a third derivative): for the user's function returning one value. The
        next level's (the backward function's own backward) is called as it is."""
        return recursion_of(self.fun) is None and not self.packed

    def _names(self) -> tuple[str, list[str]]:
        name = self.fun.__name__
        count = len(own_signature(self.fun).parameters)
        return (name if name.isidentifier() else "f"), [f"p{k}" for k in range(count)]

    def calling_function(self) -> Callable:
        """``def f(x, n=2): return f(x, n)``, marked as srcad's code for the recursion: what
        forward mode differentiates (code calling it differentiated again is refused,
        naming the recursion)."""
        from srcad.callables import known_caller, new_caller

        key = ("recursion call", id(self.fun))
        found = known_caller(key, self.fun)
        if found is None:
            name = self._names()[0]
            args = ", ".join(own_signature(self.fun).parameters)
            scope = {"__srcad_callee__": self.fun}
            found = new_caller(key, self.fun, name, args, f"__srcad_callee__({args})", scope)
            found.srcad_recursion = self.recursion  # type: ignore[attr-defined]
        found.__defaults__ = self.fun.__defaults__  # (as they are now)
        return found

    def forward_function(self) -> Callable:
        """``def f_forward(x, n=2): residuals = [x, n]; return f(x, n), residuals`` (one
        parameter: itself the residuals; a tuple: ``return (v0, v1), residuals``): the
        function's own parameters and defaults, for calls passing keywords."""
        from srcad.callables import known_caller, new_caller

        key = ("recursion forward", id(self.fun), id(self.callee), self.outputs, self.packed)
        found = known_caller(key, self.fun)
        if found is None:
            name = self._names()[0]
            params = list(own_signature(self.fun).parameters)
            kept = _fresh("residuals", set(params))
            args = ", ".join(params)
            lines = [f"{kept} = " + (args if len(params) == 1 else f"[{args}]")]
            value = f"__srcad_callee__({args}), {kept}"
            if self.packed:  # (unpacked: the next order differentiates each name)
                values = [_fresh(f"v{k}", {*params, kept}) for k in range(self.outputs)]
                lines.append(f"{', '.join(values)}, = __srcad_callee__({args})")
                value = f"({', '.join(values)},), {kept}"
            scope = {"__srcad_callee__": self.callee}
            found = new_caller(key, self.fun, f"{name}_forward", args, value, scope, lines)
            found.srcad_recursion = self.recursion  # type: ignore[attr-defined]
        found.__defaults__ = self.fun.__defaults__  # (as they are now)
        return found

    def backward_for(self, wrt: tuple[int, ...], flat: bool = False) -> Callable:
        """``def f_backward(residuals, g)``: the cotangents of the parameters ``wrt``, as
        ``srcad.grad`` of :meth:`dot_function` (one cotangent ``g`` per value unpacked);
        ``flat``: ``def f_backward_flat(p0, p1, g)``, the residuals one by one."""
        from srcad.api import grad
        from srcad.callables import known_caller, new_caller

        key = ("recursion backward", id(self.fun), wrt, self.outputs, self.packed, flat)
        found = known_caller(key, self.fun)
        dot = self.dot_function()
        if found is not None and getattr(found, "srcad_dot", None) is dot:
            return found
        name, params = self._names()
        given = [f"g{k}" for k in range(self.outputs)] if self.packed else ["g"]
        gradient: Any = grad(dot, wrt=wrt[0] if len(wrt) == 1 else wrt)
        if recursion_of(self.fun) is not None:
            # srcad's own function (a third derivative's): its generated gradient, called
            # as it is, since its residuals may hold integers (which srcad.grad refuses to
            # differentiate; their cotangents go nowhere)
            gradient = _GradientCode(gradient)
        lines = [f"{p} = residual(residuals, {k})" for k, p in enumerate(params)]
        if len(params) == 1:
            lines = [f"{params[0]} = residuals"]
        if flat:
            lines = []
        # (unpacked where it is called: the next order differentiates each name)
        names = ["c"] if len(wrt) == 1 else [f"c{k}" for k in range(len(wrt))]
        lines.append(f"{', '.join(names)} = __srcad_grad__({', '.join([*params, *given])})")
        result = f"({', '.join(names)},)"
        scope = {"__srcad_grad__": gradient, "residual": residual}
        taken = params if flat else ["residuals"]
        found = new_caller(
            key, self.fun, f"{name}_backward" + ("_flat" if flat else ""),
            ", ".join([*taken, *given]), result, scope, lines,
        )  # fmt: skip
        found.srcad_recursion = self.recursion  # type: ignore[attr-defined]
        found.srcad_dot = dot  # type: ignore[attr-defined]
        if len(wrt) > 1:
            # how many values it returns (``_grads[1]`` of its call: one name each)
            found.srcad_results = len(wrt)  # type: ignore[attr-defined]
        return found

    def dot_function(self) -> Callable:
        """``def f_dot(x, n, g)``: the function's own body, each ``return v`` made
        ``return np.sum(v * g)`` (``return a, b``: ``np.sum(a * g0) + np.sum(b * g1)``)
        and its calls of itself calls of this object. One level of the recursion is
        written out here, always: the inliner may leave the outermost call of the
        function a call (whose vjp would be this function's gradient again, without
        end), and cannot write out tuples returned from several places."""
        key = ("recursion dot", id(self.fun), self.outputs, self.packed)
        found = _DOTS.get(key)
        if found is not None and getattr(found, "__srcad_read__", None) == _reads(self.fun):
            return found
        tree = copy.deepcopy(parse_function(self.fun).tree)
        taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        taken |= set(own_signature(self.fun).parameters)
        numpy_name = _fresh("__srcad_np__", taken)
        given = [_fresh(f"g{k}" if self.packed else "g", taken) for k in range(self.outputs)]
        for node in _own_nodes(tree):
            if isinstance(node, gast.Return) and node.value is not None:
                values = node.value.elts if self.packed else [node.value]
                node.value = _dotted(values, given, numpy_name)
        name = self.fun.__name__ if self.fun.__name__.isidentifier() else "f"
        tree.name = f"{name}_dot"
        tree.decorator_list, tree.returns, tree.type_comment = [], None, None
        tree.args.defaults = []  # (every argument is passed)
        for arg in tree.args.args:
            arg.annotation = None
        tree.args.args += [gast.Name(g, gast.Param(), None, None) for g in given]
        code = self.fun.__code__
        scope = dict(self.fun.__globals__)
        for free, cell in zip(code.co_freevars, self.fun.__closure__ or ()):
            try:
                scope[free] = cell.cell_contents
            except ValueError:
                pass  # (not yet assigned: a NameError where the copy reads it, as in f)
        for free in (*code.co_names, *code.co_freevars):
            if scope.get(free) is self.fun:
                scope[free] = self  # its recursive calls: this object's handles
        scope[numpy_name] = np
        text = to_source(gast.Module(body=[tree], type_ignores=[]))
        found = compile_source(text, scope, f"dot of {name}")[tree.name]
        # what the copy read of the function's module and cells, as it was: a change makes
        # a new copy (the copy's globals are its own dict)
        found.__srcad_read__ = _reads(self.fun)
        found.srcad_recursion = self.recursion
        _DOTS[key] = found
        return found

    def __repr__(self) -> str:
        return f"<srcad.RecursiveCall of {self.fun.__qualname__}>"


class RecursionBackward:
    """The backward function of a :class:`RecursiveCall` (``fun(residuals, g)``, which
    returns a tuple of cotangents), called from code differentiated again: an object, so
    that an inliner writing out that code keeps it a call. In reverse mode its handle is
    that of ``fun``'s own :class:`RecursiveCall` (one level of it written out, its calls
    of the recursion's functions calls again), so that the code of a second derivative
    is differentiated again; for a function of several parameters, through ``flat``
    (``fun`` taking the ``count`` residuals one by one: no list to differentiate) and
    functions that pass them one by one. Not ``again``: the handles of ``fun`` itself."""

    def __init__(
        self,
        fun: Callable,
        recursion: Callable,
        results: int | None,
        flat: Callable | None = None,
        count: int = 1,
        again: bool = True,
    ) -> None:
        self.fun = fun
        self.recursion = recursion
        self.flat = flat
        self.count = count
        self.again = again
        self.__name__ = fun.__name__
        self.__qualname__ = fun.__qualname__
        #: how many cotangents it returns: its calls unpack them into as many names
        #: (normalize/unpacking.py), whose own cotangents come one by one (one a list's,
        #: one an array's, or a zero)
        if results is not None:
            self.srcad_results = results
        self._calls: dict[bool, RecursiveCall] = {}
        self._flat_handles: dict[tuple[int, ...], Functions] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""
        if mode != "vjp":
            return CallJVP(self.fun, wrt)
        if not self.again:
            return CallVJP(self.fun, wrt)
        if self.flat is None:
            return self._call_of(self.fun, self).srcad_handle(mode, wrt)
        return self._flat_handle(wrt)

    def _call_of(self, fun: Callable, callee: Any) -> RecursiveCall:
        """The :class:`RecursiveCall` of ``fun`` (this function, or its flat form), whose
        forward function calls ``callee`` (an object: written out, it stays a call)."""
        found = self._calls.get(fun is self.fun)
        if found is None:
            found = RecursiveCall(fun, self.srcad_results, packed=True)
            found.callee = callee
            self._calls[fun is self.fun] = found
        return found

    def _flat_handle(self, wrt: tuple[int, ...]) -> Functions:
        """``forward(residuals, g)`` and ``backward(kept, g)`` passing the residuals to the
        flat function's handle one by one, and their cotangents back as a list."""
        from srcad.callables import new_caller

        assert self.flat is not None
        found = self._flat_handles.get(wrt)
        if found is not None:
            return found
        count = self.count
        flat = RecursionBackward(self.flat, self.recursion, self.srcad_results)
        inner = self._call_of(self.flat, flat)
        positions = flat_wrt(count, wrt)
        handle = inner.srcad_handle("vjp", positions)
        name = self.__name__
        params = [f"p{k}" for k in range(count)]
        given = [f"g{k}" for k in range(inner.outputs)]  # (one per cotangent it returns)
        lines = [f"{p} = residual(residuals, {k})" for k, p in enumerate(params)]
        lines.append(f"value, kept = __srcad_forward__({', '.join([*params, 'g'])})")
        scope = {"__srcad_forward__": handle.forward, "residual": residual}
        key = ("recursion flat forward", id(self.flat), positions)
        forward = new_caller(
            key, self.flat, f"{name}_forward", "residuals, g", "value, kept", scope, lines
        )
        names = [f"c{k}" for k in range(len(positions))]
        lines = [f"{', '.join(names)}, = __srcad_backward__(kept, {', '.join(given)})"]
        results = []
        if 0 in wrt:
            lines.append(f"cotangents = [{', '.join(names[:count])}]")
            results.append("cotangents")
        if 1 in wrt:
            results.append(names[-1])
        scope = {"__srcad_backward__": handle.backward}
        key = ("recursion flat backward", id(self.flat), positions)
        backward = new_caller(
            key, self.flat, f"{name}_backward", ", ".join(["kept", *given]),
            f"({', '.join(results)},)", scope, lines,
        )  # fmt: skip
        for made in (forward, backward):
            made.srcad_recursion = self.recursion  # type: ignore[attr-defined]
        # one name per cotangent where it is called (a list's and an array's, whose tuple
        # NumPy cannot hold); an object, so that code calling it, written out, keeps it a
        # call (a fourth derivative: refused by name)
        found = self._flat_handles[wrt] = Functions(
            RecursionBackward(forward, self.recursion, None, again=False),
            RecursionBackward(backward, self.recursion, len(wrt), again=False),
            inner.outputs,
        )
        return found

    def __repr__(self) -> str:
        return f"<srcad.RecursionBackward {self.__qualname__} of {self.recursion.__qualname__}>"


class _GradientCode:
    """``srcad.grad(dot)`` called as its generated code (made on first call: the dot's
    gradient may be being transformed when this is made), which takes integers too."""

    def __init__(self, derivative: Any) -> None:
        self.derivative = derivative
        self.__name__ = self.__qualname__ = derivative.__name__

    def srcad_function(self) -> Callable:
        """The generated gradient, which srcad differentiates again."""
        return self.derivative.srcad_function()

    def __call__(self, *args: Any) -> Any:
        return self.srcad_function()(*args)


class _TupleForward:
    """The forward function of a :class:`RecursiveCall` whose value is a tuple: ``fun``
    returns ``((v0, v1), residuals)``. A plain reverse-mode handle would count three
    values where the code calling it unpacks two, so its handle takes the values'
    cotangent as one (see :class:`TupleForwardVJP`)."""

    def __init__(self, fun: Callable, recursion: Callable) -> None:
        self.fun = fun
        self.recursion = recursion
        self.__name__ = fun.__name__
        self.__qualname__ = fun.__qualname__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""
        if mode == "vjp":
            return TupleForwardVJP(CallVJP(self.fun, wrt), self.recursion)
        return CallJVP(self.fun, wrt)


def recursion_of(func: Any) -> Callable | None:
    """The user's recursive function whose derivative ``func`` is part of, if it is."""
    return getattr(func, "srcad_recursion", None)


def _reads(fun: Callable) -> tuple:
    """The function's code, and what each name it reads denotes now (globals by name,
    closure cells by contents): what the dot function copied, alive while it is."""
    code = fun.__code__
    namespace = fun.__globals__
    cells: list[int | None] = []
    for cell in fun.__closure__ or ():
        try:
            cells.append(id(cell.cell_contents))
        except ValueError:
            cells.append(None)
    named = tuple(id(namespace.get(n, _reads)) for n in code.co_names)
    return (code, named, tuple(cells))


#: the dot functions made, by function and count of values
_DOTS: dict[tuple, Callable] = {}


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _own_nodes(tree: gast.FunctionDef) -> list[gast.AST]:
    """The nodes of the function's body, not of functions or lambdas inside it."""
    found: list[gast.AST] = []
    stack: list[gast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            continue
        found.append(node)
        stack.extend(gast.iter_child_nodes(node))
    return found


def _dotted(values: list[gast.expr], given: list[str], numpy_name: str) -> gast.expr:
    """``np.sum(a * g0) + np.sum(b * g1)``."""

    def load(name: str) -> gast.Name:
        return gast.Name(name, gast.Load(), None, None)

    terms = [
        gast.Call(
            func=gast.Attribute(value=load(numpy_name), attr="sum", ctx=gast.Load()),
            args=[gast.BinOp(left=value, op=gast.Mult(), right=load(g))],
            keywords=[],
        )
        for value, g in zip(values, given)
    ]
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return total


def recursive_call(fun: Any, tree: gast.FunctionDef, call: gast.Call, outputs: int) -> Any:
    """The :class:`RecursiveCall` of ``fun`` (parsed as ``tree``) for ``call``, whose
    value is unpacked into ``outputs`` names; None (the call then stays a plain call)
    unless ``fun`` has only positional-or-keyword parameters, the call binds them without
    stars, and ``fun`` returns one value (no tuple or list display) or, unpacked into
    ``outputs`` names, a tuple display of that many values at each return. Never for
    the functions of a recursion's derivative (a third derivative: refused by name)."""
    count = _returned_count(tree)
    if (
        not inspect.isfunction(fun)
        or recursion_of(fun) is not None
        or any(isinstance(a, gast.Starred) for a in call.args)
        or any(k.arg is None for k in call.keywords)
        or count not in ((outputs, True), (1, False))
        or (count == (1, False) and outputs != 1)
    ):
        return None
    try:
        signature = own_signature(fun)
        signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except (TypeError, ValueError):
        return None
    if any(p.kind not in _KINDS for p in signature.parameters.values()):
        return None
    return RecursiveCall(fun, outputs, packed=count[1])


def returns_tuples(tree: gast.FunctionDef) -> bool:
    """Whether the function returns tuple displays from more than one ``return``."""
    returns = [n for n in _own_nodes(tree) if isinstance(n, gast.Return)]
    return len(returns) > 1 and any(isinstance(n.value, gast.Tuple) for n in returns)


def _returned_count(tree: gast.FunctionDef) -> tuple[int, bool] | None:
    """How many values each ``return`` of the function (not of a function inside it)
    gives, and whether as a tuple display: ``(1, False)`` where none returns a tuple or
    list display, ``(k, True)`` where each returns a tuple display of ``k`` values; None
    for anything else."""
    counts = set()
    for node in _own_nodes(tree):
        if isinstance(node, gast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, gast.Tuple) and not any(
                isinstance(e, gast.Starred) for e in value.elts
            ):
                counts.add((len(value.elts), True))
            elif isinstance(value, (gast.Tuple, gast.List)):
                return None
            else:
                counts.add((1, False))
    return counts.pop() if len(counts) == 1 else None
