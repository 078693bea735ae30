"""Calls that change an argument in place become the in-place updates srcad differentiates;
the rest are refused.

``np.sin(y, out=y)`` becomes ``y[...] = np.sin(y)``, ``np.copyto(y, x)`` ``y[...] = x``,
``y.fill(v)`` ``y[...] = v``, ``y.sort()`` ``y[...] = np.sort(y)``, ``np.put(y, i, v)``
``y[...] = put_values(y, i, v)``, ``np.add.at(y, i, v)`` ``y[...] = added_at(y, i, v)``
and ``y.__iadd__(v)`` ``y += v`` (the table is analyses/mutators.py): later passes check
and differentiate these like the user's own ``y[i] = v`` and ``y += v``. A mutating call
srcad cannot lower (``y.partition(k)``, an unknown ``out=``, a user helper that writes into
its argument) is an error at its line: ignoring it would give a wrong derivative.

>>> import gast, numpy as np
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.frontend import Source
>>> from srcad.transform.naming import Namer
>>> tree = gast.parse("def f(x):\\n    y = x * 1.0\\n    np.sin(y, out=y)\\n    return y").body[0]
>>> source = Source(None, tree, "f.py", 1, 0, [], {"np": np})
>>> _ = lower_mutating_calls(tree, source, Namer.for_tree(tree))
>>> print(to_source(tree), end="")
def f(x):
    y = x * 1.0
    y[...] = np.sin(y)
    return y
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable

import gast
import numpy as np

from srcad.runtime.puts import diagonal_positions, put_values
from srcad.runtime.updates import added_at
from srcad.transform import build
from srcad.transform.analyses.aliasing import held_calls, unpacked_parts
from srcad.transform.analyses.mutators import (
    AUGMENTED,
    ITEM,
    REFUSED,
    Mutation,
    describe,
    mutation_of,
    outside_arrays,
    returned_arguments,
    returned_outside,
    unknown_effect,
)
from srcad.transform.analyses.objects import user_methods
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import all_statements, own_parts, rewrite_bodies


def lower_mutating_calls(tree: gast.FunctionDef, source: Source, namer: Namer) -> bool:
    """Lower or refuse every call of ``tree`` that changes an argument (see module doc)."""
    lower = _Lower(tree, source, namer)
    lower.visit(tree)
    tree.body = rewrite_bodies(tree.body, lower.block)
    _refuse_the_rest(tree, source, lower)
    _refuse_helper_aliases(tree, source, lower.local)
    return lower.changed


def _refuse_the_rest(tree: gast.FunctionDef, source: Source, lower: _Lower) -> None:
    """Raise at the first call left that changes an argument, or may (a C function's)."""
    for stmt in all_statements(tree.body):
        whole = _call_of(stmt)
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if not isinstance(node, gast.Call):
                    continue
                found = mutation_of(node, source, lower.local)
                if found is not None and not _harmless(found, stmt):
                    raise source.error(lower.refusal(found, nested=node is not whole), node)
                if (
                    found is None
                    and node is whole
                    and isinstance(stmt, gast.Expr)
                    and unknown_effect(node, source, lower.local)
                ):
                    raise source.error(
                        f"cannot tell whether '{describe(node.func)}' changes the arrays passed "
                        "to it; srcad would ignore such a change. Use its result (z = f(y)) or "
                        "a function srcad can read",
                        node,
                    )


def _refuse_helper_aliases(tree: gast.FunctionDef, source: Source, local: set[str]) -> None:
    """``v = h(y)`` where ``h`` may return ``y`` itself: changing either in place changes
    both, which the aliasing checks cannot see through the call; refuse that."""
    changed = set()
    for stmt in all_statements(tree.body):
        if isinstance(stmt, (gast.Assign, gast.AugAssign)):
            for target in stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]:
                if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                    changed.add(target.value.id)
                elif isinstance(stmt, gast.AugAssign) and isinstance(target, gast.Name):
                    changed.add(target.id)
    # each call whose result a name may take: ``v = h(y)``, ``a, b = h(x, u)`` (a helper
    # returning its argument in a tuple, either name), ``v, w = h(x, u), x`` (the call's
    # result one element of a display)
    methods = user_methods(tree.body, source, local)
    held = [
        (stmt, name, call)
        for stmt in all_statements(tree.body)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
        for name, part in unpacked_parts(stmt.targets[0], stmt.value)
        for call in held_calls(part)
    ]
    for _, group in itertools.groupby(held, key=lambda entry: id(entry[0])):
        pairs = list(group)  # (one statement's: an argument coming back is named first)
        for stmt, name, call in pairs:
            for argument, where in returned_arguments(call, source, local):
                if argument != name and {name, argument} & changed:
                    raise source.error(
                        f"'{describe(call.func)}' may return the array '{argument}' passed to "
                        f"it ({where}), and '{name if name in changed else argument}' is "
                        f"changed in place: both would change. Copy the result "
                        f"({describe(call.func)}(...).copy())",
                        stmt,
                    )
        for stmt, name, call in pairs:
            if name in changed:
                _refuse_outside_arrays_changed(stmt, name, call, source, local, methods)


