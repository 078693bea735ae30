"""The public entry points: grad, value_and_grad, vjp and source."""

from __future__ import annotations

import functools
import inspect
import keyword
import numbers
from collections.abc import Callable, Sequence
from typing import Any, Generic, Literal, ParamSpec, Protocol, TypeVar, Union, overload

import numpy as np

from srcad import pytree
from srcad.adjoints.registry import lookup, lookup_tangent
from srcad.arraytypes import check_arrays
from srcad.callables import Target, known_caller, new_caller, resolve, varargs_caller
from srcad.compositions import Leaf, Origin, Table, function_of, table_of
from srcad.errors import SourceUnavailableError, TransformError
from srcad.runtime.backend import array_namespace
from srcad.runtime.inplace import KeptResiduals, copied, restores_in_place
from srcad.runtime.lazy import any_lazy, is_lazy, watch, watching
from srcad.tracebacks import boundary, hide_internal_frames
from srcad.transform import inside
from srcad.transform.cache import cached
from srcad.transform.calls import (
    Checkpointed,
    CustomJVP,
    CustomVJP,
    LiveSignature,
    call_arguments,
    calls_tangent_rules,
    own_signature,
    user_callee,
)
from srcad.transform.hints import RULES_HELP
from srcad.transform.normalize.derivatives import FACTORIES, INSIDE, JVPS
from srcad.transform.pipeline import Generated

Wrt = Union[int, str, Sequence[Union[int, str]]]  # noqa: UP007 (a runtime alias on 3.10)
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def _positional_params(func: Callable) -> list[str]:
    if not callable(func):
        raise TypeError(f"srcad differentiates functions; got {type(func).__name__}")
    try:
        sig = own_signature(func)
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in sig.parameters.values() if p.kind in kinds]


def _check_function(func: Any) -> None:
    """Raise unless ``func`` is a Python function srcad can read the source of."""
    if not callable(func):
        raise TypeError(f"srcad differentiates functions; got {type(func).__name__} {func!r}")
    if not inspect.isfunction(func):
        kind = type(func).__name__
        if isinstance(func, type):
            advice = f"{func.__name__} is a class: differentiate a function or a method of it"
        elif inspect.isfunction(getattr(type(func), "__call__", None)):  # noqa: B004
            advice = (
                f"{func!r} is a {kind} object: differentiate its method instead, "
                "srcad.grad(obj.__call__) (the object's own arrays are then constants)"
            )
        else:
            advice = (
                f"{func!r} is a {kind}. Wrap it in a def, or register its derivative with "
                f"@srcad.adjoint; {RULES_HELP}"
            )
        raise SourceUnavailableError(
            f"srcad differentiates Python functions defined with 'def'; {advice}"
        )


def _normalize_wrt(
    func: Callable, wrt: Wrt, params: list[str] | None = None
) -> tuple[tuple[int, ...], bool]:
    """``wrt`` as parameter indices, and whether a single gradient (not a tuple) is wanted."""
    params = _positional_params(func) if params is None else params
    name = getattr(func, "__name__", type(func).__name__)
    single = isinstance(wrt, (int, str))
    if not single and not isinstance(wrt, (tuple, list)):
        raise TypeError(f"wrt must be parameter indices or names (or a tuple of them), got {wrt!r}")
    items = [wrt] if single else list(wrt)
    if not items:
        raise ValueError("wrt must name at least one parameter")
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt entries must be parameter indices or names, got {item!r}")
        if isinstance(item, str):
            if item not in params:
                raise ValueError(f"wrt={item!r} names no parameter of {name}{tuple(params)}")
            indices.append(params.index(item))
        elif item >= len(params) and _has_varargs(func):
            indices.append(item)  # one of the *args: checked against the call's count
            continue
        else:
            if not -len(params) <= item < len(params):
                raise ValueError(
                    f"wrt={item} is out of range: {name} has {len(params)} "
                    f"positional parameter(s) {tuple(params)}"
                )
            indices.append(item % len(params))
    if len(set(indices)) != len(indices):
        raise ValueError(f"wrt names a parameter twice: {wrt!r}")
    return tuple(indices), single


def _has_varargs(func: Any) -> bool:
    """Whether ``func`` is a Python function with a ``*args`` parameter."""
    code = getattr(func, "__code__", None)
    return code is not None and bool(code.co_flags & inspect.CO_VARARGS)


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _has_varkeywords(func: Any) -> bool:
    """Whether ``func`` is a Python function with a ``**kwargs`` parameter."""
    code = getattr(func, "__code__", None)
    return code is not None and bool(code.co_flags & inspect.CO_VARKEYWORDS)


def _target(f: Any, count: int | None = None) -> Target:
    """:func:`srcad.callables.resolve`, and a derivative of a partial, method or callable
    object as the derivative of the function behind it with the same bound arguments
    (so it can be differentiated again); with ``count`` positional arguments, a derivative
    of a function with ``*args`` is the one for that count."""
    target = resolve(f)
    inner = target.function
    if isinstance(inner, Derivative) and inner._varargs and count is not None:
        if count + len(target.prefix) > len(inner._params):
            inner = inner._with_count(count + len(target.prefix) + len(inner._prefix))
            target = Target(inner, target.prefix, target.keywords)
    if isinstance(inner, Derivative) and (inner._prefix or inner._keywords):
        wrt = inner._wrt[0] if inner._single else inner._wrt
        unbound = Derivative(
            inner._func, wrt, inner._with_value, inner._has_aux, inner._holomorphic
        )
        prefix = (*inner._prefix, *target.prefix)
        return Target(unbound, prefix, {**inner._keywords, **target.keywords})
    return target


def _extra_keys(func: Callable, kwargs: dict) -> tuple[str, ...]:
    """The keywords of a call of ``func`` that its ``**kwargs`` receives, sorted."""
    if not _has_varkeywords(func):
        return ()
    named = own_signature(func).parameters
    extra = tuple(sorted(k for k in kwargs if k not in named or named[k].kind in _VARIADIC))
    for k in extra:
        if not k.isidentifier() or keyword.iskeyword(k):
            raise TypeError(f"keyword {k!r} for **kwargs is not a Python name")
    return extra


def _called_function(inner: Any, count: int, keywords: dict | None = None) -> Callable:
    """The Python function ``vjp``/``jvp`` transform for ``inner`` called with ``count``
    positional arguments and ``keywords`` (a derivative's generated code, a rule's caller,
    one parameter each for ``*args`` and for what ``**kwargs`` receives)."""
    f = _plain(inner)
    _check_function(f)
    if _has_varkeywords(f) or (_has_varargs(f) and count > len(_positional_params(f))):
        keys = _extra_keys(f, keywords or {})
        f = varargs_caller(f, max(count, len(_positional_params(f))), keys)
    return f


def caller_wrt(func: Callable, wrt: Wrt) -> tuple[tuple[int, ...], bool]:
    """``wrt`` as indices of the arguments the caller of ``func`` gives."""
    table = table_of(func)
    if table is not None:  # a function jacobian or hessian made
        indices, single = table.indices(wrt)
        return tuple(k - len(table.origin.prefix) for k in indices), single
    target = resolve(func)
    params = None if target.function is func else _visible_params(target)
    return _normalize_wrt(func, wrt, params)


def _resolve_wrt(func: Callable, wrt: Wrt) -> tuple[Target, tuple[int, ...], bool]:
    """The function behind ``func`` (see :func:`srcad.callables.resolve`), ``wrt`` as
    indices of its parameters, and whether a single gradient is wanted."""
    target = resolve(func)
    inner = target.function
    wrapped = (Derivative, CustomVJP, CustomJVP, Checkpointed)
    if not isinstance(inner, wrapped) and not hasattr(inner, "srcad_handle"):
        _check_function(inner)
    if inner is func:
        return (target, *_normalize_wrt(func, wrt))
    indices, single = _normalize_wrt(func, wrt, _visible_params(target))
    return target, tuple(k + len(target.prefix) for k in indices), single


def _visible_params(target: Target) -> list[str]:
    """The positional parameters the caller of a resolved function still gives: after
    the bound ones, and before the first one bound by keyword (Python makes the rest
    keyword-only, as ``inspect.signature`` of a partial shows)."""
    params = _positional_params(target.function)[len(target.prefix) :]
    for k, name in enumerate(params):
        if name in target.keywords:
            return params[:k]
    return params


