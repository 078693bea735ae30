"""Calls of callable objects as calls of their method: ``layer(x)`` is ``layer.__call__(x)``.

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


def _python_callable_object(obj: Any) -> bool:
    if obj is MISSING or inspect.isroutine(obj) or inspect.isclass(obj):
        return False
    kind = type(obj)
    if kind.__module__.split(".")[0] in ("srcad", "numpy", "scipy", "functools", "builtins"):
        return False
    return inspect.isfunction(getattr(kind, "__call__", None))  # noqa: B004
