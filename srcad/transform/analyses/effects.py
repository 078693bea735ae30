"""Values a derivative cannot follow, refused in both modes before either differentiates.

A call made for its effect alone that is given a differentiated value (``seen.add(v)``,
``history.push(v)``) may keep the value where later code reads it, and no derivative can
follow it there: refused, unless its callee only reports or checks its arguments
(``print``, ``logging``, ``warnings``, NumPy's functions, whose in-place forms
normalize/mutating_calls.py has lowered already, a function declared non-differentiable,
or a Python function of the user's that changes only its own locals). ``a | b`` (``&``,
``^``) of differentiated values joins dicts or sets (on arrays these take integers and
booleans): refused too. Both gave zero gradients in reverse mode until stop 28.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable

import gast

from srcad.adjoints.registry import Operator, is_nondifferentiable, lookup
from srcad.transform.analyses.activity import Activity, targets
from srcad.transform.analyses.mutators import describe
from srcad.transform.anno import getanno
from srcad.transform.frontend import MISSING, Source
from srcad.transform.normalize.helper_results import parsed_tree
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import classify, operand_names, tape_call

#: operators that take integers and booleans on arrays, and join dicts and sets
_JOINS = {Operator("BitOr"): "|", Operator("BitAnd"): "&", Operator("BitXor"): "^"}
#: modules whose functions, called for their effect, keep nothing they are given
_REPORTING = ("logging", "warnings", "_warnings", "numpy", "scipy", "math", "cmath")
#: Python's builtins that change or keep something (the others only compute)
_BUILTINS_WITH_EFFECTS = {
    "setattr", "delattr", "exec", "eval", "next", "iter", "open", "input", "__import__",
    "globals", "locals", "vars", "compile", "breakpoint",
}  # fmt: skip
#: how deep calls of the user's functions are read
_DEPTH = 4


def refuse_unfollowed(
    body: list[gast.stmt], source: Source, local: set[str], activity: Activity, tapes: set[str]
) -> None:
    """Raise at the first value of ``body`` a derivative cannot follow (see module doc)."""
    _refuse_container_joins(body, source, local, activity)
    _refuse_kept_values(body, source, local, activity, tapes)


def _refuse_container_joins(
    body: list[gast.stmt], source: Source, local: set[str], activity: Activity
) -> None:
    """Raise at ``a | b`` (``&``, ``^``) of varied values whose result the output reads."""
    for stmt in all_statements(body):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.BinOp)):
            continue
        if not set(targets(stmt)) & activity.useful:
            continue
        if not operand_names(stmt.value) & activity.varied:
            continue
        symbol = _JOINS.get(classify(stmt.value, source, local).key)
        if symbol is not None:
            raise source.error(
                f"'{symbol}' of differentiated values: srcad does not differentiate a "
                "union of dicts or sets (a set comprehension builds one); build the dict "
                "with d[k] = v, or use a list",
                getanno(stmt, "expr") or getanno(stmt, "origin") or stmt,
            )


def _refuse_kept_values(
    body: list[gast.stmt], source: Source, local: set[str], activity: Activity, tapes: set[str]
) -> None:
    """Raise at a call given a differentiated value whose result nothing differentiated
    reads (a statement of its own, or bound to names the output does not need: ``_ =
    box.keep(v)``), unless its callee keeps nothing."""
    for stmt in all_statements(body):
        if isinstance(stmt, gast.Expr):
            call = stmt.value
        elif isinstance(stmt, gast.Assign) and not set(targets(stmt)) & activity.useful:
            call = stmt.value
        else:
            continue
        if not isinstance(call, gast.Call) or not operand_names(call) & activity.varied:
            continue
        if tape_call(stmt, tapes, "push") is not None or tape_call(stmt, tapes, "pop"):
            continue  # generated code differentiated again: its tapes have adjoints
        op = classify(call, source, local)
        if op.rule is not None or op.nondifferentiable:
            continue  # an op with a rule (``y.sum()``) is a function of its operands
        callee = source.resolve(call.func, local)
        if (getattr(callee, "__module__", None) or "").startswith("srcad."):
            # srcad's own helpers, which its passes write: their rules follow the values
            # (generated code's restoring an array in place is refused by name later)
            continue
        if isinstance(stmt, gast.Assign) and not _maybe_keeping(callee):
            continue  # a result bound: one of srcad's handles, a custom rule, a partial...
        if not _keeps_nothing(callee):
            raise source.error(kept_value_message(call), getanno(stmt, "expr") or stmt)


def _maybe_keeping(callee: object) -> bool:
    """Whether a call of ``callee`` whose result is bound but not needed may still have
    kept a value: a method of an object made in the function (not known before it runs), a
    plain Python function, or one of Python's builtins with effects (``setattr``)."""
    return callee is MISSING or inspect.isfunction(callee) or _builtin_with_effects(callee)


def _builtin_with_effects(callee: object) -> bool:
    return getattr(callee, "__module__", None) == "builtins" and (
        getattr(callee, "__name__", "") in _BUILTINS_WITH_EFFECTS
    )


def _keeps_nothing(callee: object, depth: int = 0) -> bool:
    """Whether calling ``callee`` keeps none of its arguments: a reporting function, or a
    Python function of the user's whose body changes nothing but its own locals and calls
    for their effect only such functions (``check_finite(x)``)."""
    if callee is MISSING:
        return False
    if callee is builtins.print or is_nondifferentiable(callee) or lookup(callee) is not None:
        return True  # (an op with a rule is a function of its arguments)
    method = getattr(callee, "__func__", callee)  # a logger's bound method
    module = getattr(method, "__module__", None) or ""
    if module == "builtins":
        return not _builtin_with_effects(callee)
    if module.partition(".")[0] in _REPORTING:
        return True
    return inspect.isfunction(callee) and depth < _DEPTH and _changes_only_locals(callee, depth)


def _changes_only_locals(func: Callable, depth: int) -> bool:
    """Whether ``func``'s body stores only into its own names (no element or attribute of
    anything, no ``global``) and calls for their effect only functions that keep nothing."""
    tree = parsed_tree(func)
    if tree is None:
        return False
    for node in gast.walk(tree):
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            return False
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, gast.Store):
            return False
        if isinstance(node, gast.AugAssign) and not isinstance(node.target, gast.Name):
            return False
        if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
            callee = _named(node.value.func, func)
            if not _keeps_nothing(callee, depth + 1):
                return False
    return True


def _named(expr: gast.expr, func: Callable) -> object:
    """What a name or attribute chain in ``func``'s body denotes in its module (MISSING for
    anything else)."""
    if isinstance(expr, gast.Name):
        return func.__globals__.get(expr.id, getattr(builtins, expr.id, MISSING))
    if isinstance(expr, gast.Attribute):
        owner = _named(expr.value, func)
        return MISSING if owner is MISSING else getattr(owner, expr.attr, MISSING)
    return MISSING


def kept_value_message(call: gast.Call) -> str:
    """The refusal of a call for its effect that may keep a differentiated value."""
    return (
        f"'{describe(call.func)}' is called for its effect with a differentiated value, which "
        "srcad cannot follow (it may keep the value, as set.add or a method storing it "
        "does); use its result (z = f(y)), or pass srcad.stop_gradient(y) where it only "
        "checks or reports the value"
    )
