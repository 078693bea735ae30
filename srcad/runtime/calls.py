"""The handles through which generated code calls functions: a user's function, a method
of an object known at run time, a custom rule's, a checkpointed one's, ``srcad.jvp`` of a
function. Generated code reads only these (and the user's globals); each transforms its
callee on first use through the :class:`Transformer` srcad.transform installs, which the
runtime never imports (srcad/transform/calls.py builds the handles and fills it in).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol

from srcad import pytree
from srcad.runtime import recursion
from srcad.runtime.inplace import KeptResiduals, restores_in_place
from srcad.runtime.tangents import zero_tangent


class Transformer(Protocol):
    """What the handles ask of srcad's transformer when they run."""

    def callee(self, obj: Any) -> tuple[Callable, tuple, dict]:
        """``(function, leading args, keywords)`` of a callable that runs a user's function."""

    def derivative(
        self, func: Callable, wrt: tuple[int, ...], mode: str, structures: tuple, masked: bool
    ) -> Any:
        """The compiled derivative (``function``, ``backward``, ``snapshot``) of ``func``."""

    def method(self, obj: Any, name: str, where: tuple) -> Callable:
        """The Python function ``type(obj).name``, or the srcad error saying why there is none."""

    def forward_function(self, func: Callable, wrt: tuple[int, ...]) -> Callable:
        """``func``'s forward-mode function, which srcad can differentiate again."""


#: filled in by srcad.transform.calls (handles are only made by the transformer, so it is
#: there before any handle runs)
TRANSFORMER: Transformer | None = None


def install(transformer: Transformer) -> None:
    """Give the handles the transformer."""
    global TRANSFORMER
    TRANSFORMER = transformer


def _transformer() -> Transformer:
    if TRANSFORMER is None:  # (only a handle made without srcad.transform imported)
        raise RuntimeError("srcad.transform is not imported: no handle can transform its callee")
    return TRANSFORMER


def own_signature(func: Any) -> inspect.Signature:
    """The signature of the code srcad reads: a function's own (not the one
    ``functools.wraps`` copies from what it wraps); another callable's as inspect gives it."""
    return inspect.signature(func, follow_wrapped=not inspect.isfunction(func))


