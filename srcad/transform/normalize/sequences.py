"""A list or tuple written in the call of a NumPy or SciPy function that makes an array of
it is stacked: ``np.array([a, b])`` becomes ``np.stack([a, b])``, ``np.sum([x, y])`` becomes
``np.sum(np.stack([x, y]))``, ``logsumexp([a, b], axis=0)`` and ``np.dot(W, [x, y])``
likewise (an operand of any op with a rule, but those taking a sequence of arrays as one:
``np.concatenate``, ``np.einsum``, ...), nested lists stack again (``np.array([[a, b], [c,
d]])``), ``np.array([a, b], dtype=t)`` is the stack cast. Python's ``sum([a, b])`` (of a
display and no start) is ``0 + a + b``, as Python adds.

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
import inspect
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from srcad.adjoints.registry import lookup
from srcad.transform import build
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.anf import local_names

#: functions that return their argument as an array: the stack alone replaces them
_MAKING = {np.array, np.asarray, np.asanyarray}
#: NumPy functions taking a sequence of arrays as such (their rules take the display)
_SEQUENCES = {
    np.concatenate, np.stack, np.vstack, np.hstack, np.dstack, np.column_stack, np.block,
    np.select, np.einsum, np.linalg.multi_dot, np.broadcast_arrays, np.meshgrid,
    np.piecewise,
}  # fmt: skip
#: parameters without a default that are not arrays (a shape written with local names)
_NOT_ARRAYS = {
    "shape", "newshape", "axes", "axis", "reps", "repeats", "pad_width", "indices",
    "indices_or_sections", "kth", "n", "k", "subscripts", "condlist", "funclist",
}  # fmt: skip
#: parameters with a default that take arrays (``logsumexp(a, b=[...])``, ``loc=``)
_ARRAY_OPTIONS = {"b", "loc", "scale", "mean", "cov", "weights"}


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
        args = (*node.args, *(k.value for k in node.keywords))
        if not any(self.whole(a) or self.wanted(a) for a in args):
            return node
        func = self.source.resolve(node.func, self.local)
        first = node.args[0] if node.args else None
        display = first if first is not None and _stackable(first) else None
        if func is sum and display is not None and len(node.args) == 1 and not node.keywords:
            return gast.copy_location(added(display.elts), node)
        stack = self.stack_function(node.func)
        making = _in(func, _MAKING)
        if making and self.whole(first) and len(node.args) == 1 and not node.keywords:
            return gast.copy_location(self.stacked(first, stack), node)
        if making and display is not None and [k.arg for k in node.keywords] == ["dtype"]:
            # np.array([a, b], dtype=t): the stack cast, which has a rule
            astype = gast.Attribute(value=_stacked(display, stack), attr="astype", ctx=gast.Load())
            return gast.copy_location(build.call(astype, node.keywords[0].value), node)
        converted = _converted(func, node, self.wanted)
        node.args = [self.stacked(a, stack) if id(a) in converted else a for a in node.args]
        for keyword in node.keywords:
            if id(keyword.value) in converted:
                keyword.value = self.stacked(keyword.value, stack)
        return node

    def wanted(self, arg: gast.expr) -> bool:
        """An argument an op converting it to an array gets stacked: a display holding
        values not written as constants."""
        return _stackable(arg) and _varies(arg)

    def whole(self, arg: gast.expr | None) -> bool:
        """An argument ``np.array`` takes whole, made the stack itself: any display."""
        return arg is not None and _stackable(arg)

    @staticmethod
    def stacked(arg: gast.expr, stack: gast.expr) -> gast.expr:
        return _stacked(arg, stack) if _stackable(arg) else build.call(copy.deepcopy(stack), arg)

    def stack_function(self, func: gast.expr) -> gast.expr:
        """``np.stack`` through the name the call reads NumPy by, else a global of its own."""
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(root, gast.Name) and self.source.resolve(root, self.local) is np:
            return gast.Attribute(value=build.load(root.id), attr="stack", ctx=gast.Load())
        return build.load(self.source.bind(self.namer, np.stack, "np_stack"))


def added(values: list[gast.expr]) -> gast.expr:
    """``0 + a + b``: what Python's ``sum`` of ``values`` computes (it starts from 0)."""
    total: gast.expr = build.const(0)
    for value in values:
        total = build.binop(total, gast.Add(), value)
    return total


