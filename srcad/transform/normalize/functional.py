"""``map`` and ``functools.reduce`` written as the comprehension and the loop they stand for.

``map(f, xs, ys)`` is ``[f(x, y) for x, y in zip(xs, ys)]``, a lambda's body written in
place of the call (``map(lambda v: v * v, xs)`` is ``[v * v for v in xs]``); it is then
lowered with the other comprehensions. ``functools.reduce(f, xs, init)`` becomes
``acc = init`` and ``for v in xs: acc = f(acc, v)`` before its statement, which then reads
``acc`` (without ``init`` the first element starts: ``acc = xs[0]`` and a loop over
``xs[1:]``; over a list display the loop is unrolled like any loop over one). A lambda
given to either is written out, its parameters renamed; one with defaults or stars, and a
``reduce`` evaluated only on some paths (in a conditional expression, after ``and``/``or``,
in a ``while`` condition), are refused by name. Python's ``max(xs)`` and ``min(xs)`` of a
name or a display are the ``reduce`` of ``max(a, b)`` (``min``) over ``xs``.
"""

from __future__ import annotations

import copy
import functools

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer, replace_node
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.comprehensions import lower_comprehensions
from srcad.transform.normalize.walk import RenameNames, rewrite_bodies


def lower_functional(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """``map`` as a comprehension, comprehensions as loops, ``reduce`` as a loop."""
    local = local_names(tree)
    tree = _MapAsComprehension(source, namer, local).visit(tree)
    tree = lower_comprehensions(tree, source, namer)
    reduces = _Reduces(source, namer, local)
    tree.body = rewrite_bodies(tree.body, reduces.block)
    return tree


def _plain_lambda(node: gast.expr, arity: int) -> bool:
    """Whether ``node`` is a lambda of ``arity`` positional parameters and nothing else."""
    if not isinstance(node, gast.Lambda):
        return False
    args = node.args
    return (
        len(args.args) == arity
        and not args.posonlyargs
        and not args.kwonlyargs
        and args.vararg is None
        and args.kwarg is None
        and not args.defaults
    )


class _MapAsComprehension(Transformer):
    """``map(f, *iterables)`` of written-out iterables as a list comprehension."""

    def __init__(self, source: Source, namer: Namer, local: set[str]) -> None:
        self.source = source
        self.namer = namer
        self.local = local

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if self.source.resolve(node.func, self.local) is not map:
            return node
        if len(node.args) < 2 or node.keywords:
            return node
        func, iterables = node.args[0], node.args[1:]
        if any(isinstance(a, gast.Starred) for a in node.args):
            return node  # (how many iterables is known only at run time: refused later)
        if isinstance(func, gast.Lambda):
            if not _plain_lambda(func, len(iterables)):
                raise self.source.error(
                    f"map of a lambda taking other than {len(iterables)} plain parameters "
                    "is not supported yet",
                    func,
                )
            names = [a.id for a in func.args.args]
            element = copy.deepcopy(func.body)
        else:
            names = [f"_v{k}" if len(iterables) > 1 else "_v" for k in range(len(iterables))]
            element = build.call(func, *map(build.load, names))
        stores = [gast.Name(n, gast.Store(), None, None) for n in names]
        if len(iterables) == 1:
            target, iterable = stores[0], iterables[0]
        else:
            target = gast.Tuple(elts=stores, ctx=gast.Store())
            iterable = build.call(build.load(self.source.bind(self.namer, zip, "zip")), *iterables)
        generator = gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)
        return gast.copy_location(gast.ListComp(elt=element, generators=[generator]), node)


def _eager_calls(node: gast.AST, found: list[gast.Call], lazy: list[gast.Call], is_reduce):
    """The ``reduce`` calls of ``node`` evaluated whenever it is (inner ones first), and
    those evaluated only on some paths."""

    def visit(n: gast.AST, eager: bool) -> None:
        if isinstance(n, gast.Lambda):
            return  # (a lambda's body runs where it is called)
        if isinstance(n, gast.IfExp):
            visit(n.test, eager)
            visit(n.body, False)
            visit(n.orelse, False)
            return
        if isinstance(n, gast.BoolOp):
            visit(n.values[0], eager)
            for value in n.values[1:]:
                visit(value, False)
            return
        for child in gast.iter_child_nodes(n):
            visit(child, eager)
        if isinstance(n, gast.Call) and is_reduce(n):
            (found if eager else lazy).append(n)

    visit(node, True)


