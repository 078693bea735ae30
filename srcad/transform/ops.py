"""Classify the single operation of an A-normal-form statement: its registry key and operands."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from srcad.adjoints.registry import (
    COPY,
    GETITEM,
    Attribute,
    Method,
    Operator,
    is_nondifferentiable,
    lookup,
    ufunc_method_label,
)
from srcad.adjoints.scipy_table import is_scipy, public_name
from srcad.transform import build
from srcad.transform.anno import setanno
from srcad.transform.calls import user_callee
from srcad.transform.frontend import MISSING, Source
from srcad.transform.nodes import names
from srcad.transform.normalize.walk import all_statements

DYNAMIC_GETITEM = Operator("SubscriptDynamic")
USER_CALL = Operator("UserCall")
LIST = Operator("List")
LIST_ITEM = Operator("ListItem")
_LIST_CONSUMERS = (
    (np.stack, Operator("StackList")),
    (np.concatenate, Operator("ConcatenateList")),
    (np.vstack, Operator("VStackList")),
    (np.hstack, Operator("HStackList")),
    (np.dstack, Operator("DStackList")),
    (np.column_stack, Operator("ColumnStackList")),
)
SQUARE = Operator("Square")
COMPARE = Operator("Compare")
UNKNOWN = Operator("Unknown")


@dataclass
class Op:
    """The operation of one statement: what it is, what it reads, how to describe it."""

    key: Any
    args: list[gast.expr]
    keywords: dict[str, gast.expr]
    label: str
    callee: Any = None

    @property
    def nondifferentiable(self) -> bool:
        """Whether the op's outputs carry no gradient."""
        return self.key is COMPARE or is_nondifferentiable(self.key)

    @property
    def rule(self) -> Any:
        """The adjoint rule of the op, if one is registered."""
        return lookup(self.key)


def _describe(obj: Any, fallback: str) -> str:
    if is_scipy(obj):
        return public_name(obj) or fallback
    method = ufunc_method_label(obj)
    if method:
        return method
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return f"call of a {type(obj).__name__} object" if callable(obj) else fallback
    if module in ("numpy", "builtins") or not module:
        return f"np.{name}" if module == "numpy" else name
    return f"{public_module(module)}.{name}"


def public_module(module: str) -> str:
    """The module users import for a C module's function (``operator`` for ``_operator``)."""
    if module.startswith("_") and module[1:] in sys.modules:
        return module[1:]
    return module


def _is_basic_item(item: gast.expr) -> bool:
    if isinstance(item, gast.Slice):
        return all(p is None or _is_constant_int(p) for p in (item.lower, item.upper, item.step))
    if isinstance(item, gast.Constant):
        return item.value is None or item.value is Ellipsis or _is_constant_int(item)
    return _is_constant_int(item)


def _is_constant_int(node: gast.expr) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _is_constant_int(node.operand)
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )


def _is_static_index(index: gast.expr) -> bool:
    """Basic indexing known at transform time: ints, constant slices, None, ``...``.

    Anything else (names, nested tuples, lists) may be fancy indexing with repeats.
    """
    items = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(_is_basic_item(item) for item in items)


def index_expression(index: gast.expr) -> gast.expr:
    """An index as an ordinary expression: ``a:b`` becomes ``slice(a, b, None)``."""
    if isinstance(index, gast.Slice):
        parts = [
            p if p is not None else build.const(None)
            for p in (index.lower, index.upper, index.step)
        ]
        return build.call("slice", *parts)
    if isinstance(index, gast.Tuple):
        return build.tuple_([index_expression(e) for e in index.elts])
    return index


