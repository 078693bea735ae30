"""Point the user's free names at what they meant; NumPy calls go through ``xp``.

``np.tanh(x)`` becomes ``xp.tanh(x)``, where ``xp`` is the namespace of the arguments,
so the same generated code runs on any array library. ``math.sin(x)`` becomes
``xm.sin(x)``, where ``xm`` is the ``math`` module for Python numbers (and NumPy) and the
arrays' namespace otherwise. Other free names are bound to the objects they denoted when
the function was transformed.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import gast
import numpy

from srcad.runtime.backend import math_namespace
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer, names


def reads_through_namespace(obj: Any) -> bool:
    """Whether a free name meaning ``obj`` is read as ``xp`` or ``xp.<name>`` once rebound
    (NumPy, or one of NumPy's functions by its own name)."""
    if obj is numpy:
        return True
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and getattr(numpy, name, None) is obj


class _Rebind(Transformer):
    def __init__(
        self, free: dict[str, Any], namer: Namer, xp_name: str | None, xm_name: str
    ) -> None:
        self.free = free
        self.namer = namer
        self.xp_name = xp_name
        self.xm_name = xm_name
        self.math_used = False

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if not isinstance(node.ctx, gast.Load):
            return node
        obj = self.free.get(node.id, self.namer.globals.get(node.id))
        if obj is math:
            self.math_used = True
            return build.load(self.xm_name)
        if node.id not in self.free:
            return node
        if self.xp_name is not None and reads_through_namespace(obj):
            if obj is numpy:
                return build.load(self.xp_name)
            return build.attr(build.load(self.xp_name), obj.__name__)
        self.namer.bind_user_global(node.id, obj)
        return node


def rebind(
    tree: gast.FunctionDef,
    source: Source,
    namer: Namer,
    free: dict[str, Any],
    numpy_only: bool = False,
) -> gast.FunctionDef:
    """Rewrite free-name reads in ``tree`` (see module docstring). With ``numpy_only`` (code
    specialized for NumPy arrays and Python numbers) the namespaces are ``np`` and
    ``math`` themselves, not asked of the arguments at each call."""
    xp_name = getanno(tree, "xp_name")
    xm_name = namer.bind_global(math, "math") if numpy_only else namer.fresh("xm")
    setanno(tree, "xm_name", xm_name)
    rebinder = _Rebind(free, namer, xp_name, xm_name)
    rebinder.visit(tree)
    _drop_unused_namespace(tree, xp_name)
    if numpy_only and xp_name is not None:
        _static_namespace(tree, xp_name, namer.bind_global(numpy, "np"))
    elif rebinder.math_used:
        helper = namer.bind_global(math_namespace, "math_namespace")
        params = [a.id for a in tree.args.args if a.id != getanno(tree, "residuals_param")]
        line = build.assign(rebinder.xm_name, build.call(helper, *map(build.load, params)))
        at = 1 if _starts_with_unpack(tree) else 0
        tree.body.insert(at, line)
    return tree


def _static_namespace(tree: gast.FunctionDef, xp_name: str, np_name: str) -> None:
    """Drop ``xp = array_namespace(...)`` and say ``np`` wherever ``xp`` was read."""
    tree.body = [
        stmt
        for stmt in tree.body
        if not (
            isinstance(stmt, gast.Assign)
            and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id == xp_name
        )
    ]
    for node in names(tree):
        if node.id == xp_name:
            node.id = np_name


def _starts_with_unpack(tree: gast.FunctionDef) -> bool:
    first = tree.body[0] if tree.body else None
    return isinstance(first, gast.Assign) and isinstance(first.targets[0], gast.Tuple)


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


def namespace_reads(tree: gast.FunctionDef, namer: Namer) -> list[tuple[Any, str]]:
    """``(module, name)`` for each NumPy or math function the rebound code reads by name
    (``xp.cos``, from the user's code or from a rule's template)."""
    spaces: dict[str, Any] = {n: m for n, m in namer.globals.items() if m is numpy or m is math}
    if getanno(tree, "xp_name") is not None:
        spaces[getanno(tree, "xp_name")] = numpy
    spaces[getanno(tree, "xm_name")] = math  # (math_namespace gives math for NumPy too)
    reads = []
    for node in gast.walk(tree):
        chain = []
        while isinstance(node, gast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not chain or not isinstance(node, gast.Name) or node.id not in spaces:
            continue
        module = spaces[node.id]
        for attr in reversed(chain):  # xp.linalg.solve: numpy's linalg, then its solve
            reads.append((module, attr))
            module = getattr(module, attr, None)
            if not isinstance(module, ModuleType):
                break
    return reads
