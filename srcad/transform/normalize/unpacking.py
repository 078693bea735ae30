"""Unpacking into names, by indexing: the rules of ``x[k]`` then differentiate it.

``a, b, c = x`` (an array, a row ``X[k]`` a loop reads, any value but a call or a display)
becomes a length check, then ``a = x[0]; b = x[1]; c = x[2]``; the check keeps Python's
error where the length differs (a ``ValueError``), with no srcad in the generated code. A
dict or set (a parameter srcad cannot see the type of) unpacks into its keys, which
indexing would not give: a ``TypeError`` says so.

``a, b = tuple(v)`` and ``list(v)`` unpack ``v`` itself (the same elements, by index).
``a, *rest, z = v`` of a list the function built (or of a display) picks ``a`` and ``z``
and makes ``rest`` the slice between, a list; of any other value it is refused by name.
Temporaries and ``*rest`` names holding lists join ``source.lists``, so that indexing them
reads a list's element (the elements may differ in shape).

``op(...)[k]`` and ``op(...).field`` of an op with several results (``np.linalg.slogdet(A)
[1]``, ``np.linalg.eigh(A).eigenvalues``, ``np.split(x, 3)[k]``) become the call unpacked
into fresh names (``sign, logdet = np.linalg.slogdet(A)``), then the name picked; so does
``srcad.jvp(f, (x,), (v,))[1]`` written inside (a call of ``f``'s forward-mode function by
now, returning the value and the tangent).

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.frontend import Source
>>> from srcad.transform.naming import Namer
>>> tree = gast.parse("def f(x):\\n    a, b = x\\n    return a * b").body[0]
>>> source = Source(None, tree, "f.py", 1, 0, ["def f(x):", "    a, b = x"], {})
>>> print(to_source(lower_unpacking(tree, source, Namer.for_tree(tree))), end="")
def f(x):
    if isinstance(x, (dict, set, frozenset)):
        raise TypeError('a dict or set unpacks into its keys (write list(d)): a, b = x')
    if len(x) != 2:
        raise ValueError('wrong number of values to unpack (expected 2): a, b = x')
    a = x[0]
    b = x[1]
    return a * b
"""

from __future__ import annotations

import builtins
import functools
import inspect
from collections.abc import Hashable
from typing import Any

import gast
import numpy as np

from srcad.adjoints.registry import Rule, lookup, lookup_tangent
from srcad.runtime.decompositions import split_piece
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import JVPFunction
from srcad.transform.frontend import MISSING, Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.helper_results import returned as helper_results
from srcad.transform.normalize.lists import holds_list, stored_values
from srcad.transform.normalize.tuples import split_tuples
from srcad.transform.normalize.walk import all_statements, rewrite_bodies

#: values that unpack into something other than their elements by index, or carry no
#: derivative and read better whole (``n, m = x.shape``)
_KEPT_VALUES = (gast.Tuple, gast.List, gast.Set, gast.Dict, gast.Call, gast.Starred)
_KEPT_ATTRIBUTES = {"shape", "strides"}


