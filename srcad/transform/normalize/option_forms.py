"""Calls whose constant options make them another function, written as that function:
``np.linalg.svd(a, compute_uv=False)`` is ``np.linalg.svdvals(a)`` (one result, with
rules of its own), so it reads, and differentiates, as the op it is; ``tuple([a, b])`` is
the display ``(a, b)``.

>>> import gast, numpy as np
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.frontend import Source
>>> text = "def f(a):\\n    return np.linalg.svd(a, compute_uv=False)"
>>> tree = gast.parse(text).body[0]
>>> source = Source(None, tree, "f.py", 1, 0, [], {"np": np})
>>> print(to_source(rewrite_option_forms(tree, source)), end="")
def f(a):
    return np.linalg.svdvals(a)
"""

from __future__ import annotations

import copy
import inspect

import gast
import numpy

from srcad.transform.frontend import Source
from srcad.transform.normalize.anf import local_names


def rewrite_option_forms(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """Each call whose options pick another function, as that function (see module doc)."""
    local = local_names(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
            if source.resolve(node.func, local) is numpy.linalg.svd:
                _singular_values(node)
    return _Displays(source, local).visit(tree)


class _Displays(gast.NodeTransformer):
    """``tuple([a, b])`` as the display ``(a, b)``: the tuple it is."""

    def __init__(self, source: Source, local: set[str]) -> None:
        self.source = source
        self.local = local

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if (
            len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], (gast.List, gast.Tuple))
            and not any(isinstance(e, gast.Starred) for e in node.args[0].elts)
            and self.source.resolve(node.func, self.local) is tuple
        ):
            display = gast.Tuple(elts=node.args[0].elts, ctx=gast.Load())
            return gast.copy_location(display, node)
        return node


def drop_copy_options(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """``np.array(u, copy=None)`` (or ``np.asarray(u, copy=False)``) is ``np.array(u)`` to
    the derivative: run after the alias checks (``fence.py``), which refuse any update that
    would show whether the result is ``u`` itself, so only the value is left to tell."""
    local = local_names(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.Call) and node.keywords:
            if source.resolve(node.func, local) in (numpy.array, numpy.asarray):
                node.keywords = [kw for kw in node.keywords if kw.arg != "copy"]
    return tree


def _singular_values(call: gast.Call) -> None:
    """``svd(a, ..., compute_uv=False)`` (not hermitian) as ``svdvals(a)``."""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return
    try:
        bound = inspect.signature(numpy.linalg.svd).bind(
            *call.args, **{k.arg: k.value for k in call.keywords}
        )
    except TypeError:
        return  # NumPy says what is wrong when the call runs
    options = bound.arguments
    if not (_is_false(options.get("compute_uv")) and _is_false(options.get("hermitian", False))):
        return
    func = copy.copy(call.func)
    func.attr = "svdvals"
    call.func = func
    call.args = [options["a"]]
    call.keywords = []


def _is_false(node: object) -> bool:
    return node is False or isinstance(node, gast.Constant) and node.value is False