def _check_differentiable(value: Any, name: str) -> None:
    """Raise TypeError unless ``value`` is a floating-point or complex number or array."""
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, numbers.Integral) and not hasattr(value, "dtype")
    ):
        raise TypeError(
            f"cannot differentiate with respect to '{name}': it is {type(value).__name__} "
            f"{value!r}; pass a float (e.g. {float(value)!r})"
        )
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        if not _is_floating(value, dtype):
            raise TypeError(
                f"cannot differentiate with respect to '{name}': its dtype is {dtype}; "
                "gradients need a floating-point or complex dtype (use .astype(float))"
            )
        return
    if not isinstance(value, (float, complex)):
        kind = type(value).__name__
        advice = (
            f"; srcad sees inside dicts, lists, tuples, namedtuples, dataclasses and classes "
            f"registered with srcad.register_pytree_node only: make {kind} a @dataclass, "
            "register it, or pass its arrays as arguments"
            if hasattr(value, "__dict__") and not callable(value)
            else ""
        )
        raise TypeError(
            f"cannot differentiate with respect to '{name}': {kind} is not a float or a "
            f"floating-point array (or a pytree of them){advice}"
        )


def _check_array_argument(value: Any, name: str, what: str) -> None:
    """:func:`_check_differentiable` for functions that take no pytrees (jacobian, hessian)."""
    if pytree.is_container(value):
        raise TypeError(
            f"{what} differentiates with respect to floats and arrays, and '{name}' is a "
            f"pytree ({type(value).__name__}); pass its arrays as separate arguments "
            "(grad, vjp and jvp take pytrees)"
        )
    _check_differentiable(value, name)


def _shape(x: Any) -> tuple[int, ...]:
    """The shape of an array of any library, or of a nested sequence."""
    shape = getattr(x, "shape", None)
    return tuple(shape) if shape is not None else np.shape(x)


def _is_floating(value: Any, dtype: Any) -> bool:
    """Whether ``dtype`` is a real floating-point or a complex one."""
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind in "fc"
    namespace = array_namespace(value)
    return bool(namespace.isdtype(dtype, ("real floating", "complex floating")))


def _is_complex(value: Any) -> bool:
    """Whether ``value`` is a complex number or an array of a complex dtype."""
    if isinstance(value, complex):
        return True
    dtype = getattr(value, "dtype", None)
    kind = getattr(dtype, "kind", None)
    if dtype is None or isinstance(kind, str):
        return kind == "c"
    return bool(array_namespace(value).isdtype(dtype, "complex floating"))


def _check_output(value: Any, holomorphic: bool, what: str = "grad") -> None:
    """Raise TypeError for a complex output without ``holomorphic`` or a real one with it
    (JAX's rule: the gradient of a complex output depends on a convention the caller picks)."""
    if _is_complex(value) == holomorphic:
        return
    dtype = getattr(value, "dtype", type(value).__name__)
    if holomorphic:
        raise TypeError(f"{what} with holomorphic=True requires complex outputs, but got {dtype}")
    raise TypeError(
        f"{what} requires real-valued outputs, but got {dtype}. For holomorphic "
        "differentiation, pass holomorphic=True. For differentiation of non-holomorphic "
        "functions involving complex outputs, use srcad.vjp directly"
    )


def _check_holomorphic_input(value: Any, name: str, what: str = "grad") -> None:
    """Raise TypeError unless ``value`` is complex: holomorphic=True differentiates in z."""
    if not _is_complex(value):
        dtype = getattr(value, "dtype", type(value).__name__)
        raise TypeError(
            f"{what} with holomorphic=True requires complex inputs, but '{name}' is {dtype}"
        )


def _match(grad: Any, arg: Any, others: list[Any]) -> Any:
    """Give ``grad`` the type, shape and dtype of its argument; never alias another value."""
    complex_arg = _is_complex(arg)
    if not complex_arg and _is_complex(grad):
        grad = grad.real  # a real argument's cotangent: the real part (JAX's transpose)
    if not hasattr(arg, "shape"):
        if is_lazy(grad):
            return grad  # dask: a 0-d array, still lazy
        return complex(grad) if complex_arg else float(grad)
    shape = tuple(arg.shape)
    if not hasattr(grad, "shape") or tuple(grad.shape) != shape:
        if getattr(grad, "size", 1) != 1:
            raise RuntimeError(
                f"srcad internal error: gradient of shape {grad.shape} for an argument of "
                f"shape {shape}; please report this with the function"
            )
        if is_lazy(grad):
            xp = array_namespace(grad)
            grad = xp.broadcast_to(xp.astype(grad, arg.dtype), shape)
        else:
            grad = array_namespace(arg).full(shape, grad, dtype=arg.dtype)
    if grad.dtype != arg.dtype:
        grad = array_namespace(grad).astype(grad, arg.dtype)
    if isinstance(arg, np.generic) and not is_lazy(grad):
        return arg.dtype.type(grad)
    if isinstance(grad, np.ndarray) and not grad.flags.writeable:
        grad = grad.copy()
    if any(grad is other for other in others):
        grad = copied(grad)
    return grad