def lower_unpacking(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite each unpacking of one value into names as indexing (see module doc)."""
    # a loop's item bound whole (``for p in zip(x, y)``: ``p = (x[_k], y[_k])``, loops.py)
    # is one name per element, as earlier tuples were
    tree = split_tuples(tree, namer, builtin_len=source.lookup("len") is len)
    unordered = _unordered_names(tree)
    local = local_names(tree)
    kept = unordered | _iterator_names(tree, source, local)
    stores = stored_values(tree)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            copied = _unwrap_copy(stmt, source, local, kept)
            if _starred(stmt):
                out.extend(block(_note_lists(_by_star(stmt, source, namer), source, stores)))
            elif _lowered(stmt, unordered):
                lowered = _by_index(stmt, source, namer, copied)
                out.extend(block(_note_lists(lowered, source, stores)))  # (nested stars)
            elif _nested_call(stmt):
                out.extend(block(_flat_call(stmt, namer)))
            elif _nested_display(stmt):
                out.extend(block(_note_lists(_elementwise(stmt, namer), source, stores)))
            else:
                out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return tree


#: builtins whose results are iterators, which indexing would not read: ``tuple(it)`` stays
_ITERATORS = (zip, map, filter, iter, reversed, enumerate)


def _iterator_names(tree: gast.FunctionDef, source: Source, local: set[str]) -> set[str]:
    """Names bound somewhere to an iterator (``pairs = zip(a, b)``)."""
    found = set()
    for node in gast.walk(tree):
        if (
            isinstance(node, gast.Assign)
            and isinstance(node.value, gast.Call)
            and any(source.resolve(node.value.func, local) is f for f in _ITERATORS)
        ):
            found.update(
                n.id for t in node.targets for n in gast.walk(t) if isinstance(n, gast.Name)
            )
    return found


def _unwrap_copy(stmt: gast.stmt, source: Source, local: set[str], kept: set[str]) -> bool:
    """``a, b = tuple(v)`` (or ``list(v)``) as ``a, b = v``: element ``k`` of the copy is
    ``v[k]``. An iterator or a call (``tuple(zip(x, y))``) is not indexed, and keeps it.
    Whether it rewrote ``stmt``."""
    if not (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], (gast.Tuple, gast.List))
        and isinstance(stmt.value, gast.Call)
        and len(stmt.value.args) == 1
        and not stmt.value.keywords
    ):
        return False
    arg = stmt.value.args[0]
    if isinstance(arg, (gast.Call, gast.Starred)) or (
        isinstance(arg, gast.Name) and arg.id in kept
    ):
        return False
    if source.resolve(stmt.value.func, local) not in (tuple, list):
        return False
    stmt.value = arg
    return True


def _note_lists(
    stmts: list[gast.stmt], source: Source, stores: dict[str, list[gast.expr]]
) -> list[gast.stmt]:
    """Add to ``source.lists`` the names ``stmts`` bind to a list: a display, another list's
    name, a slice of one, or an element of one known to be a list (``(a, b), c = items``
    of ``items = [[u, v], w]``); indexing them then reads a list's element (``ListItem``),
    whatever the shapes of the elements."""
    for stmt in stmts:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            stores.setdefault(stmt.targets[0].id, []).append(stmt.value)
            if holds_list(stmt.value, source.lists, stores):
                source.lists.add(stmt.targets[0].id)
    return stmts


def _starred(stmt: gast.stmt) -> bool:
    """``a, *rest = v``: a starred name among the target's own elements."""
    return (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], (gast.Tuple, gast.List))
        and any(isinstance(e, gast.Starred) for e in stmt.targets[0].elts)
    )


def _by_star(stmt: gast.Assign, source: Source, namer: Namer) -> list[gast.stmt]:
    """``a, *rest, z = v`` as ``a = v[0]; rest = v[1:-1]; z = v[-1]`` for a list ``v``
    (after a length check), or element by element from a display."""
    target, value = stmt.targets[0], stmt.value
    text = (source.line_text(getanno(stmt, "origin", stmt)) or "an unpacking").rstrip(":")
    k = next(i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred))
    before, star, after = target.elts[:k], target.elts[k].value, target.elts[k + 1 :]
    fixed = len(before) + len(after)
    out: list[gast.stmt] = []
    if isinstance(value, (gast.Tuple, gast.List)) and not any(
        isinstance(e, gast.Starred) for e in value.elts
    ):
        if len(value.elts) < fixed:
            raise source.error(
                f"not enough values to unpack (expected at least {fixed}, got {len(value.elts)})",
                stmt,
            )
        temps = [namer.temp() for _ in value.elts]  # every value read before names change
        out += [build.assign(t, v) for t, v in zip(temps, value.elts)]
        loads = [build.load(t) for t in temps]
        rest = gast.List(elts=loads[len(before) : len(loads) - len(after)], ctx=gast.Load())
        pairs = [*zip(before, loads), (star, rest), *zip(after, loads[len(loads) - len(after) :])]
        out += [build.assign(t, v) for t, v in pairs]
    elif isinstance(value, gast.Name) and value.id in source.lists:
        bound = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        if value.id in bound:
            temp = namer.temp()
            out.append(build.assign(temp, value))
            value = build.load(temp)
        out.append(_length_check(value, fixed, text, source, namer, at_least=True))

        def item(index: gast.expr) -> gast.Subscript:
            return gast.Subscript(value=build.load(value.id), slice=index, ctx=gast.Load())

        end = build.const(-len(after)) if after else None
        middle = gast.Slice(lower=build.const(len(before)), upper=end, step=None)
        out += [build.assign(e, item(build.const(j))) for j, e in enumerate(before)]
        out.append(build.assign(star, item(middle)))
        out += [build.assign(e, item(build.const(j - len(after)))) for j, e in enumerate(after)]
    else:
        raise source.error(
            "starred unpacking ('a, *rest = x') is supported for a list built in the "
            "function or a display; here index and slice instead ('a = x[0]; rest = x[1:]')",
            stmt,
        )
    return _located(out, stmt)


