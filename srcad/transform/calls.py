"""Calls to the user's own Python functions: each callee is transformed into a forward and
backward pair of its own (cached per callee and per differentiated parameters), and the
caller calls them, so helpers, closures, ``functools.partial`` and recursion all work.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

import numpy as np

from srcad import pytree
from srcad.adjoints.scipy_table import is_scipy
from srcad.runtime import recursion
from srcad.runtime.tangents import zero_tangent
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

    def backward_for(self, wrt: tuple[int, ...], outputs: int = 1) -> Callable:
        """``def bwd_wrt(residuals, g): c0, c1 = bwd(residuals, g); return (c1,)``: the
        user's ``bwd`` picked for ``wrt``, a function srcad reads (one cotangent per
        positional parameter of ``fun``, checked as the first-order handle does). For a
        ``fun`` unpacked into ``outputs`` names it takes one cotangent each (``g0, g1``)
        and hands ``bwd`` their tuple."""
        from srcad.callables import known_caller, new_caller

        key = ("custom_vjp backward", id(self.bwd), id(self.fun), wrt, outputs)
        found = known_caller(key, self.bwd)
        if found is not None:
            return found
        count = len(_positional(self.fun))
        name = getattr(self.bwd, "__name__", "bwd")
        name = f"{name}_wrt" if name.isidentifier() else "bwd_wrt"
        message = (
            f"the bwd of {self.__name__} must return a tuple with one cotangent per "
            f"positional argument ({count})"
        )
        given = [f"g{k}" for k in range(outputs)] if outputs != 1 else ["g"]
        callee: Any = self.bwd
        if outputs != 1:
            # the cotangents passed leaf by leaf and made their tuple for ``bwd`` (a tuple
            # display as an argument would carry no derivative)
            treedef = pytree.flatten(tuple(range(outputs)))[1]
            callee = FlatCall(self.bwd, ((1, treedef),), 2)
        lines = [
            f"c = __srcad_callee__(residuals, {', '.join(given)})",
            f"if not isinstance(c, tuple) or len(c) != {count}:",
            f"    raise TypeError({message!r})",
        ]
        if count == 1:  # (not ``c0, = c``, which forward mode reads as one value)
            picked = "c[0]"
        else:
            names = [f"c{k}" for k in range(count)]
            lines.append(f"{', '.join(names)} = c")
            picked = ", ".join(names[k] for k in wrt)
        scope = {"__srcad_callee__": callee}
        params = ", ".join(["residuals", *given])
        return new_caller(key, self.bwd, name, params, f"({picked},)", scope, lines)


def own_signature(func: Any) -> inspect.Signature:
    """The signature of the code srcad reads: a function's own (not the one
    ``functools.wraps`` copies from what it wraps); another callable's as inspect gives it."""
    return inspect.signature(func, follow_wrapped=not inspect.isfunction(func))


def _positional(func: Callable) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in own_signature(func).parameters.values() if p.kind in kinds]


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

    def _names(self) -> tuple[str, list[str]]:
        name = getattr(self.custom, "__name__", "f")
        return (name if name.isidentifier() else "f"), [
            f"p{k}" for k in range(len(_positional(self.fun)))
        ]

    def forward_function(self) -> Callable:
        """``def f_forward(a, b): return f(a, b), (a, b)`` (``f(a), a`` for one parameter):
        the parameters' own names and defaults, for calls passing keywords. For several
        parameters, in an object whose reverse-mode handle takes the cotangent of the
        residuals' tuple as one value (:class:`_TupleResultForward`)."""
        from srcad.callables import known_caller, new_caller

        params = _positional(self.fun)
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
        gradient = grad(dot, wrt=picked[0] if len(picked) == 1 else picked)
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


class _TupleResultForward:
    """The forward function of a custom_jvp function of several parameters in code
    differentiated again: ``fun`` returns ``(value, (a, b))``, which generated code binds
    to two names; in reverse mode its handle takes the residuals' cotangent as one tuple
    (the function itself returns three values: the value, then each parameter)."""

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        self.__name__ = fun.__name__
        self.__qualname__ = fun.__qualname__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""
        if mode == "vjp":
            return _TupleResultVJP(CallVJP(self.fun, wrt))
        return CallJVP(self.fun, wrt)


