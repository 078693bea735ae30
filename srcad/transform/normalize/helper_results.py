"""A helper's several results taken into one name, and a helper's list unpacked.

A helper returning a tuple or list display has one result per element: its derivative
takes one cotangent per element. ``state = cell(x)`` (one name for ``return h, c``)
becomes ``state_0, state_1 = cell(x); state = (state_0, state_1)``, which split_tuples
then follows like any tuple name (``state[0]``, ``h, c = state``); a list display gives a
list (``[state_0, state_1]``). A helper returning a list by name (a display, or built up
by appends) has one result, a list: ``a, b = parts(x)`` becomes ``parts_result =
parts(x); a, b = parts_result``, unpacked by index (lists.py takes a name bound to such a
call for a list).

What the helper returns is read from its source: every ``return`` a flat display of one
length and kind, a name bound only to tuple displays of one length, or a name bound only
to list displays and never changed. Other helpers are left as they are (their derivative
says how many results they have).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import gast

from srcad.errors import SourceUnavailableError
from srcad.runtime.calls import DictResults, FlatCall
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import user_callee
from srcad.transform.frontend import MISSING, Source, parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import all_statements, rewrite_bodies

_DISPLAYS = (gast.Tuple, gast.List)
#: each helper's parsed source (read, never changed), by its code: a function calls its
#: helpers at many sites
_TREES: dict[Any, gast.FunctionDef | None] = {}


def split_helper_results(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite the calls of helpers whose results the target does not match (module doc)."""
    local = local_names(tree)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            out.extend(_rewritten(stmt, source, namer, local) or [stmt])
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return tree


def _rewritten(stmt: gast.stmt, source: Source, namer: Namer, local: set[str]) -> list | None:
    if not (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.value, gast.Call)
    ):
        return None
    callee = source.resolve(stmt.value.func, local)
    keys = returned_keys(callee)
    if keys is not None and isinstance(stmt.targets[0], gast.Name):
        return _dict_values(stmt, callee, keys, source, namer)
    results = returned(callee) or ((gast.Name, 1) if returns_list(callee) else None)
    if results is None:
        return None
    kind, count = results
    target = stmt.targets[0]
    origin = getanno(stmt, "origin", stmt)
    if isinstance(target, gast.Name) and count > 1:
        parts = [namer.fresh(f"{target.id}_{k}") for k in range(count)]
        unpack = build.assign(
            build.tuple_([build.store(p) for p in parts], gast.Store()), stmt.value
        )
        elts = [build.load(p) for p in parts]
        display = gast.List(elts=elts, ctx=gast.Load()) if kind is gast.List else build.tuple_(elts)
        whole = build.assign(build.store(target.id), display)
    elif isinstance(target, _DISPLAYS) and count == 1 and kind is gast.Name:
        result = namer.fresh(f"{_name(stmt.value.func)}_result")
        unpack = build.assign(build.store(result), stmt.value)
        whole = build.assign(target, build.load(result))
    else:
        return None
    for new in (unpack, whole):
        gast.copy_location(new, stmt)
        setanno(new, "origin", origin)
    return [unpack, whole]


def _dict_values(
    stmt: gast.Assign, callee: Any, keys: tuple, source: Source, namer: Namer
) -> list[gast.stmt]:
    """``d = encode(x)`` of a helper returning ``{"mean": m, "logvar": lv}``: ``d_mean,
    d_logvar = encode_values(x); d = {"mean": d_mean, "logvar": d_logvar}``, the call one of
    a :class:`DictResults`, so the dict is one name per key (dicts.py) and the helper's
    derivative takes one cotangent per value."""
    target = stmt.targets[0].id
    parts = [namer.fresh(f"{target}_{_key_name(k, n)}") for n, k in enumerate(keys)]
    results = next(
        (
            g
            for g in namer.globals.values()
            if isinstance(g, DictResults) and g.fun is callee and g.keys == keys
        ),
        None,
    ) or DictResults(callee, keys)
    name = namer.bind_global(results, f"{_name(stmt.value.func)}_values")
    source.namespace[name] = results
    call = gast.Call(
        func=build.load(name),
        args=stmt.value.args,
        keywords=stmt.value.keywords,
    )
    gast.copy_location(call, stmt.value)
    unpack = build.assign(build.tuple_([build.store(p) for p in parts], gast.Store()), call)
    values = [build.load(p) for p in parts]
    for value in values:
        setanno(value, "dict_part", True)  # dicts.py takes these names for the keys
    display = gast.Dict(keys=[build.const(k) for k in keys], values=values)
    whole = build.assign(build.store(target), display)
    origin = getanno(stmt, "origin", stmt)
    for new in (unpack, whole):
        gast.copy_location(new, stmt)
        setanno(new, "origin", origin)
    return [unpack, whole]


def _key_name(key: object, position: int) -> str:
    text = str(key)
    return text if text.isidentifier() else str(position)


def returned_keys(obj: Any) -> tuple | None:
    """The keys, in order, of the dict display every ``return`` of a plain Python helper
    (or a partial or bound method of one) gives: the same constant keys each time, no
    value a display itself; None otherwise."""
    if isinstance(obj, FlatCall) and not inspect.isfunction(obj.fun):
        return None
    if isinstance(obj, functools.partial) or inspect.ismethod(obj):
        found = user_callee(obj)  # its handles pass the bound arguments on
        obj = found[0] if found is not None else None
    tree = _helper_tree(obj)
    returns = _returns(tree) if tree is not None else []
    nested = (*_DISPLAYS, gast.Dict, gast.Starred)
    if any(isinstance(v, nested) for r in returns for v in getattr(r, "values", [])):
        return None  # nested: its leaves are not its values
    return shared_keys(returns)


