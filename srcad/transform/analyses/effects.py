"""Calls made for their effect alone that read a differentiated value.

Such a call (``seen.add(v)``, ``history.push(v)``) may keep the value where later code reads
it, and no derivative can follow it there: both modes refuse it, unless its callee only
reports or checks its arguments (``print``, ``logging``, ``warnings``, NumPy's functions,
whose in-place forms normalize/mutating_calls.py has lowered already, a function declared
non-differentiable, or a Python function of the user's that changes only its own locals).
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable

import gast

from srcad.adjoints.registry import is_nondifferentiable
from srcad.transform.analyses.mutators import describe
from srcad.transform.frontend import MISSING, Source
from srcad.transform.normalize.helper_results import parsed_tree

#: modules whose functions, called for their effect, keep nothing they are given
_REPORTING = ("logging", "warnings", "_warnings", "numpy")
#: how deep calls of the user's functions are read
_DEPTH = 4


def reports_only(call: gast.Call, source: Source, local: set[str]) -> bool:
    """Whether ``call`` (made for its effect) keeps none of its arguments (see module doc)."""
    return _keeps_nothing(source.resolve(call.func, local))


def _keeps_nothing(callee: object, depth: int = 0) -> bool:
    """Whether calling ``callee`` keeps none of its arguments: a reporting function, or a
    Python function of the user's whose body changes nothing but its own locals and calls
    for their effect only such functions (``check_finite(x)``)."""
    if callee is MISSING:
        return False
    if callee is builtins.print or is_nondifferentiable(callee):
        return True
    method = getattr(callee, "__func__", callee)  # a logger's bound method
    module = getattr(method, "__module__", None) or ""
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
        found = func.__globals__.get(expr.id, getattr(builtins, expr.id, MISSING))
        return found
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
