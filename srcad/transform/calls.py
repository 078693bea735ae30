"""Calls to the user's own Python functions: each callee is transformed into a forward and
backward pair of its own (cached per callee and per differentiated parameters), and the
caller calls them, so helpers, closures, ``functools.partial`` and recursion all work.

The handles generated code calls live in srcad/runtime/calls.py (generated code depends
on the runtime alone); this module builds them, gives them the transformer they call on
first use, and holds the objects the user's code meets (custom_vjp, custom_jvp,
checkpoint) with what code differentiated again makes of them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np

from srcad import pytree
from srcad.adjoints.scipy_table import is_scipy
from srcad.runtime import calls as runtime_calls
from srcad.runtime.calls import (  # noqa: F401 (re-exported: the transformer builds them)
    BuildInProgress,
    CallJVP,
    CallVJP,
    CheckpointCall,
    CustomCall,
    CustomJVPCall,
    DictResults,
    FlatCall,
    FlatResidualsVJP,
    JVPFunction,
    LiveSignature,
    MethodJVP,
    MethodVJP,
    TangentRuleCall,
    TreeResidualsJVP,
    TreeResidualsVJP,
    TreeResultVJP,
    TupleResultVJP,
    call_arguments,
    flat_call,
    flat_wrt,
    own_signature,
    positional,
)
from srcad.runtime.recursive_handles import Refused
from srcad.runtime.tangents import zero_tangent
from srcad.transform.custom_residuals import residuals_refused
from srcad.transform.libraries import is_library_function

P = ParamSpec("P")
R = TypeVar("R")
J = TypeVar("J", bound=Callable[..., Any])


class CustomVJP(Generic[P, R]):
    """A function with a derivative written by hand, JAX-style (``srcad.custom_vjp``).

    ``fwd(*args)`` returns ``(out, residuals)``; ``bwd(residuals, g)`` returns a tuple with
    one cotangent per positional argument (``None`` for a non-differentiable one).
    """

    def __init__(self, fun: Callable[P, R]) -> None:
        self.fun = fun
        self.fwd: Callable[..., tuple[Any, Any]] | None = None
        self.bwd: Callable[[Any, Any], Any] | None = None
        functools.update_wrapper(self, fun)

    def defvjp(
        self, fwd: Callable[P, tuple[Any, Any]], bwd: Callable[[Any, Any], Any]
    ) -> CustomVJP[P, R]:
        """Give the forward and backward functions; returns the function itself."""
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fun(*args, **kwargs)


class CustomVJPAgain(CustomVJP):
    """A :class:`CustomVJP` function called in code whose gradient is differentiated again
    (normalize/helpers.py puts it there): its gradient code calls the user's ``fwd`` and
    ``bwd`` as functions of the user's, so the next transformation differentiates them
    (as JAX does at second order through a custom vjp)."""

    def __init__(self, custom: CustomVJP, outputs: int = 1) -> None:
        super().__init__(custom.fun)
        self.custom = custom
        self.fwd, self.bwd = custom.fwd, custom.bwd
        #: how many names the call's result is unpacked into (one cotangent each)
        self.outputs = outputs

    def call_functions(self, wrt: tuple[int, ...]) -> tuple[Callable, Callable]:
        """The forward and backward functions its :class:`CustomCall` calls for ``wrt``:
        ``fwd`` and ``bwd`` picked for ``wrt``, in objects whose reverse-mode handles take
        residuals of any pytree structure (``fwd`` returning ``out, (t, q)``, as in JAX)."""
        backward = _TreeResidualsBackward(self.backward_for(wrt, self.outputs), self, wrt)
        forward = _TreeResultForward(self.fwd)  # type: ignore[arg-type]
        return _made_for(self.custom, forward), _made_for(self.custom, backward)

    def backward_for(
        self, wrt: tuple[int, ...], outputs: int = 1, residuals: Any = None, out: bool = False
    ) -> Callable:
        """``def bwd_wrt(residuals, g): c0, c1 = bwd(residuals, g); return (c1,)``: the
        user's ``bwd`` picked for ``wrt``, a function srcad reads (one cotangent per
        positional parameter of ``fun``, checked as the first-order handle does). For a
        ``fun`` unpacked into ``outputs`` names it takes one cotangent each (``g0, g1``)
        and hands ``bwd`` their tuple. Given the residuals' pytree structure, it takes
        them leaf by leaf (``def bwd_wrt_flat(r0, r1, g)``) and hands ``bwd`` the tree.
        ``out``: for code writing it out (from the third derivative on), which passes
        displays: ``bwd`` is called with ``(g0, g1)`` itself."""
        from srcad.callables import known_caller, new_caller

        key = ("custom_vjp backward", id(self.bwd), id(self.fun), wrt, outputs, residuals, out)
        found = known_caller(key, self.bwd)
        if found is not None:
            return found
        count = len(positional(self.fun))
        name = getattr(self.bwd, "__name__", "bwd")
        name = f"{name}_wrt" if name.isidentifier() else "bwd_wrt"
        message = (
            f"the bwd of {self.__name__} must return a tuple with one cotangent per "
            f"positional argument ({count})"
        )
        given = [f"g{k}" for k in range(outputs)] if outputs != 1 else ["g"]
        taken = ["residuals"]
        structures: tuple = ()
        if residuals is not None:
            taken = [f"r{k}" for k in range(pytree.count(residuals))]
            structures += ((0, residuals),)
            name += "_flat"
        if outputs != 1 and not out:
            # the cotangents passed leaf by leaf and made their tuple for ``bwd`` (a tuple
            # display as an argument would carry no derivative)
            structures += ((1, pytree.flatten(tuple(range(outputs)))[1]),)
        callee: Any = FlatCall(self.bwd, structures, 2) if structures else self.bwd
        call = f"__srcad_callee__({', '.join([*taken, *given])})"
        if outputs != 1 and out:
            call = f"__srcad_callee__({', '.join(taken)}, ({', '.join(given)},))"
        if count == 1:  # (not ``c0, = c``, which forward mode reads as one value)
            lines = [
                f"c = {call}",
                "if not isinstance(c, tuple) or len(c) != 1:",
                f"    raise TypeError({message!r})",
            ]
            picked = "c[0]"
        elif out:
            # written out, nothing runs it first: the tuple checked here (unpacking an
            # array would take its rows)
            names = [f"c{k}" for k in range(count)]
            lines = [
                f"c = {call}",
                f"if not isinstance(c, tuple) or len(c) != {count}:",
                f"    raise TypeError({message!r})",
                f"{', '.join(names)} = c",
            ]
            picked = ", ".join(names[k] for k in wrt)
        else:
            # unpacked in the call itself: one name per value ``bwd`` returns, which the
            # next transformation checks against what it returns (the tuple's type is
            # checked where it runs first, by CustomCall or _TreeResidualsBackward)
            names = [f"c{k}" for k in range(count)]
            lines = [f"{', '.join(names)} = {call}"]
            picked = ", ".join(names[k] for k in wrt)
        scope = {"__srcad_callee__": callee}
        params = ", ".join([*taken, *given])
        return new_caller(key, self.bwd, name, params, f"({picked},)", scope, lines)


class CustomJVP(Generic[P, R]):
    """A function with a forward-mode derivative written by hand, JAX-style
    (``srcad.custom_jvp``): ``jvp(primals, tangents)`` returns ``(out, tangent_out)``,
    linear in the tangents. Reverse mode transposes it (the vjp of ``jvp`` with respect
    to the tangents)."""

    def __init__(self, fun: Callable[P, R]) -> None:
        self.fun = fun
        self.jvp: Callable[..., tuple[Any, Any]] | None = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp: J) -> J:
        """Give the jvp function (usable as a decorator); returns it."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fun(*args, **kwargs)