def _converted(func: Any, call: gast.Call, wanted: Callable[[gast.expr], bool]) -> set[int]:
    """The ids of ``call``'s arguments that ``func``, a NumPy or SciPy op with a rule,
    converts to an array (its array operands) among those ``wanted`` (displays holding
    values not written as constants, or names of lists)."""
    module = getattr(func, "__module__", None) or ""
    if not module.startswith(("numpy", "scipy")) or _in(func, _SEQUENCES):
        return set()
    rule = lookup(func)
    if rule is None:
        return set()
    marks = [object() for _ in call.args]
    keywords = {k.arg: object() for k in call.keywords if k.arg is not None}
    try:
        bound = rule.signature.bind_partial(*marks, **keywords).arguments
    except TypeError:
        return set()
    given = {id(m): a for m, a in zip(marks, call.args)}
    given.update((id(keywords[k.arg]), k.value) for k in call.keywords if k.arg in keywords)
    converted = set()
    for name, mark in bound.items():
        parameter = rule.signature.parameters[name]
        display = given.get(id(mark))
        if (
            display is None
            or not wanted(display)
            or name in rule.static
            or parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD
            or name in _NOT_ARRAYS
            or (parameter.default is not inspect.Parameter.empty and name not in _ARRAY_OPTIONS)
        ):
            continue
        converted.add(id(display))
    return converted


def stack_list_arguments(
    tree: gast.FunctionDef, source: Source, namer: Namer, lists: set[str]
) -> gast.FunctionDef:
    """A list the function builds passed as an array operand of a NumPy or SciPy op, as
    NumPy converts it: ``np.sum(xs)`` becomes ``np.sum(np.stack(xs))``, ``np.array(xs)``
    ``np.stack(xs)``."""
    _ListStacker(source, namer, local_names(tree), lists).visit(tree)
    return tree


class _ListStacker(_Stacker):
    """The stacking again, after lists are lowered: lists by name too, and displays made
    since (the values of a dict written out: ``np.sum(list(d.values()))``)."""

    def __init__(self, source: Source, namer: Namer, local: set[str], lists: set[str]) -> None:
        super().__init__(source, namer, local)
        self.lists = lists

    def is_list(self, arg: gast.expr | None) -> bool:
        return isinstance(arg, gast.Name) and arg.id in self.lists

    def visit_Call(self, node: gast.Call) -> gast.expr:
        func = self.source.resolve(node.func, self.local)
        module = getattr(func, "__module__", None) or ""
        if func is sum or module.startswith(("numpy", "scipy")):
            node.args = [self.uncopied(a) for a in node.args]
            for keyword in node.keywords:
                keyword.value = self.uncopied(keyword.value)
        return super().visit_Call(node)

    def uncopied(self, arg: gast.expr) -> gast.expr:
        """``list(xs)`` or ``tuple(xs)`` of a list by name, as an op's argument: the list
        itself (the op only reads the copy: ``np.stack(list(map(f, xs)))``)."""
        if (
            isinstance(arg, gast.Call)
            and len(arg.args) == 1
            and not arg.keywords
            and self.is_list(arg.args[0])
            and self.source.resolve(arg.func, self.local) in (list, tuple)
        ):
            return arg.args[0]
        return arg

    def wanted(self, arg: gast.expr) -> bool:
        return self.is_list(arg) or super().wanted(arg)

    def whole(self, arg: gast.expr | None) -> bool:
        return self.is_list(arg) or super().wanted(arg)


def _in(func: Any, functions: set) -> bool:
    try:
        return func in functions
    except TypeError:  # unhashable
        return False


def _varies(display: gast.expr) -> bool:
    """Whether a display holds anything but constants (a list of numbers is left as is)."""
    return any(
        _varies(e) if _stackable(e) else not isinstance(e, gast.Constant) for e in display.elts
    )


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
