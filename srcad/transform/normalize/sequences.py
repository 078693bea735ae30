"""A list or tuple written in the call of a NumPy function that makes an array of it is
stacked: ``np.array([a, b])`` becomes ``np.stack([a, b])``, ``np.sum([x, y])`` becomes
``np.sum(np.stack([x, y]))``, nested lists stack again (``np.array([[a, b], [c, d]])``),
``np.array([a, b], dtype=t)`` is the stack cast. Python's ``sum([a, b])`` (of a display
and no start) is ``0 + a + b``, as Python adds.

NumPy converts such a sequence with ``np.asarray``, which for numbers and arrays of one
shape is ``np.stack`` of its elements (and fails where stack fails); ``np.stack`` has a
rule in both modes, so the derivative flows into the elements.

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.frontend import Source
>>> from srcad.transform.naming import Namer
>>> import numpy as np
>>> tree = gast.parse("def f(a, b):\\n    return np.sum(np.array([[a, b], [b, a]]))").body[0]
>>> source = Source(None, tree, "f.py", 1, 0, [], {"np": np})
>>> print(to_source(stack_literals(tree, source, Namer.for_tree(tree))), end="")
def f(a, b):
    return np.sum(np.stack([np.stack([a, b]), np.stack([b, a])]))
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from srcad.transform import build
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.anf import local_names

#: functions whose first argument NumPy turns into an array with ``np.asarray``
_CONVERTING = {
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std,
    np.cumsum, np.cumprod, np.linalg.norm, np.exp, np.log, np.sin, np.cos, np.tanh,
    np.sqrt, np.abs, np.square, np.dot, np.matmul, np.outer, np.diag, np.sort,
}  # fmt: skip
#: functions that return their argument as an array: the stack alone replaces them
_MAKING = {np.array, np.asarray, np.asanyarray}


def stack_literals(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Stack the list and tuple displays NumPy would convert (see module doc)."""
    _Stacker(source, namer, local_names(tree)).visit(tree)
    return tree


class _Stacker(Transformer):
    def __init__(self, source: Source, namer: Namer, local: set[str]) -> None:
        self.source = source
        self.namer = namer
        self.local = local

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if not node.args or not _stackable(node.args[0]):
            return node
        func = self.source.resolve(node.func, self.local)
        if func is sum and len(node.args) == 1 and not node.keywords:
            total: gast.expr = build.const(0)
            for elt in node.args[0].elts:
                total = build.binop(total, gast.Add(), elt)
            return gast.copy_location(total, node)
        try:
            making, converting = func in _MAKING, func in _CONVERTING
        except TypeError:  # unhashable
            return node
        if not (making or converting):
            return node
        stack = self.stack_function(node.func)
        if making and len(node.args) == 1 and not node.keywords:
            return gast.copy_location(_stacked(node.args[0], stack), node)
        if making and len(node.args) == 1 and [k.arg for k in node.keywords] == ["dtype"]:
            # np.array([a, b], dtype=t): the stack cast, which has a rule
            astype = gast.Attribute(
                value=_stacked(node.args[0], stack), attr="astype", ctx=gast.Load()
            )
            return gast.copy_location(build.call(astype, node.keywords[0].value), node)
        node.args[0] = _stacked(node.args[0], stack)
        return node

    def stack_function(self, func: gast.expr) -> gast.expr:
        """``np.stack`` through the name the call reads NumPy by, else a global of its own."""
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(root, gast.Name) and self.source.resolve(root, self.local) is np:
            return gast.Attribute(value=build.load(root.id), attr="stack", ctx=gast.Load())
        return build.load(self.source.bind(self.namer, np.stack, "np_stack"))


def _stacked(display: gast.expr, stack: gast.expr) -> gast.expr:
    """``np.stack([...])`` of ``display``, its nested displays stacked too."""
    elts = [_stacked(e, stack) if _stackable(e) else e for e in display.elts]
    return build.call(copy.deepcopy(stack), gast.List(elts=elts, ctx=gast.Load()))


def _stackable(node: gast.expr) -> bool:
    """A non-empty list or tuple display without ``*rest``, of anything but strings."""
    return (
        isinstance(node, (gast.List, gast.Tuple))
        and bool(node.elts)
        and not any(isinstance(e, gast.Starred) for e in node.elts)
        and not any(isinstance(e, gast.Constant) and isinstance(e.value, str) for e in node.elts)
    )