class CustomJVPAgain(CustomJVP):
    """A :class:`CustomJVP` function called in code whose gradient is differentiated again
    (normalize/helpers.py puts it there, for a call passing every positional parameter):
    its gradient code calls functions srcad reads, so the next transformation
    differentiates the user's ``jvp`` (as JAX does): the value by the function itself
    (whose derivative is its rule), the transposed rule as ``srcad.grad`` of
    ``sum(tangent_out * g)`` with respect to the tangents, at zero tangents."""

    def __init__(self, custom: CustomJVP) -> None:
        super().__init__(custom.fun)
        self.custom = custom
        self.jvp = custom.jvp

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls: a :class:`CustomJVPCall` (reverse mode: the
        functions of :meth:`call_functions`); in forward mode one whose call the next
        transformation reads as :meth:`tangent_function` (the user's ``jvp``)."""
        call = CustomJVPCall(self, wrt)
        if mode == "vjp":
            return call
        return TangentRuleCall(self.tangent_function(wrt), call, self.custom)

    def tangent_function(self, wrt: tuple[int, ...]) -> Callable:
        """``def f_tangent(tangents, a, b): return jvp((a, b), (tangents[0], zero_tangent(b)))``
        for ``wrt == (0,)``: how forward-mode code calls the rule (``tangents`` holds those
        of the parameters ``wrt``), as a function srcad reads."""
        from srcad.callables import known_caller, new_caller

        key = ("custom_jvp tangent", id(self.custom), id(self.jvp), wrt)
        params = positional(self.fun)
        found = known_caller(key, self.jvp)
        if found is None:
            name = self._names()[0]
            given = "tangents"
            while given in params:
                given = "_" + given
            picked = dict(zip(wrt, range(len(wrt))))
            tangents = [
                f"{given}[{picked[k]}]" if k in picked else f"zero_tangent({p})"
                for k, p in enumerate(params)
            ]
            scope = {"__srcad_callee__": self.jvp, "zero_tangent": zero_tangent}
            call = f"__srcad_callee__(({', '.join(params)},), ({', '.join(tangents)},))"
            found = new_caller(
                key, self.jvp, f"{name}_tangent", ", ".join([given, *params]), call, scope
            )
        found.__defaults__ = self.fun.__defaults__  # (as they are now)
        return found

    def call_functions(self, wrt: tuple[int, ...]) -> tuple[Callable, Callable]:
        """The forward and backward functions its :class:`CustomJVPCall` calls for ``wrt``."""
        forward, backward = self.forward_function(), self.backward_for(wrt)
        if inspect.isfunction(forward):  # (one parameter: functions of their own)
            forward = _Kept(forward)
        if inspect.isfunction(backward):
            backward = _Kept(backward)
        return _made_for(self.custom, forward), _made_for(self.custom, backward)

    def _names(self) -> tuple[str, list[str]]:
        name = getattr(self.custom, "__name__", "f")
        return (name if name.isidentifier() else "f"), [
            f"p{k}" for k in range(len(positional(self.fun)))
        ]

    def forward_function(self) -> Callable:
        """``def f_forward(a, b): return f(a, b), (a, b)`` (``f(a), a`` for one parameter):
        the parameters' own names and defaults, for calls passing keywords. For several
        parameters, in an object whose reverse-mode handle takes the cotangent of the
        residuals' tuple as one value (:class:`_TupleResultForward`)."""
        from srcad.callables import known_caller, new_caller

        params = positional(self.fun)
        key = ("custom_jvp forward", id(self.custom), id(self.fun))
        found = known_caller(key, self.custom)
        if found is None:
            name = self._names()[0]
            args = ", ".join(params)
            scope = {"__srcad_callee__": self.custom}
            # (one argument: itself the residuals, which reverse over reverse follows)
            value = f"__srcad_callee__({args}), " + (args if len(params) == 1 else f"({args},)")
            found = new_caller(key, self.custom, f"{name}_forward", args, value, scope)
        found.__defaults__ = self.fun.__defaults__  # (as they are now)
        return found if len(params) == 1 else _TupleResultForward(found)

    def backward_for(self, wrt: tuple[int, ...]) -> Callable:
        """``def f_transposed(residuals, g)``: the cotangents of ``wrt`` (see class doc).
        For several parameters, in an object whose reverse-mode handle passes the
        residuals one by one to ``def f_transposed_flat(p0, p1, g)`` (the same body)."""
        from srcad.api import grad
        from srcad.callables import known_caller, new_caller

        key = ("custom_jvp backward", id(self.custom), id(self.jvp), wrt)
        name, params = self._names()
        if not wrt:
            # no argument of the call varies here (code differentiated again can call it
            # with constants only): no cotangents to give
            found = known_caller(key, self.jvp)
            if found is None:
                found = new_caller(key, self.jvp, f"{name}_transposed", "residuals, g", "()", {})
            return found
        tangents = [f"t{k}" for k in range(len(params))]
        dot_scope = {"__srcad_callee__": self.jvp, "np": np}
        dot = new_caller(
            ("custom_jvp dot", id(self.custom), id(self.jvp)),
            self.jvp,
            f"{name}_tangent_dot",
            ", ".join([*params, *tangents, "g"]),
            "np.sum(tangent * g)",
            dot_scope,
            [f"_, tangent = __srcad_callee__(({', '.join(params)},), ({', '.join(tangents)},))"],
        )
        picked = tuple(len(params) + k for k in wrt)
        lines = [f"{t} = zero_tangent({p})" for p, t in zip(params, tangents)]
        names = ["c"] if len(wrt) == 1 else [f"c{k}" for k in range(len(wrt))]
        lines.append(f"{', '.join(names)} = __srcad_grad__({', '.join([*params, *tangents, 'g'])})")
        result = f"({', '.join(names)},)"
        gradient = _WrittenAgain(grad(dot, wrt=picked[0] if len(picked) == 1 else picked))
        scope = {"__srcad_grad__": gradient, "zero_tangent": zero_tangent}
        if len(params) == 1:
            found = known_caller(key, self.jvp)
            if found is None:
                unpack = [f"{params[0]} = residuals"]
                found = new_caller(
                    key, self.jvp, f"{name}_transposed", "residuals, g", result, scope,
                    unpack + lines,
                )  # fmt: skip
            return found
        unpacked = known_caller(key, self.jvp)
        if unpacked is None:
            unpack = [f"{p} = residuals[{k}]" for k, p in enumerate(params)]
            unpacked = new_caller(
                key, self.jvp, f"{name}_transposed", "residuals, g", result, scope, unpack + lines
            )
        flat_key = ("custom_jvp flat backward", *key[1:])
        flat = known_caller(flat_key, self.jvp)
        if flat is None:
            flat = new_caller(
                flat_key, self.jvp, f"{name}_transposed_flat", ", ".join([*params, "g"]),
                result, scope, lines,
            )  # fmt: skip
        return _FlatResidualsBackward(unpacked, flat, len(params), len(wrt))


class _WrittenAgain:
    """A derivative srcad made (``derivative``) of a function that calls the user's rule
    with tuples of primals and tangents, which only code written out takes: called, it
    runs its code generated to be differentiated again (a custom_jvp function's
    transposed rule runs it when its backward pass runs); the next transformation
    writes that code out."""

    def __init__(self, derivative: Any) -> None:
        self.derivative = derivative
        self.__name__ = getattr(derivative, "__name__", "gradient")

    def srcad_function(self) -> Callable:
        """The generated code (see ``Derivative.srcad_function``)."""
        return self.derivative.srcad_function()

    def __call__(self, *args: Any) -> Any:
        return self.derivative.srcad_function()(*args)


class _Kept:
    """A function srcad made for a custom rule, called from code differentiated again: an
    object, so that an inliner writing out that code keeps it a call (its tuple results
    bound to names), whose handles are those of ``fun`` itself (subclasses wrap the
    reverse-mode one, see ``reverse``)."""

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        self.__name__ = getattr(fun, "__name__", "fwd")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def srcad_function(self) -> Callable:
        """``fun``, which code differentiated again (third order on) writes out."""
        return self.fun

    @staticmethod
    def reverse(handle: CallVJP) -> Any:
        """The reverse-mode handle generated code calls, around ``fun``'s own."""
        return handle

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""
        if mode == "vjp":
            return _handle_of(self, self.reverse(CallVJP(self.fun, wrt)))
        return _handle_of(self, CallJVP(self.fun, wrt))


class _TupleResultForward(_Kept):
    """The forward function of a custom_jvp function of several parameters in code
    differentiated again: ``fun`` returns ``(value, (a, b))``, which generated code binds
    to two names; in reverse mode its handle takes the residuals' cotangent as one tuple
    (the function itself returns three values: the value, then each parameter)."""

    reverse = staticmethod(TupleResultVJP)


class _FlatResidualsBackward:
    """The transposed rule of a custom_jvp function of several parameters in code
    differentiated again: ``fun(residuals, g)`` as generated code calls it; in reverse
    mode its handle passes the residuals to ``flat(p0, p1, g)`` one by one and returns
    their cotangents as one tuple."""

    def __init__(self, fun: Callable, flat: Callable, count: int, results: int) -> None:
        self.fun = fun
        self.flat = flat
        self.count = count
        #: how many values it returns (``_grads[1]`` of its call: one name each)
        self.srcad_results = results
        self.__name__ = fun.__name__
        self.__qualname__ = fun.__qualname__

    def __call__(self, residuals: Any, g: Any) -> Any:
        return self.fun(residuals, g)

    def srcad_function(self) -> Callable:
        """``fun``, which code differentiated again (third order on) writes out."""
        return self.fun

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""
        if mode != "vjp":
            return _handle_of(self, CallJVP(self.fun, wrt))
        inner = CallVJP(self.flat, flat_wrt(self.count, wrt))
        return _handle_of(self, FlatResidualsVJP(inner, self.count, wrt, self.srcad_results))


class _TreeResultForward(_Kept):
    """A custom_vjp ``fwd`` in code differentiated again: it returns ``(out, residuals)``,
    which generated code binds to two names, each perhaps a tuple; in reverse mode its
    handle flattens their cotangents to the leaves the transformed ``fwd`` returns."""

    reverse = staticmethod(TreeResultVJP)

    def srcad_function(self) -> Callable:
        """``fwd`` itself, when the code differentiating it again can write it out: not
        for residuals holding a dict or list (a TypeError, which leaves it a call)."""
        reason = residuals_refused(self.fun)
        if reason is not None:
            raise TypeError(reason)
        return self.fun


class _TreeResidualsBackward:
    """A custom_vjp ``bwd`` picked for some parameters (``fun(residuals, g)``) in code
    differentiated again: in reverse mode its handle passes the residuals leaf by leaf,
    whatever pytree they are, and returns their cotangent in the same structure."""

    def __init__(self, fun: Callable, custom: CustomVJPAgain, wrt: tuple[int, ...]) -> None:
        self.fun = fun
        self.custom = custom
        self.wrt = wrt
        self.outputs = custom.outputs
        #: what runs the call (checking what ``bwd`` returns, as at first order)
        self.call = CustomCall(custom.custom, wrt)
        #: how many values it returns (``_grads[1]`` of its call: one name each)
        self.srcad_results = len(wrt)
        self.__name__ = fun.__name__
        self.__qualname__ = fun.__qualname__

    def __call__(self, residuals: Any, *cotangents: Any) -> Any:
        return self.call.backward(residuals, *cotangents)

    def srcad_function(self) -> Callable:
        """``bwd`` picked for the parameters, as code writing it out calls it."""
        return self.custom.backward_for(self.wrt, self.outputs, out=True)

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""

        def flat(treedef: Any) -> Callable:
            return self.custom.backward_for(self.wrt, self.outputs, treedef)

        if mode != "vjp":
            return _handle_of(self, TreeResidualsJVP(flat, wrt, self.call.backward))
        return _handle_of(self, TreeResidualsVJP(flat, wrt, self.srcad_results))


def _made_for(custom: Any, obj: Any) -> Any:
    """``obj`` (a function srcad reads in code differentiated again) marked as made for
    the rule of ``custom``: what the next order makes of it is named after ``custom``."""
    obj.__srcad_custom__ = custom
    return obj


def _handle_of(owner: Any, handle: Any) -> Any:
    """``handle`` marked as made for the same custom rule as ``owner`` (if any)."""
    custom = getattr(owner, "__srcad_custom__", None)
    if custom is not None:
        handle.srcad_custom = custom
    return handle


class Checkpointed(Generic[P, R]):
    """A function whose calls keep only their arguments for the backward pass and run
    again there (``srcad.checkpoint``): memory for time."""

    def __init__(self, fun: Callable[P, R]) -> None:
        self.fun = fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fun(*args, **kwargs)


def plain_function(obj: Any) -> bool:
    """Whether calling ``obj`` runs a Python function of the user's as it is (no partial,
    method, decorator or handle in between) that takes no ``*args``: one whose parameters
    a call can fill leaf by leaf (FlatCall)."""
    if not inspect.isfunction(obj) or user_callee(obj) != (obj, (), {}):
        return False
    kinds = [p.kind for p in own_signature(obj).parameters.values()]
    return inspect.Parameter.VAR_POSITIONAL not in kinds


def user_callee(obj: Any) -> tuple[Callable, tuple, dict] | None:
    """``(function, leading args, keywords)`` if calling ``obj`` runs a user's Python function."""
    if isinstance(obj, FlatCall):
        return obj.fun, (), {}  # its handles rebuild and flatten the containers
    if isinstance(obj, DictResults):
        return user_callee(obj.fun)  # its handles hand on the dict's values
    if isinstance(obj, (runtime_calls.JVPFunction, runtime_calls.Composition)):
        return obj.srcad_function(), (), {}  # srcad.jvp (jacobian, ...) inside: code to read
    if isinstance(obj, Refused):
        return obj.fun, (), {}  # its srcad_handle refuses a further derivative by name
    module = getattr(obj, "__module__", None) or ""  # None for np.add.reduce
    if module.startswith("srcad.runtime") or generated_call(obj):
        return None  # srcad's own helpers have rules, or no derivative at all
    if is_library_function(obj):
        return None  # SciPy's, NumPy's, the standard library's: rules or none, never source
    if isinstance(obj, (CustomVJP, CustomJVP)):
        return obj.fun, (), {}
    if isinstance(obj, Checkpointed):
        return user_callee(obj.fun)
    if callable(getattr(obj, "srcad_handle", None)):
        return obj.fun, (), {}  # it supplies its own handles (srcad.elementwise)
    if callable(getattr(obj, "srcad_function", None)):
        # a derivative made by srcad, called from code being differentiated
        return obj.srcad_function(), (), {}
    if isinstance(obj, functools.partial):
        inner = user_callee(obj.func)
        if inner is None:
            return None
        func, args, kwargs = inner
        return func, (*args, *obj.args), {**kwargs, **obj.keywords}
    if inspect.ismethod(obj) and inspect.isfunction(obj.__func__):
        return obj.__func__, (obj.__self__,), {}
    from srcad.callables import unwrapped

    inner = unwrapped(obj)  # a cache, or a decorator's wrapper that only forwards
    if inner is not obj:
        return user_callee(inner)
    if inspect.isfunction(obj):
        return obj, (), {}
    return None


def _method(obj: Any, name: str, where: tuple = ()) -> Callable:
    """The Python function ``type(obj).name``, or a clear error (located at ``where``, the
    call's file, line, column and text) when there is none."""
    func = getattr(type(obj), name, None)
    if is_scipy(func):
        from srcad.errors import NoAdjointError

        filename, lineno, col, text = where or (None, None, None, None)
        raise NoAdjointError(
            f"no rule for {type(obj).__module__}.{type(obj).__name__}.{name}: srcad does not "
            "differentiate methods of SciPy objects made at run time (such as a frozen "
            "distribution); call the module-level function (scipy.stats.norm.logpdf(x, loc, "
            "scale)) instead",
            filename=filename,
            lineno=lineno,
            col=col,
            source_line=text,
        )
    if not inspect.isfunction(func):
        from srcad.errors import NoAdjointError
        from srcad.transform.hints import RULES_HELP

        raise NoAdjointError(
            f"{type(obj).__name__}.{name}() has no derivative rule and is not a Python "
            "function srcad can transform; register one with @srcad.adjoint (forward mode: "
            f"@srcad.tangent), or wrap the call in a function given srcad.custom_vjp; "
            f"{RULES_HELP}"
        )
    static = isinstance(inspect.getattr_static(type(obj), name, None), staticmethod)
    _refuse_changed_arguments(func, type(obj).__name__, name, where, static)
    return func


def _refuse_changed_arguments(
    func: Callable, owner: str, name: str, where: tuple, static: bool = False
) -> None:
    """A method changing an array argument in place is refused, as a function of the
    user's is where it is called (its derivative would change a copy, where the function
    changes the caller's array); the class, so the method, is known only now."""
    from srcad.errors import UnsupportedConstructError
    from srcad.transform.analyses.mutators import changed_parameters

    params = list(inspect.signature(func).parameters)
    for param, (_, place) in changed_parameters(func).items():
        if params and param == params[0] and not static:
            continue  # (the object itself: its own state)
        filename, lineno, col, text = where or (None, None, None, None)
        raise UnsupportedConstructError(
            f"{owner}.{name}() changes its argument '{param}' in place ({place}); srcad "
            "differentiates methods that leave their arguments unchanged: return a new "
            "array instead",
            filename=filename,
            lineno=lineno,
            col=col,
            source_line=text,
        )


def generated_call(obj: Any) -> str | None:
    """For a method of the handle through which generated code calls a user's function
    (``f_vjp.forward``), or of a forward-mode handle itself: that function's name."""
    handle = obj if _is_handle(obj) else getattr(obj, "__self__", None)
    if type(handle).__module__ not in (runtime_calls.__name__, __name__):
        return None
    func = getattr(handle, "func", None) or getattr(getattr(handle, "inner", None), "func", None)
    return getattr(func, "__name__", None) or getattr(handle, "name", "a method")


def _is_handle(obj: Any) -> bool:
    """Whether generated code calls ``obj`` itself as a forward-mode handle."""
    return isinstance(obj, (CallJVP, TreeResidualsJVP, TangentRuleCall))


#: why generated code's handling of a list gradient cannot be differentiated again
LIST_GRADIENT_HINT = (
    " (this is generated code handling the gradient of a list, with a helper srcad cannot "
    "differentiate again yet; please report it)"
)


def missing_rule_hint(callee: Any) -> str:
    """Why an op has no rule, when it is generated code's call of a user function or of a
    runtime helper for list gradients."""
    if getattr(callee, "__module__", None) == "srcad.runtime.lists":
        return LIST_GRADIENT_HINT
    name = generated_call(callee)
    if name is None:
        return ""
    from srcad.transform.normalize.helpers import not_inlined_reason

    handle = callee if _is_handle(callee) else getattr(callee, "__self__", None)
    func = getattr(handle, "func", None) or getattr(getattr(handle, "inner", None), "func", None)
    again = (
        getattr(handle, "srcad_custom", None)
        or getattr(getattr(handle, "inner", None), "srcad_custom", None)
        or getattr(func, "__srcad_custom__", None)
    )
    reason = not_inlined_reason(func) if inspect.isfunction(func) else None
    if reason is not None and reason.startswith("it calls itself") and _positional_only(func):
        # a recursion differentiated again through its RecursiveCall: what it allows
        from srcad.runtime.recursive_handles import not_again_reason

        reason = not_again_reason(func)
    if again is not None:
        kind = "custom_jvp" if isinstance(again, CustomJVP) else "custom_vjp"
        if kind == "custom_vjp" and inspect.isfunction(again.fwd):
            reason = residuals_refused(again.fwd) or reason
        why = f" because {reason}" if reason else ""
        need = (
            "; a custom_vjp's residuals must be arrays, numbers and tuples of them"
            if kind == "custom_vjp"
            else ""
        )
        return (
            f" (this is generated code calling your function "
            f"{getattr(again, '__name__', name)}, a {kind} function, through its rule: a "
            "third derivative through it differentiates the rule's Python functions, "
            f"written out in the code differentiated again, which srcad could not do{why}"
            f"{need})"
        )
    custom = getattr(handle, "custom", None)
    if isinstance(custom, (CustomJVP, CustomVJP)):
        name = getattr(custom, "__name__", name)
        if isinstance(custom, CustomJVP):
            reason = (
                "it is a custom_jvp function (its rule is differentiated again only for a "
                "call passing each positional argument, without keywords or stars, and a "
                "Python function for its rule)"
            )
        else:
            reason = (
                "it is a custom_vjp function (its fwd and bwd are differentiated again only "
                "when they are Python functions)"
            )
    why = f" because {reason}" if reason else ""
    return (
        f" (this is generated code calling your function {name}, which srcad could not "
        f"write out in the code it differentiates again{why}: a derivative whose code "
        "calls your own functions cannot be differentiated again yet; write the function "
        "without calling them, or give them rules)"
    )


def _positional_only(func: Callable) -> bool:
    """Whether ``func`` has positional parameters alone (no stars, no keyword-only ones)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return all(p.kind in kinds for p in own_signature(func).parameters.values())


class _Transformer:
    """What the run-time handles (srcad/runtime/calls.py) ask of the transformer."""

    def callee(self, obj: Any) -> tuple[Callable, tuple, dict]:
        found = user_callee(obj)
        if found is None:
            raise TypeError(f"{obj!r} runs no Python function of the user's")
        return found

    def derivative(
        self, func: Callable, wrt: tuple[int, ...], mode: str, structures: tuple, masked: bool
    ) -> Any:
        from srcad.transform.cache import cached

        inline = calls_tangent_rules(func)
        return cached(func, wrt, False, mode, False, structures, masked=masked, inline=inline)

    def method(self, obj: Any, name: str, where: tuple) -> Callable:
        return _method(obj, name, where)

    def forward_function(self, func: Callable, wrt: tuple[int, ...]) -> Callable:
        from srcad.api import _plain
        from srcad.transform.cache import cached

        gen = cached(_plain(func), wrt, False, "jvp", inline=True)
        return mark_written_again(gen)


def mark_written_again(gen: Any) -> Callable:
    """The function of ``gen``, code generated with its calls written out to be
    differentiated again, marked so (:func:`calls_tangent_rules` reads it; the inliner
    records the snapshot it carries for the caller's, see Derivative.srcad_function)."""
    gen.function.__srcad_snapshot__ = gen.snapshot
    return gen.function


def calls_tangent_rules(func: Any) -> bool:
    """Whether ``func`` is forward-mode code generated to be differentiated again that
    calls a custom_jvp function's rule (a :class:`TangentRuleCall`, given a tuple of
    tangents, which only code writing the call out takes): what differentiates it must
    write out its calls."""
    if getattr(func, "__srcad_snapshot__", None) is None:
        return False
    values = getattr(func, "__globals__", {}).values()
    return any(isinstance(v, TangentRuleCall) for v in values)


runtime_calls.install(_Transformer())
