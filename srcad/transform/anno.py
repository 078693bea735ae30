"""Annotations attached to AST nodes by the passes, under a typed schema: every key has
one type and one meaning, and an unknown key or a value of another type is an error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast

_KEY = "_srcad_anno"


@dataclass(frozen=True)
class Key:
    """One annotation: the type of its values, the nodes it sits on and what it means."""

    type: type | tuple[type, ...]
    on: str
    meaning: str


_STR, _BOOL = str, bool
SCHEMA: dict[str, Key] = {
    # on the function
    "xp_name": Key(_STR, "function", "the name of the array namespace in generated code"),
    "xm_name": Key(_STR, "function", "the name of the math namespace (Python numbers)"),
    "returns_value": Key(_BOOL, "function", "the gradient function returns the value too"),
    "residuals_param": Key(_STR, "function", "the parameter a backward function unpacks"),
    "outputs": Key(tuple, "function", "a returned display: (template, one name per leaf)"),
    "aux": Key(_STR, "function", "the name holding has_aux's auxiliary value"),
    "leaves": Key(dict, "function", "pytree parameters: name -> the names of their leaves"),
    "inlined": Key(list, "function", "the user's helpers written out in the function"),
    "inlined_names": Key(dict, "function", "the names the written-out helpers' globals got"),
    "errstate": Key(dict, "function", "a helper's np.errstate settings (its body written out)"),
    "inlined_errstate": Key(list, "function", "(settings, helper, call) of helpers written out"),
    "inplace": Key(set, "function", "names updated in place (their memory changes)"),
    "setitem": Key(tuple, "function", "the functional-update helpers and repeatable writes"),
    "number_params": Key(dict, "function", "parameters updated through another name"),
    "attempted": Key(_STR, "function", "the marker call of a lowered 'try'"),
    # on statements
    "origin": Key(gast.stmt, "statement", "the user's statement it came from (errors)"),
    "expr": Key((gast.expr, type(None)), "statement", "the user's expression (errors)"),
    "pure": Key(_BOOL, "statement", "no side effect: may be dropped or recomputed"),
    "generated": Key(_BOOL, "statement", "written by srcad, not the user's"),
    "recomputed": Key(_BOOL, "statement", "recomputed in the backward pass"),
    "superseded": Key(_BOOL, "statement", "an adjoint seed replaced by a later one"),
    "copies": Key(_BOOL, "statement", "copies a value another name may change in place"),
    "counter": Key((_BOOL, _STR), "statement", "a while loop's trip counter (its name)"),
    "augmented": Key(_BOOL, "statement", "written as an augmented assignment by the user"),
    "stops": Key(list, "statement", "the jump flags a loop stops on"),
    "resets": Key(list, "statement", "jump flags a loop sets back to False each turn"),
    "stop_guard": Key(_BOOL, "statement", "the guard a loop body sits under"),
    "user_call": Key(object, "statement", "a call of a user function: its UserCall"),
    # on expressions
    "default": Key(_BOOL, "expression", "an operand left to its default (dropped)"),
    "live": Key(_BOOL, "expression", "a dict view read on each turn of a loop"),
    "dict_part": Key(_BOOL, "expression", "a name holding one value of a dict a helper returns"),
    "folded": Key(_BOOL, "expression", "already folded by the optimizer"),
    "local_function": Key(
        tuple, "expression", "(name, statements before its return) of a local function given"
    ),
}


def _checked(key: str) -> Key:
    try:
        return SCHEMA[key]
    except KeyError:
        raise KeyError(f"annotation {key!r} is not in srcad.transform.anno.SCHEMA") from None


def setanno(node: Any, key: str, value: Any) -> None:
    """Attach ``value`` under ``key`` to ``node``."""
    kind = _checked(key).type
    if not isinstance(value, kind):
        raise TypeError(f"annotation {key!r} holds {kind}, not {type(value).__name__}")
    store = getattr(node, _KEY, None)
    if store is None:
        store = {}
        setattr(node, _KEY, store)
    store[key] = value


def getanno(node: Any, key: str, default: Any = None) -> Any:
    """Read the annotation ``key`` of ``node``."""
    _checked(key)
    return getattr(node, _KEY, {}).get(key, default)
