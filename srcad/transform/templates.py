"""Instantiate an adjoint template: substitute operands, unroll operand lists, fresh temps."""

from __future__ import annotations

import builtins
import inspect
from typing import Any

import gast
import numpy as np

from srcad.adjoints.registry import Rule
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer, clone

#: Name id that marks ``d[...]`` after instantiation; no user identifier can contain NUL.
ADJOINT = "\x00d"


class TemplateError(ValueError):
    """An op's arguments do not fit its adjoint template."""


def bind(
    rule: Rule, args: list[gast.expr], keywords: dict[str, gast.expr], callee: Any = None
) -> dict[str, Any]:
    """Match an op's operand nodes to the template's parameters, filling in defaults.

    With ``callee`` (the library function called), its optional parameters given by
    position are matched by *its* names: ``np.var(x, 0, None, None, 1)`` gives ddof=1,
    where the template's order ``(x, axis, ddof)`` would take ``None`` for ddof."""
    args, keywords = _by_library_names(callee, rule, args, keywords)
    try:
        bound = rule.signature.bind(*args, **keywords)
    except TypeError as exc:
        raise TemplateError(str(exc)) from None
    given = set(bound.arguments)
    bound.apply_defaults()
    result: dict[str, gast.expr] = {}
    for name, value in bound.arguments.items():
        param = rule.signature.parameters[name]
        if param.kind is param.VAR_POSITIONAL:
            result[name] = build.tuple_(list(value))
        elif isinstance(value, gast.AST):
            result[name] = value
        else:
            result[name] = _constant(value)
            if name not in given:
                # a default the call left out: the template's calls leave it out too
                setanno(result[name], "default", True)
    return result


def _by_library_names(
    callee: Any, rule: Rule, args: list[gast.expr], keywords: dict[str, gast.expr]
) -> tuple[list[gast.expr], dict[str, gast.expr]]:
    """``args`` past the operands as keywords named by ``callee``'s own signature (see
    :func:`bind`); an optional one the template does not take is refused, unless it is
    written as its default (``np.max(x, 0, None)``: ``out=None``)."""
    signature = _library_signature(callee)
    if signature is None:
        return args, keywords
    params = list(signature.parameters.values())
    kept: list[gast.expr] = []
    named = dict(keywords)
    naming = False  # past the first optional parameter: every later one by its name
    for k, arg in enumerate(args):
        param = params[k] if k < len(params) else None
        optional = (
            param is not None
            and param.kind is param.POSITIONAL_OR_KEYWORD
            and param.default is not param.empty
        )
        if not optional and not naming:
            kept.append(arg)
            continue
        if param is None or param.kind is not param.POSITIONAL_OR_KEYWORD:
            raise TemplateError(f"too many positional arguments ({len(args)})")
        naming = True
        if param.name in rule.signature.parameters:
            if param.name in named:
                raise TemplateError(f"multiple values for argument '{param.name}'")
            named[param.name] = arg
        elif not (isinstance(arg, gast.Constant) and arg.value is param.default is None):
            raise TemplateError(f"its argument '{param.name}' (position {k}) is not supported")
    return kept, named


def _library_signature(callee: Any) -> inspect.Signature | None:
    """The signature of a NumPy/SciPy function (not a ufunc, not a method), if readable."""
    module = getattr(callee, "__module__", None) or ""
    if not module.startswith(("numpy", "scipy")) or isinstance(callee, np.ufunc):
        return None
    try:
        return inspect.signature(callee)
    except (TypeError, ValueError):
        return None


def refuse_unknown_stars(args: list, label: str, source: Any, where: gast.AST) -> None:
    """A located error for a star-argument whose length is known only at run time: which
    parameter each value lands in is not known when the derivative is written."""
    for arg in args:
        if isinstance(arg, gast.Starred):
            raise source.error(
                f"{label}: a star-argument over a value whose length is known only at run "
                "time cannot be differentiated; write the arguments out (a tuple display "
                "or a tuple name of constant length works: 'args = (a, b); f(*args)')",
                where,
            )


def rule_operands(
    rule: Rule | None, op: Any, source: Any, where: gast.AST, tangent: bool = False
) -> dict[str, Any]:
    """The op's operands bound to its rule's parameters; a located error when the op has
    no rule (of the kind asked for) or its arguments do not fit the rule."""
    from srcad.errors import NoAdjointError
    from srcad.transform.calls import missing_rule_hint
    from srcad.transform.hints import instead, no_rule

    if rule is None:
        if op.label in ("Tuple", "List", "Dict"):
            raise source.error(
                "building a container of differentiable values is not supported yet", where
            )
        message = no_rule(op, tangent) + missing_rule_hint(op.callee)
        raise source.error(message, where, NoAdjointError)
    refuse_unknown_stars(op.args, op.label, source, where)
    try:
        bound = bind(rule, op.args, op.keywords, op.callee)
    except TemplateError as exc:
        advice = instead(op.callee)  # (Python's max of three values, or of a list)
        raise source.error(
            f"{op.label}: arguments not supported for differentiation ({exc})"
            + (f"; {advice}" if advice else ""),
            where,
        ) from None
    for name, allowed in rule.choices.items():
        value = bound.get(name)
        if isinstance(value, gast.Constant) and value.value in allowed:
            continue
        known = ", ".join(repr(a) for a in allowed)
        if isinstance(value, gast.Constant):
            problem = f"{op.label} with {name}={value.value!r} cannot be differentiated"
        else:
            problem = f"{op.label} with {name} computed at run time cannot be differentiated"
        raise source.error(f"{problem}: write {name} out as one of {known}", where)
    return bound


