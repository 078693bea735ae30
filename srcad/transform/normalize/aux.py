"""``has_aux``: a function returns ``(output, aux)``; only the output is differentiated.

Each ``return (out, aux)`` becomes ``_out = out; aux = ...; return _out``, so the rest of the
pipeline sees a function with one output, and the auxiliary value rides along in a
variable the backward pass never reads.
"""

from __future__ import annotations

import gast

from srcad.transform import build
from srcad.transform.anno import setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import returns_to_assignments


def split_aux(tree: gast.FunctionDef, source: Source, namer: Namer) -> str:
    """Rewrite the returns of ``tree`` (see module doc); the name holding the aux value."""
    aux = namer.fresh_temp("aux")

    def pairs(stmt: gast.Return) -> list[tuple[str, gast.expr]]:
        value = stmt.value
        if not (isinstance(value, gast.Tuple) and len(value.elts) == 2):
            raise source.error(
                "with has_aux=True every return must be a pair: return output, aux", stmt
            )
        return [(namer.fresh_temp("_output"), value.elts[0]), (aux, value.elts[1])]

    if returns_to_assignments(tree, pairs):
        # returns inside branches or loops: give the aux variable a value on every path
        init = build.assign(aux, build.const(None))
        setanno(init, "origin", tree.body[0] if tree.body else tree)
        tree.body.insert(0, init)
    return aux