def _located(out: list[gast.stmt], stmt: gast.stmt) -> list[gast.stmt]:
    """``out``, the statements ``stmt`` became, at its place and with its origin."""
    origin = getanno(stmt, "origin", stmt)
    for new in out:
        for node in gast.walk(new):
            if isinstance(node, (gast.stmt, gast.expr)):
                gast.copy_location(node, stmt)
        setanno(new, "origin", origin)
    return out


def _nested_display(stmt: gast.stmt) -> bool:
    """``a, (b, c) = u, v``: a display unpacked into a nested target."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return False
    target, value = stmt.targets[0], stmt.value
    return (
        isinstance(target, (gast.Tuple, gast.List))
        and _names_only(target)
        and not all(isinstance(e, gast.Name) for e in target.elts)
        and isinstance(value, (gast.Tuple, gast.List))
        and len(value.elts) == len(target.elts)
        and not any(isinstance(e, gast.Starred) for e in value.elts)
    )


def _nested_call(stmt: gast.stmt) -> bool:
    """``(a, b), r = g(x)``: a call unpacked into a nested target (generated code's call
    of a custom_vjp ``fwd`` returning several outputs)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return False
    target = stmt.targets[0]
    return (
        isinstance(stmt.value, gast.Call)
        and isinstance(target, (gast.Tuple, gast.List))
        and _names_only(target)
        and not all(isinstance(e, gast.Name) for e in target.elts)
    )


def _flat_call(stmt: gast.Assign, namer: Namer) -> list[gast.stmt]:
    """``(a, b), r = g(x)`` as ``_t1, r = g(x); a, b = _t1``."""
    temps: dict[int, str] = {}
    elts = []
    for k, elt in enumerate(stmt.targets[0].elts):
        if isinstance(elt, gast.Name):
            elts.append(elt)
        else:
            temps[k] = namer.temp()
            elts.append(build.store(temps[k]))
    out = [build.assign(build.tuple_(elts, gast.Store()), stmt.value)]
    out += [build.assign(stmt.targets[0].elts[k], build.load(t)) for k, t in temps.items()]
    origin = getanno(stmt, "origin", stmt)
    for new in out:
        gast.copy_location(new, stmt)
        setanno(new, "origin", origin)
    return out


def _elementwise(stmt: gast.Assign, namer: Namer) -> list[gast.stmt]:
    """``a, (b, c) = u, v`` as ``_t1 = u; _t2 = v; a = _t1; (b, c) = _t2``: every value is
    computed before any name changes."""
    pairs: list[tuple[gast.expr, gast.expr]] = []

    def pair(target: gast.expr, value: gast.expr) -> None:
        # ``(a, b) = (u, v)`` nested inside: its elements paired too (a temp holding the
        # display would be a tuple of differentiable values)
        if (
            isinstance(target, (gast.Tuple, gast.List))
            and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)
            and not any(isinstance(e, gast.Starred) for e in value.elts)
        ):
            for t, v in zip(target.elts, value.elts):
                pair(t, v)
        else:
            pairs.append((target, value))

    for target, value in zip(stmt.targets[0].elts, stmt.value.elts):
        pair(target, value)
    temps = [namer.temp() for _ in pairs]
    out = [build.assign(t, v) for t, (_, v) in zip(temps, pairs)]
    out += [build.assign(e, build.load(t)) for (e, _), t in zip(pairs, temps)]
    origin = getanno(stmt, "origin", stmt)
    for new in out:
        gast.copy_location(new, stmt)
        setanno(new, "origin", origin)
    return out


