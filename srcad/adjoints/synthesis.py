"""The templates a one-line rule declaration stands for (registry.partials, registry.linear,
registry.bilinear), written as they would be by hand."""

from __future__ import annotations

import copy
import importlib
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import gast
import numpy as np


def from_partials(
    template: Callable, static: tuple[str, ...], broadcasts: bool
) -> tuple[list[gast.stmt], list[gast.stmt]]:
    """The adjoint and tangent bodies of ``template``, a function returning the partial
    derivative of its result (first parameter) by each operand not in ``static``: each
    ``d[x] = d[y] * partial`` (through ``unbroadcast`` where the op ``broadcasts``) and
    ``d[y] = d[x] * partial``, after the statements before its return."""
    *temps, last = source(template).body
    params = list(inspect.signature(template).parameters)
    result, operands = params[0], [p for p in params[1:] if p not in static]
    value = last.value if isinstance(last, gast.Return) else None
    values = value.elts if isinstance(value, gast.Tuple) else [value]
    if value is None or len(values) != len(operands):
        raise TypeError(
            f"{template.__name__}: return one partial derivative per operand "
            f"({', '.join(operands)}), as a tuple for several"
        )
    reads = _reads_through(temps)
    known = set(params) | set(reads)
    adjoint_body, tangent_body = copy.deepcopy(temps), copy.deepcopy(temps)
    for x, partial in zip(operands, values):
        grad = _times(_d(result), partial, known)
        if broadcasts:
            grad = _call("unbroadcast", grad, _load(x))
        adjoint_body.append(_assign(x, grad))
        # a contribution reading neither the result nor the other operands has x's shape,
        # and the result may be larger
        step = _times(_d(x), partial, known)
        read = _names(partial, reads)
        if broadcasts and result not in read and not set(params[1:]) - {x} <= read:
            step = _call("broadcast_like", step, _load(result))
        tangent_body.append(_assign(result, step))
    return adjoint_body, tangent_body


def applied(
    op: Any,
    label: str,
    template: Callable,
    linear_in: set[str],
    separately: bool = False,
    operator: type[gast.operator] | None = None,
) -> tuple[list[gast.stmt], dict[str, Any]]:
    """The tangent body ``d[y] = op(...)`` of ``template``'s operands, the tangents of
    ``linear_in`` in their places (``xp.fft.fft`` for NumPy's op, by name for another), and
    the names it adds to the template's globals. With ``separately`` (a product: linear in
    each of ``linear_in`` alone) one term per operand of ``linear_in``, only its tangent in
    its place (``d[a] @ b`` and ``a @ d[b]``, written with ``operator`` where given)."""
    result, *params = inspect.signature(template).parameters.values()
    if not linear_in or not linear_in <= {p.name for p in params}:
        raise TypeError(
            f"{_form(separately)}({label}): the template must give its operands gradients"
        )
    if not separately:
        return _applied(op, label, template, linear_in, result.name, params)
    body: list[gast.stmt] = []
    names: dict[str, Any] = {}
    for x in (p.name for p in params if p.name in linear_in):
        if operator is not None:
            if len(params) != 2:
                raise TypeError(f"bilinear({label}): an operator's template takes two operands")
            left, right = (_d(p.name) if p.name == x else _load(p.name) for p in params)
            body.append(_assign(result.name, gast.BinOp(left=left, op=operator(), right=right)))
            continue
        term, more = _applied(op, label, template, {x}, result.name, params, "bilinear")
        body.extend(term)
        names.update(more)
    return body, names


def _form(separately: bool) -> str:
    return "bilinear" if separately else "linear"


def _applied(
    op: Any,
    label: str,
    template: Callable,
    linear_in: set[str],
    result: str,
    params: list[inspect.Parameter],
    form: str = "linear",
) -> tuple[list[gast.stmt], dict[str, Any]]:
    """``d[result] = op(...)``, the tangents of ``linear_in`` in their places, and the names
    it adds to the template's globals."""
    name = op.__name__
    module = getattr(op, "__module__", None) or ""
    names: dict[str, Any] = {}
    if module.split(".")[0] == "numpy":
        if getattr(importlib.import_module(module), name, None) is not op:
            raise TypeError(f"{form}({label}): not found as {module}.{name}")
        func: gast.expr = _load("xp")
        for attr in (*module.split(".")[1:], name):
            func = gast.Attribute(value=func, attr=attr, ctx=gast.Load())
    else:
        func = _load(name)
        if template.__globals__.get(name) is not op:
            names[name] = op
    args, keywords = [], []
    for param in params:
        value = _d(param.name) if param.name in linear_in else _load(param.name)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{form}({label}): *{param.name} is not supported")
        if param.kind is param.KEYWORD_ONLY or param.default is not param.empty:
            keywords.append(gast.keyword(arg=param.name, value=value))
        else:
            args.append(value)
    _check_call(op, label, params, form)
    call = gast.Call(func=func, args=args, keywords=keywords)
    return [_assign(result, call)], names


