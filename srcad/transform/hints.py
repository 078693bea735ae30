"""What a "no rule" error says: the op, what to write instead when a habit misled, and
how to give the op a rule."""

from __future__ import annotations

import builtins
import inspect
import math
import re
from typing import Any

import numpy as np

from srcad.adjoints.registry import Attribute, Method, Operator, lookup

_TEMPORARY = re.compile(r"_t\d+$")
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")
#: where a user learns to write a rule (the docs page and the runnable example)
RULES_HELP = 'see examples/custom_rules.py and docs/rules.md ("Writing rules")'

#: Python's functions that mean something else on arrays, and NumPy's that srcad differentiates
_INSTEAD = {
    builtins.max: "Python's max() picks one whole value (on arrays it fails, or compares "
    "them as wholes); srcad differentiates max(a, b) of two numbers and max(xs) of a list "
    "or generator of numbers: use np.maximum(a, b) "
    "elementwise, or np.max(x) over an array",
    builtins.min: "Python's min() picks one whole value (on arrays it fails, or compares "
    "them as wholes); srcad differentiates min(a, b) of two numbers and min(xs) of a list "
    "or generator of numbers: use np.minimum(a, b) "
    "elementwise, or np.min(x) over an array",
    builtins.pow: "use a ** b or np.power(a, b)",
}

#: array methods that leave the array world: no gradient can follow the Python values
_CONVERSIONS = {
    "item": ".item() turns a differentiated value into a Python number, which carries no "
    "gradient; use float(x) (differentiated) or keep the array (x[()] or x[0] for one "
    "element), or srcad.stop_gradient(x).item() for a constant",
    "tolist": ".tolist() turns a differentiated array into Python numbers, which carry no "
    "gradient; keep the array (index it, or iterate over it), or "
    "srcad.stop_gradient(x).tolist() for constants",
}


#: the dicts srcad differentiates (errors about others say so)
DICTS_FOLLOWED = (
    "srcad differentiates dicts the function builds, pytree arguments and dicts a plain "
    "function of yours returns, bound to a name (d = f(x))"
)


def no_rule(op: Any, tangent: bool = False) -> str:
    """The message for an op that has no rule in the mode asked for."""
    kind, decorator = ("tangent", "srcad.tangent") if tangent else ("adjoint", "srcad.adjoint")
    label = op.label
    if _TEMPORARY.match(label):
        # srcad's own name for a callable made on the line (np.vectorize(math.sin)(x))
        label = "a function made on this line"
    text = f"no {kind} rule for {label}"
    advice = _advice(op)
    if op.label.startswith("scipy."):
        # SciPy's own source is never transformed (README: SciPy lists what has rules)
        text = f"no rule for {op.label}: srcad has no {kind} rule for this SciPy function"
    elif advice:
        text += f": {advice}"
    else:
        what = {Attribute: "attribute read", Operator: "operation"}.get(type(op.key), "call")
        mode = " in forward mode" if tangent else ""
        text += f": srcad cannot differentiate this {what}{mode}"
    target = f"({op.label})" if callable(op.callee) and _DOTTED.match(op.label) else ""
    how = f"@{decorator}{target}" + (" (reverse mode: @srcad.adjoint)" if tangent else "")
    if isinstance(op.key, (Method, Attribute)):
        how = f"move it into a function of your own and register a rule for that with {how}"
    else:
        how = f"register a rule with {how}"
    return f"{text}. To give it a derivative, {how}; {RULES_HELP}"


def instead(callee: Any) -> str | None:
    """What to write instead of a Python function that means something else on arrays."""
    try:
        return _INSTEAD.get(callee)
    except TypeError:  # unhashable
        return None


def _advice(op: Any) -> str:
    """What to write instead, for the ops habits from Python or JAX lead to."""
    callee = op.callee
    known = instead(callee)
    if known:
        return known
    if getattr(callee, "__module__", None) in ("builtins", "math") or (
        callable(callee) and getattr(math, getattr(callee, "__name__", ""), None) is callee
    ):
        same = getattr(np, getattr(callee, "__name__", ""), None)
        if same is not None and lookup(same) is not None:
            return f"use np.{same.__name__}, which srcad differentiates"
    if op.label == "Set" and not callable(op.callee):
        return (
            "a set of differentiated values (a display or a set comprehension): equal "
            "values would be one element, and srcad does not differentiate sets; use a "
            "list or a tuple"
        )
    if isinstance(op.key, Method) and op.key.name in _CONVERSIONS:
        return _CONVERSIONS[op.key.name]
    if isinstance(op.key, Method) and op.key.name in ("get", "keys", "values", "items"):
        return (
            f".{op.key.name}() read from a value srcad does not follow as a dict (one made "
            f"at run time, such as a method of an object returns); {DICTS_FOLLOWED}"
        )
    if isinstance(op.key, Attribute) and not hasattr(np.ndarray, op.key.name):
        return (
            f"srcad reads .{op.key.name} of differentiated values only for arrays and for "
            "dataclasses, namedtuples and registered pytree classes passed as arguments; an "
            "object of another class is opaque to it: make its class a @dataclass, or pass "
            "its arrays as arguments"
        )
    if not callable(callee) and re.fullmatch(r"[A-Za-z_]\w*", op.label) and op.label[0] != "_":
        # (a call of a local variable: what it holds is known only at run time)
        return (
            "the function called here is held in a local variable, which srcad cannot "
            "follow (bound more than once, on a branch, or to what a call returns); call the "
            "function by its own name, or bind the variable once to it (s = np.sin, g = "
            "srcad.grad(h), assigned once, are followed)"
        )
    if callable(callee) and not getattr(callee, "__qualname__", None):
        if inspect.isfunction(getattr(type(callee), "__call__", None)):  # noqa: B004
            return (
                "srcad differentiates calls of functions and methods, not of objects: "
                "call its method, obj.__call__(...), which srcad reads like any method"
            )
        return f"its class {type(callee).__name__} has no Python __call__ srcad can read"
    return ""
