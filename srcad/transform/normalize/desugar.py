"""Desugar: drop docstrings and ``pass``, turn ``x op= y`` into ``x = x op y``.

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> tree = gast.parse("def f(x):\\n    '''doc'''\\n    x += 1\\n    return x").body[0]
>>> print(to_source(desugar(tree)), end="")
def f(x):
    x = x + 1
    return x
"""

from __future__ import annotations

import copy

import gast

from srcad.runtime import inplace
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import all_statements, is_docstring, rewrite_bodies


def desugar(tree: gast.FunctionDef) -> gast.FunctionDef:
    """Return ``tree`` with docstrings, ``pass`` and augmented assignments desugared."""
    body = tree.body
    if body and is_docstring(body[0]):
        body = body[1:]
    tree.body = rewrite_bodies(body, _desugar_block)
    return tree


def keep_augmented_dtypes(tree: gast.FunctionDef, source: Source, namer: Namer) -> None:
    """``x = x op y`` made from ``x op= y`` becomes ``x = kept_dtype(x op y, x)``: NumPy
    computes an augmented assignment into the array, so its dtype stays (a float32 ``u``
    plus a float64 value stays float32). Lists (``xs += ys``) are left to their own pass."""
    helper = source.bind(namer, inplace.kept_dtype, "kept_dtype")
    lists = source.lists or set()
    for stmt in all_statements(tree.body):
        if (
            isinstance(stmt, gast.Assign)
            and getanno(stmt, "augmented")
            and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id not in lists
        ):
            name = stmt.targets[0].id
            stmt.value = build.call(build.load(helper), stmt.value, build.load(name))


def _desugar_block(body: list[gast.stmt]) -> list[gast.stmt]:
    out = []
    for stmt in body:
        if getanno(stmt, "origin") is None:
            setanno(stmt, "origin", stmt)
        if isinstance(stmt, gast.Pass):
            continue
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            # y[i] += v  ->  y[i] = y[i] + v
            target = stmt.target
            read = gast.Subscript(
                value=build.load(target.value.id),
                slice=copy.deepcopy(target.slice),
                ctx=gast.Load(),
            )
            value = gast.copy_location(build.binop(read, stmt.op, stmt.value), stmt.value)
            new = gast.copy_location(build.assign(target, value), stmt)
            setanno(new, "origin", stmt)
            out.append(new)
            continue
        if isinstance(stmt, gast.AugAssign):
            target = stmt.target
            value = build.binop(build.load(target.id), stmt.op, stmt.value)
            gast.copy_location(value, stmt.value)
            new = build.assign(target.id, value)
            gast.copy_location(new, stmt)
            setanno(new, "origin", stmt)
            setanno(new, "augmented", True)
            out.append(new)
            continue
        out.append(stmt)
    return out