class _TupleResultVJP:
    """Reverse-mode calls of a :class:`_TupleResultForward`."""

    def __init__(self, inner: CallVJP) -> None:
        self.inner = inner

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self.inner.forward(*args, **kwargs)

    def backward(self, residuals: Any, g_value: Any, g_args: Any) -> tuple[Any, ...]:
        """The cotangents of the differentiated parameters, from the value's cotangent and
        the tuple of the parameters' own."""
        return self.inner.backward(residuals, g_value, *g_args)

    def result_count(self) -> int:
        return 2

    def masked(self) -> _TupleResultVJP:
        return _TupleResultVJP(self.inner.masked())  # type: ignore[arg-type]


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

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The handle generated code calls (see srcad.kernels.function)."""
        if mode != "vjp":
            return CallJVP(self.fun, wrt)
        flat_wrt = (*(range(self.count) if 0 in wrt else ()), *((self.count,) if 1 in wrt else ()))
        return _FlatResidualsVJP(CallVJP(self.flat, flat_wrt), self.count, wrt, self.srcad_results)


class _FlatResidualsVJP:
    """Reverse-mode calls of a :class:`_FlatResidualsBackward`."""

    def __init__(self, inner: CallVJP, count: int, wrt: tuple[int, ...], results: int) -> None:
        self.inner = inner
        self.count = count
        self.wrt = wrt
        self.results = results

    def forward(self, residuals: Any, g: Any) -> tuple[Any, Any]:
        return self.inner.forward(*residuals, g)

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """The residuals' cotangents as one tuple, then ``g``'s (those differentiated)."""
        grads = self.inner.backward(residuals, *cotangents)
        out: list[Any] = []
        if 0 in self.wrt:
            out.append(tuple(grads[: self.count]))
        if 1 in self.wrt:
            out.append(grads[-1])
        return tuple(out)

    def result_count(self) -> int:
        return self.results

    def masked(self) -> _FlatResidualsVJP:
        inner = self.inner.masked()
        return _FlatResidualsVJP(inner, self.count, self.wrt, self.results)  # type: ignore[arg-type]


class CustomJVPCall:
    """Calls of a :class:`CustomJVP` function from generated code, in either mode."""

    def __init__(self, custom: CustomJVP, wrt: tuple[int, ...]) -> None:
        self.custom = custom
        self.wrt = wrt
        if isinstance(custom, CustomJVPAgain):
            # code differentiated again: functions srcad reads (see CustomJVPAgain)
            self.forward = custom.forward_function()  # type: ignore[method-assign]
            self.backward = custom.backward_for(wrt)  # type: ignore[method-assign]

    def _jvp(self) -> Callable:
        if self.custom.jvp is None:
            raise TypeError(f"{self.custom.__name__} has no jvp yet: call .defjvp(jvp)")
        return self.custom.jvp

    def _tangents(self, args: tuple, given: tuple) -> tuple:
        tangents = [zero_tangent(a) for a in args]
        for k, t in zip(self.wrt, given):
            tangents[k] = t
        return tuple(tangents)

    def _primals(self, args: tuple, kwargs: dict) -> tuple:
        """Every positional argument of the call, those given by keyword or left to their
        defaults included (the rule takes them all, in order)."""
        if not kwargs and len(args) == len(_positional(self.custom.fun)):
            return args
        bound = own_signature(self.custom.fun).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.args)

    def __call__(self, tangents: tuple, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, tangent)`` from the user's ``jvp`` (forward mode)."""
        args = self._primals(args, kwargs)
        return self._jvp()(args, self._tangents(args, tangents))

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, residuals)`` for reverse mode: the residuals are the arguments."""
        self._jvp()
        args = self._primals(args, kwargs)
        return self.custom.fun(*args), args

    def backward(self, args: Any, cotangent: Any) -> tuple[Any, ...]:
        """The user's ``jvp`` transposed: its vjp with respect to the tangents alone, at
        zero tangents (it is linear in them), with no cotangent for the primal output."""
        from srcad.transform.cache import cached

        leaves, treedef = pytree.flatten(self._tangents(args, ()))
        gen = cached(self._jvp(), (1,), False, "vjp", False, ((1, treedef),))
        (out, _), residuals = gen.function(args, *leaves)
        grads = gen.backward(residuals, zero_tangent(out), cotangent)
        return tuple(grads[k] for k in self.wrt)


class Checkpointed(Generic[P, R]):
    """A function whose calls keep only their arguments for the backward pass and run
    again there (``srcad.checkpoint``): memory for time."""

    def __init__(self, fun: Callable[P, R]) -> None:
        self.fun = fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fun(*args, **kwargs)


class CheckpointCall:
    """Calls of a :class:`Checkpointed` function from generated code: the forward pass
    runs the plain function; the backward pass runs its forward-mode pair again from the
    saved arguments, then its backward."""

    def __init__(self, inner: CallVJP) -> None:
        self.inner = inner

    def generated(self) -> Any:
        """The callee's compiled forward/backward pair."""
        return self.inner.generated()

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, residuals)``: the residuals are the arguments alone."""
        return self.inner.func(*self.inner.args, *args, **self.inner.kwargs, **kwargs), (
            args,
            kwargs,
        )

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """Recompute the call's residuals from its arguments, then its gradients."""
        args, kwargs = residuals
        _, inner = self.inner.forward(*args, **kwargs)
        return self.inner.backward(inner, *cotangents)

    def result_count(self) -> int | None:
        """How many values the callee returns, once it has been transformed."""
        return self.inner.result_count()

    def masked(self) -> CheckpointCall:
        """The variant whose backward treats its cotangents as masked (see CallVJP)."""
        return CheckpointCall(self.inner.masked())


