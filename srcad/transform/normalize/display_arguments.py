"""Tuple and list displays passed to a helper, passed element by element.

``cell(x, (h, c))`` with ``cell`` a plain Python function of the user's becomes
``cell_by_leaf(x, h, c)``, a :class:`~srcad.runtime.calls.FlatCall` that rebuilds the
tuple for ``cell``; the derivative handles transform ``cell`` with that parameter taken
leaf by leaf, as for a pytree argument, so each element gets its own gradient (tangent).
Runs after split_tuples, which writes a tuple name read whole (``cell(x, state)``) as its
display. Displays nest (``((a, b), c)``). Only where the helper takes that parameter
apart (unpacks it, indexes it with constants, loops over it, takes its ``len`` or ``sum``,
stacks or concatenates it): a display it uses whole otherwise (a shape, an index, axes)
stays one, as do a dict display, a starred
element, a call with ``*args`` and a helper taking ``*args``.
"""

from __future__ import annotations

import inspect
from typing import Any

import gast

from srcad.runtime.calls import DictResults, FlatCall
from srcad.transform import build
from srcad.transform.calls import own_signature, plain_function
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.helper_results import parsed_tree
from srcad.transform.normalize.walk import all_statements, own_parts

_DISPLAYS = (gast.Tuple, gast.List)


def flatten_display_arguments(
    tree: gast.FunctionDef, source: Source, namer: Namer
) -> gast.FunctionDef:
    """Pass the displays given to helpers element by element (module doc)."""
    local = local_names(tree)
    made: dict[tuple, str] = {}
    for stmt in all_statements(tree.body):
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if isinstance(node, gast.Call):
                    _flatten(node, source, namer, local, made)
    return tree


def _flatten(
    call: gast.Call, source: Source, namer: Namer, local: set[str], made: dict[tuple, str]
) -> None:
    if not any(isinstance(a, _DISPLAYS) for a in call.args):
        return
    if any(isinstance(a, gast.Starred) for a in call.args):
        return
    callee = source.resolve(call.func, local)
    results = callee if isinstance(callee, DictResults) else None
    if results is not None:
        callee = results.fun  # a dict's values taken (helper_results.py): kept so
    prior: dict[int, Any] = {}
    groups: list[list[gast.expr]] = [[a] for a in call.args]
    if isinstance(callee, FlatCall):
        # a pytree argument already passed leaf by leaf (pytrees.py): regroup the call's
        # arguments by the user's parameters, then flatten the displays among them too
        try:
            groups = callee.groups(list(call.args))
        except TypeError:
            return
        prior = dict(callee.structures)
        callee = callee.fun
    if not plain_function(callee):
        return
    params = _positional(callee)
    structures = []
    args: list[gast.expr] = []
    for k, group in enumerate(groups):
        if k in prior:
            structures.append((k, prior[k]))
            args.extend(group)
            continue
        treedef, leaves = _tree(group[0])
        if treedef is None:
            return  # a starred element: the display keeps its meaning
        if treedef != ("leaf",):
            if k >= len(params) or not _taken_apart(callee, params[k]):
                return  # a shape, an index, axes: the helper uses the display whole
            structures.append((k, treedef))
        args.extend(leaves)
    if len(structures) == len(prior):
        return  # no display to flatten
    key = (id(callee), tuple(structures), len(groups), results and results.keys)
    if key not in made:
        flat: Any = FlatCall(callee, tuple(structures), len(groups))
        if results is not None:
            flat = DictResults(flat, results.keys)
        made[key] = namer.bind_global(flat, f"{callee.__name__}_by_leaf")
        source.namespace[made[key]] = flat
    call.func = gast.copy_location(build.load(made[key]), call.func)
    call.args = args


def _tree(node: gast.expr) -> tuple[tuple | None, list[gast.expr]]:
    """The pytree structure of an argument (a leaf unless a display) and its leaves."""
    if not isinstance(node, _DISPLAYS):
        return ("leaf",), [node]
    if any(isinstance(e, gast.Starred) for e in node.elts):
        return None, []
    parts = [_tree(e) for e in node.elts]
    if any(treedef is None for treedef, _ in parts):
        return None, []
    kind, cls = ("list", list) if isinstance(node, gast.List) else ("tuple", tuple)
    treedef = (kind, cls, len(parts), tuple(p[0] for p in parts))
    return treedef, [leaf for _, leaves in parts for leaf in leaves]


def _positional(callee: Any) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in own_signature(callee).parameters.values() if p.kind in kinds]


def _taken_apart(callee: Any, param: str) -> bool:
    """Whether ``callee`` only takes its parameter ``param`` apart: unpacks it, indexes it
    with constants, loops over it (a comprehension, ``map`` or ``reduce`` too), takes its
    ``len`` or ``sum``, stacks or concatenates it,
    and never binds it again (what a
    parameter given leaf by leaf allows; a display used whole, as a shape, an index or
    axes, stays a display)."""
    tree = parsed_tree(callee)
    if tree is None:
        return False
    parents = {id(c): n for n in gast.walk(tree) for c in gast.iter_child_nodes(n)}
    for node in gast.walk(tree):
        if not (isinstance(node, gast.Name) and node.id == param):
            continue
        if not isinstance(node.ctx, gast.Load):
            if not isinstance(node.ctx, gast.Param):
                return False
            continue
        parent = parents.get(id(node))
        if isinstance(parent, gast.Assign) and isinstance(
            parent.targets[0], (gast.Tuple, gast.List)
        ):
            continue
        if isinstance(parent, gast.Subscript) and isinstance(parent.slice, gast.Constant):
            continue
        if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is node:
            continue
        if isinstance(parent, gast.Call) and (_called(parent, "len") or _called(parent, "sum")):
            continue
        if isinstance(parent, gast.Call) and _folded(parent, node):
            continue  # a loop over it once written out (functional.py)
        if (
            isinstance(parent, gast.Call)
            and isinstance(parent.func, gast.Attribute)
            and parent.func.attr in ("stack", "concatenate")
            and parent.args
            and parent.args[0] is node
        ):
            continue  # written as the display of its elements (pytrees.py)
        return False
    return True


def _called(call: gast.Call, name: str) -> bool:
    return isinstance(call.func, gast.Name) and call.func.id == name


def _folded(call: gast.Call, node: gast.expr) -> bool:
    """Whether ``node`` is a sequence ``map`` or ``functools.reduce`` goes through."""
    if _called(call, "map"):
        return any(a is node for a in call.args[1:])
    reduces = _called(call, "reduce") or (
        isinstance(call.func, gast.Attribute)
        and call.func.attr == "reduce"
        and getattr(call.func.value, "id", None) == "functools"
    )
    return reduces and len(call.args) > 1 and call.args[1] is node