def positional(func: Callable) -> list[str]:
    """The names of ``func``'s positional parameters."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in own_signature(func).parameters.values() if p.kind in kinds]


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


class DictResults:
    """A user function returning a dict display of constant keys, called for its values:
    ``DictResults(encode, ("mean", "logvar"))(x)`` is ``(d["mean"], d["logvar"])`` of ``d
    = encode(x)`` (``fun`` may be a :class:`FlatCall`). Derivative handles transform the
    function and hand on its values, and their tangents, in that order; its backward takes
    one cotangent per value, as for a tuple."""

    def __init__(self, fun: Callable, keys: tuple) -> None:
        self.fun = fun
        self.keys = keys
        self.__name__ = getattr(fun, "__name__", "f")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)

    def values(self, result: Any) -> tuple:
        """The values of the dict ``result`` in the order of the keys."""
        return tuple(result[k] for k in self.keys)

    def __call__(self, *args: Any, **kwargs: Any) -> tuple:
        return self.values(self.fun(*args, **kwargs))

    def __repr__(self) -> str:
        return f"<srcad.DictResults of {self.__qualname__}: {list(self.keys)}>"


def flat_call(obj: Any) -> FlatCall | None:
    """The :class:`FlatCall` through which ``obj`` passes containers leaf by leaf, if any."""
    obj = obj.fun if isinstance(obj, DictResults) else obj
    return obj if isinstance(obj, FlatCall) else None


class _CallHandle:
    """Calls of one user function from generated code, its derivative transformed on first
    use (in the subclass's ``mode``) and again when stale."""

    mode = ""

    def __init__(
        self, obj: Any, wrt: tuple[int, ...], structures: tuple = (), zero_safe: bool = False
    ) -> None:
        self.obj = obj
        self.func, self.args, self.kwargs = _transformer().callee(obj)
        self.wrt = tuple(len(self.args) + k for k in wrt)
        self.structures = structures
        #: the caller's derivatives flowing in may be zero where one of its selections did
        #: not choose a value: the callee's elementwise rules then multiply zero-safely
        self.zero_safe = zero_safe
        #: a dict's values in key order, for a call that takes them as a tuple
        self.results = obj if isinstance(obj, DictResults) else None
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
        flat = flat_call(self.obj)
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
            gen = self._generated = _transformer().derivative(
                self.func, self.wrt, self.mode, self.structures, self.zero_safe
            )
        return gen


class CallVJP(_CallHandle):
    """Forward and backward of calls to one user function (reverse mode)."""

    mode = "vjp"

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """``(value, residuals)`` of the call."""
        if not recursion.inside():
            return recursion.deep_call(self.func.__name__, self.forward, *args, **kwargs)
        args, kwargs = self.arguments(args, kwargs)
        value, residuals = self.generated().function(*args, **kwargs)
        if self.results is not None:
            value = self.results.values(value)
        return value, residuals

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """Gradients of the call with respect to the differentiated parameters (one
        cotangent per output the callee returns)."""
        if not recursion.inside():
            return recursion.deep_call(self.func.__name__, self.backward, residuals, *cotangents)
        backward = self.generated().backward
        if restores_in_place(backward):
            # the caller's pullback may run again: its residuals (these among them) must
            # hold the same values then (a gradient called twice once differed)
            with KeptResiduals(residuals):
                return backward(residuals, *cotangents)
        return backward(residuals, *cotangents)

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
        value, tangent = self.generated().function(*args, *tangents, **kwargs)
        if self.results is not None:
            return self.results.values(value), self.results.values(tangent)
        return value, tangent

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
        return _transformer().forward_function(self.func, self.wrt)

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
        func = _transformer().method(obj, self.name, self.where)
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
        func = _transformer().method(obj, self.name, self.where)
        handle = self._handles.get(func)
        if handle is None:
            wrt = tuple(1 + k for k in self.positions)
            handle = self._handles[func] = CallJVP(func, wrt, zero_safe=self.zero_safe)
        return handle(tangents, obj, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<srcad.MethodJVP of .{self.name}() wrt arguments {self.positions}>"


class CheckpointCall:
    """Calls of a checkpointed function (``srcad.checkpoint``) from generated code: the
    forward pass runs the plain function; the backward pass runs its forward-mode pair
    again from the saved arguments, then its backward."""

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
    """Calls of a ``srcad.custom_vjp`` function from generated code."""

    def __init__(self, custom: Any, wrt: tuple[int, ...]) -> None:
        self.custom = custom
        self.wrt = wrt
        again = getattr(custom, "call_functions", None)
        if again is not None:
            # code differentiated again: the user's functions themselves, which the next
            # transformation reads (these attributes stand in for the methods below)
            self.forward, self.backward = again(wrt)  # type: ignore[method-assign]

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


class CustomJVPCall:
    """Calls of a ``srcad.custom_jvp`` function from generated code, in either mode."""

    def __init__(self, custom: Any, wrt: tuple[int, ...]) -> None:
        self.custom = custom
        self.wrt = wrt
        again = getattr(custom, "call_functions", None)
        if again is not None:
            # code differentiated again: functions srcad reads (see CustomJVPAgain)
            self.forward, self.backward = again(wrt)  # type: ignore[method-assign]

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
        if not kwargs and len(args) == len(positional(self.custom.fun)):
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
        leaves, treedef = pytree.flatten(self._tangents(args, ()))
        gen = _transformer().derivative(self._jvp(), (1,), "vjp", ((1, treedef),), False)
        (out, _), residuals = gen.function(args, *leaves)
        grads = gen.backward(residuals, zero_tangent(out), cotangent)
        return tuple(grads[k] for k in self.wrt)


def _is_zero_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and value == 0


class TupleResultVJP:
    """Reverse-mode calls of a custom_jvp function's forward function in code differentiated
    again, which returns ``(value, (a, b))`` (see srcad.transform.calls)."""

    def __init__(self, inner: CallVJP) -> None:
        self.inner = inner

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self.inner.forward(*args, **kwargs)

    def backward(self, residuals: Any, g_value: Any, g_args: Any) -> tuple[Any, ...]:
        """The cotangents of the differentiated parameters, from the value's cotangent and
        the tuple of the parameters' own (a zero, ``0.0``, where no statement read them:
        the zero adjoint of a tuple, one zero for each)."""
        if not isinstance(g_args, (tuple, list)):
            if g_args is not None and not _is_zero_number(g_args):
                raise TypeError(f"the cotangent of a tuple result is {type(g_args).__name__}")
            self.inner.generated()  # (the count is read off the generated backward)
            g_args = (0.0,) * (self.inner.result_count() - 1)
        return self.inner.backward(residuals, g_value, *g_args)

    def result_count(self) -> int:
        return 2

    def masked(self) -> TupleResultVJP:
        return TupleResultVJP(self.inner.masked())  # type: ignore[arg-type]


def flat_wrt(count: int, wrt: tuple[int, ...]) -> tuple[int, ...]:
    """The positions of ``flat(p0, ..., p{count-1}, g)`` that ``wrt`` of
    ``fun(residuals, g)`` names: every residual for 0, ``g`` for 1."""
    return (*(range(count) if 0 in wrt else ()), *((count,) if 1 in wrt else ()))


class FlatResidualsVJP:
    """Reverse-mode calls of a custom_jvp function's transposed rule in code differentiated
    again: passes the residuals to ``flat(p0, p1, g)`` one by one and returns their
    cotangents as one tuple (see srcad.transform.calls)."""

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

    def masked(self) -> FlatResidualsVJP:
        inner = self.inner.masked()
        return FlatResidualsVJP(inner, self.count, self.wrt, self.results)  # type: ignore[arg-type]


class TreeResultVJP:
    """Reverse-mode calls of a function returning a nested tuple (a custom_vjp ``fwd``'s
    ``(value, (t, q))``) in code differentiated again: the call binds ``outputs`` names,
    each a tuple or a value, while the callee's backward takes one cotangent per leaf of
    what it returns; the cotangents given are flattened to those leaves."""

    def __init__(self, inner: CallVJP, outputs: int = 2) -> None:
        self.inner = inner
        self.outputs = outputs

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        out, residuals = self.inner.forward(*args, **kwargs)
        return out, (out, residuals)  # (what it returned: the cotangents' structure)

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """The cotangents of the differentiated parameters, from one cotangent (a tuple,
        or the array generated code stacks for a tuple) per name the call binds."""
        out, residuals = residuals
        leaves: list[Any] = []
        for value, cotangent in zip(out, cotangents):
            _leaves_like(value, cotangent, leaves)
        expected = self.inner.result_count()
        if expected is not None and expected != len(leaves):
            raise TypeError(
                f"{self.inner.func.__qualname__} returned {expected} values in all, but the "
                f"cotangents of its results hold {len(leaves)}: return the same structure "
                "on every path"
            )
        return self.inner.backward(residuals, *leaves)

    def result_count(self) -> int:
        return self.outputs

    def masked(self) -> TreeResultVJP:
        return TreeResultVJP(self.inner.masked(), self.outputs)  # type: ignore[arg-type]


def _leaves_like(value: Any, cotangent: Any, leaves: list[Any]) -> None:
    """Append the cotangent of each leaf of ``value`` to ``leaves``: ``cotangent`` is a
    pytree of ``value``'s structure, or for a tuple or list the array generated code makes
    of its elements' cotangents (``d_t[0] = ...``: one row each), or a zero."""
    if not pytree.is_container(value):
        leaves.append(cotangent)
    elif pytree.is_container(cotangent):
        found, treedef = pytree.flatten(cotangent)
        if treedef != pytree.flatten(value)[1]:
            raise TypeError("the cotangent of a container has another structure than its value")
        leaves.extend(found)
    elif isinstance(value, (tuple, list)) and getattr(cotangent, "ndim", 0) > 0:
        for k, item in enumerate(value):
            _leaves_like(item, cotangent[k], leaves)
    elif not getattr(cotangent, "ndim", 0) and not cotangent:
        leaves.extend(zero_tangent(leaf) for leaf in pytree.flatten(value)[0])
    else:
        raise TypeError(f"a cotangent of type {type(cotangent).__name__} for a container")


class TreeResidualsVJP:
    """Reverse-mode calls of a custom_vjp ``bwd`` in code differentiated again:
    ``bwd_wrt(residuals, g0, ...)`` with residuals a pytree (``(t, q)``) known only at run
    time. Each structure's calls go to ``flat(treedef)``, the same function taking the
    residuals leaf by leaf, so their cotangent comes back in the same structure."""

    def __init__(
        self,
        flat: Callable[[Any], Callable],
        wrt: tuple[int, ...],
        results: int,
        zero_safe: bool = False,
    ) -> None:
        self.flat = flat
        self.wrt = wrt
        self.results = results
        self.zero_safe = zero_safe
        self._handles: dict[Any, CallVJP] = {}

    def _handle(self, treedef: Any, count: int) -> CallVJP:
        handle = self._handles.get(treedef)
        if handle is None:
            # the residuals' leaves are parameters 0 .. count - 1, then the cotangents
            wrt = (*(range(count) if 0 in self.wrt else ()),
                   *(count + k - 1 for k in self.wrt if k > 0))  # fmt: skip
            handle = CallVJP(self.flat(treedef), wrt, zero_safe=self.zero_safe)
            self._handles[treedef] = handle
        return handle

    def forward(self, residuals: Any, *args: Any) -> tuple[Any, Any]:
        leaves, treedef = pytree.flatten(residuals)
        handle = self._handle(treedef, len(leaves))
        out, inner = handle.forward(*leaves, *args)
        return out, (handle, treedef, len(leaves), inner)

    def backward(self, residuals: Any, *cotangents: Any) -> tuple[Any, ...]:
        """The residuals' cotangent (their structure), then the others differentiated."""
        handle, treedef, count, inner = residuals
        grads = handle.backward(inner, *cotangents)
        if 0 not in self.wrt:
            return tuple(grads)
        return (pytree.unflatten(treedef, grads[:count]), *grads[count:])

    def result_count(self) -> int:
        return self.results

    def masked(self) -> TreeResidualsVJP:
        return TreeResidualsVJP(self.flat, self.wrt, self.results, zero_safe=True)


class TreeResidualsJVP:
    """Forward-mode calls of a custom_vjp ``bwd`` in code differentiated again (see
    :class:`TreeResidualsVJP`): the residuals and their tangents passed leaf by leaf."""

    def __init__(
        self,
        flat: Callable[[Any], Callable],
        wrt: tuple[int, ...],
        check: Callable[..., Any],
        zero_safe: bool = False,
    ) -> None:
        self.flat = flat
        self.wrt = wrt
        #: runs the user's ``bwd`` as the first-order handle does, checking what it returns
        #: (the forward-mode code unpacks it, and would unpack an array by rows)
        self.check = check
        self.zero_safe = zero_safe
        self._handles: dict[Any, CallJVP] = {}

    def __call__(self, tangents: tuple, residuals: Any, *args: Any) -> tuple[Any, Any]:
        leaves, treedef = pytree.flatten(residuals)
        count = len(leaves)
        handle = self._handles.get(treedef)
        if handle is None:
            self.check(residuals, *args)
            wrt = (*(range(count) if 0 in self.wrt else ()),
                   *(count + k - 1 for k in self.wrt if k > 0))  # fmt: skip
            handle = CallJVP(self.flat(treedef), wrt, zero_safe=self.zero_safe)
            self._handles[treedef] = handle
        flat: list[Any] = []
        for k, tangent in zip(self.wrt, tangents):
            if k == 0:
                _leaves_like(residuals, tangent, flat)
            else:
                flat.append(tangent)
        return handle(tuple(flat), *leaves, *args)

    def masked(self) -> TreeResidualsJVP:
        return TreeResidualsJVP(self.flat, self.wrt, self.check, zero_safe=True)


class TangentRuleCall:
    """A custom_jvp function's call in forward-mode code that is differentiated again:
    it runs as the first-order handle ``call`` does; ``fun`` is the user's ``jvp`` called
    with the tangents in full, a function srcad reads, which the next transformation
    writes out in the code (a tuple of tangents, which only written-out code takes)."""

    def __init__(self, fun: Callable, call: CustomJVPCall, custom: Any) -> None:
        self.fun = self.func = fun
        self.call = call
        #: the custom_jvp function (named by errors)
        self.srcad_custom = custom
        self.__name__ = getattr(fun, "__name__", "jvp")

    def __call__(self, tangents: tuple, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self.call(tangents, *args, **kwargs)

    def srcad_function(self) -> Callable:
        """``fun``, which the next transformation writes out."""
        return self.fun


class Functions:
    """A reverse-mode handle whose ``forward`` and ``backward`` are functions srcad reads
    (code differentiated again calls them, so the next transformation follows them)."""

    def __init__(self, forward: Callable, backward: Callable, results: int = 1) -> None:
        self.forward = forward
        self.backward = backward
        self.results = results

    def result_count(self) -> int:
        """How many values the call returns (its backward takes one cotangent each)."""
        return self.results


class Composition:
    """A derivative srcad's API makes of ``srcad.grad`` and ``srcad.jvp`` when it is written
    inside a differentiated function (``srcad.jacobian(f)``, ``srcad.hessian(f)``, a vjp's
    pullback): ``function`` is Python code srcad reads, so it is differentiated again."""

    def __init__(self, function: Callable, made_by: str) -> None:
        self.function = function
        self.made_by = made_by
        self.__name__ = function.__name__
        self.__qualname__ = function.__qualname__

    def srcad_function(self) -> Callable:
        """The function srcad differentiates in its place."""
        return self.function

    def __call__(self, *args: Any) -> Any:
        return self.function(*args)

    def __repr__(self) -> str:
        return f"<srcad.{self.made_by} inside: {self.__qualname__}>"
