"""The rule registry: op key -> parsed adjoint (reverse) and tangent (forward) templates.

A rule is a plain Python function whose first parameter is the op's result and whose other
parameters are its operands, named and defaulted like the op's own signature. ``xp`` is the
array namespace of the call. Any other name assigned in the body is a temporary.

In an adjoint template ``d[x]`` is the adjoint of ``x``: a store adds a contribution, a load
reads the incoming gradient. In a tangent template ``d[x]`` is the tangent of operand ``x``
and each ``d[y] = ...`` store (``y`` the result) is one contribution; contributions add up.
A contribution is dropped when every operand tangent it reads is zero (the operand does not
vary); where it also reads other tangents, those are materialized as zeros.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import gast

T = TypeVar("T", bound=Callable[..., Any])  # a rule template, returned unchanged


class _AdjointOf:
    """Placeholder for ``d[x]`` in templates; templates are parsed, never run."""

    def __getitem__(self, name: Any) -> Any:
        raise RuntimeError("adjoint templates are source, not code to call")


d = _AdjointOf()
#: Placeholder for the array namespace in templates.
xp: Any = None


@dataclass(frozen=True)
class Method:
    """Key of an array method, e.g. ``x.sum(...)``."""

    name: str


@dataclass(frozen=True)
class Attribute:
    """Key of an array attribute read, e.g. ``x.T``."""

    name: str


@dataclass(frozen=True)
class Operator:
    """Key of a Python operator, by gast class name: ``Add``, ``USub``, ``MatMult``."""

    name: str


GETITEM = Operator("Subscript")
COPY = Operator("Copy")


@dataclass
class Rule:
    """One op's adjoint template."""

    key: Any
    name: str
    body: list[gast.stmt]
    signature: inspect.Signature
    result: str
    operands: tuple[str, ...]
    globals: dict[str, Any]
    residuals: frozenset[str]
    shape_preserving: bool
    #: operands read only for their shape or as indices: no derivative flows to them
    static: frozenset[str] = frozenset()
    #: the names of the op's results when it returns several (``w, v = eigh(a)``); with
    #: ``variadic``, one name stands for the list of all of them (``np.split``)
    results: tuple[str, ...] = ()
    variadic: bool = False


_RULES: dict[Any, Rule] = {}
_TANGENTS: dict[Any, Rule] = {}
_NONDIFF: set[Any] = set()


def _key(op: Any) -> Any:
    try:
        hash(op)
        return op
    except TypeError:
        return id(op)


def _residuals(body: list[gast.stmt], params: set[str]) -> frozenset[str]:
    """Primal parameters the adjoint reads as values (not only as ``d[...]`` targets)."""
    inside_d: set[int] = set()
    for node in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
            if node.value.id == "d":
                inside_d.update(id(n) for n in gast.walk(node.slice))
    used = set()
    for node in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            if node.id in params and id(node) not in inside_d:
                used.add(node.id)
    return frozenset(used)


def _parse(
    template: Callable, shape_preserving: bool, static: tuple[str, ...], outputs: int | str = 1
) -> Rule:
    src = textwrap.dedent(inspect.getsource(template))
    fdef = gast.parse(src).body[0]
    sig = inspect.signature(template)
    names = list(sig.parameters)
    count = 1 if outputs == "*" else int(outputs)
    return Rule(
        key=None,
        name=template.__name__,
        body=fdef.body,
        signature=sig.replace(parameters=list(sig.parameters.values())[count:]),
        result=names[0],
        operands=tuple(names[count:]),
        globals=template.__globals__,
        residuals=_residuals(fdef.body, set(names)),
        shape_preserving=shape_preserving,
        static=frozenset(static),
        results=tuple(names[:count]) if outputs != 1 else (),
        variadic=outputs == "*",
    )


def adjoint(
    *ops: Any,
    shape_preserving: bool = False,
    static: tuple[str, ...] = (),
    outputs: int | str = 1,
) -> Callable[[T], T]:
    """Register the decorated template as the adjoint of each of ``ops``; operands named in
    ``static`` are read only for their shapes (no gradient flows to them). An op with
    several results names them first (``outputs=2``: ``def eigh(w, v, a)``), or with
    ``outputs="*"`` takes them as one list (``def split(pieces, x, sections)``)."""

    def register(template: T) -> T:
        _before_user_rule(template)
        rule = _parse(template, shape_preserving, static, outputs)
        for op in ops:
            _RULES[_key(op)] = rule
        return template

    return register


def tangent(*ops: Any, static: tuple[str, ...] = (), outputs: int | str = 1) -> Callable[[T], T]:
    """Register the decorated template as the tangent (forward-mode) rule of each of
    ``ops``; operands named in ``static`` carry no tangent into the result; ``outputs`` as
    for :func:`adjoint` (each ``d[w] = ...`` then contributes to that result's tangent)."""

    def register(template: T) -> T:
        _before_user_rule(template)
        rule = _parse(template, False, static, outputs)
        for op in ops:
            _TANGENTS[_key(op)] = rule
        return template

    return register


def nondifferentiable(*ops: Any) -> None:
    """Declare that the outputs of ``ops`` carry no gradient."""
    for op in ops:
        _NONDIFF.add(_key(op))


def _load_lazy(every: bool = False) -> bool:
    """Import the rule modules (SciPy's) whose library the user's code has imported by now,
    or with ``every`` each one whose library can be imported; whether any was loaded."""
    from srcad.adjoints.scipy_table import NEEDS

    loaded = False
    for module, needs in NEEDS.items():
        if module in sys.modules or not (needs in sys.modules or every):
            continue
        try:
            importlib.import_module(needs)
        except ImportError:
            continue
        importlib.import_module(module)
        loaded = True
    return loaded


def _before_user_rule(template: Callable) -> None:
    """A user's rule replaces srcad's: load srcad's rules for what the user's code has
    imported first, so that loading them later cannot undo the user's."""
    if not getattr(template, "__module__", "").startswith("srcad."):
        _load_lazy()


def _find(table: dict[Any, Any], op: Any) -> Any:
    try:
        key = _key(op)
        found = table.get(key)
    except TypeError:
        return None
    if found is None and _load_lazy():
        found = table.get(key)
    return found


def lookup(op: Any) -> Rule | None:
    """The adjoint rule registered for ``op``."""
    return _find(_RULES, op)


def lookup_tangent(op: Any) -> Rule | None:
    """The tangent rule registered for ``op``."""
    return _find(_TANGENTS, op)


def is_nondifferentiable(op: Any) -> bool:
    """Whether ``op`` is declared to have outputs without gradient."""
    try:
        return _key(op) in _NONDIFF
    except TypeError:
        return False


def registered() -> dict[Any, Rule]:
    """Every registered adjoint rule by key (SciPy's included, where it is installed)."""
    _load_lazy(every=True)
    return dict(_RULES)


def registered_tangents() -> dict[Any, Rule]:
    """Every registered tangent rule by key (SciPy's included, where it is installed)."""
    _load_lazy(every=True)
    return dict(_TANGENTS)


def nondifferentiable_ops() -> set[Any]:
    """Every op declared to have outputs without gradient (by key)."""
    return set(_NONDIFF)
