"""What a user passes as the function, as a Python function srcad can read plus the
arguments bound to it: methods, ``functools.partial``, callable objects, ``lru_cache``,
decorators that only forward, and NumPy/SciPy functions (ufuncs too) that have a rule."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from srcad.adjoints.registry import lookup, lookup_tangent, ufunc_method_label
from srcad.errors import SourceUnavailableError, UnsupportedConstructError
from srcad.transform.calls import own_signature
from srcad.transform.codegen import compile_source
from srcad.transform.hints import RULES_HELP
from srcad.transform.libraries import is_library_function


@dataclass
class Target:
    """The user's ``f(*args, **kwargs)`` is ``function(*prefix, *args, **keywords, **kwargs)``."""

    function: Callable
    prefix: tuple = ()
    keywords: dict[str, Any] = field(default_factory=dict)


def resolve(f: Any) -> Target:
    """The Python function behind ``f`` and the arguments ``f`` binds to it."""
    prefix: tuple = ()
    keywords: dict[str, Any] = {}
    for _ in range(100):  # each step peels one layer; a cycle would be a bug of the object
        made_by = getattr(f, "srcad_made_by", None)
        if isinstance(made_by, str):
            # (the API differentiates it by its table, given it or a partial of it)
            raise UnsupportedConstructError(
                f"a function made by srcad.{made_by} is differentiated again only when "
                "given itself (or a functools.partial of it) to srcad.grad, value_and_grad, "
                "jvp, vjp, jacobian, hessian or hvp; wrapped in another object it "
                "cannot be"
            )
        if isinstance(f, functools.partial):
            prefix = (*f.args, *prefix)
            keywords = {**f.keywords, **keywords}  # the outer partial's keywords win
            f = f.func
        elif inspect.ismethod(f):
            prefix = (f.__self__, *prefix)
            f = f.__func__
        elif _is_cache(f) or _forwards(f):
            f = f.__wrapped__
        elif _is_srcad_object(f):
            return Target(f, prefix, keywords)
        elif (
            not inspect.isfunction(f)
            and not isinstance(f, type)
            and inspect.isfunction(getattr(type(f), "__call__", None))  # noqa: B004
        ):
            f = f.__call__  # a callable object: its method, the object bound first
        elif _is_library_callable(f):
            if lookup(f) is None and lookup_tangent(f) is None:
                kind = type(f).__name__
                name = ufunc_method_label(f) or repr(f)
                raise SourceUnavailableError(
                    f"srcad differentiates Python functions defined with 'def'; {name} is a "
                    f"{kind} without a derivative rule. Wrap it in a def, or register its "
                    f"derivative with @srcad.adjoint; {RULES_HELP}"
                )
            return Target(_calling(f, sorted(keywords)), prefix, keywords)
        else:
            return Target(f, prefix, keywords)
    raise TypeError(f"srcad cannot unwrap {f!r}")


def _is_srcad_object(f: Any) -> bool:
    """A derivative, custom_vjp / custom_jvp / checkpoint function: the API handles them."""
    from srcad.transform.calls import Checkpointed, CustomJVP, CustomVJP

    return (
        isinstance(f, (CustomVJP, CustomJVP, Checkpointed))
        or hasattr(f, "srcad_handle")
        or callable(getattr(f, "srcad_function", None))
    )


def unwrapped(f: Any) -> Any:
    """The function ``f`` runs when it is an ``lru_cache``/``cache`` or a decorator's wrapper
    that only forwards (each layer peeled); ``f`` itself otherwise."""
    for _ in range(100):
        if not (_is_cache(f) or _forwards(f)):
            return f
        f = f.__wrapped__
    return f


def _is_cache(f: Any) -> bool:
    """``functools.lru_cache`` / ``functools.cache``: the same values as the function."""
    return callable(f) and hasattr(f, "cache_info") and hasattr(f, "__wrapped__")


def _forwards(f: Any) -> bool:
    """Whether ``f`` is a decorator's wrapper whose whole body is
    ``return wrapped(*args, **kwargs)`` (so differentiating ``wrapped`` is the same)."""
    wrapped = getattr(f, "__wrapped__", None)
    if wrapped is None or not inspect.isfunction(f):
        return False
    try:
        # the wrapper's own source: getsource(f) would follow __wrapped__
        tree = ast.parse(textwrap.dedent(inspect.getsource(f.__code__)))
    except (OSError, TypeError, SyntaxError):
        return False
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return False
    definition = tree.body[0]
    params = definition.args
    if params.posonlyargs or params.args or params.kwonlyargs:
        return False
    body = definition.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    call = body[0].value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    expected_args = [params.vararg.arg] if params.vararg else []
    given_args = [
        a.value.id
        for a in call.args
        if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)
    ]
    expected_keywords = [params.kwarg.arg] if params.kwarg else []
    given_keywords = [
        k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, ast.Name)
    ]
    if (
        given_args != expected_args
        or len(call.args) != len(given_args)
        or given_keywords != expected_keywords
        or len(call.keywords) != len(given_keywords)
    ):
        return False
    names = inspect.getclosurevars(f)
    callee = {**names.globals, **names.nonlocals}.get(call.func.id)
    return callee is wrapped