def _refuse_outside_arrays_changed(
    stmt: gast.Assign,
    name: str,
    call: gast.Call,
    source: Source,
    local: set[str],
    methods: Callable[[gast.Call], Callable | None],
) -> None:
    """``v = h()`` where ``h`` may return a global array (or a view of it) and ``v`` is then
    changed in place: that would change the array outside the function. (``h`` may be a
    method of an object the function makes: ``obj = Holder(); v = obj.table()``.)"""
    method = methods(call)
    found = returned_outside(call, source, local) if method is None else outside_arrays(method)
    for outside, where in found.items():
        raise source.error(
            f"'{describe(call.func)}' may return the array '{outside}' it reads from outside "
            f"the function ({where}), and '{name}' is changed in place: that would change "
            f"'{outside}' too. Copy the result ({describe(call.func)}(...).copy())",
            stmt,
        )


class _Lower(gast.NodeTransformer):
    def __init__(self, tree: gast.FunctionDef, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer
        self.local = local_names(tree)
        self.lists = _list_names(tree)
        self.counters = _range_counters(tree)
        self.tree = tree
        self.changed = False

    def visit_Call(self, node: gast.Call) -> gast.expr:
        """``f(a, out=np.zeros_like(a), where=m)``: the result goes into a new array no
        other name sees, so the call is just its value, ``np.where(m, f(a), ...)``."""
        self.generic_visit(node)
        found = mutation_of(node, self.source, self.local)
        if found is None or found.kind == REFUSED or "value" not in found.detail:
            return node
        if found.detail.get("result") is None or not _fresh(found.target, self.source, self.local):
            return node
        self.changed = True
        value = self.new_value(lambda: found.target, found.detail)
        for part in gast.walk(value):
            if getattr(part, "lineno", None) is None:
                gast.copy_location(part, node)
        return value

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            call = _call_of(stmt)
            found = mutation_of(call, self.source, self.local) if call is not None else None
            if found is None or not self.lowerable(found):
                out.append(stmt)
                continue
            origin = getanno(stmt, "origin", stmt)
            for new in self.lowered(stmt, found):
                for node in gast.walk(new):  # errors about the new parts point at the call
                    if getattr(node, "lineno", None) is None:
                        gast.copy_location(node, call)
                gast.copy_location(new, stmt)
                setanno(new, "origin", origin)
                out.append(new)
            self.changed = True
        return out

    def lowerable(self, found: Mutation) -> bool:
        if found.kind == REFUSED:
            return False
        target = found.target
        if found.kind != ITEM and isinstance(target, gast.Subscript):
            # a view (y[1:], y[i] in a loop over a range): the update writes into y there; an
            # advanced index would have changed a copy, not y
            if not self.basic_index(target.slice):
                return False
            target = target.value
        return (
            isinstance(target, gast.Name)
            and target.id in self.local
            and (target.id not in self.lists)
        )

    def basic_index(self, index: gast.expr) -> bool:
        """An index that gives a view: slices, integer constants, ``...``, ``None`` and
        counters of loops over a range."""
        if isinstance(index, gast.Tuple):
            return all(self.basic_index(part) for part in index.elts)
        if isinstance(index, gast.Slice):
            return True
        if isinstance(index, gast.Constant):
            return index.value is None or index.value is Ellipsis or type(index.value) is int
        if isinstance(index, gast.UnaryOp) and isinstance(index.operand, gast.Constant):
            return type(index.operand.value) is int
        return isinstance(index, gast.Name) and index.id in self.counters

    def lowered(self, stmt: gast.stmt, found: Mutation) -> list[gast.stmt]:
        """The update ``found`` makes, then what the call returned bound as ``stmt`` did."""
        target = found.target
        detail = found.detail
        if found.kind == AUGMENTED:
            store = _as_store(target)
            update: gast.stmt = gast.AugAssign(
                target=store, op=detail["op"](), value=detail["value"]
            )
            result = _as_load(target)
        elif found.kind == ITEM:
            store = gast.Subscript(
                value=build.load(target.id), slice=detail["index"], ctx=gast.Store()
            )
            update = build.assign(store, detail["value"])
            result = build.const(None)
        else:
            update = build.assign(
                _store_all(target), self.new_value(lambda: _as_load(target), detail)
            )
            result = detail["result"] if detail.get("result") is not None else build.const(None)
            result = _as_load(result)
        if isinstance(stmt, gast.Expr):
            return [update]
        if isinstance(stmt, gast.Return):
            return [update, build.ret(result)]
        return [update, gast.Assign(targets=stmt.targets, value=result, type_comment=None)]

    def new_value(self, current: Callable[[], gast.expr], detail: dict) -> gast.expr:
        """The whole new value of the changed array; ``current()`` reads its value now."""
        if "sort" in detail:
            args, keywords = detail["sort"]
            return gast.Call(
                func=self.numpy_attr("sort"), args=[current(), *args], keywords=keywords
            )
        if "put" in detail:
            return self.put(current, *detail["put"])
        if "at" in detail:
            ufunc, index, value = detail["at"]
            if ufunc == "subtract":
                value = gast.UnaryOp(op=gast.USub(), operand=value)
            return build.call(self.helper(added_at, "added_at"), current(), index, value)
        value = detail["value"]
        where = detail.get("where")
        if where is not None and not (isinstance(where, gast.Constant) and where.value is True):
            value = build.call(self.numpy_attr("where"), where, value, current())
        return value

    def put(
        self, current: Callable[[], gast.expr], kind: str, *parts: gast.expr | None
    ) -> gast.expr:
        """``put_values(name, positions, values[, mode])`` for np.put and its relatives."""
        np_ = self.numpy_attr
        mode = None
        if kind == "put":
            positions, values, mode = parts
        elif kind == "place":
            positions, values = build.call(np_("flatnonzero"), parts[0]), parts[1]
        elif kind == "putmask":
            mask, values = parts
            positions = build.call(np_("flatnonzero"), mask)
            cycled = build.binop(
                build.call(np_("flatnonzero"), copy.deepcopy(mask)),
                gast.Mod(),
                build.call(np_("size"), values),
            )
            values = gast.Subscript(
                value=build.call(np_("ravel"), copy.deepcopy(values)), slice=cycled, ctx=gast.Load()
            )
        else:
            value, wrap = parts
            helper = self.helper(diagonal_positions, "diagonal_positions")
            shape = build.call(np_("shape"), current())
            positions = build.call(helper, shape, *([wrap] if wrap is not None else []))
            values = value
        args = [current(), positions, values, *([mode] if mode is not None else [])]
        return build.call(self.helper(put_values, "put_values"), *args)

    def helper(self, obj: object, preferred: str) -> str:
        return self.source.bind(self.namer, obj, preferred)

    def numpy_attr(self, attr: str) -> gast.expr:
        return build.attr(build.load(_numpy_name(self.tree, self.source, self.namer)), attr)

    def refusal(self, found: Mutation, nested: bool) -> str:
        """Why ``found`` is refused."""
        target = describe(found.target) if found.target is not None else "an argument"
        head = f"'{found.what}' changes '{target}' in place"
        if found.kind == REFUSED:
            return f"'{found.what}' {found.detail['why']}"
        if nested:
            return f"{head} inside a larger expression; make the call a statement of its own"
        root = found.target.value if isinstance(found.target, gast.Subscript) else found.target
        if isinstance(root, gast.Name) and root.id in self.lists:
            return f"{head}, which is a list; build a new list instead"
        if isinstance(root, gast.Name) and root.id not in self.local:
            return (
                f"{head}, which is not a variable of the function; srcad differentiates "
                "functions that change only arrays they make"
            )
        return (
            f"{head}; srcad lowers this only when the changed array is a variable of the "
            "function or a slice of one (an advanced index would change a copy)"
        )


def _call_of(stmt: gast.stmt) -> gast.Call | None:
    """The call a statement consists of: ``f(...)``, ``a = b = f(...)``, ``return f(...)``."""
    value = None
    if isinstance(stmt, (gast.Expr, gast.Return)):
        value = stmt.value
    elif isinstance(stmt, gast.Assign) and all(isinstance(t, gast.Name) for t in stmt.targets):
        value = stmt.value
    return value if isinstance(value, gast.Call) else None


def _harmless(found: Mutation, stmt: gast.stmt) -> bool:
    """``s = add(s, v)`` with a helper doing ``total += v``: rebinding ``s`` to the result
    makes the helper's in-place change (to an array) or rebinding (of a number) the same."""
    if not found.detail.get("augmented") or not isinstance(found.target, gast.Name):
        return False
    return (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id == found.target.id
    )


def _store_all(target: gast.expr) -> gast.Subscript:
    """``y[...]`` for ``y``, ``y[1:]`` for the view ``y[1:]``: a store into all of it."""
    if isinstance(target, gast.Subscript):
        return gast.Subscript(
            value=build.load(target.value.id), slice=target.slice, ctx=gast.Store()
        )
    return gast.Subscript(
        value=build.load(target.id),
        slice=gast.Constant(value=Ellipsis, kind=None),
        ctx=gast.Store(),
    )


#: calls that return a new array: an ``out=`` into one changes nothing anyone else sees
_CREATORS = {
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.copy, np.array,
}  # fmt: skip


def _fresh(target: gast.expr, source: Source, local: set[str]) -> bool:
    """Whether ``target`` makes a new array (``np.zeros_like(a)``, ``a.copy()``)."""
    if not isinstance(target, gast.Call):
        return False
    func = target.func
    if isinstance(func, gast.Attribute) and func.attr == "copy" and not target.args:
        return True
    callee = source.resolve(func, local)
    return any(callee is creator for creator in _CREATORS)


def _range_counters(tree: gast.FunctionDef) -> set[str]:
    """Names only ever bound as the counter of a loop over ``range(...)`` (integers)."""
    counters, others, loops = set(), set(), set()
    for node in gast.walk(tree):
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            loops.add(id(node.target))
            call = node.iter
            is_range = (
                isinstance(call, gast.Call)
                and isinstance(call.func, gast.Name)
                and call.func.id == "range"
            )
            (counters if is_range else others).add(node.target.id)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) not in loops:
                others.add(node.id)
    return counters - others