class CustomCall:
    """Calls of a :class:`CustomVJP` function from generated code."""

    def __init__(self, custom: CustomVJP, wrt: tuple[int, ...]) -> None:
        self.custom = custom
        self.wrt = wrt
        if isinstance(custom, CustomVJPAgain):
            # code differentiated again: the user's functions themselves, which the next
            # transformation reads (these attributes stand in for the methods below)
            self.forward = custom.fwd  # type: ignore[method-assign]
            self.backward = custom.backward_for(wrt, custom.outputs)  # type: ignore[method-assign]

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, residuals)`` from the user's ``fwd``."""
        if self.custom.fwd is None:
            raise TypeError(f"{self.custom.__name__} has no vjp yet: call .defvjp(fwd, bwd)")
        return self.custom.fwd(*args, **kwargs)

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """The user's ``bwd`` cotangents of the differentiated arguments (given one
        cotangent per output of the function: their tuple for several)."""
        cotangent = cotangents[0] if len(cotangents) == 1 else cotangents
        grads = self.custom.bwd(residuals, cotangent)
        if not isinstance(grads, tuple):
            raise TypeError(
                f"the bwd of {self.custom.__name__} must return a tuple with one cotangent "
                f"per positional argument, got {type(grads).__name__}"
            )
        return tuple(grads[k] for k in self.wrt)