def classify(value: gast.expr, source: Source, local: set[str]) -> Op:
    """The :class:`Op` performed by an A-normal-form expression ``value``."""
    if isinstance(value, gast.BinOp):
        name = type(value.op).__name__
        if (
            name == "Mult"
            and isinstance(value.left, gast.Name)
            and isinstance(value.right, gast.Name)
            and value.left.id == value.right.id
        ):
            return Op(SQUARE, [value.left], {}, "'*'")
        return Op(Operator(name), [value.left, value.right], {}, f"operator {name}")
    if isinstance(value, gast.UnaryOp):
        name = type(value.op).__name__
        return Op(Operator(name), [value.operand], {}, f"unary {name}")
    if isinstance(value, gast.Compare):
        return Op(COMPARE, [], {}, "comparison")
    if isinstance(value, gast.BoolOp):
        # ``a or b`` returns one of its operands: differentiable, and not supported yet
        return Op(UNKNOWN, [value], {}, "'and'/'or' on values")
    if isinstance(value, (gast.Name, gast.Constant)):
        return Op(COPY, [value], {}, "assignment")
    if isinstance(value, gast.Attribute):
        obj = source.resolve(value, local)
        if obj is not MISSING:
            return Op(COPY, [value], {}, "constant")
        return Op(Attribute(value.attr), [value.value], {}, f"attribute .{value.attr}")
    if isinstance(value, gast.Subscript):
        trick = _index_trick(value, source, local)
        if trick is not None:
            return trick
        if isinstance(value.value, gast.Name) and value.value.id in source.lists:
            return Op(LIST_ITEM, [value.value, index_expression(value.slice)], {}, "list item")
        if _is_static_index(value.slice):
            return Op(GETITEM, [value.value, value.slice], {}, "indexing")
        return Op(DYNAMIC_GETITEM, [value.value, index_expression(value.slice)], {}, "indexing")
    if isinstance(value, gast.Call):
        keywords = {k.arg: k.value for k in value.keywords}
        func = value.func
        obj = source.resolve(func, local)
        if obj is not MISSING:
            first = value.args[0] if value.args else None
            if isinstance(first, gast.Name) and first.id in source.lists:
                key = next((k for f, k in _LIST_CONSUMERS if f is obj), None)
                if key is not None:
                    label = f"{_describe(obj, 'call')} of a list"
                    return Op(key, list(value.args), keywords, label)
            if (
                obj is np.einsum
                and len(value.args) > 1
                and isinstance(value.args[1], (gast.List, gast.Tuple))
            ):
                return _einsum_sublists(value.args, keywords)
            if obj is np.linspace and _given(value, "retstep", 4):
                # a (samples, step) pair: its rule is for the samples alone
                return Op(UNKNOWN, list(value.args), keywords, "np.linspace with retstep")
            found = lookup(obj) is None and not is_nondifferentiable(obj) and user_callee(obj)
            if found:
                name = getattr(obj, "__qualname__", None) or found[0].__qualname__
                label = f"call to {name}"
                return Op(USER_CALL, list(value.args), keywords, label, callee=obj)
            return Op(obj, list(value.args), keywords, _describe(obj, "call"), callee=obj)
        if isinstance(func, gast.Attribute):
            args = [func.value, *value.args]
            return Op(Method(func.attr), args, keywords, f"method .{func.attr}()")
        label = func.id if isinstance(func, gast.Name) else "call"
        return Op(UNKNOWN, list(value.args), keywords, label)
    if isinstance(value, gast.List):
        return Op(LIST, list(value.elts), {}, "list")
    # containers and anything else: every name it reads counts, so activity sees it
    return Op(UNKNOWN, [value], {}, type(value).__name__)


def _given(call: gast.Call, keyword: str, position: int) -> bool:
    """Whether ``call`` passes ``keyword`` (or the argument at ``position``) other than as
    a literal False."""
    found = [k.value for k in call.keywords if k.arg == keyword]
    if len(call.args) > position:
        found.append(call.args[position])
    return any(not (isinstance(v, gast.Constant) and v.value is False) for v in found)


#: NumPy's index objects: ``np.r_[a, b]`` builds an array from its index's values.
_INDEX_TRICKS = {id(obj): name for name in ("r_", "c_", "mgrid", "ogrid", "s_", "index_exp")
                 if (obj := getattr(np, name, None)) is not None}  # fmt: skip


def _index_trick(value: gast.Subscript, source: Source, local: set[str]) -> Op | None:
    """``np.r_[a, b]`` and the like as an op of the index's values, keyed by the object."""
    if not isinstance(value.value, (gast.Name, gast.Attribute)):
        return None
    obj = source.resolve(value.value, local)
    name = _INDEX_TRICKS.get(id(obj)) if obj is not MISSING else None
    if name is None:
        return None
    items = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
    label = f"np.{name}[...]"
    if name in ("r_", "c_") and any(
        isinstance(e, gast.Slice) or (isinstance(e, gast.Constant) and isinstance(e.value, str))
        for e in items
    ):
        # ranges and directives ('0,2', 'r') are not the plain join the rules describe
        return Op(UNKNOWN, [value.slice], {}, f"{label} with slices or a directive string")
    args = [build.tuple_([e if not isinstance(e, gast.Slice) else index_expression(e)
                          for e in items])]  # fmt: skip
    return Op(obj, args, {}, label, callee=obj)


