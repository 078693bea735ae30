"""A tuple grown in a loop becomes a list built by appends, which lists.py follows:

``acc = ()`` ... ``for ...: acc = acc + (h,)`` (or ``acc += (h,)``) becomes ``acc = []``
... ``acc.append(h)``. Done only where nothing can tell the two apart: the name is bound
to nothing else, and read only by index, by ``len``, ``sum``, a NumPy or SciPy function
(which converts it), a loop over it that does not grow it, or ``return`` (then
``return tuple(acc)``). A tuple grown in one block, not a loop, is split by tuples.py.

``return tuple(acc)`` calls Python's ``tuple`` under a name of srcad's (the function's
module may have its own ``tuple``).
"""

from __future__ import annotations

import builtins

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import (
    all_statements,
    nested_bodies,
    own_parts,
    rewrite_bodies,
)

_LOOPS = (gast.For, gast.While)
#: Python functions that read a list as they read a tuple
_READERS = (builtins.len, builtins.sum)


def grown_tuples_as_lists(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite the tuples grown in loops of ``tree`` (see module doc)."""
    local = local_names(tree)
    for name in sorted(_grown_in_loops(tree.body)):
        if _convertible(tree, name, source, local):
            _convert(tree, name, source.bind(namer, tuple, "tuple"))
    return tree


def _grown(stmt: gast.stmt, name: str | None = None) -> gast.Tuple | None:
    """The display ``stmt`` grows a tuple name by (``t = t + (a,)``, ``t += (a,)``)."""
    if isinstance(stmt, gast.AugAssign):
        target, op, left, right = stmt.target, stmt.op, stmt.target, stmt.value
    elif (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.value, gast.BinOp)
    ):
        target, op, left, right = stmt.targets[0], stmt.value.op, stmt.value.left, stmt.value.right
    else:
        return None
    if not (
        isinstance(op, gast.Add)
        and isinstance(target, gast.Name)
        and isinstance(left, gast.Name)
        and left.id == target.id
        and (name is None or target.id == name)
        and isinstance(right, gast.Tuple)
        and not any(isinstance(e, gast.Starred) for e in right.elts)
    ):
        return None
    return right


def _grown_in_loops(body: list[gast.stmt], in_loop: bool = False) -> set[str]:
    """The names some statement inside a loop grows as a tuple."""
    found: set[str] = set()
    for stmt in body:
        if in_loop and _grown(stmt) is not None:
            target = stmt.target if isinstance(stmt, gast.AugAssign) else stmt.targets[0]
            found.add(target.id)
        for inner in nested_bodies(stmt):
            found |= _grown_in_loops(inner, in_loop or isinstance(stmt, _LOOPS))
    return found


def _convertible(tree: gast.FunctionDef, name: str, source: Source, local: set[str]) -> bool:
    """Whether every binding of ``name`` is a tuple display or a growth, and every read one
    a list gives the same answer to."""
    params = {a.id for a in tree.args.args + tree.args.kwonlyargs if isinstance(a, gast.Name)}
    if name in params:
        return False
    allowed: set[int] = set()  # the Name nodes read in a way a list reads the same
    for stmt in all_statements(tree.body):
        grown = _grown(stmt, name)
        if grown is not None:
            left = stmt.target if isinstance(stmt, gast.AugAssign) else stmt.value.left
            allowed.add(id(left))
            allowed.add(id(stmt.target if isinstance(stmt, gast.AugAssign) else stmt.targets[0]))
        elif (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id == name
            and isinstance(stmt.value, gast.Tuple)
            and not any(isinstance(e, gast.Starred) for e in stmt.value.elts)
        ):
            allowed.add(id(stmt.targets[0]))
        if isinstance(stmt, gast.For) and _reads(stmt.iter, name):
            if any(_grown(s, name) is not None for s in all_statements(stmt.body)):
                return False  # a list grown while iterated would be read further
            if _is_name(stmt.iter, name):
                allowed.add(id(stmt.iter))
        if isinstance(stmt, gast.Return) and _is_name(stmt.value, name):
            allowed.add(id(stmt.value))
        for part in own_parts(stmt):
            allowed |= _read_alike(part, name, source, local)
    uses = [
        n
        for stmt in all_statements(tree.body)
        for part in own_parts(stmt)
        for n in gast.walk(part)
        if isinstance(n, gast.Name) and n.id == name
    ]
    return all(id(n) in allowed for n in uses)


def _read_alike(part: gast.AST, name: str, source: Source, local: set[str]) -> set[int]:
    """The reads of ``name`` in ``part`` that a list answers as its tuple would."""
    out: set[int] = set()
    for node in gast.walk(part):
        if isinstance(node, gast.Subscript) and _is_name(node.value, name):
            if isinstance(node.ctx, gast.Load):
                out.add(id(node.value))
        elif isinstance(node, gast.Call):
            callee = source.resolve(node.func, local)
            if any(callee is r for r in _READERS) or _converts(callee):
                out |= {id(a) for a in node.args if _is_name(a, name)}
    return out


def _converts(callee: object) -> bool:
    """Whether ``callee`` is NumPy's or SciPy's (which take a list as the array it makes)."""
    module = getattr(callee, "__module__", None) or ""
    if not module and isinstance(getattr(callee, "__class__", None), type):
        module = type(callee).__module__  # a ufunc
    return module.partition(".")[0] in ("numpy", "scipy")


def _reads(node: gast.AST, name: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


def _is_name(node: gast.AST | None, name: str) -> bool:
    return isinstance(node, gast.Name) and node.id == name


def _convert(tree: gast.FunctionDef, name: str, tuple_name: str) -> None:
    """The displays bound to ``name`` made lists, its growths appends, its return a tuple."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            grown = _grown(stmt, name)
            if grown is not None:
                for element in grown.elts:
                    append = build.attr(build.load(name), "append")
                    new = gast.Expr(value=build.call(append, element))
                    gast.copy_location(new, stmt)
                    setanno(new, "origin", getanno(stmt, "origin", stmt))
                    out.append(new)
                continue
            if isinstance(stmt, gast.Assign) and _is_name(stmt.targets[0], name):
                stmt.value = gast.copy_location(
                    gast.List(elts=stmt.value.elts, ctx=gast.Load()), stmt.value
                )
            elif isinstance(stmt, gast.Return) and _is_name(stmt.value, name):
                whole = build.call(build.load(tuple_name), stmt.value)
                stmt.value = gast.copy_location(whole, stmt.value)
            out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
