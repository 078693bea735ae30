"""A check, at the top of the function, that parameters updated in place through another
name hold numbers (see ``fence._check_inplace_aliasing``): ``z = x; z += y`` is then
``z = z + y`` for a Python float ``x``, as Python runs it, and an array refused by name."""

from __future__ import annotations

import gast

from srcad.runtime.guards import number_argument
from srcad.transform import build
from srcad.transform.anno import getanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer


def guard_number_params(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """``number_argument(x, <the fence's error>)`` first, for each parameter it found."""
    found = getanno(tree, "number_params") or {}
    if not found:
        return tree
    check = source.bind(namer, number_argument, "number_argument")
    guards = []
    for name, error in sorted(found.items()):
        where = [name, error.message, error.filename, error.lineno, error.col or 0]
        where.append(error.source_line)
        call = build.call(check, build.load(name), *map(build.const, where))
        guards.append(gast.copy_location(gast.Expr(value=call), tree))
    tree.body = guards + tree.body
    return tree