class FlatCall:
    """A user function called with some arguments given leaf by leaf: ``structures`` pairs
    argument positions with the pytree structure each had (a parameter container, or a
    display holding parts of one, that srcad expanded into one variable per leaf).

    ``FlatCall(f, ((0, treedef),))(W1, b1, W2, b2, x)`` is ``f([(W1, b1), (W2, b2)], x)``;
    derivative handles transform ``f`` for those structures, so the gradients (tangents)
    also travel leaf by leaf.
    """

    def __init__(self, fun: Callable, structures: tuple, count: int) -> None:
        self.fun = fun
        self.structures = structures
        #: how many positional arguments the user's call passes
        self.count = count
        self.__name__ = getattr(fun, "__name__", "f")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)
        self._counts = {k: len(pytree.paths(treedef)) for k, treedef in structures}

    def groups(self, args: list) -> list[list]:
        """``args`` as given (flat), grouped by the argument each belongs to."""
        out: list[list] = []
        start = 0
        for k in range(self.count):
            size = self._counts.get(k, 1)
            out.append(list(args[start : start + size]))
            start += size
        if start != len(args):
            raise TypeError(f"{self.__qualname__} was called with {len(args)} flat arguments")
        return out

    def regroup(self, args: tuple) -> tuple:
        """The arguments as the user's function takes them, containers rebuilt."""
        treedefs = dict(self.structures)
        return tuple(
            pytree.unflatten(treedefs[k], group) if k in treedefs else group[0]
            for k, group in enumerate(self.groups(args))
        )

    def flatten(self, positional: tuple) -> tuple:
        """The positional arguments as the transformed function takes them: each container
        leaf by leaf (a leaf that is itself a container at run time is refused)."""
        out = list(positional)
        for k, treedef in sorted(self.structures, reverse=True):
            leaves, found = pytree.flatten(out[k])
            if found != treedef:
                raise TypeError(
                    f"argument {k} of {self.__qualname__} has another structure at run time "
                    "than srcad specialized the call for: pass a variable holding a "
                    "container as a container display of its parts instead"
                )
            out[k : k + 1] = leaves
        return tuple(out)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*self.regroup(args), **kwargs)

    def __repr__(self) -> str:
        return f"<srcad.FlatCall of {self.__qualname__} for arguments {sorted(self._counts)}>"


def user_callee(obj: Any) -> tuple[Callable, tuple, dict] | None:
    """``(function, leading args, keywords)`` if calling ``obj`` runs a user's Python function."""
    if isinstance(obj, FlatCall):
        return obj.fun, (), {}  # its handles rebuild and flatten the containers
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


class LiveSignature:
    """``inspect.signature(func)``, taken again when the function's defaults change (a
    signature copies them; calls must see ``f.__defaults__ = ...`` made afterwards)."""

    def __init__(self, func: Callable) -> None:
        self.func = func
        self._signature: inspect.Signature | None = None
        self._defaults: tuple = ()

    def get(self) -> inspect.Signature:
        """The signature with the function's defaults as they are now."""
        func = self.func
        positional = getattr(func, "__defaults__", None)
        named = getattr(func, "__kwdefaults__", None)
        if (
            self._signature is None
            or positional is not self._defaults[0]
            or named is not self._defaults[1]
            or (named and not _same_items(named, self._defaults[2]))
        ):
            self._signature = own_signature(func)
            self._defaults = (positional, named, dict(named or {}))
        return self._signature


def _same_items(now: dict, then: dict) -> bool:
    return len(now) == len(then) and all(then.get(k, then) is v for k, v in now.items())


def call_arguments(
    func: Callable, args: tuple, kwargs: dict, signature: inspect.Signature | None = None
) -> tuple[tuple, dict]:
    """The positional values (defaults as ``func`` has them now, ``*args`` spread) and the
    keyword-only ones of the call ``func(*args, **kwargs)``: generated code has no defaults
    of its own, so these are all passed explicitly."""
    code = getattr(func, "__code__", None)
    if (
        code is not None
        and not kwargs
        and len(args) == code.co_argcount
        and not code.co_kwonlyargcount
        and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    ):
        return args, {}  # every parameter given: nothing to fill in
    signature = signature or own_signature(func)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    positional: list[Any] = []
    named: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            # after *args, in sorted order: the generated code takes one parameter each
            positional.extend(value[k] for k in sorted(value))
        elif kind is inspect.Parameter.KEYWORD_ONLY:
            named[name] = value
        else:
            positional.append(value)
    return tuple(positional), named


class BuildInProgress(RuntimeError):
    """The callee is being transformed already (a recursive call)."""