class Derivative(Generic[P]):
    """A derivative of a user function; transformed on first use, then cached.

    It takes the function's arguments; what it returns depends on ``wrt`` and ``has_aux``.
    """

    def __init__(
        self, func: Callable, wrt: Wrt, with_value: bool, has_aux: bool, holomorphic: bool = False
    ) -> None:
        given = func
        self._holomorphic = holomorphic
        # a method, partial, callable object, cache, forwarding decorator or NumPy function:
        # differentiate the Python function behind it, with what it binds passed along
        target, indices, single = _resolve_wrt(func, wrt)
        self._prefix: tuple[Any, ...] = target.prefix
        self._keywords = target.keywords
        wrt = indices[0] if single else indices
        func = target.function  # (checked by _resolve_wrt)
        self._func = func
        self._wrt, self._single = _normalize_wrt(func, wrt)
        self._with_value = with_value
        self._has_aux = has_aux
        self._generated: dict[tuple, Generated] = {}
        # code specialized for the ranks of NumPy arrays and Python numbers, by those facts
        self._specialized: dict[tuple, Generated] = {}
        self._plans: dict[tuple, tuple[Generated | None, bool]] = {}
        #: plans whose output has been seen real (code returning the gradients alone cannot
        #: tell a complex output, which grad refuses)
        self._real_output: set[tuple] = set()
        # the function transformed, when it is this one (its snapshot checks it fastest)
        self._target = func if inspect.isfunction(func) and _plain(func) is func else None
        self._signature = LiveSignature(func)
        self._params = _positional_params(func)
        # *args: each count of positional arguments gets a caller with that many parameters
        self._varargs = _has_varargs(func)
        #: **kwargs: each set of keywords it receives gets a caller naming them
        self._varkeywords = _has_varkeywords(func)
        self._counts: dict[tuple, Derivative] = {}
        params = self._signature.get().parameters.values()
        plain = all(p.kind in _POSITIONAL for p in params)
        self._arity = len(params) if plain else -1
        functools.update_wrapper(self, given, updated=())

    def generated(self, structures: tuple = (), args: tuple | None = None) -> Generated:
        """The compiled derivative, transformed again if a free name now means something else.

        ``structures`` pairs parameter indices with the pytree structure of their argument.
        With ``args``, the code a call with those positional arguments runs: specialized
        for their ranks where they are all NumPy arrays and Python numbers.
        """
        if args is not None:
            key = _facts(args) if len(args) == self._arity else None
            if key is not None:
                return self._specialize(key)
        gen = self._generated.get(structures)
        if gen is None or not gen.snapshot.current(self._target):
            single = self._single and not structures
            func = _plain(self._func)
            gen = cached(func, self._wrt, single, "grad", self._has_aux, structures)
            self._generated[structures] = gen
        return gen

    def _call_plain(self, args: tuple) -> Any:
        """The common call, checked cheaply: every argument given, each a NumPy array or a
        Python number, Python floats and floating-point arrays differentiated. It runs code
        specialized for the arguments' ranks; ``_SLOW`` (nothing run) for any other call.

        The arguments' types, ranks and dtype kinds key a plan made on the first such call:
        the specialized code, and whether the differentiated arguments are all floats."""
        key = self._plain_key(args)
        if key is None:
            return _SLOW
        plan = self._plans.get(key) or self._plan(key)
        gen, floats = plan
        if gen is None:
            return _SLOW  # an argument that is not differentiable: the checks say why
        if not gen.snapshot.current(self._target):
            gen = self._plan(key)[0]
        if gen.returns_value:
            value, grads = gen.function(*args)
            if type(value) is not float:
                if value is None or len(_shape(value)) != 0:
                    _not_scalar(self._func, value)
                _check_output(value, False)  # (holomorphic derivatives take the checked path)
        elif key not in self._real_output:
            value, grads = None, gen.function(*args)
            # the first call of its kind: code returning the gradients alone cannot tell a
            # complex output (which grad refuses), so the function runs once to show it (on
            # copies: it may update its arguments in place)
            copies = [a.copy() if type(a) is np.ndarray else a for a in args]
            _check_output(self._func(*copies), False)
            self._real_output.add(key)
        else:
            value, grads = None, gen.function(*args)
        if _any_complex(grads, self._single):
            # complex values inside (or a complex output, which needs holomorphic=True):
            # the checked path looks at the output and keeps the real parts
            return _SLOW
        if floats:  # numbers: a float for each (nothing can alias)
            if self._single:
                if type(grads) is not float:
                    grads = float(grads.real)
            else:
                for g in grads:
                    if type(g) is not float:
                        grads = tuple([g if type(g) is float else float(g.real) for g in grads])
                        break
        elif self._single:
            grads = _match_plain(grads, args[self._wrt[0]], args)
        else:
            fixed: list[Any] = []
            for g, k in zip(grads, self._wrt):
                fixed.append(_match_plain(g, args[k], (*args, *fixed)))
            grads = tuple(fixed)
        return (value, grads) if self._with_value else grads

    def _plain_key(self, args: tuple) -> tuple | None:
        """The arguments' types, ranks and dtype kinds, for a call every argument of which
        is given, a NumPy array or a Python number (None for any other call)."""
        if len(args) != self._arity:
            return None
        key = ()
        for arg in args:
            kind = type(arg)
            if kind is float or kind is int:
                key += (kind,)
            elif kind is np.ndarray:
                key += ((arg.ndim, 1 not in arg.shape, arg.dtype.kind),)
            else:
                return None
        return key

    def code_for(self, args: tuple) -> Generated:
        """The code a call with positional ``args`` runs (specialized for NumPy arrays and
        Python numbers where it can be), transformed if need be; nothing is run."""
        args = (*self._prefix, *args)
        key = self._plain_key(args) if not (self._keywords or self._has_aux) else None
        if key is not None:
            gen = (self._plans.get(key) or self._plan(key))[0]
            if gen is not None:
                return gen if gen.snapshot.current(self._target) else self._plan(key)[0]
        if self._varkeywords or self._varargs and len(args) > len(self._params):
            inner = self._with_count(len(args), _extra_keys(self._func, self._keywords))
            return inner.code_for(args)
        positional, _ = call_arguments(self._func, args, self._keywords, self._signature.get())
        return self.generated(_structures(list(positional), self._wrt))

    def _plan(self, key: tuple) -> tuple[Generated | None, bool]:
        """What calls with arguments of ``key`` (see :meth:`_call_plain`) run."""
        leaves = [key[k] for k in self._wrt]
        if self._holomorphic or not all(
            leaf is float or type(leaf) is tuple and leaf[2] == "f" for leaf in leaves
        ):
            return None, False  # (complex arguments take the checked path)
        facts = tuple(_NUMBER if type(k) is type else k[:2] for k in key)
        gen = self._specialized.get(facts)
        if gen is None or not gen.snapshot.current(self._target):
            gen = self._specialize(facts)
        plan = self._plans[key] = (gen, all(leaf is float for leaf in leaves))
        return plan

    def _specialize(self, key: tuple) -> Generated:
        mode = "grad" if self._with_value else "gradient"
        gen = cached(_plain(self._func), self._wrt, self._single, mode, facts=key)
        self._specialized[key] = gen
        return gen

    def srcad_function(self) -> Callable:
        """This derivative as a generated Python function (same parameters, returning the
        gradients, or ``(value, gradients)`` for value_and_grad), which srcad can
        differentiate again."""
        if self._has_aux or self._prefix:
            raise TypeError(
                "a derivative made with has_aux=True or of a bound method cannot be "
                "differentiated again; differentiate a plain function"
            )
        mode = "grad" if self._with_value else "gradient"
        func = _plain(self._func)
        # the helpers written out: code differentiated again holds no derivative handles
        gen = cached(func, self._wrt, self._single, mode, inline=True)
        generated = gen.function
        # what a caller writing this code out checks is still current (normalize/helpers.py)
        generated.__srcad_snapshot__ = gen.snapshot  # type: ignore[attr-defined]
        # the user's defaults as they are now (they may be reassigned after the build)
        generated.__defaults__ = func.__defaults__
        generated.__kwdefaults__ = func.__kwdefaults__
        return generated

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        if self._varkeywords or (
            self._varargs and len(self._prefix) + len(args) > len(self._params)
        ):
            given = {**self._keywords, **kwargs}
            return self._with_count(len(self._prefix) + len(args), _extra_keys(self._func, given))(
                *self._prefix, *args, **given
            )
        try:
            if self._prefix:
                # the object of a bound method first: no longer just f's arguments
                args = (*self._prefix, *args)  # type: ignore[assignment]
            if self._keywords:
                kwargs = {**self._keywords, **kwargs}  # type: ignore[assignment]
            if not kwargs and not self._has_aux:
                result = self._call_plain(args)  # NumPy arrays and numbers only: never dask
                if result is not _SLOW:
                    return result
            check_arrays(args, _labels(self._params, len(args)))
            check_arrays(kwargs.values(), kwargs)
            if any_lazy(args, kwargs) and not watching():  # dask arrays: warn if it computes
                with watch(getattr(self._func, "__name__", "f"), args, kwargs):
                    return self(*args[len(self._prefix) :], **kwargs)  # type: ignore[arg-type]
            # generated code takes every argument explicitly, defaults as they are now included
            positional, named = call_arguments(self._func, args, kwargs, self._signature.get())
            values = list(positional)
            structures = _structures(values, self._wrt)
            # checked before transforming: an object srcad cannot see into says so here
            leaves, groups = _wrt_leaves(values, self._wrt, self._params, structures)
            if self._holomorphic:
                for leaf, label in zip(leaves, _labels(self._params, len(leaves))):
                    _check_holomorphic_input(leaf, label)
            gen = self.generated(structures)
            value, grads = gen.function(*_expand(values, structures), **named)
            aux = None
            if self._has_aux:
                value, aux = value
            if value is None or len(_shape(value)) != 0:
                _not_scalar(self._func, value)
            _check_output(value, self._holomorphic)
            if self._single and not structures:
                grads = (grads,)
            fixed: list[Any] = []
            for g, leaf in zip(grads, leaves):
                fixed.append(_match(g, leaf, values + fixed))
            grads = _regroup(fixed, groups)
            if self._single:
                grads = grads[0]
            if self._has_aux:
                return ((value, aux), grads) if self._with_value else (grads, aux)
            return (value, grads) if self._with_value else grads
        except _OneElement:
            pass  # seeded below, outside the handler (its errors are then the user's)
        except Exception as exc:  # (the boundary inline: no extra call on the hot path)
            if not isinstance(exc, (TransformError, TypeError)):
                instead = self._not_scalar_instead(args, kwargs)
                if instead is _OneElement:
                    return self._one_element(args, kwargs)
                if instead is not None:
                    raise instead from None
            hide_internal_frames(exc)
            raise
        return self._one_element(args, kwargs)

    def _with_count(self, count: int, keys: tuple[str, ...] = ()) -> Derivative:
        """This derivative for calls with ``count`` positional arguments (``*args``) and
        the keywords ``keys`` for ``**kwargs``."""
        count = max(count, len(self._params)) if self._varargs else len(self._params)
        found = self._counts.get((count, keys))
        if found is None:
            for k in self._wrt:
                if k >= count:
                    raise ValueError(
                        f"wrt={k} is out of range: the call gives {count} positional arguments"
                    )
            wrt = self._wrt[0] if self._single else self._wrt
            caller = varargs_caller(self._func, count, keys)
            found = Derivative(caller, wrt, self._with_value, self._has_aux, self._holomorphic)
            self._counts[(count, keys)] = found
        return found

    def _one_element(self, args: tuple, kwargs: dict) -> Any:
        """The gradient of a function whose output has one element but more than zero
        axes (shape ``(1,)``, ``(1, 1)``): the pullback of a cotangent of ones in its shape
        (the generated gradient starts from the number 1.0). The output is returned as it is."""
        func = functools.partial(self._func, **kwargs) if kwargs else self._func
        if self._has_aux:
            out, pullback, aux = vjp(func, *args, has_aux=True)
        else:
            (out, pullback), aux = vjp(func, *args), None
        cotangents = pullback(array_namespace(out).ones_like(out))
        grads = tuple(cotangents[k] for k in self._wrt)
        if self._single:
            grads = grads[0]
        if self._has_aux:
            return ((out, aux), grads) if self._with_value else (grads, aux)
        return (out, grads) if self._with_value else grads

    def _not_scalar_instead(self, args: tuple, kwargs: dict) -> Any:
        """The error to raise when the gradient code failed because the function's output
        is not a scalar (its backward pass starts from one number: a rule reading the
        output's shape fails first, e.g. concatenate's ``piece_of``); ``_OneElement`` when
        the output has one element."""
        try:
            value = self._func(*args, **kwargs)
        except Exception:
            return None
        if self._has_aux and isinstance(value, tuple) and len(value) == 2:
            value = value[0]
        if value is not None and len(_shape(value)) == 0:
            return None
        if _has_one_element(value):
            return _OneElement
        try:
            _not_scalar(self._func, value)
        except TypeError as error:
            return error
        return None


