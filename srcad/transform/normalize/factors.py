"""scipy.linalg's Cholesky pair as names: ``cho_factor(a, lower)`` becomes the display
``(cho_factor(a, lower=lower), lower)`` of srcad's ``cho_factor``, which returns the array
alone, and ``cho_solve(pair, b)`` becomes srcad's ``cho_solve(pair[0], pair[1], b)``: ops
of arrays with rules (srcad/runtime/factors.py, srcad/adjoints/scipy_linalg.py);
``split_tuples`` then gives a name holding the pair one name per element.

The values are SciPy's, the other triangle of ``c`` included (``a``'s own entries);
cho_solve reads the factor's triangle alone, as SciPy's does, so those entries get no
gradient from it. ``overwrite_a``/``overwrite_b`` only allow SciPy to reuse memory:
refused unless written False (as for other SciPy functions), then dropped.

>>> import gast, scipy.linalg
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.frontend import Source
>>> from srcad.transform.naming import Namer
>>> text = ("def f(a, b):\\n    pair = scipy.linalg.cho_factor(a, lower=True)\\n"
...         "    return scipy.linalg.cho_solve(pair, b)")
>>> tree = gast.parse(text).body[0]
>>> source = Source(None, tree, "f.py", 1, 0, [], {"scipy": scipy})
>>> print(to_source(split_factors(tree, source, Namer.for_tree(tree))), end="")
def f(a, b):
    pair = (cho_factor(a, lower=True), True)
    return cho_solve(pair[0], pair[1], b)
"""

from __future__ import annotations

import copy
import inspect
import sys
from typing import Any

import gast

from srcad.transform import build
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.anf import local_names

#: nodes whose evaluation may do something besides giving a value: never written twice
_EFFECTFUL = (gast.Call, gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await, gast.Lambda)


def split_factors(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite the calls of ``cho_factor`` and ``cho_solve`` (see module doc)."""
    linalg = sys.modules.get("scipy.linalg")
    if linalg is None:  # the user's code cannot call them: SciPy is not imported
        return tree
    _Factors(source, namer, local_names(tree), linalg).visit(tree)
    return tree


class _Factors(Transformer):
    def __init__(self, source: Source, namer: Namer, local: set[str], linalg: Any) -> None:
        self.source = source
        self.namer = namer
        self.local = local
        self.linalg = linalg
        self.pairs: set[int] = set()  # the displays made of cho_factor calls

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        try:
            func = self.source.resolve(node.func, self.local)
            factor, solve = func is self.linalg.cho_factor, func is self.linalg.cho_solve
        except AttributeError:
            return node
        if not (factor or solve):
            return node
        if any(isinstance(a, gast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            return node  # *args/**kwargs: left to the "no rule" error
        name = "cho_factor" if factor else "cho_solve"
        try:
            bound = inspect.signature(func).bind(
                *node.args, **{k.arg: k.value for k in node.keywords}
            )
        except TypeError as exc:
            raise self.source.error(f"scipy.linalg.{name}: {exc}", node) from None
        args = bound.arguments
        for flag in ("overwrite_a", "overwrite_b"):
            value = args.get(flag)
            if value is not None and not (
                isinstance(value, gast.Constant) and value.value is False
            ):
                raise self.source.error(
                    f"scipy.linalg.{name} with {flag} may change its argument in place; "
                    "leave it False",
                    value,
                )
        finite = {"check_finite": args["check_finite"]} if "check_finite" in args else {}
        if factor:
            return self.factor(node, args["a"], args.get("lower"), finite)
        return self.solve(node, args["c_and_lower"], args["b"], finite)

    def factor(
        self, node: gast.Call, a: gast.expr, lower: gast.expr | None, finite: dict
    ) -> gast.expr:
        """``(cho_factor(a, lower=lower), lower)`` with srcad's cho_factor."""
        from srcad.runtime.factors import cho_factor

        if lower is not None and _effectful(lower):
            raise self.source.error(
                "scipy.linalg.cho_factor: write its lower flag as a name or a constant", lower
            )
        func = self.bind(cho_factor, "cho_factor")
        keywords = ({"lower": lower} if lower is not None else {}) | finite
        call = gast.copy_location(build.call(func, a, **keywords), node)
        flag = copy.deepcopy(lower) if lower is not None else build.const(False)
        pair = gast.copy_location(build.tuple_([call, flag]), node)
        self.pairs.add(id(pair))
        return pair

    def solve(self, node: gast.Call, pair: gast.expr, b: gast.expr, finite: dict) -> gast.expr:
        """srcad's ``cho_solve(c, lower, b)`` of the pair's two elements."""
        from srcad.runtime.factors import cho_solve

        if isinstance(pair, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in pair.elts):
            if len(pair.elts) != 2:
                raise self.source.error(
                    "scipy.linalg.cho_solve takes the pair (c, lower) that cho_factor returns",
                    pair,
                )
            c, lower = pair.elts
            if _effectful(lower):
                raise self.source.error(
                    "scipy.linalg.cho_solve: write the lower flag of its pair as a name or a "
                    "constant",
                    lower,
                )
        elif _effectful(pair):
            raise self.source.error(
                "scipy.linalg.cho_solve: pass it cho_factor's pair, a name holding it, or "
                "(c, lower) written out",
                pair,
            )
        else:
            c, lower = (_item(pair, k) for k in (0, 1))
        solve = self.bind(cho_solve, "cho_solve")
        return gast.copy_location(build.call(solve, c, lower, b, **finite), node)

    def bind(self, obj: Any, preferred: str) -> gast.Name:
        """A global name for ``obj``, not one an inlined helper's free name already holds
        (those are in the source's namespace, which the namer does not see)."""
        name, k = preferred, 0
        while self.source.namespace.get(name, obj) is not obj:
            k += 1
            name = f"{preferred}_{k}"
        return build.load(self.source.bind(self.namer, obj, name))

    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        # cho_factor(a)[0]: the factor itself (the other element is a pure flag)
        self.generic_visit(node)
        index = node.slice
        if (
            id(node.value) in self.pairs
            and isinstance(index, gast.Constant)
            and type(index.value) is int
            and -2 <= index.value < 2
        ):
            return node.value.elts[index.value]
        return node


def _effectful(node: gast.expr) -> bool:
    return any(isinstance(n, _EFFECTFUL) for n in gast.walk(node))


def _item(value: gast.expr, k: int) -> gast.Subscript:
    return gast.Subscript(value=copy.deepcopy(value), slice=build.const(k), ctx=gast.Load())