def result_names(
    stmt: gast.Assign, rule: Rule, label: str, source: Any, where: gast.AST
) -> list[str]:
    """The names ``w, v = op(a)`` unpacks an op's several results into; a located error
    unless there is one name per result (any number for a list of them) and none of them
    is also an operand."""
    target = stmt.targets[0]
    names = [e.id for e in getattr(target, "elts", []) if isinstance(e, gast.Name)]
    if (
        not isinstance(target, gast.Tuple)
        or len(names) != len(target.elts)
        or (not rule.variadic and len(names) != len(rule.results))
    ):
        message = f"{label} returns several values: unpack them into as many names"
        if rule.variadic:
            message += (
                ", or pick one (np.split(x, n)[k]); a name holding them, or a loop over them,"
                " needs their number written in the call (np.split(x, 3))"
            )
        raise source.error(message, where)
    reads = {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)}
    if set(names) & reads:
        raise source.error(f"{label}: its results must not overwrite its operands", where)
    return names


def _constant(value: Any) -> gast.expr:
    if isinstance(value, tuple):
        return build.tuple_([_constant(v) for v in value])
    return build.const(value)


_STORED: dict[int, tuple[Rule, frozenset[str]]] = {}


def stored_params(rule: Rule) -> frozenset[str]:
    """Template parameters the rule adds gradient contributions to (``d[p] = ...``)."""
    found = _STORED.get(id(rule))
    if found is None or found[0] is not rule:
        found = _STORED[id(rule)] = (rule, frozenset(_stored_params(rule)))
    return found[1]


def _stored_params(rule: Rule) -> set[str]:
    stored = set()
    loops: dict[str, str] = {}
    for node in gast.walk(gast.Module(body=rule.body, type_ignores=[])):
        if isinstance(node, gast.For) and isinstance(node.iter, gast.Call):
            target = node.target
            if isinstance(target, gast.Tuple) and node.iter.args:
                seq = node.iter.args[0]
                if isinstance(seq, gast.Name):
                    loops[target.elts[1].id] = seq.id
        if isinstance(node, gast.Assign):
            target = node.targets[0]
            if (
                isinstance(target, gast.Subscript)
                and isinstance(target.value, gast.Name)
                and target.value.id == "d"
                and isinstance(target.slice, gast.Name)
            ):
                stored.add(loops.get(target.slice.id, target.slice.id))
    return stored


_READ: dict[int, tuple[Rule, frozenset[str]]] = {}


def tangent_params(rule: Rule) -> frozenset[str]:
    """Template parameters whose tangent (``d[p]``) a tangent rule reads."""
    found = _READ.get(id(rule))
    if found is None or found[0] is not rule:
        loops: dict[str, str] = {}
        read = set()
        for node in gast.walk(gast.Module(body=rule.body, type_ignores=[])):
            if isinstance(node, gast.For) and isinstance(node.iter, gast.Call):
                target = node.target
                if isinstance(target, gast.Tuple) and node.iter.args:
                    seq = node.iter.args[0]
                    if isinstance(seq, gast.Name):
                        loops[target.elts[1].id] = seq.id
            if (
                isinstance(node, gast.Subscript)
                and isinstance(node.ctx, gast.Load)
                and isinstance(node.value, gast.Name)
                and node.value.id == "d"
                and isinstance(node.slice, gast.Name)
            ):
                read.add(node.slice.id)
        found = _READ[id(rule)] = (rule, frozenset(loops.get(n, n) for n in read))
    return found[1]


_TEMPORARIES: dict[int, tuple[Rule, tuple[str, ...]]] = {}


def _temporaries(rule: Rule) -> tuple[str, ...]:
    """The names the template's statements assign (not a loop's), in order of appearance."""
    found = _TEMPORARIES.get(id(rule))
    if found is None or found[0] is not rule:
        names: dict[str, None] = {}
        for stmt in rule.body:
            if not isinstance(stmt, gast.For):
                for node in gast.walk(stmt):
                    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                        names[node.id] = None
        found = _TEMPORARIES[id(rule)] = (rule, tuple(names))
    return found[1]


