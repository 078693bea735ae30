"""Star-arguments of a known length written out: ``f(*(a, b))`` is ``f(a, b)``.

After :func:`~srcad.transform.normalize.tuples.split_tuples` a tuple held in a name reads as
its display, so ``shape = (n, 3)`` ... ``np.ones(*shape)`` and ``args = (x, y)`` ...
``f(*args, **{"k": v})`` reach this pass as displays. Their elements become plain
arguments, and a tuple concatenation of displays (``args + (ones,)``) one display, so the
calls differentiate like any others. A star over a value of unknown length
(``np.ones(*x.shape)``) is kept; it can never be differentiable (see ``fence``).

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> text = "def f(x):\\n    return g(*((x, 1) + (2,)), **{'k': x})"
>>> print(to_source(spread_stars(gast.parse(text).body[0])), end="")
def f(x):
    return g(x, 1, 2, k=x)
"""

from __future__ import annotations

import gast


def spread_stars(tree: gast.FunctionDef) -> gast.FunctionDef:
    """Stars over displays written out, tuple sums of displays joined (see module doc)."""
    return _Spread().visit(tree)


def _display(node: gast.expr) -> bool:
    return isinstance(node, (gast.Tuple, gast.List)) and not any(
        isinstance(e, gast.Starred) for e in node.elts
    )


def _spread(elts: list[gast.expr]) -> list[gast.expr]:
    out: list[gast.expr] = []
    for elt in elts:
        if isinstance(elt, gast.Starred) and _display(elt.value):
            out.extend(elt.value.elts)
        else:
            out.append(elt)
    return out


def spread_call(call: gast.Call) -> gast.Call:
    """``call`` with its stars over displays written out (``*(a, b)``, ``**{"k": v}``)."""
    call.args = _spread(call.args)
    keywords: list[gast.keyword] = []
    for kw in call.keywords:
        value = kw.value
        if (
            kw.arg is None
            and isinstance(value, gast.Dict)
            and all(
                isinstance(k, gast.Constant) and isinstance(k.value, str) and k.value.isidentifier()
                for k in value.keys
            )
        ):
            keywords.extend(
                gast.keyword(arg=k.value, value=v) for k, v in zip(value.keys, value.values)
            )
        else:
            keywords.append(kw)
    call.keywords = keywords
    return call


class _Spread(gast.NodeTransformer):
    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        left, right = node.left, node.right
        if (
            isinstance(node.op, gast.Add)
            and isinstance(left, gast.Tuple)
            and isinstance(right, gast.Tuple)
            and _display(left)
            and _display(right)
        ):
            return gast.copy_location(
                gast.Tuple(elts=left.elts + right.elts, ctx=gast.Load()), node
            )
        return node

    def visit_Call(self, node: gast.Call) -> gast.Call:
        self.generic_visit(node)
        return spread_call(node)

    def visit_Tuple(self, node: gast.Tuple) -> gast.Tuple:
        self.generic_visit(node)
        if isinstance(node.ctx, gast.Load):
            node.elts = _spread(node.elts)
        return node

    visit_List = visit_Tuple  # type: ignore[assignment]
