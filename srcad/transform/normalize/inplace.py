"""Element updates ``y[i] = v`` become ``y = setitem(y, i, v)``: still in place, but an
assignment the reverse pass can see (its adjoint, and the values it must save first).
An index that may select an element twice (integer arrays) makes ``scatter`` instead,
whose adjoint gives only the last write of an element a gradient, as NumPy keeps it.

An update of an argument, or of a view of one, would change the caller's data: the
function starts from a copy of each argument it updates (``x = copied(x)``), so the
caller's arrays stay unchanged (NumPy would change them; the values computed are the
same).
"""

from __future__ import annotations

import builtins

import gast

from srcad.runtime import inplace
from srcad.transform import build
from srcad.transform.analyses.aliasing import (
    Aliases,
    arguments_of,
    carry,
    held_calls,
    unpacked_parts,
    viewed_names,
    with_arguments,
)
from srcad.transform.analyses.mutators import returned_arguments
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import all_statements, rewrite_bodies
from srcad.transform.ops import index_expression


def lower_setitems(tree: gast.FunctionDef, source: Source, namer: Namer) -> set[str]:
    """Rewrite element updates of ``tree`` (see module doc); the names updated in place."""
    helper = source.bind(namer, inplace.setitem, "setitem")
    repeatable = source.bind(namer, inplace.scatter, "scatter")
    inputs = _updates_of_arguments(tree)
    local = _stored_names(tree)
    ints = _int_names(tree, source, local)
    updated = _updated_by_calls(tree, source, local)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            if not isinstance(target, gast.Subscript):
                out.append(stmt)
                continue
            name = target.value.id
            updated.add(name)
            once = _selects_once(target.slice, ints, source, local)
            func = helper if once else repeatable
            call = build.call(func, build.load(name), index_expression(target.slice), stmt.value)
            new = gast.copy_location(build.assign(name, call), stmt)
            setanno(new, "origin", getanno(stmt, "origin", stmt))
            out.append(new)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    if inputs:
        # the function works on copies of the arguments it updates: the caller's arrays
        # stay as they are (NumPy would change them)
        copy = source.bind(namer, inplace.copied, "copied")
        first = [
            gast.copy_location(build.assign(p, build.call(copy, build.load(p))), tree)
            for p in sorted(inputs)
        ]
        for stmt in first:
            setanno(stmt, "origin", stmt)
        tree.body = first + tree.body
        updated.update(inputs)
    setanno(tree, "setitem", (helper, repeatable))
    return updated


_INT_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def _selects_once(index: gast.expr, ints: set[str], source: Source, local: set[str]) -> bool:
    """Whether ``index`` is sure to select each element at most once: every item a slice,
    ``None``, ``...`` or an integer (a constant, a range loop's variable, ``len(...)`` and
    arithmetic on those)."""
    items = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(isinstance(item, gast.Slice) or _is_int(item, ints, source, local) for item in items)


def _is_int(node: gast.expr, ints: set[str], source: Source, local: set[str]) -> bool:
    if isinstance(node, gast.Constant):
        return node.value is None or node.value is Ellipsis or isinstance(node.value, int)
    if isinstance(node, gast.Name):
        return node.id in ints
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _is_int(node.operand, ints, source, local)
    if isinstance(node, gast.BinOp) and isinstance(node.op, _INT_OPS):
        return _is_int(node.left, ints, source, local) and _is_int(node.right, ints, source, local)
    if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords:
        return source.resolve(node.func, local) is builtins.len
    return False


def _int_names(tree: gast.FunctionDef, source: Source, local: set[str]) -> set[str]:
    """Names bound only as the variable of ``for ... in range(...)`` (or the count of
    ``enumerate``): always integers."""
    counters: dict[str, int] = {}
    for stmt in all_statements(tree.body):
        if not isinstance(stmt, gast.For) or not isinstance(stmt.iter, gast.Call):
            continue
        func = source.resolve(stmt.iter.func, local)
        target = stmt.target
        if func is builtins.enumerate and isinstance(target, gast.Tuple) and target.elts:
            target = target.elts[0]
        elif func is not builtins.range:
            continue
        if isinstance(target, gast.Name):
            counters[target.id] = counters.get(target.id, 0) + 1
    stores: dict[str, int] = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
    return {name for name, n in counters.items() if stores.get(name) == n}


def _stored_names(tree: gast.FunctionDef) -> set[str]:
    return {
        node.id
        for node in gast.walk(tree)
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param))
    }


def _updated_by_calls(tree: gast.FunctionDef, source: Source, local: set[str]) -> set[str]:
    """Names that code being differentiated again updates as ``y = setitem(y, i, v)``."""
    updates = (inplace.setitem, inplace.scatter)
    return {
        stmt.targets[0].id
        for stmt in all_statements(tree.body)
        if isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Call)
        and stmt.value.args
        and isinstance(stmt.value.args[0], gast.Name)
        and stmt.value.args[0].id == stmt.targets[0].id
        and any(source.resolve(stmt.value.func, local) is f for f in updates)
    }


def _updates_of_arguments(tree: gast.FunctionDef) -> set[str]:
    """The parameters whose argument's memory an element update may write into: the
    update is to a parameter, or to a name that may view one (or one of several), where
    the update runs (``h = h @ W`` first makes ``h`` a new array)."""
    args = tree.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    found: set[str] = set()

    def visit(stmt: gast.stmt, loops: list[gast.stmt], aliases: Aliases) -> None:
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            found.update(arguments_of(aliases, target.value.id, params))

    carry(tree.body, visit, with_arguments(params))
    return found


def alias_groups(
    body: list[gast.stmt], names: set[str], source: Source, local: set[str]
) -> dict[str, set[str]]:
    """For each name updated in place, every name that may share its memory: views, and
    results of user functions that may return an argument (``t = helper(x, u)``)."""
    edges: dict[str, set[str]] = {}
    for stmt in all_statements(body):
        if isinstance(stmt, gast.Assign):
            for target, part in unpacked_parts(stmt.targets[0], stmt.value):
                viewed = viewed_names(part) | {
                    name
                    for call in held_calls(part)
                    for name, _ in returned_arguments(call, source, local)
                }
                for name in viewed - {target}:
                    edges.setdefault(name, set()).add(target)
                    edges.setdefault(target, set()).add(name)
    groups = {}
    for name in names:
        seen = {name}
        todo = [name]
        while todo:
            for other in edges.get(todo.pop(), ()):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        groups[name] = seen
    return groups