class _CallHandle:
    """Calls of one user function from generated code, its derivative transformed on first
    use (in the subclass's ``mode``) and again when stale."""

    mode = ""

    def __init__(
        self, obj: Any, wrt: tuple[int, ...], structures: tuple = (), zero_safe: bool = False
    ) -> None:
        self.obj = obj
        self.func, self.args, self.kwargs = user_callee(obj)
        self.wrt = tuple(len(self.args) + k for k in wrt)
        self.structures = structures
        #: the caller's derivatives flowing in may be zero where one of its selections did
        #: not choose a value: the callee's elementwise rules then multiply zero-safely
        self.zero_safe = zero_safe
        self._generated = None
        self._masked: _CallHandle | None = None

    def masked(self) -> _CallHandle:
        """The same calls, with the derivatives flowing in treated as masked (cotangents
        in reverse mode, tangents in forward mode)."""
        if self.zero_safe:
            return self
        if self._masked is None:
            wrt = tuple(k - len(self.args) for k in self.wrt)
            self._masked = type(self)(self.obj, wrt, self.structures, zero_safe=True)
        return self._masked

    def arguments(
        self, args: tuple, kwargs: dict, signature: inspect.Signature | None = None
    ) -> tuple[tuple, dict]:
        """What the generated function takes for the call ``obj(*args, **kwargs)``
        (:func:`call_arguments`; a :class:`FlatCall`'s containers rebuilt for that, then
        passed on leaf by leaf)."""
        flat = self.obj if isinstance(self.obj, FlatCall) else None
        if flat is not None:
            args = flat.regroup(args)
        args, kwargs = call_arguments(
            self.func, (*self.args, *args), {**self.kwargs, **kwargs}, signature
        )
        return (flat.flatten(args) if flat is not None else args), kwargs

    def generated(self) -> Any:
        """The callee's compiled derivative, transformed again when stale."""
        gen = self._generated
        if gen is None or not gen.snapshot.current(self.func):
            from srcad.transform.cache import cached

            options = (False, self.mode, False, self.structures)
            gen = self._generated = cached(self.func, self.wrt, *options, masked=self.zero_safe)
        return gen


class CallVJP(_CallHandle):
    """Forward and backward of calls to one user function (reverse mode)."""

    mode = "vjp"

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, residuals)`` of the call."""
        if not recursion.inside():
            return recursion.deep_call(self.func.__name__, self.forward, *args, **kwargs)
        args, kwargs = self.arguments(args, kwargs)
        return self.generated().function(*args, **kwargs)

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """Gradients of the call with respect to the differentiated parameters (one
        cotangent per output the callee returns)."""
        if not recursion.inside():
            return recursion.deep_call(self.func.__name__, self.backward, residuals, *cotangents)
        return self.generated().backward(residuals, *cotangents)

    def result_count(self) -> int | None:
        """How many values the callee returns, once it has been transformed (its backward
        takes one cotangent each)."""
        backward = getattr(self._generated, "backward", None)
        return None if backward is None else backward.__code__.co_argcount - 1

    def __repr__(self) -> str:
        return f"<srcad.CallVJP of {self.func.__qualname__} wrt {self.wrt}>"


class CallJVP(_CallHandle):
    """Forward-mode calls to one user function."""

    mode = "jvp"

    def __init__(
        self, obj: Any, wrt: tuple[int, ...], structures: tuple = (), zero_safe: bool = False
    ) -> None:
        super().__init__(obj, wrt, structures, zero_safe)
        self.signature = LiveSignature(self.func)

    def __call__(self, tangents: tuple, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, tangent)`` of the call, given the tangents of the differentiated arguments."""
        if not recursion.inside():
            return recursion.deep_call(self.func.__name__, self, tangents, *args, **kwargs)
        args, kwargs = self.arguments(args, kwargs, self.signature.get())
        return self.generated().function(*args, *tangents, **kwargs)

    def __repr__(self) -> str:
        return f"<srcad.CallJVP of {self.func.__qualname__} wrt {self.wrt}>"


