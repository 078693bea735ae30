"""Point the user's free names at what they meant; NumPy calls go through ``xp``.

``np.tanh(x)`` becomes ``xp.tanh(x)``, where ``xp`` is the namespace of the arguments,
so the same generated code runs on any array library. Other free names are bound to the
objects they denoted when the function was transformed.
"""

from __future__ import annotations

from typing import Any

import gast
import numpy

from srcad.transform import build
from srcad.transform.anno import getanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer


class _Rebind(gast.NodeTransformer):
    def __init__(self, free: dict[str, Any], namer: Namer, xp_name: str | None) -> None:
        self.free = free
        self.namer = namer
        self.xp_name = xp_name

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if not isinstance(node.ctx, gast.Load) or node.id not in self.free:
            return node
        obj = self.free[node.id]
        if self.xp_name is not None:
            if obj is numpy:
                return build.load(self.xp_name)
            name = getattr(obj, "__name__", None)
            if isinstance(name, str) and getattr(numpy, name, None) is obj:
                return build.attr(build.load(self.xp_name), name)
        self.namer.bind_user_global(node.id, obj)
        return node


def rebind(
    tree: gast.FunctionDef, source: Source, namer: Namer, free: dict[str, Any]
) -> gast.FunctionDef:
    """Rewrite free-name reads in ``tree`` (see module docstring)."""
    xp_name = getanno(tree, "xp_name")
    rebinder = _Rebind(free, namer, xp_name)
    rebinder.visit(tree)
    _drop_unused_namespace(tree, xp_name)
    return tree


def _drop_unused_namespace(tree: gast.FunctionDef, xp_name: str | None) -> None:
    if xp_name is None or not tree.body:
        return
    first = tree.body[0]
    if not (
        isinstance(first, gast.Assign)
        and isinstance(first.targets[0], gast.Name)
        and first.targets[0].id == xp_name
    ):
        return
    used = any(
        isinstance(n, gast.Name) and n.id == xp_name and isinstance(n.ctx, gast.Load)
        for stmt in tree.body[1:]
        for n in gast.walk(stmt)
    )
    if not used:
        tree.body = tree.body[1:]