def _is_library_callable(f: Any) -> bool:
    """A function without Python source of the user's: a ufunc, a builtin, NumPy's."""
    if isinstance(f, type) or not callable(f):
        return False
    if inspect.isfunction(f):
        return is_library_function(f)
    return True


_CALLERS: dict[tuple, Callable] = {}


def known_caller(key: tuple, callee: Any) -> Callable | None:
    """The caller :func:`new_caller` made for ``key``, if it still calls ``callee``."""
    found = _CALLERS.get(key)
    if found is not None and found.__srcad_callee__ is callee:  # type: ignore[attr-defined]
        return found
    return None


def new_caller(
    key: tuple,
    callee: Any,
    name: str,
    params: str,
    call: str,
    scope: dict[str, Any],
    lines: Sequence[str] = (),
) -> Callable:
    """``def name(params): return call`` compiled in ``scope``, kept for ``key``: a
    function srcad reads whose body calls ``callee`` (``lines`` run before the return)."""
    body = "".join(f"    {line}\n" for line in lines)
    text = f"def {name}({params}):\n{body}    return {call}\n"
    caller = compile_source(text, scope, f"call of {name}")[name]
    caller.__srcad_callee__ = callee  # type: ignore[attr-defined]
    _CALLERS[key] = caller
    return caller


def _calling(f: Any, keywords: list[str]) -> Callable:
    """``def sin(x): return np.sin(x)``: a function srcad reads, calling ``f``."""
    key = ("library", id(f), tuple(keywords))
    found = known_caller(key, f)
    if found is not None:
        return found
    name = getattr(f, "__name__", "")
    name = name if name.isidentifier() else "f"
    params = _required_params(f)
    reference, scope = _reference(f)
    args = ", ".join(params)
    named = ", ".join(f"{k}={k}" for k in keywords)
    signature = ", ".join([*params, *(["*", *keywords] if keywords else [])])
    call = ", ".join(part for part in (args, named) if part)
    return new_caller(key, f, name, signature, f"{reference}({call})", scope)


def _required_params(f: Any) -> list[str]:
    """The positional parameters of ``f`` that have no default (``x``, ``x1, x2`` for a ufunc)."""
    nin = getattr(f, "nin", None)
    if isinstance(nin, int):
        return ["x"] if nin == 1 else [f"x{k + 1}" for k in range(nin)]
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        raise TypeError(f"srcad cannot read the parameters of {f!r}: wrap it in a def") from None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [
        p.name
        for p in signature.parameters.values()
        if p.kind in kinds and p.default is inspect.Parameter.empty
    ]


def _reference(f: Any) -> tuple[str, dict[str, Any]]:
    """How the caller names ``f`` (``np.linalg.det``, ``scipy.special.expit``) and the
    globals that make the name mean ``f``."""
    module_name = getattr(f, "__module__", None) or ""
    name = getattr(f, "__name__", "")
    if module_name.split(".")[0] in ("numpy", "scipy") and name.isidentifier():
        parts = module_name.split(".")
        # NumPy's public name is shorter than its module's (numpy._core.umath.sin is np.sin)
        for end in range(1, len(parts) + 1):
            try:
                module = importlib.import_module(".".join(parts[:end]))
            except ImportError:
                break
            if getattr(module, name, None) is f:
                root = "np" if parts[0] == "numpy" else parts[0]
                dotted = ".".join([root, *parts[1:end], name])
                return dotted, {root: importlib.import_module(parts[0])}
    return "__srcad_callee__", {"__srcad_callee__": f}


def varargs_caller(f: Callable, count: int, keys: tuple[str, ...] = ()) -> Callable:
    """``def f(a, b, args_0, args_1, *, k=..., key): return f(a, b, args_0, args_1, k=k,
    key=key)``: a function of ``f``'s with ``*args`` for calls with ``count`` positional
    arguments, and with ``**kwargs`` for calls giving it the keywords ``keys`` (its call of
    ``f`` is differentiated as any call of a function of yours)."""
    key = ("varargs", id(f), count, keys)
    found = known_caller(key, f)
    if found is not None:
        return found
    signature = own_signature(f)
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = [p.name for p in signature.parameters.values() if p.kind in kinds]
    star = next(
        (
            p.name
            for p in signature.parameters.values()
            if p.kind is inspect.Parameter.VAR_POSITIONAL
        ),
        "args",
    )
    extra = [f"{star}_{k}" for k in range(count - len(named))]
    keyword_only = [
        p for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    positional = ", ".join([*named, *extra])
    keywords = [p.name for p in keyword_only] + list(keys)
    head = ", ".join([*named, *extra, *(["*", *keywords] if keywords else [])])
    call = ", ".join(part for part in [positional, *(f"{k}={k}" for k in keywords)] if part)
    name = f.__name__ if f.__name__.isidentifier() else "f"
    scope = {"__srcad_callee__": f}
    caller = new_caller(key, f, name, head, f"__srcad_callee__({call})", scope)
    caller.__defaults__ = (
        tuple(
            p.default
            for p in signature.parameters.values()
            if p.kind in kinds and p.default is not p.empty
        )
        or None
    )
    caller.__kwdefaults__ = {
        p.name: p.default for p in keyword_only if p.default is not p.empty
    } or None
    return caller
