"""A dict spread whose keys are known where the function starts, ``f(**d)`` and ``{**d, "b":
v}``, written out key by key (``f(a=d["a"], b=d["b"])``) before your functions are written
out, so that a call spreading a dict is one srcad can inline (second order): of a pytree
argument holding a dict, or of a dict the function makes once with constant keys and only
reads or stores those keys of. Other spreads of dicts the function builds are written out
with the dicts (``normalize/dicts.py``)."""

from __future__ import annotations

from typing import Any

import gast

from srcad.transform import build
from srcad.transform.naming import Namer
from srcad.transform.normalize.dicts import spread_by
from srcad.transform.normalize.walk import rewrite_bodies


def spread_known_keys(
    tree: gast.FunctionDef, structures: dict[str, Any], namer: Namer
) -> gast.FunctionDef:
    """``tree`` with the spreads of dicts of known keys written out."""
    args = tree.args
    params = {a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    made = {
        s.targets[0].id
        for s in gast.walk(tree)
        if isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Dict)
        and None not in s.value.keys
    }
    tree.body = rewrite_bodies(
        tree.body, lambda body: _stores_for_updates(body, made - params, namer)
    )
    parents = {id(c): n for n in gast.walk(tree) for c in gast.iter_child_nodes(n)}
    stores: dict[str, int] = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
    keys_of = {
        name: treedef[2]
        for name, treedef in structures.items()
        if treedef[0] == "dict" and not stores.get(name)
    }
    for stmt in gast.walk(tree):
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Dict)
            and stores.get(stmt.targets[0].id) == 1
            and all(isinstance(k, gast.Constant) for k in stmt.value.keys)
        ):
            keys_of[stmt.targets[0].id] = tuple(k.value for k in stmt.value.keys)
    for node in gast.walk(tree):
        # a dict some use may change the keys of (d.update(...), d["new"] = v): left to dicts.py
        if isinstance(node, gast.Name) and node.id in keys_of and isinstance(node.ctx, gast.Load):
            if not _keeps_keys(node, parents.get(id(node)), keys_of[node.id]):
                del keys_of[node.id]
    for node in list(gast.walk(tree)):
        if isinstance(node, gast.Call):
            node.keywords = [new for kw in node.keywords for new in _keywords(kw, keys_of)]
        elif isinstance(node, gast.Dict):
            entries = [e for k, v in zip(node.keys, node.values) for e in _entries(k, v, keys_of)]
            # a key written again later wins, as in Python: the spread's read of it goes
            later = [
                {k.value for k, _ in entries[i + 1 :] if isinstance(k, gast.Constant)}
                for i in range(len(entries))
            ]
            entries = [
                (k, v)
                for (k, v), after in zip(entries, later)
                if not (getattr(v, "spread", False) and k.value in after)
            ]
            node.keys = [k for k, _ in entries]
            node.values = [v for _, v in entries]
    return tree


def _keeps_keys(use: gast.Name, parent: gast.AST | None, keys: tuple) -> bool:
    if isinstance(parent, gast.Subscript) and parent.value is use:
        return isinstance(parent.slice, gast.Constant) and parent.slice.value in keys
    return spread_by(use, parent)


def _read(name: str, key: object) -> gast.Subscript:
    return gast.Subscript(value=build.load(name), slice=build.const(key), ctx=gast.Load())


def _keywords(kw: gast.keyword, keys_of: dict[str, tuple]) -> list[gast.keyword]:
    value = kw.value
    if kw.arg is not None or not isinstance(value, gast.Name) or value.id not in keys_of:
        return [kw]
    keys = keys_of[value.id]
    if not all(isinstance(k, str) and k.isidentifier() for k in keys):
        return [kw]  # (refused where the dict is written out)
    return [gast.copy_location(gast.keyword(arg=k, value=_read(value.id, k)), kw) for k in keys]


def _entries(key: gast.expr | None, value: gast.expr, keys_of: dict[str, tuple]) -> list:
    if key is not None or not isinstance(value, gast.Name) or value.id not in keys_of:
        return [(key, value)]
    entries = [(build.const(k), _read(value.id, k)) for k in keys_of[value.id]]
    for _, read in entries:
        read.spread = True  # (a read with no effect: dropped where the key comes again)
    return entries


def _stores_for_updates(body: list[gast.stmt], made: set[str], namer: Namer) -> list[gast.stmt]:
    """``d = {**d, "h": v}`` of a dict the function makes (``made``: ``d = {...}``, not a
    parameter): the keys stored into it, ``d["h"] = v`` (values first, as the display
    computes them all before ``d`` is bound again). Nothing else may hold the old dict: a
    dict srcad follows has no other name (it refuses one), so the two are alike."""
    out: list[gast.stmt] = []
    for stmt in body:
        value = stmt.value if isinstance(stmt, gast.Assign) else None
        if not (
            isinstance(value, gast.Dict)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id in made
            and value.keys
            and value.keys[0] is None
            and isinstance(value.values[0], gast.Name)
            and value.values[0].id == stmt.targets[0].id
            and all(isinstance(k, gast.Constant) for k in value.keys[1:])
        ):
            out.append(stmt)
            continue
        name = stmt.targets[0].id
        pairs = list(zip(value.keys[1:], value.values[1:]))
        if len(pairs) > 1:
            temps = [namer.temp() for _ in pairs]
            out += [gast.copy_location(build.assign(t, v), stmt) for t, (_, v) in zip(temps, pairs)]
            pairs = [(k, build.load(t)) for t, (k, _) in zip(temps, pairs)]
        for key, new in pairs:
            target = gast.Subscript(value=build.load(name), slice=key, ctx=gast.Store())
            out.append(gast.copy_location(build.assign(target, new), stmt))
    return out