def shared_keys(values: list[gast.expr]) -> tuple | None:
    """The keys of ``values`` when each is a dict display of the same distinct constant
    keys, in the same order; None otherwise (``**other``, a computed key, another value)."""
    found = {
        tuple(k.value for k in v.keys)
        if isinstance(v, gast.Dict) and all(isinstance(k, gast.Constant) for k in v.keys)
        else None
        for v in values
    }
    if len(found) != 1 or None in found:
        return None
    keys = found.pop()
    return keys if len(set(keys)) == len(keys) else None


def _name(func: gast.expr) -> str:
    return func.id if isinstance(func, gast.Name) else getattr(func, "attr", "call")


def returned(obj: Any) -> tuple[type, int] | None:
    """``(gast.Tuple or gast.List, n)`` for a helper every ``return`` of which is a flat
    display of n elements of that kind; ``(gast.Name, 1)`` for one returning only names
    it binds to list displays and never changes; None otherwise (or not a plain Python
    helper)."""
    tree = _helper_tree(obj)
    returns = _returns(tree) if tree is not None else []
    if not returns:
        return None
    bound: list[gast.expr] = []
    if all(isinstance(r, gast.Name) for r in returns):
        names = {r.id for r in returns}
        bound = _bound(tree, names)
        if bound and all(isinstance(v, gast.List) and v.elts for v in bound):
            if not _changed(tree, names):
                return gast.Name, 1  # a list display, returned by name
        returns = bound  # a tuple split into one name per element (split_tuples)
    if returns and all(isinstance(r, _DISPLAYS) for r in returns):
        kinds = {type(r) for r in returns}
        lengths = {len(r.elts) for r in returns}
        nested = any(
            isinstance(e, (*_DISPLAYS, gast.Dict, gast.Starred)) for r in returns for e in r.elts
        )
        if kinds == {gast.Tuple} or (kinds == {gast.List} and returns is not bound):
            if len(lengths) == 1 and not nested:
                return kinds.pop(), lengths.pop()
    return None


def returns_list(obj: Any) -> bool:
    """Whether ``obj`` is a plain Python helper that returns, at every ``return``, a name
    it binds only to list displays (empty ones too, appended to): its one result a list."""
    tree = _helper_tree(obj)
    returns = _returns(tree) if tree is not None else []
    if not returns or not all(isinstance(r, gast.Name) for r in returns):
        return False
    bound = _bound(tree, {r.id for r in returns})
    return bool(bound) and all(isinstance(v, gast.List) for v in bound)


def returns_dict(obj: Any) -> bool:
    """Whether a plain Python helper returns a dict display or comprehension somewhere."""
    tree = _helper_tree(obj)
    returns = _returns(tree) if tree is not None else []
    return any(isinstance(r, (gast.Dict, gast.DictComp)) for r in returns)


def _helper_tree(obj: Any) -> gast.FunctionDef | None:
    """The parsed source of a plain Python helper with no function inside (whose returns
    would not be the helper's); None for anything else."""
    if isinstance(obj, FlatCall):
        obj = obj.fun  # displays passed to it element by element (display_arguments.py)
    if obj is MISSING or not inspect.isfunction(obj):
        return None
    callee = user_callee(obj)
    if callee is None or callee[0] is not obj:
        return None
    tree = parsed_tree(obj)
    inner = (gast.FunctionDef, gast.Lambda)
    if tree is None or any(isinstance(n, inner) for n in gast.walk(tree) if n is not tree):
        return None
    return tree


def parsed_tree(func: Any) -> gast.FunctionDef | None:
    """The parsed source of the Python function ``func`` (None without source), parsed
    once per code object: read by the passes, never changed."""
    code = func.__code__
    if code not in _TREES:
        if len(_TREES) > 256:
            _TREES.clear()
        try:
            _TREES[code] = parse_function(func).tree
        except SourceUnavailableError:
            _TREES[code] = None
    return _TREES[code]


def _returns(tree: gast.FunctionDef) -> list[gast.expr]:
    return [
        s.value
        for s in all_statements(tree.body)
        if isinstance(s, gast.Return) and s.value is not None
    ]


def _bound(tree: gast.FunctionDef, names: set[str]) -> list[gast.expr]:
    """The values the helper binds ``names`` to (an augmented assignment's too)."""
    return [
        s.value
        for s in all_statements(tree.body)
        if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign))
        and any(
            isinstance(n, gast.Name) and n.id in names
            for t in (s.targets if isinstance(s, gast.Assign) else [s.target])
            for n in gast.walk(t)
        )
    ]


def _changed(tree: gast.FunctionDef, names: set[str]) -> bool:
    """Whether a method of one of ``names`` is called (``out.append(v)``) or one is
    extended (``out += vs``): a list built up, whose derivative takes its gradient as a
    list (a list the caller cannot yet give)."""
    for node in gast.walk(tree):
        if (
            isinstance(node, gast.Attribute)
            and isinstance(node.value, gast.Name)
            and node.value.id in names
        ):
            return True
        if isinstance(node, gast.AugAssign) and getattr(node.target, "id", None) in names:
            return True
    return False
