"""A function returning a dict, list or tuple literal: one output per element (for vjp).

``return {"a": u, "b": v}`` becomes ``_out_a = u; _out_b = v; return _out_a``; the
forward function rebuilds the container from those names and the backward function takes
one cotangent per element.
"""

from __future__ import annotations

import copy

import gast

from srcad.transform import build
from srcad.transform.anno import setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import all_statements, returns_to_assignments

_CONTAINERS = (gast.Dict, gast.Tuple, gast.List)


def _shape(value: gast.expr) -> tuple:
    """The structure of a container literal, nested literals included."""
    if isinstance(value, gast.Dict):
        keys = []
        for key in value.keys:
            if not isinstance(key, gast.Constant):
                return ("other",)
            keys.append(key.value)
        return ("dict", tuple(keys), tuple(_shape(v) for v in value.values))
    if isinstance(value, (gast.Tuple, gast.List)):
        return (type(value).__name__, tuple(_shape(v) for v in value.elts))
    return ("leaf",)


def _leaves(value: gast.expr) -> list[gast.expr]:
    """The non-container elements of a (nested) container literal, in pytree order."""
    if isinstance(value, gast.Dict):
        return [leaf for v in value.values for leaf in _leaves(v)]
    if isinstance(value, (gast.Tuple, gast.List)):
        return [leaf for v in value.elts for leaf in _leaves(v)]
    return [value]


def _replace_leaves(value: gast.expr, names: list[str]) -> gast.expr:
    """A copy of the literal with its leaves replaced by ``names``, in order."""
    it = iter(names)

    def rebuild(node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Dict):
            return gast.Dict(keys=node.keys, values=[rebuild(v) for v in node.values])
        if isinstance(node, (gast.Tuple, gast.List)):
            return type(node)(elts=[rebuild(v) for v in node.elts], ctx=gast.Load())
        return build.load(next(it))

    return rebuild(copy.deepcopy(value))


def split_outputs(
    tree: gast.FunctionDef, source: Source, namer: Namer, allowed: bool = True
) -> bool:
    """Rewrite container returns of ``tree`` (see module doc); whether there were any.

    With ``allowed`` false (a gradient, which needs one scalar), a container return is an
    error that says what to use instead.
    """
    returns = [s for s in all_statements(tree.body) if isinstance(s, gast.Return)]
    if not allowed:
        for r in returns:
            if isinstance(r.value, _CONTAINERS):
                raise source.error(
                    "grad needs a function returning one scalar; this returns a container. "
                    "Use srcad.vjp, or has_aux=True to return (loss, aux)",
                    r,
                )
        return False
    if not returns or not all(isinstance(r.value, _CONTAINERS) for r in returns):
        if any(isinstance(r.value, _CONTAINERS) for r in returns):
            raise source.error(
                "some returns give a container and some do not; return one kind of value",
                returns[0],
            )
        return False
    shape = _shape(returns[0].value)
    for r in returns:
        if _shape(r.value) != shape or "other" in repr(shape):
            raise source.error(
                "every return must give a container of the same keys or length, with constant keys",
                r,
            )
    first = returns[0].value
    leaves = [namer.fresh_temp(f"_out{k}") for k in range(len(_leaves(first)))]
    template = _replace_leaves(first, leaves)

    def pairs(stmt: gast.Return) -> list[tuple[str, gast.expr]]:
        return list(zip(leaves, _leaves(stmt.value)))

    if returns_to_assignments(tree, pairs):
        for name in reversed(leaves):
            tree.body.insert(0, build.assign(name, build.const(None)))
    setanno(tree, "outputs", (template, leaves))
    return True
