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

import gast

from srcad.transform import build
from srcad.transform.anno import setanno


def desugar(tree: gast.FunctionDef) -> gast.FunctionDef:
    """Return ``tree`` with docstrings, ``pass`` and augmented assignments desugared."""
    body = []
    for k, stmt in enumerate(tree.body):
        setanno(stmt, "origin", stmt)
        if isinstance(stmt, gast.Pass):
            continue
        if (
            k == 0
            and isinstance(stmt, gast.Expr)
            and isinstance(stmt.value, gast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            continue
        if isinstance(stmt, gast.AugAssign):
            target = stmt.target
            value = build.binop(build.load(target.id), stmt.op, stmt.value)
            gast.copy_location(value, stmt.value)
            new = build.assign(target.id, value)
            gast.copy_location(new, stmt)
            setanno(new, "origin", stmt)
            body.append(new)
            continue
        body.append(stmt)
    tree.body = body
    return tree
