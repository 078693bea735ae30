"""Calls whose constant options make them another function, written as that function:
``np.linalg.svd(a, compute_uv=False)`` is ``np.linalg.svdvals(a)`` (one result, with
rules of its own), so it reads, and differentiates, as the op it is.

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
