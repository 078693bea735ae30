"""Calls of callable objects as calls of their method: ``layer(x)`` is ``layer.__call__(x)``;
and a field read by ``getattr(obj, "name")`` is ``obj.name``.

An object whose class defines ``__call__`` in Python (a model's layer, a loss with
settings) is called through that method, which srcad then reads like any method of an
object: its attributes are constants, its arguments differentiated. srcad's own callables
(derivatives, custom rules, checkpoints) and objects of C classes keep their calls.
"""

from __future__ import annotations

import inspect
from typing import Any

import gast

from srcad.transform import build
from srcad.transform.frontend import MISSING, Source
from srcad.transform.normalize.anf import local_names


def call_methods(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """Each call of a callable object of a Python class as a call of its ``__call__``."""
    local = local_names(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)):
            if _python_callable_object(source.resolve(node.func, local)):
                node.func = gast.copy_location(build.attr(node.func, "__call__"), node.func)
    return tree


def read_fields(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """Each ``getattr(obj, "name")`` (a constant name, no default) as ``obj.name``."""
    if source.lookup("getattr") is not getattr or "getattr" in local_names(tree):
        return tree

    class Fields(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.expr:
            self.generic_visit(node)
            func, args = node.func, node.args
            if not (isinstance(func, gast.Name) and func.id == "getattr") or node.keywords:
                return node
            if len(args) != 2 or not isinstance(args[1], gast.Constant):
                return node
            name = args[1].value
            if not (isinstance(name, str) and name.isidentifier()):
                return node
            field = gast.Attribute(value=args[0], attr=name, ctx=gast.Load())
            return gast.copy_location(field, node)

    return Fields().visit(tree)


def _python_callable_object(obj: Any) -> bool:
    if obj is MISSING or inspect.isroutine(obj) or inspect.isclass(obj):
        return False
    kind = type(obj)
    if kind.__module__.split(".")[0] in ("srcad", "numpy", "scipy", "functools", "builtins"):
        return False
    return inspect.isfunction(getattr(kind, "__call__", None))  # noqa: B004