_SLOW = object()


def _any_complex(grads: Any, single: bool) -> bool:
    """Whether a gradient (or one of a tuple of them) is complex."""
    for g in (grads,) if single else grads:
        if type(g) is complex or getattr(getattr(g, "dtype", None), "kind", None) == "c":
            return True
    return False


_NUMBER = (0, True)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _facts(args: tuple) -> tuple | None:
    """``(ndim, no axis of length 1)`` of each argument, if all are NumPy arrays or Python
    numbers (what :meth:`Derivative._call_plain` computes inline)."""
    facts = []
    for arg in args:
        kind = type(arg)
        if kind is np.ndarray:
            facts.append((arg.ndim, 1 not in arg.shape))
        elif kind is float or kind is int:
            facts.append(_NUMBER)
        else:
            return None
    return tuple(facts)


def _labels(params: list[str], count: int) -> list[str]:
    """Names for ``count`` positional arguments in messages (``params``, then numbers)."""
    return [params[k] if k < len(params) else str(k) for k in range(count)]


class _OneElement(Exception):
    """The output has one element in an array of one or more axes: not an error."""


def _has_one_element(value: Any) -> bool:
    shape = _shape(value) if hasattr(value, "shape") else None
    return shape is not None and len(shape) > 0 and all(n == 1 for n in shape)


def _not_scalar(func: Callable, value: Any) -> None:
    if _has_one_element(value):
        raise _OneElement
    if value is None:
        raise TypeError(
            f"grad needs a function with a scalar output; {func.__name__} returned None"
        )
    raise TypeError(
        f"grad needs a function with a scalar output; {func.__name__} returned "
        f"shape {_shape(value)}. Use srcad.vjp for non-scalar outputs"
    )


def _match_plain(grad: Any, arg: Any, others: tuple) -> Any:
    """:func:`_match` for a Python float or a NumPy array, its common cases first."""
    if type(arg) is float:
        return grad if type(grad) is float or is_lazy(grad) else float(grad.real)
    if (
        type(grad) is np.ndarray
        and grad.shape == arg.shape
        and grad.dtype == arg.dtype
        and grad.flags.writeable
    ):
        for other in others:
            if grad is other:
                return copied(grad)
        return grad
    return _match(grad, arg, list(others))


def _plain(f: Callable) -> Callable:
    """``f``; the generated function of a derivative (to differentiate it again); or, for
    a custom_vjp / custom_jvp / checkpoint function, a ``def`` that calls it (so its rule
    is used as it is inside any other function)."""
    if isinstance(f, Derivative):
        return f.srcad_function()
    if isinstance(f, (CustomVJP, CustomJVP, Checkpointed)) or hasattr(f, "srcad_handle"):
        return _caller(f)
    return f


def _caller(obj: Any) -> Callable:
    """``def name(a, b=...): return obj(a, b)``, generated once per object."""
    fun = obj.fun
    caller = known_caller(("rule", id(obj)), obj)
    if caller is None:
        params = _positional_params(fun)
        if len(params) != len(inspect.signature(fun).parameters):
            raise TypeError(f"{fun.__name__}: differentiate a function of positional parameters")
        name = fun.__name__ if fun.__name__.isidentifier() else "f"
        args = ", ".join(params)
        scope = {"__srcad_callee__": obj}
        caller = new_caller(("rule", id(obj)), obj, name, args, f"__srcad_callee__({args})", scope)
    if caller.__defaults__ is not fun.__defaults__:
        caller.__defaults__ = fun.__defaults__  # (rebound since: the caller's too)
    return caller


def _structures(values: list[Any], wrt: tuple[int, ...]) -> tuple:
    """``(index, treedef)`` for each differentiated argument that is a pytree."""
    return tuple((k, pytree.flatten(values[k])[1]) for k in wrt if pytree.is_container(values[k]))


def _wrt_leaves(
    values: list[Any], wrt: tuple[int, ...], params: list[str], structures: tuple
) -> tuple[list[Any], list[Any]]:
    """Every differentiated leaf (checked to be floating point) and how to regroup them."""
    trees = dict(structures)
    leaves: list[Any] = []
    groups: list[Any] = []
    for k in wrt:
        name = params[k] if k < len(params) else str(k)
        if k in trees:
            flat, treedef = pytree.flatten(values[k])
            for path, leaf in zip(pytree.paths(treedef), flat):
                _check_differentiable(leaf, name + "".join(f"[{p!r}]" for p in path))
            leaves.extend(flat)
            groups.append((treedef, len(flat)))
        else:
            _check_differentiable(values[k], name)
            leaves.append(values[k])
            groups.append(None)
    return leaves, groups


def _expand(values: list[Any], structures: tuple) -> list[Any]:
    trees = dict(structures)
    out: list[Any] = []
    for k, value in enumerate(values):
        out.extend(pytree.flatten(value)[0] if k in trees else [value])
    return out


def _regroup(grads: list[Any], groups: list[Any]) -> tuple[Any, ...]:
    out = []
    it = iter(grads)
    for group in groups:
        if group is None:
            out.append(next(it))
        else:
            treedef, count = group
            out.append(pytree.unflatten(treedef, [next(it) for _ in range(count)]))
    return tuple(out)


_Derivative = Derivative  # its name before #18, still used by branches written before it


class DerivativeDecorator(Protocol):
    """What ``srcad.grad(wrt=...)`` returns: a decorator making a :class:`Derivative`."""

    def __call__(self, f: Callable[P, Any], /) -> Derivative[P]: ...


Pullback = Callable[[Any], tuple[Any, ...]]


