"""Whether a custom_vjp ``fwd`` can be written out in code differentiated again, read
from its source: from the third derivative on, srcad writes ``fwd`` and ``bwd`` out in the
code it differentiates (as JAX differentiates them), and the residuals ``fwd`` returns
then travel as the names holding them, which srcad splits only when they are tuples
(``return out, (t, (q, s))``). A dict, list or set among them is refused by name.

>>> def fwd(p):
...     return p * p, {"p": p}
>>> residuals_refused(fwd)
'its fwd returns residuals holding a dict'
"""

from __future__ import annotations

from collections.abc import Callable

import gast

from srcad.transform.frontend import parse_function

#: displays, and calls of the builtins making them, that the residuals may not hold
_CONTAINERS = {
    gast.Dict: "a dict", gast.DictComp: "a dict", gast.List: "a list",
    gast.ListComp: "a list", gast.Set: "a set", gast.SetComp: "a set",
    gast.GeneratorExp: "a generator",
}  # fmt: skip
_MAKERS = {"dict": "a dict", "list": "a list", "set": "a set", "namedtuple": "a namedtuple"}


def residuals_refused(fwd: Callable) -> str | None:
    """Why ``fwd``'s residuals cannot be written out (see module doc), or None when each
    ``return`` gives ``out, residuals`` of tuples and values (its source unreadable: None,
    the inliner says why)."""
    try:
        tree = parse_function(fwd).tree
    except Exception:  # noqa: BLE001 (its source is unavailable: said where it is read)
        return None
    stores: dict[str, list[gast.expr]] = {}
    returns: list[gast.expr] = []
    for node in gast.walk(gast.Module(body=tree.body, type_ignores=[])):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                _record(target, node.value, stores)
        elif isinstance(node, gast.Return) and node.value is not None:
            returns.append(node.value)
    for value in returns:
        found = _holds(value, stores, set())
        if found is not None:
            return f"its fwd returns residuals holding {found}"
    return None


def _record(target: gast.expr, value: gast.expr, stores: dict[str, list[gast.expr]]) -> None:
    """What each name of ``target`` is assigned (element by element for displays)."""
    if isinstance(target, gast.Name):
        stores.setdefault(target.id, []).append(value)
    elif isinstance(target, (gast.Tuple, gast.List)):
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
            for t, v in zip(target.elts, value.elts):
                _record(t, v, stores)
        else:  # (unpacking a value: its parts are no display of their own)
            for t in target.elts:
                _record(t, gast.Constant(value=None, kind=None), stores)


def _holds(value: gast.expr, stores: dict[str, list[gast.expr]], seen: set[str]) -> str | None:
    """The container ``value`` is or holds as a tuple element that is no tuple, following
    the names it reads (what a call makes of a list, ``np.stack([a, b])``, is an array)."""
    kind = _CONTAINERS.get(type(value))
    if kind is not None:
        return kind
    parts: list[gast.expr] = []
    if isinstance(value, gast.Tuple):
        parts = list(value.elts)
    elif isinstance(value, gast.Starred):
        parts = [value.value]
    elif isinstance(value, gast.IfExp):
        parts = [value.body, value.orelse]
    elif isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
        return _MAKERS.get(value.func.id)
    elif isinstance(value, gast.Name) and value.id in stores and value.id not in seen:
        seen.add(value.id)
        parts = stores[value.id]
    for part in parts:
        found = _holds(part, stores, seen)
        if found is not None:
            return found
    return None
