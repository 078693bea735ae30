"""``with np.errstate(...)`` blocks: their bodies run inline, and the whole generated
derivative runs under the same settings (``wrap_errstate``), so warnings the user silenced
stay silent in the derivative too, and errors asked for are raised there too.

Floating-point error handling changes no value, so moving the block's edges to the whole
function changes what warns or raises, never what is computed. Other ``with`` statements
are left to the fence, which refuses them.
"""

from __future__ import annotations

import copy

import gast
import numpy

from srcad.runtime.backend import array_namespace, math_namespace
from srcad.transform import build
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import rewrite_bodies


def inline_errstate(
    tree: gast.FunctionDef, source: Source
) -> tuple[gast.FunctionDef, dict[str, object] | None]:
    """``tree`` with each ``with np.errstate(...)`` replaced by its body, and the settings
    (one set for the function: blocks that differ are refused)."""
    local = local_names(tree)
    found: list[tuple[dict[str, object], gast.With]] = []

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            settings = _errstate(stmt, source, local)
            if settings is None:
                out.append(stmt)
                continue
            found.append((settings, stmt))
            out.extend(rewrite_bodies(stmt.body, block))
        return out

    tree.body = rewrite_bodies(tree.body, block)
    if not found:
        return tree, None
    first = found[0][0]
    for settings, stmt in found[1:]:
        if settings != first:
            raise source.error(
                "np.errstate blocks with different settings in one function are not "
                "supported: srcad runs the whole derivative under one setting",
                stmt,
            )
    return tree, first


def _errstate(stmt: gast.stmt, source: Source, local: set[str]) -> dict[str, object] | None:
    """The settings of ``with np.errstate(k=v, ...):`` (constants, no ``as``), else None."""
    if not isinstance(stmt, gast.With) or len(stmt.items) != 1:
        return None
    item = stmt.items[0]
    call = item.context_expr
    if item.optional_vars is not None or not isinstance(call, gast.Call) or call.args:
        return None
    if source.resolve(call.func, local) is not numpy.errstate:
        return None
    settings: dict[str, object] = {}
    for keyword in call.keywords:
        if keyword.arg is None or not isinstance(keyword.value, gast.Constant):
            raise source.error("np.errstate settings must be written as constants", call)
        settings[keyword.arg] = keyword.value.value
    return settings


def wrap_errstate(
    function: gast.FunctionDef, settings: dict[str, object], namer: Namer
) -> gast.FunctionDef:
    """``function``'s body inside ``with np.errstate(**settings):``."""
    np_name = namer.bind_global(numpy, "np")
    call = build.call(
        gast.Attribute(value=build.load(np_name), attr="errstate", ctx=gast.Load()),
        **{k: build.const(v) for k, v in settings.items()},
    )
    item = gast.withitem(context_expr=call, optional_vars=None)
    # the namespace lines and the residuals' unpacking stay first, outside: code
    # differentiated again reads them there (normalize/namespaces.py)
    k = 0
    while k < len(function.body) and _prologue(function.body[k], namer):
        k += 1
    body = copy.copy(function.body[k:])
    function.body = [*function.body[:k], gast.With(items=[item], body=body, type_comment=None)]
    return function


def _prologue(stmt: gast.stmt, namer: Namer) -> bool:
    """``xp = array_namespace(...)``, ``xm = math_namespace(...)``, ``a, b = residuals``."""
    if not isinstance(stmt, gast.Assign):
        return False
    value = stmt.value
    if isinstance(value, gast.Name):
        return True
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and namer.globals.get(value.func.id) in (array_namespace, math_namespace)
    )