@overload
def grad(
    f: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    has_aux: bool = False,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> Derivative[P]: ...


@overload
def grad(
    f: None = None,
    wrt: Wrt | None = None,
    *,
    has_aux: bool = False,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> DerivativeDecorator: ...


@boundary
def grad(
    f: Callable[P, Any] | None = None,
    wrt: Wrt | None = None,
    *,
    has_aux: bool = False,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> Derivative[P] | DerivativeDecorator:
    """The gradient of scalar-valued ``f`` with respect to parameter(s) ``wrt`` (the
    first by default).

    Usable as ``srcad.grad(f, wrt=...)``, ``@srcad.grad`` or ``@srcad.grad(wrt=...)``.
    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the derivative returns
    ``(gradients, aux)``, as in JAX; ``argnums=`` is JAX's name for ``wrt``. Complex
    arguments get JAX's gradient df/dx - i df/dy of a real ``f``; with
    ``holomorphic=True``, ``f`` and its arguments are complex and the result is f'(z).
    """
    wrt = _argnums(wrt, argnums)
    if f is None:
        return boundary(lambda func: _derivative(func, wrt, False, has_aux, holomorphic))  # type: ignore[no-any-return]
    return _derivative(f, wrt, False, has_aux, holomorphic)


@overload
def value_and_grad(
    f: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    has_aux: bool = False,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> Derivative[P]: ...


@overload
def value_and_grad(
    f: None = None,
    wrt: Wrt | None = None,
    *,
    has_aux: bool = False,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> DerivativeDecorator: ...


@boundary
def value_and_grad(
    f: Callable[P, Any] | None = None,
    wrt: Wrt | None = None,
    *,
    has_aux: bool = False,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> Derivative[P] | DerivativeDecorator:
    """Like :func:`grad`, but the derivative returns ``(value, gradient)``
    (``((value, aux), gradient)`` with ``has_aux=True``)."""
    wrt = _argnums(wrt, argnums)
    if f is None:
        return boundary(lambda func: _derivative(func, wrt, True, has_aux, holomorphic))  # type: ignore[no-any-return]
    return _derivative(f, wrt, True, has_aux, holomorphic)


def _derivative(
    f: Callable, wrt: Wrt, with_value: bool, has_aux: bool, holomorphic: bool
) -> Derivative:
    """:class:`Derivative` of ``f``; of a function jacobian or hessian made, the function
    evaluating its table (one level more), which is differentiated again the same way."""
    table = table_of(f)
    if table is None:
        return Derivative(f, wrt, with_value, has_aux, holomorphic)
    _refuse_options(table, "grad", has_aux=has_aux, holomorphic=holomorphic)
    gradient = table.derivative(wrt, scalar=True)
    if with_value:
        both = Table(table.origin, (table.leaves, gradient.leaves))
        return function_of(both, "value_and_grad")  # type: ignore[return-value]
    return function_of(gradient, "grad")  # type: ignore[return-value]


def _refuse_options(table: Table, what: str, **options: bool) -> None:
    """Raise for an option the derivatives of a jacobian's or hessian's function lack."""
    for name, value in options.items():
        if value:
            raise TypeError(
                f"srcad.{what}({name}=True) of {table.origin.name}, a function made by "
                f"srcad.jacobian or srcad.hessian, is not supported; differentiate it "
                f"without {name}"
            )


def _argnums(wrt: Wrt | None, argnums: Wrt | None) -> Wrt:
    """``wrt``, or JAX's ``argnums`` in its place (not both); the first parameter if
    neither is given."""
    if argnums is None:
        return 0 if wrt is None else wrt
    if wrt is not None:
        raise TypeError(
            "give wrt= or argnums= (JAX's name for it), not both: "
            f"got wrt={wrt!r} and argnums={argnums!r}"
        )
    return argnums


@overload
def vjp(
    f: Callable[..., Any], *primals: Any, has_aux: Literal[False] = False
) -> tuple[Any, Pullback]: ...


@overload
def vjp(
    f: Callable[..., Any], *primals: Any, has_aux: Literal[True]
) -> tuple[Any, Pullback, Any]: ...


@boundary
def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(f(*primals), pullback)``; ``pullback(cotangent)`` gives one cotangent per primal.

    Cotangents of non-float arguments (integers, strings, ...) are ``None``. With
    ``has_aux=True``, ``f`` returns ``(output, aux)`` and vjp returns ``(out, pullback, aux)``.
    """
    table = table_of(f)
    if table is not None:  # a function jacobian or hessian made
        _refuse_options(table, "vjp", has_aux=has_aux)
        return table.vjp(primals)
    target = _target(f, len(primals))
    prefix, keywords = target.prefix, target.keywords
    inner = target.function
    if isinstance(inner, Derivative) and not has_aux:
        values = [*prefix, *primals]
        structures = _structures(values, inner._wrt)
        if structures:  # a gradient with respect to pytrees, differentiated again
            return _vjp_of_tree_gradient(inner, values, structures, keywords, len(prefix))
    primals = (*prefix, *primals)
    f = _called_function(inner, len(primals), keywords)
    params = _positional_params(f)
    check_arrays(primals, _labels(params, len(primals)))
    if len(primals) > len(params) and params:
        raise TypeError(f"{f.__name__}() takes {len(params)} arguments, got {len(primals)}")
    wrt = []
    for k, value in enumerate(primals):
        leaves = pytree.flatten(value)[0] if pytree.is_container(value) else [value]
        try:
            for leaf in leaves:
                _check_differentiable(leaf, params[k] if k < len(params) else str(k))
        except TypeError:
            continue
        if leaves:
            wrt.append(k)
    if not wrt:
        raise TypeError(f"vjp of {f.__name__}: no argument is a float or floating-point array")
    positional, named = call_arguments(f, primals, keywords)
    values = list(positional)
    structures = _structures(values, tuple(wrt))
    gen = cached(f, tuple(wrt), False, "vjp", has_aux, structures)
    leaves, groups = _wrt_leaves(values, tuple(wrt), gen.params, structures)
    out, residuals = gen.function(*_expand(values, structures), **named)
    if has_aux:
        out, aux = out
    if out is None:
        raise TypeError(f"vjp needs a function that returns a value; {f.__name__} returned None")
    backward = gen.backward
    # a backward pass that puts arrays back in place changes its residuals: keep them
    keep = restores_in_place(backward)
    out_leaves, out_tree = pytree.flatten(out)
    out_shapes = [_shape(leaf) for leaf in out_leaves]
    # one cotangent for the whole output: a list or tuple of arrays the function built
    # (``return out`` of appends, ``return tuple(...)``), not a display it returns
    whole = (
        backward.__code__.co_argcount == 2
        and isinstance(out, (list, tuple))
        and out_tree[0] in ("list", "tuple")
        and all(child == ("leaf",) for child in out_tree[3])
    )

    @boundary
    def pullback(cotangent: Any) -> tuple[Any, ...]:
        check_arrays([cotangent], ["cotangent"], "the cotangent")
        ct_leaves, ct_tree = pytree.flatten(cotangent)
        if ct_tree != out_tree and not (len(out_leaves) == 1 and len(ct_leaves) == 1):
            raise ValueError(f"the cotangent's structure does not match what {f.__name__} returned")
        for ct, shape in zip(ct_leaves, out_shapes):
            if _shape(ct) != shape:
                raise ValueError(
                    f"cotangent has shape {_shape(ct)}, but {f.__name__} returned shape {shape}"
                )
        seeds = list(ct_leaves)
        if whole and len(seeds) != 1:
            seeds = [list(seeds)]  # a list the function built: its gradient is one list
        if keep:
            with KeptResiduals(residuals):
                grads = backward(residuals, *seeds)
        else:
            grads = backward(residuals, *seeds)
        fixed: list[Any] = []
        for g, leaf in zip(grads, leaves):
            fixed.append(_match(g, leaf, [*values, *leaves, *ct_leaves, *fixed]))
        result: list[Any] = [None] * len(primals)
        for k, g in zip(wrt, _regroup(fixed, groups)):
            result[k] = g
        return tuple(result[len(prefix) :])

    pullback.srcad_source = gen.source  # type: ignore[attr-defined]
    return (out, pullback, aux) if has_aux else (out, pullback)


def argument_tuples(what: str, primals: Any, tangents: Any) -> tuple[tuple, tuple]:
    """``primals`` and ``tangents`` as tuples: each must be a tuple or list of arguments."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(
                f"{what} takes {name} as a tuple (or list) with one entry per argument of "
                f"the function, as JAX does: {what}(f, (x,), (v,)); got "
                f"{type(value).__name__}"
            )
    return tuple(primals), tuple(tangents)


@overload
def jvp(
    f: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: Literal[False] = False,
) -> tuple[Any, Any]: ...


@overload
def jvp(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: Literal[True]
) -> tuple[Any, Any, Any]: ...


@boundary
def jvp(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> tuple[Any, ...]:
    """``(f(*primals), tangent_out)``: the directional derivative of ``f`` at ``primals``
    along ``tangents``, by forward-mode source transformation.

    ``primals`` is a tuple (or list) of the arguments, as in JAX (anything else is a
    TypeError); ``tangents`` has one entry per primal, of the same structure and shape;
    ``None`` for an argument that is not differentiated (and for integers, strings, ...). With
    ``has_aux=True``, ``f`` returns ``(output, aux)`` and jvp returns ``(out, tangent, aux)``.
    """
    primals, tangents = argument_tuples("jvp", primals, tangents)
    table = table_of(f)
    if table is not None:  # a function jacobian or hessian made
        _refuse_options(table, "jvp", has_aux=has_aux)
        return table.jvp(primals, tangents)
    target = _target(f, len(primals))
    prefix, keywords = target.prefix, target.keywords
    if len(primals) != len(tangents):
        raise ValueError(
            f"jvp needs one tangent per primal: got {len(primals)} primals and "
            f"{len(tangents)} tangents"
        )
    inner = target.function
    if isinstance(inner, Derivative) and not has_aux:
        values = [*prefix, *primals]
        structures = _structures(values, inner._wrt)
        if structures:  # a gradient with respect to pytrees, differentiated again
            padded = [*(None,) * len(prefix), *tangents]
            return _jvp_of_tree_gradient(inner, values, padded, structures, keywords)
    f = _called_function(inner, len(prefix) + len(primals), keywords)
    params = _positional_params(f)
    names = params  # the bound arguments' parameters first, as in ``f``
    labels = _labels(names, len(prefix) + len(primals))[len(prefix) :]
    check_arrays(primals, labels)
    check_arrays(tangents, labels, "the tangent of {}")
    wrt = []
    tangent_leaves: list[Any] = []
    for k, (value, tangent) in enumerate(zip(primals, tangents)):
        name = names[len(prefix) + k] if len(prefix) + k < len(names) else str(k)
        if tangent is None:
            continue
        leaves, tree = pytree.flatten(value) if pytree.is_container(value) else ([value], None)
        t_leaves, t_tree = (
            pytree.flatten(tangent) if pytree.is_container(value) else ([tangent], None)
        )
        if t_tree != tree:
            raise ValueError(f"the tangent of '{name}' does not have the structure of its primal")
        for path, leaf, t in zip(pytree.paths(tree) if tree else [()], leaves, t_leaves):
            label = name + "".join(f"[{p!r}]" for p in path)
            _check_differentiable(leaf, label)
            if _shape(t) != _shape(leaf):
                raise ValueError(
                    f"the tangent of '{label}' has shape {_shape(t)}, its primal {_shape(leaf)}"
                )
        wrt.append(len(prefix) + k)
        tangent_leaves.extend(_match(t, leaf, []) for leaf, t in zip(leaves, t_leaves))
    values = [*prefix, *primals]
    if not wrt:
        out = f(*values, **keywords)
        zero = pytree.unflatten(*_zero_leaves(out[0] if has_aux else out))
        return (out[0], zero, out[1]) if has_aux else (out, zero)
    positional, named = call_arguments(f, values, keywords)
    values = list(positional)
    structures = _structures(values, tuple(wrt))
    # (code calling a custom_jvp function's rule with a tuple of tangents: written out)
    inline = calls_tangent_rules(f)
    gen = cached(f, tuple(wrt), False, "jvp", has_aux, structures, inline=inline)
    out, tangent_out = gen.function(*_expand(values, structures), *tangent_leaves, **named)
    tangent_out = _unshared(tangent_out, tangent_leaves)
    aux = None
    if has_aux:
        out, aux = out
    if out is None:
        raise TypeError(f"jvp needs a function that returns a value; {f.__name__} returned None")
    tangent_out = _dtypes_of(tangent_out, out)
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


def _tree_gradient(derivative: Derivative, values: list[Any], structures: tuple) -> tuple:
    """The code of a derivative for pytree arguments of ``values``' structures (one
    parameter and one gradient per leaf), and how its gradients regroup."""
    mode = "grad" if derivative._with_value else "gradient"
    gen = cached(
        _plain(derivative._func), derivative._wrt, False, mode, structures=structures, inline=True
    )
    _, groups = _wrt_leaves(values, derivative._wrt, derivative._params, structures)
    return gen, groups


def _vjp_of_tree_gradient(
    derivative: Derivative,
    values: list[Any],
    structures: tuple,
    keywords: dict[str, Any],
    bound: int,
) -> tuple[Any, Any]:
    """``vjp`` of a derivative with respect to pytree arguments (see
    :func:`_jvp_of_tree_gradient`); the pullback takes and gives pytrees."""
    gen, groups = _tree_gradient(derivative, values, structures)
    out, flat_pullback = vjp(
        functools.partial(gen.function, **keywords), *_expand(values, structures)
    )
    trees = dict(structures)
    counts = {k: len(pytree.flatten(values[k])[0]) for k in trees}

    def flat(grads: Any) -> tuple:
        grads = (grads,) if derivative._single else tuple(grads)
        leaves: list[Any] = []
        for g, group in zip(grads, groups):
            leaves.extend([g] if group is None else pytree.flatten(g)[0])
        return tuple(leaves)

    @boundary
    def pullback(cotangent: Any) -> tuple[Any, ...]:
        if derivative._with_value:
            value_ct, grads_ct = cotangent
            cotangents = flat_pullback((value_ct, flat(grads_ct)))
        else:
            cotangents = flat_pullback(flat(cotangent))
        it = iter(cotangents)
        result = []
        for k in range(len(values)):
            if k in trees:
                result.append(pytree.unflatten(trees[k], [next(it) for _ in range(counts[k])]))
            else:
                result.append(next(it))
        return tuple(result[bound:])

    return _regrouped(derivative, groups, out), pullback


def _regrouped(derivative: Derivative, groups: list[Any], result: Any) -> Any:
    """What a derivative returns, from its code for pytree arguments' leaves."""
    value, flat = result if derivative._with_value else (None, result)
    grads = _regroup(list(flat), groups)
    grads = grads[0] if derivative._single else grads
    return (value, grads) if derivative._with_value else grads


def _jvp_of_tree_gradient(
    derivative: Derivative,
    values: list[Any],
    tangents: list[Any],
    structures: tuple,
    keywords: dict[str, Any],
) -> tuple[Any, Any]:
    """``jvp`` of a derivative with respect to pytree arguments: forward mode over its code
    for their structures (one parameter and one gradient per leaf), regrouped as it returns
    them (how ``hessian``, ``hvp`` and ``check_grad(order=2)`` work on pytrees)."""
    gen, groups = _tree_gradient(derivative, values, structures)
    trees = dict(structures)
    flat_tangents: list[Any] = []
    for k, (value, tangent) in enumerate(zip(values, tangents)):
        if k not in trees:
            flat_tangents.append(tangent)
        elif tangent is None:
            flat_tangents.extend([None] * len(pytree.flatten(value)[0]))
        else:
            leaves, tree = pytree.flatten(tangent)
            if tree != trees[k]:
                raise ValueError(
                    f"the tangent of argument {k} does not have its primal's structure"
                )
            flat_tangents.extend(leaves)
    leaves = _expand(values, structures)
    out, tangent_out = jvp(functools.partial(gen.function, **keywords), leaves, flat_tangents)
    return _regrouped(derivative, groups, out), _regrouped(derivative, groups, tangent_out)


def _dtypes_of(tangent_out: Any, out: Any) -> Any:
    """``tangent_out`` with the floating dtype of each output leaf: a Python float's tangent
    (``dy = 1.0``) selected into a float32 result must not make the tangent float64, and
    a real output's tangent is real."""
    leaves, tree = pytree.flatten(tangent_out)
    values, _ = pytree.flatten(out)
    if len(leaves) != len(values):
        return tangent_out
    changed = False
    for k, (leaf, value) in enumerate(zip(leaves, values)):
        if _is_complex(leaf) and not _is_complex(value):
            # a real output's tangent is real: the real part (complex values met on the way,
            # e.g. by a real gradient of a function of complex ones, leave an imaginary part
            # that is no part of the derivative)
            leaf = leaves[k] = leaf.real
            changed = True
        dtype = getattr(value, "dtype", None)
        if dtype is not None and getattr(leaf, "dtype", dtype) != dtype and _floating(value):
            leaves[k] = array_namespace(leaf).astype(leaf, dtype)
            changed = True
    return pytree.unflatten(tree, leaves) if changed else tangent_out


def _floating(value: Any) -> bool:
    """Whether the array ``value`` has a real floating dtype (NumPy's or another library's)."""
    kind = getattr(value.dtype, "kind", None)
    if kind is not None:
        return kind == "f"
    return bool(array_namespace(value).isdtype(value.dtype, "real floating"))


def _unshared(tangent_out: Any, given: list[Any]) -> Any:
    """``tangent_out`` with a copy of each leaf that is a tangent the caller gave, or
    another leaf (``f(x) = x`` passes ``dx`` through; changing the result must not change
    the caller's tangent)."""
    leaves, tree = pytree.flatten(tangent_out)
    seen: list[Any] = list(given)
    changed = False
    for k, leaf in enumerate(leaves):
        if hasattr(leaf, "shape") and any(leaf is other for other in seen):
            leaves[k] = copied(leaf)
            changed = True
        seen.append(leaves[k])
    return pytree.unflatten(tree, leaves) if changed else tangent_out


def _zero_leaves(out: Any) -> tuple[Any, list[Any]]:
    leaves, tree = pytree.flatten(out)
    return tree, [_match(0.0, leaf, []) if hasattr(leaf, "shape") else 0.0 for leaf in leaves]


@boundary
def jacobian(
    f: Callable[P, Any],
    wrt: Wrt | None = None,
    mode: str = "auto",
    *,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> Callable[P, Any]:
    """A function computing the Jacobian of ``f`` with respect to parameter(s) ``wrt``.

    The Jacobian has shape ``out.shape + arg.shape`` (a tuple of those for a tuple ``wrt``).
    ``mode="fwd"`` builds it a column at a time with :func:`jvp`, ``"rev"`` a row at a time
    with :func:`vjp`; ``"auto"`` picks forward mode when the inputs are no larger than the
    output. The Jacobian of such a function (``jacobian(jacobian(f))``) is forward mode over
    forward mode, shaped ``out.shape + arg_i.shape + arg_k.shape``.
    As JAX's: complex arguments need reverse mode (JAX's jacrev) and a real output, unless
    ``holomorphic=True`` (complex arguments and outputs; the result is f'(z)).
    """
    if mode not in ("auto", "fwd", "rev"):
        raise ValueError(f"mode must be 'auto', 'fwd' or 'rev', got {mode!r}")
    table = table_of(f)
    if table is not None:  # of a jacobian's or hessian's function: forward mode, a level more
        _refuse_options(table, "jacobian", holomorphic=holomorphic)
        return function_of(table.derivative(_argnums(wrt, argnums), False), "jacobian")
    indices, single = caller_wrt(f, _argnums(wrt, argnums))

    @boundary
    def jacobian_of(*args: Any) -> Any:
        check_arrays(args, _labels(_positional_params(f), len(args)))
        args = list(args)
        if any(pytree.is_container(args[k]) for k in indices):
            blocks = [_tree_jacobian_fwd(f, args, k) for k in indices]
            return blocks[0] if single else tuple(blocks)
        for k in indices:
            _check_array_argument(args[k], f"argument {k}", "jacobian")
        out = None
        chosen = mode
        if mode == "auto":
            out = f(*args)
            inputs = sum(int(np.size(args[k])) for k in indices)
            chosen = "fwd" if inputs <= int(np.size(out)) else "rev"
        if holomorphic or any(_is_complex(args[k]) for k in indices):
            out = f(*args) if out is None else out
            chosen = _complex_jacobian_mode(args, indices, out, mode, chosen, holomorphic)
        blocks = (
            _jacobian_fwd(f, args, indices) if chosen == "fwd" else _jacobian_rev(f, args, indices)
        )
        return blocks[0] if single else tuple(blocks)

    # what differentiates it again: forward mode over f, along each argument in wrt
    target = _target(f)
    leaves = tuple(Leaf((k + len(target.prefix),)) for k in indices)
    refused = _refused_again("jacobian") if holomorphic else None
    origin = Origin(target.function, target.prefix, target.keywords, _name(f), refused)
    jacobian_of.srcad_table = Table(origin, leaves[0] if single else leaves)  # type: ignore[attr-defined]
    jacobian_of.srcad_made_by = "jacobian"  # type: ignore[attr-defined]
    return jacobian_of  # type: ignore[return-value]


def _name(f: Any) -> str:
    """``f``'s name, for messages and for the names of its derivatives."""
    name = str(getattr(f, "__name__", None) or type(f).__name__)
    return name if name.isidentifier() else "f"


def _refused_again(what: str) -> str:
    return (
        f"a function made by srcad.{what} with holomorphic=True cannot be differentiated "
        f"again yet; differentiate with respect to real arguments"
    )


def _complex_jacobian_mode(
    args: list[Any], indices: tuple[int, ...], out: Any, mode: str, chosen: str, holo: bool
) -> str:
    """The mode of a Jacobian with complex values, after JAX's checks: with
    ``holomorphic=True`` complex arguments and output (either mode); without it complex
    arguments need reverse mode and a real output (a forward-mode column would miss the
    imaginary directions)."""
    if holo:
        for k in indices:
            _check_holomorphic_input(args[k], f"argument {k}", "jacobian")
        _check_output(out, True, "jacobian")
        return chosen
    if mode == "fwd":
        raise TypeError(
            "jacobian(mode='fwd') requires real-valued arguments; for holomorphic "
            "differentiation pass holomorphic=True, else use mode='rev' or srcad.jvp"
        )
    _check_output(out, False, "jacobian of complex arguments")
    return "rev"


def _basis(x: Any) -> Any:
    """Unit tangents shaped like ``x``, one per element."""
    if not hasattr(x, "shape"):
        yield 1.0
        return
    xp = array_namespace(x)
    for k in range(int(np.size(x))):
        e = np.zeros(int(np.size(x)), dtype=x.dtype)
        e[k] = 1
        yield xp.asarray(e.reshape(x.shape))


def _stack(
    parts: list[Any], leading: tuple[int, ...], trailing: tuple[int, ...], columns: bool = False
) -> Any:
    """Rows (one per output element) or columns (one per input element) of a Jacobian as
    one array of shape ``leading + trailing`` (output shape, then input shape)."""
    xp = array_namespace(*[p for p in parts if hasattr(p, "shape")] or [np.zeros(0)])
    stacked = xp.stack([xp.asarray(p) for p in parts], axis=-1 if columns else 0)
    return xp.reshape(stacked, leading + trailing)


def _jacobian_fwd(f: Callable, args: list[Any], indices: tuple[int, ...]) -> list[Any]:
    blocks = []
    for k in indices:
        columns = []
        out = None
        for e in _basis(args[k]):
            tangents = [None] * len(args)
            tangents[k] = e
            out, column = jvp(f, args, tangents)
            columns.append(column)
        if isinstance(out, tuple):  # several outputs: one block each
            parts = zip(*columns)
            blocks.append(
                tuple(_stack(list(p), _shape(o), _shape(args[k]), True) for p, o in zip(parts, out))
            )
        else:
            blocks.append(_stack(columns, _shape(out), _shape(args[k]), True))
    return blocks


def _tree_jacobian_fwd(f: Callable, args: list[Any], k: int) -> Any:
    """The Jacobian of ``f`` with respect to argument ``k``, a pytree, a column per element
    of each leaf with :func:`jvp`: the output's structure, each output leaf replaced by the
    argument's structure of blocks ``out_leaf.shape + arg_leaf.shape`` (as JAX nests them)."""
    in_leaves, in_tree = pytree.flatten(args[k])
    for path, leaf in zip(pytree.paths(in_tree), in_leaves):
        _check_differentiable(leaf, f"argument {k}" + "".join(f"[{p!r}]" for p in path))
    zeros = [_match(0.0, leaf, []) for leaf in in_leaves]
    columns: list[list[list[Any]]] = []  # [input leaf][element] -> output leaves
    out_leaves: list[Any] = []
    out_tree = None
    for j, leaf in enumerate(in_leaves):
        columns.append([])
        for e in _basis(leaf):
            tangent_leaves = list(zeros)
            tangent_leaves[j] = e if hasattr(leaf, "shape") else float(e)
            tangents: list[Any] = [None] * len(args)
            tangents[k] = pytree.unflatten(in_tree, tangent_leaves)
            out, tangent_out = jvp(f, args, tangents)
            out_leaves, out_tree = pytree.flatten(out)
            columns[j].append(pytree.flatten(tangent_out)[0])
    if out_tree is None:  # an argument without elements
        out_leaves, out_tree = pytree.flatten(f(*args))
    blocks = []
    for i, out_leaf in enumerate(out_leaves):
        row = []
        for j, leaf in enumerate(in_leaves):
            parts = [column[i] for column in columns[j]]
            if parts:
                row.append(_stack(parts, _shape(out_leaf), _shape(leaf), columns=True))
            else:
                row.append(np.zeros(_shape(out_leaf) + _shape(leaf)))
        blocks.append(pytree.unflatten(in_tree, row))
    return pytree.unflatten(out_tree, blocks)


def _jacobian_rev(f: Callable, args: list[Any], indices: tuple[int, ...]) -> list[Any]:
    out, pullback = vjp(f, *args)
    rows: list[list[Any]] = [[] for _ in indices]
    for e in _basis(out if hasattr(out, "shape") else float(out)):
        grads = pullback(e if hasattr(out, "shape") else float(e))
        for row, k in zip(rows, indices):
            row.append(grads[k])
    return [_stack(row, _shape(out), _shape(args[k])) for row, k in zip(rows, indices)]


@boundary
def hessian(
    f: Callable[P, Any],
    wrt: Wrt | None = None,
    *,
    argnums: Wrt | None = None,
    holomorphic: bool = False,
) -> Callable[P, Any]:
    """A function computing the Hessian of scalar ``f``: forward mode over the reverse-mode
    gradient. Shape ``arg.shape + arg.shape``; for a tuple ``wrt``, a tuple of tuples
    ``H[i][j]`` of shape ``arg_i.shape + arg_j.shape``. Complex arguments need
    ``holomorphic=True`` (as JAX's); for a real function of complex arguments, take
    srcad.jvp of srcad.grad (or srcad.hvp)."""
    table = table_of(f)
    if table is not None:  # of a jacobian's or hessian's function: two levels more
        _refuse_options(table, "hessian", holomorphic=holomorphic)
        wrt = _argnums(wrt, argnums)
        return function_of(table.derivative(wrt, True).derivative(wrt, False), "hessian")
    # a partial, method or callable object: the Hessian of the function behind it, with
    # what it binds passed along (its gradient, a Derivative, is differentiated again)
    target, indices, single = _resolve_wrt(f, _argnums(wrt, argnums))
    gradient = _bound_keywords(
        grad(target.function, wrt=indices, holomorphic=holomorphic), target.keywords
    )

    @boundary
    def hessian_of(*args: Any) -> Any:
        args = (*target.prefix, *args)
        labels = _labels(_positional_params(target.function), len(args))
        check_arrays(args, labels)
        for k in indices:
            if k < len(args) and _is_complex(args[k]) != holomorphic:
                if holomorphic:
                    _check_holomorphic_input(args[k], labels[k], "hessian")
                raise TypeError(
                    f"hessian of complex argument '{labels[k]}' needs holomorphic=True (as "
                    "JAX's: its forward-mode columns would miss the imaginary directions); "
                    "for a real function, take srcad.jvp of srcad.grad or srcad.hvp"
                )
        if any(k < len(args) and pytree.is_container(args[k]) for k in indices):
            # the gradient is a tuple, one per wrt: so is each row's outer structure
            rows = [_tree_jacobian_fwd(gradient, list(args), k) for k in indices]
            table = tuple(
                tuple(rows[j][i] for j in range(len(indices))) for i in range(len(indices))
            )
            return table[0][0] if single else table
        for k in indices:  # before the gradient is transformed (it would meet p.w first)
            if k < len(args):
                _check_array_argument(args[k], labels[k], "hessian")
        rows = _jacobian_fwd(gradient, list(args), indices)  # rows[j]: d(grads)/d(arg j)
        table = tuple(tuple(rows[j][i] for j in range(len(indices))) for i in range(len(indices)))
        return table[0][0] if single else table

    # what differentiates it again: forward mode over the gradient's code, along each
    # argument in wrt (H[i][j]: the j-th level of the i-th gradient)
    unbound = grad(target.function, wrt=indices[0] if single else indices)
    if single:
        leaves: Any = Leaf(indices)
    else:
        leaves = tuple(tuple(Leaf((j,), (i,)) for j in indices) for i in range(len(indices)))
    refused = _refused_again("hessian") if holomorphic else None
    origin = Origin(unbound, target.prefix, target.keywords, _name(f), refused)
    hessian_of.srcad_table = Table(origin, leaves)  # type: ignore[attr-defined]
    hessian_of.srcad_made_by = "hessian"  # type: ignore[attr-defined]
    return hessian_of  # type: ignore[return-value]


@boundary
def hvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    """The Hessian of scalar ``f`` at ``primals`` times ``tangents``, without forming the
    Hessian: one forward-mode pass over the generated gradient. ``primals`` and
    ``tangents`` are tuples (or lists) with one entry per argument, as in JAX. One result
    per primal (``None`` where the tangent is ``None``); a single result for a single
    primal."""
    primals, tangents = argument_tuples("hvp", primals, tangents)
    wrt = tuple(k for k, t in enumerate(tangents) if t is not None)
    if not wrt:
        raise ValueError("hvp needs at least one tangent that is not None")
    table = table_of(f)
    if table is not None:  # of a jacobian's or hessian's function: jvp of its gradient
        _, product = table.derivative(wrt, True).jvp(primals, tangents)
        result: list[Any] = [None] * len(primals)
        for k, value in zip(wrt, product):
            result[k] = value
        return result[0] if len(primals) == 1 else tuple(result)
    target, indices, _ = _resolve_wrt(f, wrt)
    gradient = _bound_keywords(grad(target.function, wrt=indices), target.keywords)
    bound = (None,) * len(target.prefix)
    _, product = jvp(gradient, (*target.prefix, *primals), (*bound, *tangents))
    result = [None] * len(primals)
    for k, value in zip(wrt, product):
        result[k] = value
    return result[0] if len(primals) == 1 else tuple(result)


def _bound_keywords(f: Callable, keywords: dict[str, Any]) -> Callable:
    """``f`` called with ``keywords`` (those a partial binds), if there are any."""
    return functools.partial(f, **keywords) if keywords else f


@boundary
def source(df: Any, wrt: Wrt = 0, mode: str = "rev", *, example_args: tuple | None = None) -> str:
    """The generated Python source of a derivative made by srcad, or of ``df``'s derivative
    with respect to ``wrt`` in ``mode`` (``"rev"``: value and gradient; ``"fwd"``: the
    forward-mode function taking the parameters, then one tangent per ``wrt`` parameter).
    For a derivative, ``example_args`` shows the code a call with those arguments runs
    (specialized for NumPy arrays and Python numbers, or for the structure of pytrees);
    without them, the general code, whatever calls came before."""
    if isinstance(df, Derivative):
        if example_args is not None:
            return df.code_for(tuple(example_args)).source
        return df.generated().source
    text = getattr(df, "srcad_source", None)  # a vjp's pullback
    if text is not None:
        return text
    made_by = getattr(df, "srcad_made_by", None)
    if isinstance(made_by, str):
        raise TypeError(
            f"a function made by srcad.{made_by} runs generated code once per unit direction "
            "and has no source of its own; pass the function it differentiates, with mode='fwd'"
        )
    if not inspect.isfunction(df):
        raise TypeError(f"{df!r} is neither a derivative made by srcad nor a Python function")
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', got {mode!r}")
    indices, single = _normalize_wrt(df, wrt)
    if mode == "rev":
        return cached(df, indices, single, "grad").source
    return cached(df, indices, False, "jvp").source


def stop_gradient(x: T) -> T:
    """``x`` itself; no gradient flows through it."""
    return x


@boundary
def checkpoint(fun: Callable[P, R]) -> Checkpointed[P, R]:
    """``fun``, whose calls inside differentiated code keep only their arguments for the
    backward pass and run again there (trading time for memory). Checkpoint a function
    that runs k steps of a loop to keep one state in k."""
    if not callable(fun):
        raise TypeError(f"checkpoint needs a function, got {type(fun).__name__}")
    if user_callee(fun) is None and (lookup(fun) is not None or lookup_tangent(fun) is not None):
        # NumPy's (a function with a rule): its rule keeps only what its adjoint reads
        return fun  # type: ignore[return-value]
    return Checkpointed(fun)


@boundary
def custom_jvp(fun: Callable[P, R]) -> CustomJVP[P, R]:
    """Mark ``fun`` as having a hand-written forward-mode derivative; give it with
    ``.defjvp(jvp)``, where ``jvp(primals, tangents)`` returns ``(out, tangent_out)``
    (linear in the tangents; reverse mode uses its transpose)."""
    return CustomJVP(fun)


@boundary
def custom_vjp(fun: Callable[P, R]) -> CustomVJP[P, R]:
    """Mark ``fun`` as having a hand-written derivative; give it with ``.defvjp(fwd, bwd)``."""
    return CustomVJP(fun)


FACTORIES.update((grad, value_and_grad, checkpoint))
JVPS.add(jvp)
# written out in terms of grad and jvp inside a differentiated function
INSIDE.update(
    {hvp: inside.hvp, hessian: inside.hessian, jacobian: inside.jacobian, vjp: inside.vjp}
)