class _Reduces:
    """Each statement's ``reduce`` calls as loops before it (see module doc)."""

    def __init__(self, source: Source, namer: Namer, local: set[str]) -> None:
        self.source = source
        self.namer = namer
        self.local = local

    def is_reduce(self, call: gast.Call) -> bool:
        found = self.source.resolve(call.func, self.local)
        return found is functools.reduce or self.extremum(call, found)

    def extremum(self, call: gast.Call, found: object) -> bool:
        """Whether ``call`` is Python's ``max(xs)`` or ``min(xs)`` of a name or a display (a
        comprehension is a list's name by now): the reduce of ``max(a, b)`` over ``xs``,
        which keeps the first of equal values, as Python's does."""
        return (
            found in (max, min)
            and len(call.args) == 1
            and not call.keywords
            and isinstance(call.args[0], (gast.Name, gast.List, gast.Tuple))
        )

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            if isinstance(stmt, gast.FunctionDef):
                stmt.body = rewrite_bodies(stmt.body, self.block)
                out.append(stmt)
                continue
            if isinstance(stmt, gast.While):
                parts: list[gast.AST] = []
                self.refuse([stmt.test], "in a while condition")
            elif isinstance(stmt, gast.If):
                parts = [stmt.test]
            elif isinstance(stmt, gast.For):
                parts = [stmt.iter]
            elif isinstance(stmt, (gast.Try, gast.With)):
                parts = [item.context_expr for item in getattr(stmt, "items", [])]
            else:
                parts = [stmt]
            for part in parts:
                found: list[gast.Call] = []
                lazy: list[gast.Call] = []
                _eager_calls(part, found, lazy, self.is_reduce)
                if lazy:
                    raise self.source.error(
                        "functools.reduce evaluated on some paths only (in a conditional "
                        "expression or after and/or) is not supported yet; assign it to a "
                        "name first",
                        lazy[0],
                    )
                for call in found:
                    name = self.lower(call, out, stmt)
                    replace_node(stmt, call, build.load(name))
            out.append(stmt)
        return out

    def refuse(self, parts: list[gast.AST], where: str) -> None:
        for part in parts:
            for node in gast.walk(part):
                if isinstance(node, gast.Call) and self.is_reduce(node):
                    raise self.source.error(
                        f"functools.reduce {where} is not supported yet; assign it to a name first",
                        node,
                    )

    def mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def lower(self, call: gast.Call, out: list[gast.stmt], origin: gast.stmt) -> str:
        """Append the statements computing ``call`` to ``out``; the name holding it."""
        if self.extremum(call, self.source.resolve(call.func, self.local)):
            pair = copy.deepcopy(call.func)  # (``max(xs)``: reduce(max, xs))
            call = gast.copy_location(gast.Call(call.func, [pair, call.args[0]], []), call)
        if (
            call.keywords
            or not 2 <= len(call.args) <= 3
            or any(isinstance(a, gast.Starred) for a in call.args)
        ):
            raise self.source.error(
                "functools.reduce is differentiated with a function, a sequence and an "
                "optional initial value, written out",
                call,
            )
        func, sequence = call.args[0], call.args[1]
        if isinstance(func, gast.Lambda):
            if not _plain_lambda(func, 2):
                raise self.source.error(
                    "functools.reduce of a lambda taking other than two plain parameters is "
                    "not supported yet",
                    func,
                )
            first, second = (a.id for a in func.args.args)
            # (the accumulator keeps its name; each item is a temporary, read in place)
            acc, item = self.namer.fresh(first), self.namer.fresh_temp(second)
            step = RenameNames({first: acc, second: item}).visit(copy.deepcopy(func.body))
        else:
            acc, item = self.namer.fresh_temp("_acc"), self.namer.fresh_temp("_item")
            step = build.call(copy.deepcopy(func), build.load(acc), build.load(item))
        if len(call.args) == 3:
            start, rest = call.args[2], sequence
        elif isinstance(sequence, (gast.List, gast.Tuple)) and sequence.elts:
            if any(isinstance(e, gast.Starred) for e in sequence.elts):
                raise self.source.error(
                    "functools.reduce over a display with a star is not supported yet", call
                )
            start = sequence.elts[0]
            rest = type(sequence)(elts=sequence.elts[1:], ctx=gast.Load())
        elif isinstance(sequence, gast.Name):
            start = gast.Subscript(value=build.load(sequence.id), slice=build.const(0),
                                   ctx=gast.Load())  # fmt: skip
            rest = gast.Subscript(
                value=build.load(sequence.id),
                slice=gast.Slice(lower=build.const(1), upper=None, step=None),
                ctx=gast.Load(),
            )
        else:
            raise self.source.error(
                "functools.reduce without an initial value is differentiated over a name or a "
                "list written out; give it an initial value",
                call,
            )
        out.append(self.mark(build.assign(acc, start), origin))
        target = gast.Name(item, gast.Store(), None, None)
        body = [self.mark(build.assign(acc, step), origin)]
        loop = gast.For(target=target, iter=rest, body=body, orelse=[], type_comment=None)
        out.append(self.mark(loop, origin))
        return acc