class _Substitute(Transformer):
    def __init__(
        self,
        rule: Rule,
        result: gast.expr,
        bound: dict[str, gast.expr],
        temps: dict[str, str],
        namer: Namer,
        xp_name: str,
    ) -> None:
        self.rule = rule
        self.result = result
        self.bound = bound
        self.temps = temps
        self.namer = namer
        self.xp_name = xp_name

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        self.generic_visit(node)
        if isinstance(node.value, gast.Name) and node.value.id == "d":
            node.value.id = ADJOINT
        return node

    def visit_Name(self, node: gast.Name) -> gast.AST:
        name = node.id
        if self.rule.results:
            if name in self.rule.results:
                if self.rule.variadic:
                    return gast.List(elts=clone(self.result), ctx=gast.Load())
                return clone(self.result[self.rule.results.index(name)])
        elif name == self.rule.result:
            return clone(self.result)
        if name in self.bound:
            return clone(self.bound[name])
        if name in self.temps:
            node.id = self.temps[name]
        elif name == "xp":
            node.id = self.xp_name
        elif name not in ("d", ADJOINT):
            obj = self.rule.globals.get(name, getattr(builtins, name, None))
            node.id = self.namer.bind_global(obj, name)
        return node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        node.keywords = [k for k in node.keywords if not getanno(k.value, "default")]
        return node

    def visit_For(self, node: gast.For) -> list[gast.stmt]:
        seq = node.iter.args[0].id if isinstance(node.iter, gast.Call) else None
        items = self.bound.get(seq)
        if not isinstance(items, (gast.Tuple, gast.List)):
            raise TemplateError(f"'{seq}' must be a list or tuple written out in the call")
        index, item = (e.id for e in node.target.elts)
        out: list[gast.stmt] = []
        for k, elt in enumerate(items.elts):
            inner = _Substitute(
                self.rule,
                self.result,
                {**self.bound, index: build.const(k), item: elt},
                self.temps,
                self.namer,
                self.xp_name,
            )
            for stmt in clone(node.body):
                out.append(inner.visit(stmt))
        return out


def instantiate(
    rule: Rule,
    result: gast.expr | list[gast.expr],
    bound: dict[str, gast.expr],
    namer: Namer,
    xp_name: str,
) -> list[gast.stmt]:
    """The template's statements with operands, result (a list of results for an op with
    several), temps and globals substituted."""
    body = clone(rule.body)
    temps = {name: namer.fresh_temp("_" + name) for name in _temporaries(rule)}
    sub = _Substitute(rule, result, bound, temps, namer, xp_name)
    out: list[gast.stmt] = []
    for stmt in body:
        new = sub.visit(stmt)
        out.extend(new if isinstance(new, list) else [new])
    return out


# ---- control-flow templates (srcad/transform/control_templates.py)

_LOCATIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_PARSED: dict[Any, tuple[list[gast.stmt], frozenset[str]]] = {}


def _parsed(template: Any) -> tuple[list[gast.stmt], frozenset[str]]:
    """A control-flow template's statements (without locations: generated code has none of
    its own) and its parameters, parsed once."""
    found = _PARSED.get(template)
    if found is None:
        from srcad.adjoints.synthesis import source

        definition = source(template)
        for node in gast.walk(definition):
            for key in _LOCATIONS:
                node.__dict__.pop(key, None)
        params = frozenset(a.id for a in definition.args.args)
        found = _PARSED[template] = (definition.body, params)
    return found


class _Fill(Transformer):
    """Binds a control-flow template's parameters and free names (see :func:`fill`)."""

    def __init__(self, template: Any, bound: dict[str, Any], params: frozenset, namer: Namer):
        unknown = set(bound) ^ params
        if unknown:
            raise TypeError(f"{template.__name__}: parameters {sorted(unknown)} not matched")
        self.template = template
        self.bound = bound
        self.namer = namer
        self.placed: set[str] = set()

    def visit_Expr(self, node: gast.Expr) -> Any:
        value = node.value
        if isinstance(value, gast.Name) and isinstance(self.bound.get(value.id), list):
            return self.bound[value.id]
        self.generic_visit(node)
        return node

    def visit_Name(self, node: gast.Name) -> gast.AST:
        name = node.id
        if name not in self.bound:
            obj = self.template.__globals__.get(name, getattr(builtins, name, None))
            if obj is None:
                raise TypeError(f"{self.template.__name__}: '{name}' is neither bound nor known")
            node.id = self.namer.bind_global(obj, name)
            return node
        value = self.bound[name]
        if isinstance(value, str):
            node.id = value
            return node
        # a node given is placed as it is once, and copied where it appears again
        if name in self.placed:
            return clone(value)
        self.placed.add(name)
        return value


def fill(template: Any, namer: Namer, **bound: str | gast.expr | list[gast.stmt]) -> Any:
    """A control-flow template's statements with its parameters bound (a list of
    statements where one stands alone, spliced; an expression, or a name as a ``str``,
    elsewhere) and the builtins it calls bound in ``namer``; the expression of a template
    that returns one."""
    body, params = _parsed(template)
    sub = _Fill(template, bound, params, namer)
    out: list[gast.stmt] = []
    for stmt in clone(body):
        new = sub.visit(stmt)
        out.extend(new if isinstance(new, list) else [new])
    if len(out) == 1 and isinstance(out[0], gast.Return):
        return out[0].value
    return out