def _lowered(stmt: gast.stmt, unordered: set[str]) -> bool:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return False
    target, value = stmt.targets[0], stmt.value
    if not isinstance(target, (gast.Tuple, gast.List)) or not _names_only(target, stars=True):
        return False
    if isinstance(value, _KEPT_VALUES):
        return False
    if isinstance(value, gast.Attribute) and value.attr in _KEPT_ATTRIBUTES:
        return False
    return not (isinstance(value, gast.Name) and value.id in unordered)


def _names_only(target: gast.expr, stars: bool = False) -> bool:
    """Whether ``target`` is names and nested tuples of names (``stars``: or ``*rest``
    inside a nested one, ``(a, *rest), b = v``)."""
    if isinstance(target, gast.Name):
        return True
    if not isinstance(target, (gast.Tuple, gast.List)):
        return False
    return all(
        (stars and isinstance(e, gast.Starred) and isinstance(e.value, gast.Name))
        or _names_only(e, stars)
        for e in target.elts
    )


def _unordered_names(tree: gast.FunctionDef) -> set[str]:
    """Names bound to a dict or a set somewhere: unpacking one reads keys, not ``d[0]``."""
    found = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Assign) and _is_unordered(node.value):
            found.update(
                n.id for t in node.targets for n in gast.walk(t) if isinstance(n, gast.Name)
            )
    return found


def _is_unordered(value: gast.expr) -> bool:
    if isinstance(value, (gast.Dict, gast.Set, gast.DictComp, gast.SetComp)):
        return True
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id in ("dict", "set", "frozenset")
    )