def _list_names(tree: gast.FunctionDef) -> set[str]:
    """Names bound to a list display, comprehension or ``list(...)``."""
    found = set()
    for stmt in all_statements(tree.body):
        if (
            isinstance(stmt, gast.Assign)
            and isinstance(stmt.value, (gast.List, gast.ListComp))
            or (
                isinstance(stmt, gast.Assign)
                and isinstance(stmt.value, gast.Call)
                and isinstance(stmt.value.func, gast.Name)
                and stmt.value.func.id == "list"
            )
        ):
            found |= {t.id for t in stmt.targets if isinstance(t, gast.Name)}
    return found


def _numpy_name(tree: gast.FunctionDef, source: Source, namer: Namer) -> str:
    """A name meaning NumPy: the user's own (``np``) when the function reads one, so that
    generated calls go through the arrays' namespace like the user's."""
    local = local_names(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id not in local and source.lookup(node.id) is np:
            return node.id
    name = namer.bind_global(np, "np")
    source.namespace[name] = np
    return name


def _as_store(expr: gast.expr) -> gast.expr:
    if isinstance(expr, gast.Name):
        return build.store(expr.id)
    return gast.Subscript(value=build.load(expr.value.id), slice=expr.slice, ctx=gast.Store())


def _as_load(expr: gast.expr) -> gast.expr:
    if isinstance(expr, gast.Name):
        return build.load(expr.id)
    if isinstance(expr, gast.Subscript):
        return gast.Subscript(value=_as_load(expr.value), slice=expr.slice, ctx=gast.Load())
    return expr
