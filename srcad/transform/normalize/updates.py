"""``add_at(b, i, g)`` (generated code accumulating into an adjoint it owns, in place)
becomes ``b = added_at(b, i, g)``, which returns a new array: when generated code is
differentiated again, the update is then an ordinary op with rules of its own."""

from __future__ import annotations

import gast

from srcad.runtime.accumulate import add_at
from srcad.runtime.updates import added_at
from srcad.transform import build
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import rewrite_bodies


def functional_updates(tree: gast.FunctionDef, source: Source, namer: Namer) -> bool:
    """Rewrite every ``add_at`` statement of ``tree`` (see module docstring)."""
    changed = False

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        nonlocal changed
        out: list[gast.stmt] = []
        for stmt in stmts:
            call = stmt.value if isinstance(stmt, gast.Expr) else None
            if (
                isinstance(call, gast.Call)
                and source.resolve(call.func, set()) is add_at
                and isinstance(call.args[0], gast.Name)
            ):
                helper = source.bind(namer, added_at, "added_at")
                new = build.assign(call.args[0].id, build.call(helper, *call.args))
                out.append(gast.copy_location(new, stmt))
                changed = True
            else:
                out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return changed