class JVPFunction:
    """``srcad.jvp(func, primals, tangents)`` written inside differentiated code: calls
    ``func``'s forward-mode function with the primals, then the tangents of ``wrt``."""

    def __init__(self, func: Callable, wrt: tuple[int, ...]) -> None:
        self.func = func
        self.wrt = wrt

    def srcad_function(self) -> Callable:
        """The generated forward-mode function (which srcad can differentiate again: the
        helpers written out; ``func`` may be a derivative, a checkpoint, a custom rule's)."""
        from srcad.api import _plain
        from srcad.transform.cache import cached

        gen = cached(_plain(self.func), self.wrt, False, "jvp", inline=True)
        gen.function.__srcad_snapshot__ = gen.snapshot  # (see Derivative.srcad_function)
        return gen.function

    def __call__(self, *args: Any) -> tuple[Any, Any]:
        """``(value, tangent)``."""
        return self.srcad_function()(*args)


class MethodVJP:
    """Calls ``obj.name(...)`` on an object whose class is known only at run time: each
    class's method is transformed like any user function, on first use."""

    def __init__(
        self, name: str, positions: tuple[int, ...], zero_safe: bool = False, where: tuple = ()
    ) -> None:
        self.name = name
        self.positions = positions
        self.zero_safe = zero_safe
        #: the call's (file, line, column, text), for errors raised when it runs
        self.where = where
        self._handles: dict[Any, CallVJP] = {}

    def masked(self) -> MethodVJP:
        """The variant whose backward treats its cotangents as masked (see CallVJP)."""
        return MethodVJP(self.name, self.positions, zero_safe=True, where=self.where)

    def _handle(self, obj: Any) -> CallVJP:
        func = _method(obj, self.name, self.where)
        handle = self._handles.get(func)
        if handle is None:
            wrt = tuple(1 + k for k in self.positions)
            handle = self._handles[func] = CallVJP(func, wrt, zero_safe=self.zero_safe)
        return handle

    def forward(self, obj: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, residuals)`` of ``obj.name(*args, **kwargs)``."""
        handle = self._handle(obj)
        out, residuals = handle.forward(obj, *args, **kwargs)
        return out, (handle, residuals)

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """Gradients with respect to the differentiated arguments of the call."""
        handle, inner = residuals
        return handle.backward(inner, *cotangents)

    def __repr__(self) -> str:
        return f"<srcad.MethodVJP of .{self.name}() wrt arguments {self.positions}>"


class MethodJVP:
    """Forward-mode calls of ``obj.name(...)`` on an object known only at run time."""

    def __init__(
        self, name: str, positions: tuple[int, ...], zero_safe: bool = False, where: tuple = ()
    ) -> None:
        self.name = name
        self.positions = positions
        self.zero_safe = zero_safe
        self.where = where
        self._handles: dict[Any, CallJVP] = {}

    def masked(self) -> MethodJVP:
        """The variant that treats the tangents passed in as masked (see CallJVP)."""
        return MethodJVP(self.name, self.positions, zero_safe=True, where=self.where)

    def __call__(self, tangents: tuple, obj: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, tangent)`` of ``obj.name(*args, **kwargs)``."""
        func = _method(obj, self.name, self.where)
        handle = self._handles.get(func)
        if handle is None:
            wrt = tuple(1 + k for k in self.positions)
            handle = self._handles[func] = CallJVP(func, wrt, zero_safe=self.zero_safe)
        return handle(tangents, obj, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<srcad.MethodJVP of .{self.name}() wrt arguments {self.positions}>"


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
    return func


def generated_call(obj: Any) -> str | None:
    """For a method of the handle through which generated code calls a user's function
    (``f_vjp.forward``), or of a forward-mode handle itself: that function's name."""
    handle = obj if isinstance(obj, CallJVP) else getattr(obj, "__self__", None)
    if type(handle).__module__ != __name__:
        return None
    func = getattr(handle, "func", None) or getattr(getattr(handle, "inner", None), "func", None)
    return getattr(func, "__name__", None) or getattr(handle, "name", "a method")


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

    handle = callee if isinstance(callee, CallJVP) else getattr(callee, "__self__", None)
    func = getattr(handle, "func", None) or getattr(getattr(handle, "inner", None), "func", None)
    reason = not_inlined_reason(func) if inspect.isfunction(func) else None
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
