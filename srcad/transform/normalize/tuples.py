"""A name only ever assigned tuple displays of one length becomes one name per element:

``state = (h, 2 * c)`` ... ``h = state[0]`` ... ``a, b = state`` becomes
``state_0, state_1 = h, 2 * c`` ... ``h = state_0`` ... ``a, b = state_0, state_1``, which
differentiates like any names (a tuple of differentiable values is otherwise refused). A
constant index picks a name, ``len`` is a constant, and any other read (``np.stack(state)``,
``return state``) is the tuple written out, ``(state_0, state_1)``: the same value.

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.naming import Namer
>>> text = "def f(x):\\n    y = (x, 2 * x)\\n    y = (y[1], y[0])\\n    return y[0] * len(y)"
>>> tree = gast.parse(text).body[0]
>>> print(to_source(split_tuples(tree, Namer.for_tree(tree))), end="")
def f(x):
    y_0, y_1 = (x, 2 * x)
    y_0, y_1 = (y_1, y_0)
    return y_0 * 2
"""

from __future__ import annotations

import gast

from srcad.transform import build
from srcad.transform.naming import Namer


def split_tuples(
    tree: gast.FunctionDef, namer: Namer, builtin_len: bool = True
) -> gast.FunctionDef:
    """One name per element for each tuple name that allows it (see module doc);
    ``builtin_len``: ``len`` is Python's (not shadowed by the function's module)."""
    parents = _parents(tree)
    params = {a.id for a in [*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs]}
    lengths: dict[str, int | None] = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id not in params:
            lengths[node.id] = _agree(lengths.get(node.id, 0), _use(node, parents))
    bound = {name for name, n in lengths.items() if n is not None and n >= 0}
    # a name stored by a tuple display somewhere, whose every use allows splitting
    split = {
        name: lengths[name]
        for name in bound
        if any(
            isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
            for n in gast.walk(tree)
        )
    }
    for node in gast.walk(tree):  # an index out of range keeps Python's IndexError
        if (
            isinstance(node, gast.Subscript)
            and isinstance(node.value, gast.Name)
            and node.value.id in split
        ):
            index = _constant_index(node.slice)
            if index is not None and not -split[node.value.id] <= index < split[node.value.id]:
                del split[node.value.id]
    if not split:
        return tree
    elements = {name: [namer.fresh(f"{name}_{k}") for k in range(n)] for name, n in split.items()}
    _Split(elements, builtin_len).visit(tree)
    return tree


def _agree(known: int | None, length: int) -> int | None:
    """The length two uses need together (0: any), or None when they cannot agree."""
    if known is None or length == -1:
        return None
    if known == 0 or known == length:
        return length
    return known if length == 0 else None


def _parents(tree: gast.AST) -> dict[int, gast.AST]:
    parents: dict[int, gast.AST] = {}
    for node in gast.walk(tree):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _use(node: gast.Name, parents: dict[int, gast.AST]) -> int:
    """The tuple length this occurrence of a name needs (0 for any), or -1 when it rules
    splitting out."""
    parent = parents.get(id(node))
    if isinstance(node.ctx, gast.Store):
        if (
            isinstance(parent, gast.Assign)
            and parent.targets == [node]
            and isinstance(parent.value, gast.Tuple)
            and parent.value.elts
            and not any(isinstance(e, gast.Starred) for e in parent.value.elts)
        ):
            return len(parent.value.elts)
        return -1
    if not isinstance(node.ctx, gast.Load):
        return -1
    if isinstance(parent, gast.Assign) and parent.value is node:
        target = parent.targets[0]
        if len(parent.targets) == 1 and isinstance(target, (gast.Tuple, gast.List)):
            if not any(isinstance(e, gast.Starred) for e in target.elts):
                return len(target.elts)
    # any other read (y[k], len(y), f(y), return y) is the same with (y_0, y_1) written out
    return 0


def _constant_index(node: gast.expr) -> int | None:
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, gast.UnaryOp)
        and isinstance(node.op, gast.USub)
        and isinstance(node.operand, gast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


class _Split(gast.NodeTransformer):
    def __init__(self, elements: dict[str, list[str]], builtin_len: bool) -> None:
        self.elements = elements
        self.builtin_len = builtin_len

    def names(self, name: str, ctx: type) -> gast.Tuple:
        elts = [gast.Name(n, ctx(), None, None) for n in self.elements[name]]
        return gast.Tuple(elts=elts, ctx=ctx())

    def visit_Assign(self, node: gast.Assign) -> gast.AST:
        self.generic_visit(node)
        target = node.targets[0]
        if isinstance(target, gast.Name) and target.id in self.elements:
            node.targets = [gast.copy_location(self.names(target.id, gast.Store), target)]
        return node

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        value = node.value
        if isinstance(value, gast.Name) and value.id in self.elements:
            names = self.elements[value.id]
            index = _constant_index(node.slice)
            if index is not None:
                return gast.copy_location(build.load(names[index]), node)
        return self.generic_visit(node)

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id in self.elements and isinstance(node.ctx, gast.Load):
            return gast.copy_location(self.names(node.id, gast.Load), node)
        return node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        func, args = node.func, node.args
        if (
            self.builtin_len
            and isinstance(func, gast.Name)
            and func.id == "len"
            and len(args) == 1
            and isinstance(args[0], gast.Name)
            and args[0].id in self.elements
        ):
            return gast.copy_location(build.const(len(self.elements[args[0].id])), node)
        return self.generic_visit(node)
