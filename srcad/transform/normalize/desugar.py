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

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.normalize.walk import is_docstring, rewrite_bodies


def desugar(tree: gast.FunctionDef) -> gast.FunctionDef:
    """Return ``tree`` with docstrings, ``pass`` and augmented assignments desugared."""
    body = tree.body
    if body and is_docstring(body[0]):
        body = body[1:]
    tree.body = rewrite_bodies(body, _desugar_block)
    return tree


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
            out.append(new)
            continue
        out.append(stmt)
    return out
