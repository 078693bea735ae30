"""The rule registry: op key -> parsed adjoint (reverse) and tangent (forward) templates.

A rule is a plain Python function whose first parameter is the op's result and whose other
parameters are its operands, named and defaulted like the op's own signature. ``xp`` is the
array namespace of the call. Any other name assigned in the body is a temporary.

In an adjoint template ``d[x]`` is the adjoint of ``x``: a store adds a contribution, a load
reads the incoming gradient. In a tangent template ``d[x]`` is the tangent of operand ``x``
and each ``d[y] = ...`` store (``y`` the result) is one contribution; contributions add up.
A contribution is dropped when every operand tangent it reads is zero (the operand does not
vary); where it also reads other tangents, those are materialized as zeros.

Most ops need only one declaration for both templates: :func:`partials` (an elementwise op:
its partial derivatives) and :func:`linear` (an op linear in what it differentiates: its
transpose) write them out as one would by hand.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import gast
import numpy as np

from srcad.adjoints import synthesis
from srcad.runtime.accumulate import unbroadcast
from srcad.runtime.tangents import broadcast_like

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
    #: operands whose value must be one of these, written in the call (np.pad's mode)
    choices: dict[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    #: the names of the op's results when it returns several (``w, v = eigh(a)``); with
    #: ``variadic``, one name stands for the list of all of them (``np.split``)
    results: tuple[str, ...] = ()
    variadic: bool = False
    #: the template without the refusal of complex values (``complex_safe``), if it has one
    unchecked: list[gast.stmt] | None = None
    #: what the analyses know of the op, declared with its rule (see TRAITS); a user's
    #: rule has none unless it declares them, so none is assumed of it by its name
    elementwise: bool = False
    selects: bool = False
    moves: bool = False
    broadcast_transparent: bool = False
    changes_shape: bool = False
    reduces: bool = False
    takes_lists: bool = False
    scatters: bool = False


#: The traits a declaration may give its rule (``@adjoint(np.maximum, elementwise=True,
#: selects=True)``), each False unless declared.
TRAITS = {
    "elementwise": "an op of several operands whose result element reads only the operands' "
    "elements at its (broadcast) position (one-operand ones say shape_preserving)",
    "selects": "elementwise, and its derivative by an operand is zero where the operand's "
    "value was not chosen (np.where, np.maximum)",
    "moves": "each result element is one operand element, moved without mixing (reshapes, "
    "transposes, flips, indexing)",
    "broadcast_transparent": "the adjoint template is right for an incoming gradient "
    "broadcast beyond the result's shape (elementwise templates, products whose helpers "
    "reduce it first)",
    "changes_shape": "the result need not have its array operand's shape (reductions, "
    "reshapes, products): an adjoint expression calling it is not elementwise",
    "reduces": "a reduction of its one array operand over ``axis`` (every axis when None, "
    "the default): that axis goes (stays with length 1 under ``keepdims``), so a whole-array "
    "reduction is one number (np.sum, np.max)",
    "takes_lists": "its template takes an operand that is a list built in the function as "
    "that list, whose gradient is a list (np.stack's rule for a list, append)",
    "scatters": "its template writes the incoming gradient into a zero array at ``index`` "
    "(``x[index]``), so the backward pass may add it into an adjoint it owns in place "
    "instead (``dx[index] += dy``; with repeats, ``add_at``)",
}
#: Traits that are the op's, not its rule's: a rule replacing one for the same op keeps them.
_OP_TRAITS = ("changes_shape", "reduces")


_RULES: dict[Any, Rule] = {}
_TANGENTS: dict[Any, Rule] = {}
_NONDIFF: set[Any] = set()
_COMPLEX_SAFE: set[Any] = set()
#: module name -> the names of its rules right for complex values ("*": all of them)
_COMPLEX_SAFE_RULES: dict[str, set[str]] = {}
#: op name -> the CUDA C function computing it (an op's, not its rule's: a user's rule
#: replacing srcad's leaves it)
_CUDA: dict[str, str] = {}


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
    template: Callable,
    shape_preserving: bool,
    static: tuple[str, ...],
    outputs: int | str = 1,
    body: list[gast.stmt] | None = None,
    name: str | None = None,
    names: dict[str, Any] | None = None,
) -> Rule:
    """The rule of ``template``, or of ``body`` written for its parameters (with ``names``
    added to its globals) under ``name``."""
    body = synthesis.source(template).body if body is None else body
    sig = inspect.signature(template)
    params = list(sig.parameters)
    count = 1 if outputs == "*" else int(outputs)
    return Rule(
        key=None,
        name=name or template.__name__,
        body=body,
        signature=sig.replace(parameters=list(sig.parameters.values())[count:]),
        result=params[0],
        operands=tuple(params[count:]),
        globals=_Globals(names, template.__globals__) if names else template.__globals__,
        residuals=_residuals(body, set(params)),
        shape_preserving=shape_preserving,
        static=frozenset(static),
        results=tuple(params[:count]) if outputs != 1 else (),
        variadic=outputs == "*",
    )


def _traits(rule: Rule, traits: dict[str, bool]) -> Rule:
    """``rule`` with the declared ``traits`` (keywords of TRAITS) set."""
    for trait, value in traits.items():
        if trait not in TRAITS:
            known = ", ".join(TRAITS)
            raise TypeError(f"{rule.name}: unknown rule trait {trait!r} (known: {known})")
        setattr(rule, trait, bool(value))
    return rule


def _register(table: dict[Any, Rule], rule: Rule, ops: tuple[Any, ...], safe: bool) -> None:
    """``rule`` for each of ``ops``, refusing complex values unless it is known right for
    them (``safe``: the declaration's ``complex_safe``)."""
    if not (safe or _known_complex_safe(rule, ops)):
        _refusing_complex(rule, _label(ops[0]))
    for op in ops:
        earlier = table.get(_key(op))
        # what the op does to shapes is the op's, whoever writes its rule: a rule
        # replacing np.sum's still makes ``a.sum()`` a call that changes shape (and reduces)
        kept = {t: True for t in _OP_TRAITS if getattr(earlier, t, False) and not getattr(rule, t)}
        table[_key(op)] = dataclasses.replace(rule, **kept) if kept else rule


def adjoint(
    *ops: Any,
    shape_preserving: bool = False,
    static: tuple[str, ...] = (),
    outputs: int | str = 1,
    complex_safe: bool = False,
    choices: dict[str, tuple[Any, ...]] | None = None,
    **traits: bool,
) -> Callable[[T], T]:
    """Register the decorated template as the adjoint of each of ``ops``; operands named in
    ``static`` are read only for their shapes (no gradient flows to them). An op with
    several results names them first (``outputs=2``: ``def eigh(w, v, a)``), or with
    ``outputs="*"`` takes them as one list (``def split(pieces, x, sections)``). Unless
    ``complex_safe`` (or :func:`complex_safe` names an op), the rule refuses complex values
    at run time (see :func:`_refusing_complex`). ``traits`` (keywords of :data:`TRAITS`,
    e.g. ``elementwise=True``) say what the analyses may assume of the op. ``choices``
    names operands whose value the rule is right for only among the values given (np.pad's
    ``mode``): the call must write one of them, or leave the operand at its default."""

    def register(template: T) -> T:
        _before_user_rule(template)
        rule = _traits(_parse(template, shape_preserving, static, outputs), traits)
        rule.choices = dict(choices or {})
        _register(_RULES, rule, ops, complex_safe)
        return template

    return register


def tangent(
    *ops: Any,
    static: tuple[str, ...] = (),
    outputs: int | str = 1,
    complex_safe: bool = False,
    choices: dict[str, tuple[Any, ...]] | None = None,
) -> Callable[[T], T]:
    """Register the decorated template as the tangent (forward-mode) rule of each of
    ``ops``; operands named in ``static`` carry no tangent into the result; ``outputs`` as
    for :func:`adjoint` (each ``d[w] = ...`` then contributes to that result's tangent);
    ``complex_safe`` and ``choices`` as for :func:`adjoint`."""

    def register(template: T) -> T:
        _before_user_rule(template)
        rule = _parse(template, False, static, outputs)
        rule.choices = dict(choices or {})
        _register(_TANGENTS, rule, ops, complex_safe)
        return template

    return register


def partials(
    *ops: Any,
    shape_preserving: bool = False,
    static: tuple[str, ...] = (),
    complex_safe: bool = False,
    cuda: str | None = None,
    **traits: bool,
) -> Callable[[T], T]:
    """Register the adjoint and the tangent of each of ``ops`` from its partial derivatives.

    The decorated function takes the result and the operands as a template does, may assign
    temporaries, and returns the partial derivative of the result by each operand not in
    ``static`` (a tuple of them for several), an expression reading the result and the
    operands. The adjoint is ``d[x] = d[y] * partial`` (``unbroadcast`` to ``x`` for a ufunc
    of several operands), the tangent ``d[y] = d[x] * partial``, each written as by hand
    (``d[y] / q`` for the partial ``1 / q``). ``cuda`` names the CUDA C function computing
    the op (srcad.elementwise's kernels); the other options are :func:`adjoint`'s."""

    def register(template: T) -> T:
        _before_user_rule(template)
        broadcasts = any(isinstance(op, np.ufunc) and op.nin > 1 for op in ops)
        adjoint_body, tangent_body = synthesis.from_partials(template, static, broadcasts)
        helpers = {"unbroadcast": unbroadcast, "broadcast_like": broadcast_like}
        rule = _parse(template, shape_preserving, static, body=adjoint_body, names=helpers)
        _register(_RULES, _traits(rule, traits), ops, complex_safe)
        name = _tangent_name(template)
        tangent_rule = _parse(template, False, static, body=tangent_body, name=name, names=helpers)
        _traits(tangent_rule, traits)
        _register(_TANGENTS, tangent_rule, ops, complex_safe)
        for op in ops:
            if cuda is not None and isinstance(getattr(op, "__name__", None), str):
                _CUDA[op.__name__] = cuda
        return template

    return register


def linear(
    *ops: Any,
    shape_preserving: bool = False,
    static: tuple[str, ...] = (),
    complex_safe: bool = False,
    **traits: bool,
) -> Callable[[T], T]:
    """Register the decorated template as the adjoint of each of ``ops``, linear in the
    operands it gives gradients to (together): the template is the op's transpose. The
    tangent is the first of ``ops`` that is a function applied to those operands' tangents
    and the other operands (``xp.flip(d[x], axis=axis)``: one with a default by keyword, so
    left out where the call leaves it out). Options as :func:`adjoint`'s."""

    def register(template: T) -> T:
        _before_user_rule(template)
        op = next((o for o in ops if callable(o) and hasattr(o, "__name__")), None)
        if op is None:
            raise TypeError(f"linear({_label(ops[0])}): one of the ops must be a function")
        rule = _traits(_parse(template, shape_preserving, static), traits)
        body, names = synthesis.applied(op, _label(op), template, synthesis.stored(rule.body))
        name = _tangent_name(template)
        tangent_rule = _parse(template, False, static, body=body, name=name, names=names)
        _traits(tangent_rule, traits)
        _register(_RULES, rule, ops, complex_safe)
        _register(_TANGENTS, tangent_rule, ops, complex_safe)
        return template

    return register


def bilinear(
    *ops: Any,
    shape_preserving: bool = False,
    static: tuple[str, ...] = (),
    complex_safe: bool = False,
    **traits: bool,
) -> Callable[[T], T]:
    """Register the decorated template as the adjoint of each of ``ops``, a product: linear
    in each operand it gives gradients to when the others are held (``a @ b``, ``np.kron``),
    so that the template is the transpose of each partial map. The tangent is the product
    rule, one term per such operand: the op with that operand's tangent in its place
    (``d[a] @ b``, then ``a @ d[b]``: a Python operator among ``ops`` first is written as
    the operator; otherwise the first function, as :func:`linear` calls it). Options as
    :func:`adjoint`'s."""

    def register(template: T) -> T:
        _before_user_rule(template)
        first = ops[0] if ops else None
        operator = getattr(gast, first.name, None) if isinstance(first, Operator) else None
        if operator is not None and not issubclass(operator, gast.operator):
            operator = None
        op = next((o for o in ops if callable(o) and hasattr(o, "__name__")), None)
        if op is None and operator is None:
            raise TypeError(f"bilinear({_label(ops[0])}): one of the ops must be a function")
        rule = _traits(_parse(template, shape_preserving, static), traits)
        linear_in = synthesis.stored(rule.body)
        label = _label(op if operator is None else first)
        body, names = synthesis.applied(op, label, template, linear_in, True, operator)
        name = _tangent_name(template)
        tangent_rule = _parse(template, False, static, body=body, name=name, names=names)
        _traits(tangent_rule, traits)
        _register(_RULES, rule, ops, complex_safe)
        _register(_TANGENTS, tangent_rule, ops, complex_safe)
        return template

    return register


def _tangent_name(template: Callable) -> str:
    """``sin`` -> ``sin_tangent``; ``fit_to_adjoint`` (named apart from the helper fit_to
    its body calls) -> ``fit_to_tangent``."""
    return template.__name__.removesuffix("_adjoint") + "_tangent"


def complex_safe(*ops: Any) -> None:
    """Declare the adjoint and tangent rules of ``ops`` right for complex operands (each
    checked against finite differences along real and imaginary directions): they no
    longer refuse complex values (rules registered later included)."""
    for op in ops:
        _COMPLEX_SAFE.add(_key(op))
        for table in (_RULES, _TANGENTS):
            rule = table.get(_key(op))
            if rule is not None and rule.unchecked is not None:
                rule.body, rule.unchecked = rule.unchecked, None


def complex_safe_rules(module: str, *names: str) -> None:
    """Declare the rules of ``module`` named ``names`` (each with its ``_tangent`` and
    ``_adjoint`` forms; no names: all of the module's) right for complex values, as
    :func:`complex_safe` does by op."""
    wanted = {f"{n}{end}" for n in names or ("*",) for end in ("", "_tangent", "_adjoint")}
    _COMPLEX_SAFE_RULES.setdefault(module, set()).update(wanted)
    for table in (_RULES, _TANGENTS):
        for rule in table.values():
            if rule.unchecked is not None and _known_complex_safe(rule, ()):
                rule.body, rule.unchecked = rule.unchecked, None


def _known_complex_safe(rule: Rule, ops: tuple[Any, ...]) -> bool:
    names = _COMPLEX_SAFE_RULES.get(rule.globals.get("__name__", ""), ())
    return "*" in names or rule.name in names or any(_key(op) in _COMPLEX_SAFE for op in ops)


def _refusing_complex(rule: Rule, label: str) -> None:
    """Make ``rule`` raise when a value it reads (an operand or result, never one read only
    for its shape) is complex: a rule not audited for complex numbers must not return a
    silently wrong derivative. A rule reading no values is linear with real coefficients,
    hence right for complex values too. Each contribution goes through the check (it reads
    only what the rule keeps anyway, so no value is kept longer; an assignment, as a tangent
    rule's statements must be, that differentiates again as the identity)."""
    read = [n for n in (*(rule.results or (rule.result,)), *rule.operands) if n in rule.residuals]
    read = [n for n in read if n not in rule.static]
    if not read:
        return
    from srcad.runtime.complexes import complex_checked

    name = "_srcad_complex_checked"
    rule.unchecked = rule.body
    rule.globals = _Globals({name: complex_checked}, rule.globals)

    def checked(body: list[gast.stmt]) -> list[gast.stmt]:
        out = []
        for stmt in body:
            if isinstance(stmt, gast.Assign) and _stores_derivative(stmt.targets[0]):
                values = gast.Tuple(elts=[_load(n) for n in read], ctx=gast.Load())
                args = [stmt.value, gast.Constant(value=label, kind=None), values]
                value = gast.Call(func=_load(name), args=args, keywords=[])
                stmt = gast.Assign(targets=stmt.targets, value=value, type_comment=None)
            elif isinstance(stmt, gast.For):  # np.select's rule, one choice at a time
                stmt = gast.For(
                    target=stmt.target, iter=stmt.iter, body=checked(stmt.body),
                    orelse=stmt.orelse, type_comment=None,
                )  # fmt: skip
            out.append(stmt)
        return out

    rule.body = checked(rule.body)


def _load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _stores_derivative(target: gast.expr) -> bool:
    return (
        isinstance(target, gast.Subscript)
        and isinstance(target.value, gast.Name)
        and target.value.id == "d"
    )


class _Globals(dict):
    """A template's globals with a few more names: the module's, looked up when read."""

    def __init__(self, extra: dict[str, Any], module: dict[str, Any]) -> None:
        super().__init__(extra)
        self.module = module

    def get(self, name: str, default: Any = None) -> Any:
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        return self.module.get(name, default)

    def __getitem__(self, name: str) -> Any:
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        return self.module[name]

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self.module


def ufunc_method_label(op: Any) -> str | None:
    """``np.add.outer`` for that bound method of a NumPy ufunc (Python calls it
    ``ufunc.outer``), None for any other op."""
    owner = getattr(op, "__self__", None)
    return f"np.{owner.__name__}.{op.__name__}" if isinstance(owner, np.ufunc) else None


def _label(op: Any) -> str:
    """How an error names ``op``: ``np.var``, ``x.var()``, ``x.T``, the ``Pow`` operator."""
    if isinstance(op, Method):
        return f"x.{op.name}()"
    if isinstance(op, Attribute):
        return f"x.{op.name}"
    if isinstance(op, Operator):
        return f"the {op.name} operator"
    method = ufunc_method_label(op)
    if method:
        return method
    module = getattr(op, "__module__", None) or ""
    name = getattr(op, "__qualname__", None) or getattr(op, "__name__", None) or repr(op)
    parts = [p for p in module.split(".") if p and not p.startswith("_") and p != "core"]
    parts = ["np" if p == "numpy" else p for p in parts]
    return ".".join([*parts, name])


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
    if not (getattr(template, "__module__", None) or "").startswith("srcad."):
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


def cuda_functions() -> dict[str, str]:
    """The CUDA C function of each op declared with one (``partials(..., cuda=...)``), by
    the op's name."""
    return dict(_CUDA)


def nondifferentiable_ops() -> set[Any]:
    """Every op declared to have outputs without gradient (by key)."""
    return set(_NONDIFF)