def _einsum_sublists(args: list[gast.expr], keywords: dict[str, gast.expr]) -> Op:
    """``np.einsum(a, [0, 1], b, [1], [0])`` as its rules read it: ``einsum("ab,b->a", a, b)``."""
    output = args[-1] if len(args) % 2 else None
    pairs = args[:-1] if output is not None else args
    operands, subs = pairs[0::2], pairs[1::2]
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def spec(sub: gast.expr) -> str:
        if not isinstance(sub, (gast.List, gast.Tuple)):
            raise ValueError
        out = ""
        for e in sub.elts:
            if not (
                isinstance(e, gast.Constant) and _is_constant_int(e) and e.value < len(letters)
            ):
                raise ValueError
            out += letters[e.value]
        return out

    try:
        text = ",".join(spec(s) for s in subs)
        if output is not None:
            text += "->" + spec(output)
    except ValueError:
        label = "np.einsum with sublists other than lists of small integers written in the call"
        return Op(UNKNOWN, list(args), keywords, label)
    return Op(np.einsum, [build.const(text), *operands], keywords, "np.einsum", callee=np.einsum)


def operand_names(value: gast.expr) -> set[str]:
    """Names an expression reads."""
    return {n.id for n in names(value) if isinstance(n.ctx, gast.Load)}


def differentiable_operand_names(value: gast.expr, op: Op) -> set[str]:
    """Names whose values a differentiable op's result depends on smoothly."""
    if op.key in (GETITEM, DYNAMIC_GETITEM):
        return operand_names(op.args[0])
    if isinstance(value, gast.Call) and op.callee is None and isinstance(value.func, gast.Name):
        return operand_names(value)
    static = _static_operands(op)
    names: set[str] = set()
    for arg in op.args:
        if id(arg) not in static:
            names |= operand_names(arg)
    for arg in op.keywords.values():
        if id(arg) not in static:
            names |= operand_names(arg)
    return names


def _static_operands(op: Op) -> set[int]:
    """Ids of the operand nodes a rule reads only for their shapes."""
    rule = op.rule
    if rule is None or not rule.static:
        return set()
    try:
        bound = rule.signature.bind(*op.args, **op.keywords)
    except TypeError:
        return set()
    return {id(bound.arguments[name]) for name in rule.static if name in bound.arguments}


def annotate_purity(body: list[gast.stmt], source: Source, local: set[str]) -> None:
    """Mark each statement ``pure`` when it only computes a value (the optimizer may drop it
    once nothing reads it): ops with a rule or without a derivative, not calls of unknowns."""
    for stmt in all_statements(body):
        pure = False
        if isinstance(stmt, gast.Assign):
            op = classify(stmt.value, source, local)
            pure = op.key is not UNKNOWN and (op.rule is not None or op.nondifferentiable)
        setanno(stmt, "pure", pure)


def tape_names(body: list[gast.stmt], source: Source, local: set[str]) -> set[str]:
    """Names bound to a :class:`~srcad.runtime.tape.Tape` (in generated code being
    differentiated again)."""
    from srcad.runtime.tape import Tape

    return {
        stmt.targets[0].id
        for stmt in all_statements(body)
        if isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Call)
        and source.resolve(stmt.value.func, local) is Tape
    }


def popped_names(body: list[gast.stmt], source: Source, local: set[str]) -> set[str]:
    """Names that take a value off a tape (``a = tape.pop()``) in generated code."""
    tapes = tape_names(body, source, local)
    return {
        stmt.targets[0].id
        for stmt in all_statements(body)
        if tape_call(stmt, tapes, "pop") is not None
        and isinstance(stmt, gast.Assign)  # (a pop whose value is dropped is a bare call)
        and isinstance(stmt.targets[0], gast.Name)
    }


def tape_call(stmt: gast.stmt, tapes: set[str], method: str) -> gast.Call | None:
    """The call ``tape.push(v)`` (an expression statement) or ``tape.pop()`` (assigned)."""
    value = getattr(stmt, "value", None)
    if (
        isinstance(stmt, (gast.Expr, gast.Assign))
        and isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and value.func.attr == method
        and isinstance(value.func.value, gast.Name)
        and value.func.value.id in tapes
    ):
        return value
    return None
