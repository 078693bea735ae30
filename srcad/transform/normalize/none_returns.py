"""Returning None: a function that never returns a value is refused; a ``return`` without
a value (or the end of a function that returns on other paths) raises, when it runs,
:class:`~srcad.errors.NoOutputError` naming that line.

There is nothing to differentiate in ``None``; grad needs a scalar (as in JAX and PyTorch).
"""

from __future__ import annotations

import gast

from srcad.errors import NoOutputError
from srcad.transform import build
from srcad.transform.anno import setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import all_statements, is_docstring, rewrite_bodies

_NEEDS = "srcad differentiates the value a function returns (grad: a scalar)"


def refuse_none_returns(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite or refuse ``tree``'s ways of returning None (see module doc)."""
    body = [s for s in tree.body if not isinstance(s, gast.Pass) and not is_docstring(s)]
    returns = [s for s in all_statements(tree.body) if isinstance(s, gast.Return)]
    if not any(r.value is not None and not _is_none(r.value) for r in returns):
        where = returns[0] if returns else (body or tree.body)[-1]
        raise source.error(
            f"{tree.name} returns None (it has no 'return' with a value); {_NEEDS}",
            where,
            NoOutputError,
        )
    error = source.bind(namer, NoOutputError, "NoOutputError")

    def raising(node: gast.AST, what: str) -> gast.stmt:
        message = str(source.error(f"{tree.name} returns None here ({what}); {_NEEDS}", node))
        stmt = gast.Raise(exc=build.call(error, build.const(message)), cause=None)
        setanno(stmt, "origin", node)
        return gast.copy_location(stmt, node)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        return [
            raising(s, "a 'return' without a value")
            if isinstance(s, gast.Return) and (s.value is None or _is_none(s.value))
            else s
            for s in stmts
        ]

    tree.body = rewrite_bodies(tree.body, block)
    if _falls_through(tree.body):
        tree.body.append(raising(tree.body[-1], "the end of the function, without a 'return'"))
    return tree


def _is_none(value: gast.expr) -> bool:
    return isinstance(value, gast.Constant) and value.value is None


def _falls_through(body: list[gast.stmt]) -> bool:
    """Whether running ``body`` may reach its end (loops are assumed to end)."""
    if not body:
        return True
    last = body[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return False
    if isinstance(last, gast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    return True