def _by_index(
    stmt: gast.Assign, source: Source, namer: Namer, copied: bool = False
) -> list[gast.stmt]:
    """``a, (b, c) = v`` as checks and ``a = v[0]; _t = v[1]; b = _t[0]; c = _t[1]``
    (``copied``: ``v`` was ``tuple(v)`` or ``list(v)``, for the message of a dict's keys)."""
    target, value = stmt.targets[0], stmt.value
    text = source.line_text(getanno(stmt, "origin", stmt)) or "an unpacking"
    out: list[gast.stmt] = []
    bound = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
    reads = {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
    if not isinstance(value, gast.Name) or value.id in bound or bound & reads:
        # the value is read once, before any name of the target changes
        temp = namer.temp()
        out.append(build.assign(temp, value))
        value = build.load(temp)

    def unpack(target: gast.expr, value: gast.Name, copied: bool = False) -> None:
        out.append(_unordered_check(value, text, source, namer, copied))
        out.append(_length_check(value, len(target.elts), text, source, namer))
        for k, elt in enumerate(target.elts):
            item = gast.Subscript(value=build.load(value.id), slice=build.const(k), ctx=gast.Load())
            if isinstance(elt, gast.Name):
                out.append(build.assign(elt.id, item))
            else:
                temp = namer.temp()
                out.append(build.assign(temp, item))
                if any(isinstance(e, gast.Starred) for e in elt.elts):
                    out.append(build.assign(elt, build.load(temp)))  # for _by_star
                else:
                    unpack(elt, build.load(temp))

    unpack(target, value, copied)
    return _located(out, stmt)


def _length_check(
    value: gast.Name, count: int, text: str, source: Source, namer: Namer, at_least: bool = False
) -> gast.If:
    """``if len(value) != count: raise ValueError(...)``, as Python's unpacking raises
    (``< count`` for a target with a starred name)."""
    length = _builtin("len", source, namer)
    error = _builtin("ValueError", source, namer)
    test = gast.Compare(
        left=build.call(length, build.load(value.id)),
        ops=[gast.Lt() if at_least else gast.NotEq()],
        comparators=[build.const(count)],
    )
    expected = f"at least {count}" if at_least else str(count)
    message = f"wrong number of values to unpack (expected {expected}): {text.rstrip(':')}"
    fail = gast.Raise(exc=build.call(error, build.const(message)), cause=None)
    return gast.If(test=test, body=[fail], orelse=[])


def _unordered_check(
    value: gast.Name, text: str, source: Source, namer: Namer, copied: bool = False
) -> gast.If:
    """``if isinstance(value, (dict, set, frozenset)): raise TypeError(...)``: those unpack
    into their keys, which indexing would not give (a dict argument with keys 0, 1);
    ``copied``: the unpacked value was ``tuple(value)`` or ``list(value)``."""
    test = build.call(
        _builtin("isinstance", source, namer),
        build.load(value.id),
        gast.Tuple(
            elts=[_builtin(n, source, namer) for n in ("dict", "set", "frozenset")], ctx=gast.Load()
        ),
    )
    message = f"a dict or set unpacks into its keys (write list(d)): {text.rstrip(':')}"
    if copied:
        message = (
            "unpacking tuple() or list() of a dict or set (its keys) is not supported; "
            f"unpack the keys written out: {text.rstrip(':')}"
        )
    fail = gast.Raise(
        exc=build.call(_builtin("TypeError", source, namer), build.const(message)), cause=None
    )
    return gast.If(test=test, body=[fail], orelse=[])


def _builtin(name: str, source: Source, namer: Namer) -> gast.Name:
    """A builtin by a name the user's code does not shadow."""
    return build.load(source.bind(namer, getattr(builtins, name), name))


# ---- picking one result of an op with several ----


def pick_results(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite each ``op(...)[k]`` / ``op(...).field`` of a multi-result op (module doc)."""
    picker = _Picker(source, namer, local_names(tree))
    picker.name_results(tree)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            picker.before = []
            picker.origin = getanno(stmt, "origin", stmt)
            for part in _evaluated_once(stmt):
                owner, field = part
                setattr(owner, field, picker.visit(getattr(owner, field)))
            out.extend(picker.before)
            out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return tree


def pieces_as_lists(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """A split into a constant number of pieces held by a name read other than by constant
    indices (``parts = np.split(x, 3)``, then ``parts[k]`` or ``for p in parts``), or looped
    over (``for p in np.split(x, 3)``, also in ``enumerate``, ``zip``, ...): the pieces
    unpacked into names and held by a list display, which the passes of lists then read
    (run before them)."""
    picker = _Picker(source, namer, local_names(tree))
    stores, reads, parents = _name_uses(tree)

    def picked_only(name: str) -> bool:
        """Whether every read of ``name`` picks with a constant index (``r[1]``)."""
        return all(
            isinstance(parent := parents.get(id(use)), gast.Subscript)
            and parent.value is use
            and _constant_int(parent.slice) is not None
            for use in reads.get(name, [])
        )

    def unpacked(call: gast.expr, before: list[gast.stmt], origin: gast.stmt) -> gast.expr:
        """``call``'s pieces as a list display of fresh names, unpacked in ``before``."""
        if not isinstance(call, gast.Call) or _SPLITS.get(_op(source, call, picker.local)) is None:
            return call
        names = picker.results(call)
        if names is None:
            return call
        fresh = [namer.fresh_temp(n) for n in names]
        targets = build.tuple_([build.store(n) for n in fresh], gast.Store())
        before.append(gast.copy_location(build.assign(targets, call), origin))
        return gast.copy_location(gast.List([build.load(n) for n in fresh], gast.Load()), call)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            before: list[gast.stmt] = []
            if (
                isinstance(stmt, gast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and stores.get(stmt.targets[0].id) == 1
                and not picked_only(stmt.targets[0].id)
            ):
                stmt.value = unpacked(stmt.value, before, stmt)
            elif isinstance(stmt, gast.For):
                stmt.iter = unpacked(stmt.iter, before, stmt)
                if isinstance(stmt.iter, gast.Call) and _op(source, stmt.iter, picker.local) in (
                    builtins.enumerate,
                    builtins.zip,
                    builtins.reversed,
                    builtins.list,
                    builtins.tuple,
                ):
                    stmt.iter.args = [unpacked(a, before, stmt) for a in stmt.iter.args]
            out.extend(before)
            out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return tree


def _name_uses(
    tree: gast.FunctionDef,
) -> tuple[dict[str, int], dict[str, list[gast.Name]], dict[int, gast.AST]]:
    """How often each name is bound (any context but a read), its reads, and each node's
    parent (by ``id``)."""
    stores: dict[str, int] = {}
    reads: dict[str, list[gast.Name]] = {}
    parents: dict[int, gast.AST] = {}
    for node in gast.walk(tree):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Load):
                reads.setdefault(node.id, []).append(node)
            else:
                stores[node.id] = stores.get(node.id, 0) + 1
    return stores, reads, parents


def _op(source: Source, call: gast.Call, local: set[str]) -> Any:
    op = source.resolve(call.func, local)
    return op if isinstance(op, Hashable) else None


def _evaluated_once(stmt: gast.stmt) -> list[tuple[gast.AST, str]]:
    """The expressions of ``stmt`` that run once, before it takes effect (a ``while``'s
    test runs again on every turn: calls in it stay there)."""
    if isinstance(stmt, gast.Assign):
        return [(stmt, "value")]
    if isinstance(stmt, (gast.Return, gast.Expr)) and stmt.value is not None:
        return [(stmt, "value")]
    if isinstance(stmt, gast.If):
        return [(stmt, "test")]
    if isinstance(stmt, gast.For):
        return [(stmt, "iter")]
    return []


class _Picker(Transformer):
    def __init__(self, source: Source, namer: Namer, local: set[str]) -> None:
        self.source = source
        self.namer = namer
        self.local = local
        self.before: list[gast.stmt] = []
        self.origin: gast.stmt | None = None

    # parts that may not run (``a if c else b``, ``a and b``) keep their calls
    def visit_IfExp(self, node: gast.IfExp) -> gast.expr:
        node.test = self.visit(node.test)
        return node

    def visit_BoolOp(self, node: gast.BoolOp) -> gast.expr:
        node.values[0] = self.visit(node.values[0])
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.expr:
        return node

    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        self.generic_visit(node)
        k = _constant_int(node.slice)
        if not isinstance(node.value, gast.Call):
            return node
        names = self.results(node.value)
        if k is None or names is None or not -len(names) <= k < len(names):
            return self.piece(node) or node
        return self.picked(node, names, names[k])

    def piece(self, node: gast.Subscript) -> gast.Call | None:
        """``np.split(x, n)[k]`` with ``k`` (or the count) known only at run time: the piece
        picked then, ``split_piece(x, k, n, axis)``, one op with a rule."""
        call = node.value
        op = _op(self.source, call, self.local)
        form = _SPLITS.get(op)
        if form is None or isinstance(node.slice, (gast.Slice, gast.Tuple)):
            return None
        try:
            bound = inspect.signature(op).bind(
                *call.args, **{k.arg: k.value for k in call.keywords}
            )
        except TypeError:
            return None  # (as NumPy would: refused as before)
        values = list(bound.arguments.values())
        if any(isinstance(v, gast.Starred) for v in call.args):
            return None
        even, axis = form
        axis = bound.arguments.get("axis", build.const(0)) if axis is None else build.const(axis)
        func = self.source.bind(self.namer, split_piece, "split_piece")
        args = [values[0], node.slice, values[1], axis, build.const(even)]
        return gast.copy_location(build.call(func, *args), node)

    def visit_Attribute(self, node: gast.Attribute) -> gast.expr:
        self.generic_visit(node)
        if not isinstance(node.value, gast.Call):
            return node
        op = self.source.resolve(node.value.func, self.local)
        fields = _fields(op)
        if node.attr not in fields:
            return node
        names = self.results(node.value)
        if names is None or len(names) != len(fields):
            return node
        return self.picked(node, names, names[fields.index(node.attr)])

    def name_results(self, tree: gast.FunctionDef) -> None:
        """``r = op(a)`` of a multi-result op, ``r`` assigned there alone and read only as
        ``r[k]`` or ``r.field``: one name per result (``r_0, r_1 = op(a)``), each read
        by name (``r = np.linalg.eigh(A); r.eigenvalues``)."""
        stores, reads, parents = _name_uses(tree)
        params = {a.id for a in tree.args.args + tree.args.posonlyargs + tree.args.kwonlyargs}
        renames: dict[int, str] = {}
        for stmt in all_statements(tree.body):
            if not (
                isinstance(stmt, gast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Call)
            ):
                continue
            name = stmt.targets[0].id
            names = self.results(stmt.value)
            if names is None or stores.get(name) != 1 or name in params:
                continue
            fields = _fields(self.source.resolve(stmt.value.func, self.local))
            picks: dict[int, int] = {}
            for use in reads.get(name, []):
                parent = parents.get(id(use))
                k = None
                if isinstance(parent, gast.Subscript) and parent.value is use:
                    k = _constant_int(parent.slice)
                    k = k % len(names) if k is not None and -len(names) <= k < len(names) else None
                elif isinstance(parent, gast.Attribute) and len(fields) == len(names):
                    k = fields.index(parent.attr) if parent.attr in fields else None
                if k is None:
                    break
                picks[id(parent)] = k
            else:
                if not picks:
                    continue
                fresh = [self.namer.fresh(f"{name}_{result}") for result in names]
                stmt.targets = [build.tuple_([build.store(n) for n in fresh], gast.Store())]
                renames.update((key, fresh[k]) for key, k in picks.items())
        if renames:
            _ReadByName(renames).visit(tree)

    def results(self, call: gast.Call) -> list[str] | None:
        """Fresh names, one per result of ``call``, if it is an op with several results and
        their count is written in the call."""
        op = self.source.resolve(call.func, self.local)
        if op is MISSING:
            return None
        if isinstance(op, JVPFunction):
            return ["value", "tangent"]  # ``srcad.jvp(f, ...)[1]`` written inside
        count = getattr(op, "srcad_results", None)  # a handle's function (calls.py)
        if isinstance(count, int):
            return [f"result{k}" for k in range(count)]
        returned = helper_results(op)  # a helper returning a display: one per element
        if returned is not None and returned[0] is not gast.Name:
            return [f"result{k}" for k in range(returned[1])]
        rule = lookup(op) or lookup_tangent(op)
        if rule is None or not rule.results:
            return None
        count = _count(rule, call)
        if count is None:
            return None
        if rule.variadic:
            base = rule.results[0].removesuffix("s")
            return [f"{base}{k}" for k in range(count)]
        return list(rule.results)

    def picked(self, node: gast.expr, names: list[str], chosen: str) -> gast.Name:
        fresh = [self.namer.fresh_temp(name) for name in names]
        targets = build.tuple_([build.store(n) for n in fresh], gast.Store())
        unpacked = gast.copy_location(build.assign(targets, node.value), node)
        setanno(unpacked, "origin", self.origin)
        self.before.append(unpacked)
        return gast.copy_location(build.load(fresh[names.index(chosen)]), node)


class _ReadByName(Transformer):
    """Each picked ``r[k]`` / ``r.field`` (by ``id``) as the name holding that result."""

    def __init__(self, renames: dict[int, str]) -> None:
        self.renames = renames

    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        name = self.renames.get(id(node))
        return gast.copy_location(build.load(name), node) if name else self.generic_visit(node)

    visit_Attribute = visit_Subscript  # type: ignore[assignment]


#: the splits picked at run time: whether the pieces must be even, and the axis ("h",
#: "v", "d" for np.hsplit's and the others'; None: the call's own)
_SPLITS = {
    np.split: (True, None),
    np.array_split: (False, None),
    np.hsplit: (True, "h"),
    np.vsplit: (True, "v"),
    np.dsplit: (True, "d"),
}


def _constant_int(node: gast.expr) -> int | None:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        k = _constant_int(node.operand)
        return None if k is None else -k
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None


def _count(rule: Rule, call: gast.Call) -> int | None:
    """How many results ``call`` of ``rule``'s op has, if its arguments say (a split into a
    constant number of pieces, or at a constant list of indices)."""
    try:
        bound = rule.signature.bind(*call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return None  # arguments the rule does not take may change the results
    if not rule.variadic:
        return len(rule.results)
    if len(rule.operands) < 2 or rule.operands[1] not in bound.arguments:
        return None
    sections = bound.arguments[rule.operands[1]]
    count = _constant_int(sections)
    if count is not None:
        return count if count > 0 else None
    if isinstance(sections, (gast.Tuple, gast.List)):
        if all(_constant_int(e) is not None for e in sections.elts):
            return len(sections.elts) + 1
    return None


_PROBED = (np.linalg.slogdet, np.linalg.eigh, np.linalg.svd, np.linalg.qr, np.linalg.eig)


@functools.cache
def _probe_fields(op: Any) -> tuple[str, ...]:
    return tuple(getattr(op(np.eye(2)), "_fields", ()))


def _fields(op: Any) -> tuple[str, ...]:
    """The field names of the named tuple NumPy's ``op`` returns (NumPy 2), if any."""
    if not any(op is probed for probed in _PROBED):
        return ()
    return _probe_fields(op)