def stored(body: list[gast.stmt]) -> set[str]:
    """The names a template assigns ``d[...]`` to."""
    return {
        node.targets[0].slice.id
        for node in gast.walk(gast.Module(body=body, type_ignores=[]))
        if isinstance(node, gast.Assign)
        and isinstance(node.targets[0], gast.Subscript)
        and getattr(node.targets[0].value, "id", None) == "d"
        and isinstance(node.targets[0].slice, gast.Name)
    }


def source(template: Callable) -> gast.FunctionDef:
    """``template``'s definition, parsed."""
    return gast.parse(textwrap.dedent(inspect.getsource(template))).body[0]


def _times(g: gast.expr, partial: gast.expr, known: set[str]) -> gast.expr:
    """``g * partial`` as written by hand: a product or quotient continues the chain
    (``g * a * b``, ``g / q``, ``g * a / q``), a negation moves onto ``g`` (``-g * s``), and
    a factor reading none of ``known`` (a constant) stays one factor (``g * (pi / 180)``)."""
    if isinstance(partial, gast.Constant) and type(partial.value) in (int, float):
        if partial.value == 1:
            return g
    if isinstance(partial, gast.UnaryOp) and isinstance(partial.op, gast.USub):
        if isinstance(g, gast.UnaryOp) and isinstance(g.op, gast.USub):
            return _times(g.operand, partial.operand, known)
        return _times(gast.UnaryOp(op=gast.USub(), operand=g), partial.operand, known)
    if isinstance(partial, gast.BinOp) and _names(partial, {}) & known:
        if isinstance(partial.op, gast.Mult):
            return _times(_times(g, partial.left, known), partial.right, known)
        if isinstance(partial.op, gast.Div):
            left = _times(g, partial.left, known)
            return gast.BinOp(left=left, op=gast.Div(), right=copy.deepcopy(partial.right))
    return gast.BinOp(left=g, op=gast.Mult(), right=copy.deepcopy(partial))


def _names(node: gast.AST, through: dict[str, set[str]]) -> set[str]:
    """The names ``node`` reads, and those the temporaries among them read (``through``)."""
    found = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    return found.union(*(through[n] for n in found if n in through))


def _reads_through(temps: list[gast.stmt]) -> dict[str, set[str]]:
    """Each temporary assigned by ``temps`` -> the names its value reads, transitively."""
    reads: dict[str, set[str]] = {}
    for stmt in temps:
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            raise TypeError("a partial derivative's statements must assign one name each")
        reads[stmt.targets[0].id] = _names(stmt.value, reads)
    return reads


def _check_call(op: Any, label: str, params: list[inspect.Parameter], form: str) -> None:
    """Refuse a template whose operands ``op`` does not take as the tangent passes them, or
    whose defaults are not the op's (the tangent leaves out an operand left at its default)."""
    try:
        signature = inspect.signature(op)
    except (TypeError, ValueError):
        return  # (a ufunc: its operands are positional)
    positional = [p.name for p in params if p.kind is not p.KEYWORD_ONLY and p.default is p.empty]
    keywords = {p.name: p.default for p in params if p.name not in positional}
    try:
        signature.bind(*positional, **keywords)
    except TypeError as exc:
        raise TypeError(f"{form}({label}): {exc}") from None
    for name, default in keywords.items():
        own = signature.parameters.get(name)
        # (NumPy's "not given" stands for the default its own code then uses)
        if own is None or own.default is getattr(np, "_NoValue", None):
            continue
        if own.default != default:
            raise TypeError(f"{form}({label}): {name}={default!r} is not the op's default")


def _load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _d(name: str, ctx: Any = None) -> gast.Subscript:
    """``d[name]``."""
    return gast.Subscript(value=_load("d"), slice=_load(name), ctx=ctx or gast.Load())


def _assign(name: str, value: gast.expr) -> gast.Assign:
    """``d[name] = value``."""
    return gast.Assign(targets=[_d(name, gast.Store())], value=value, type_comment=None)


def _call(func: str, *args: gast.expr) -> gast.Call:
    return gast.Call(func=_load(func), args=list(args), keywords=[])
