"""Dicts built in the function with constant keys become one variable per key.

``d = {"a": u}; d["b"] = v; return np.sum(d["a"] * d["b"])`` becomes ``d_a = u; d_b = v;
return np.sum(d_a * d_b)``, which the later passes differentiate like any names
(``dict(a=u)`` reads as ``{"a": u}``). Besides ``d[k]`` (read or assigned; ``d[k] += v`` is
already ``d[k] = d[k] + v``) a dict may be read by ``d.get(k, default)``, ``k in d``,
``len(d)``, ``for ... in d`` (or ``d.keys()``, ``d.values()``, ``d.items()``) and ``return
d`` (rebuilt as a display), where the keys it holds there are known. Any other use of such
a dict is refused.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

import gast

from srcad.transform import build
from srcad.transform.analyses.tbr import positions
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import own_parts, rewrite_bodies

_VIEWS = ("keys", "values", "items")


@dataclass
class _Use:
    """One occurrence of the dict's name: what reads it, in which statement, where."""

    node: gast.Name
    parent: gast.AST
    grand: gast.AST | None
    stmt: gast.stmt
    path: tuple


@dataclass
class _Dict:
    name: str
    made: gast.Assign
    path: tuple
    in_loop: bool
    variables: dict = field(default_factory=dict)


class _Lower:
    def __init__(self, tree: gast.FunctionDef, source: Source, namer: Namer) -> None:
        self.tree = tree
        self.source = source
        self.namer = namer

    def error(self, message: str, node: gast.AST) -> Exception:
        return self.source.error(message, node)

    def run(self) -> bool:
        """Lower the first dict built in the function; whether there was one."""
        places = list(positions(self.tree.body))
        for stmt, *_ in places:
            if isinstance(stmt, gast.Assign) and self.is_dict_call(stmt.value):
                # dict(a=u, b=v) is the display {"a": u, "b": v}
                keys = [build.const(k.arg) for k in stmt.value.keywords]
                values = [k.value for k in stmt.value.keywords]
                stmt.value = gast.copy_location(gast.Dict(keys=keys, values=values), stmt.value)
        made = [
            (stmt, path, bool(loops))
            for stmt, loops, _, _, path in places
            if isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Dict)
        ]
        if not made:
            return False
        stmt, path, in_loop = made[0]
        name = stmt.targets[0].id
        again = [s for s, _, _ in made[1:] if s.targets[0].id == name]
        if again:
            raise self.error(
                f"the dict '{name}' is made more than once; use one name per dict", again[0]
            )
        self.lower(_Dict(name, stmt, path, in_loop), places)
        return True

    def is_dict_call(self, value: gast.expr) -> bool:
        return (
            isinstance(value, gast.Call)
            and not value.args
            and all(k.arg is not None for k in value.keywords)
            and self.source.resolve(value.func, set()) is builtins.dict
        )

    def variable(self, d: _Dict, key: object) -> str:
        if key not in d.variables:
            label = key if isinstance(key, str) and key.isidentifier() else "item"
            d.variables[key] = self.namer.fresh(f"{d.name}_{label}")
        return d.variables[key]

    def lower(self, d: _Dict, places: list) -> None:
        display = d.made.value
        for key in display.keys:
            if not isinstance(key, gast.Constant):
                raise self.error(
                    f"the dict '{d.name}' needs constant keys ('\"a\"', 1) to be differentiated",
                    key if key is not None else display,
                )
        uses = [u for stmt, _, _, _, path in places for u in _uses(stmt, path, d.name)]
        stores: list[tuple[object, _Use]] = []
        for use in uses:
            if use.stmt is d.made and isinstance(use.node.ctx, gast.Store):
                continue
            if not _after(d.path, use.path):
                raise self.error(
                    f"the dict '{d.name}' is used here outside the block it is made in, or "
                    "before it is made, or assigned again; srcad follows a dict only after "
                    "'name = {...}' in the same block",
                    use.node,
                )
            key = self.store_key(d, use)
            if key is not _NONE:
                stores.append((key, use))
        # the keys held at a use: sure (display, stores earlier in the dict's own block) and
        # possible (also stores nested in earlier statements or in the use's statement)
        level = len(d.path) - 1

        def held(path: tuple) -> tuple[list, set]:
            k_use = path[level][0]
            sure = [k.value for k in display.keys]
            possible = set(sure)
            for key, store in stores:
                k = store.path[level][0]
                if k < k_use or (k == k_use and len(store.path) > level + 1):
                    possible.add(key)
                    if len(store.path) == level + 1 and k < k_use and key not in sure:
                        sure.append(key)
            return sure, possible

        for use in uses:
            if use.stmt is d.made and isinstance(use.node.ctx, gast.Store):
                continue
            self.replace(d, use, held)
        for key, store in stores:
            store.grand.targets[0] = build.store(self.variable(d, key))
        assigns = [
            build.assign(self.variable(d, key.value), value)
            for key, value in zip(display.keys, display.values)
        ]
        for new in assigns:
            gast.copy_location(new, d.made)
            setanno(new, "origin", getanno(d.made, "origin", d.made))
        self.tree.body = rewrite_bodies(
            self.tree.body,
            lambda body: [s for stmt in body for s in (assigns if stmt is d.made else [stmt])],
        )

    def store_key(self, d: _Dict, use: _Use) -> object:
        """The key of ``d[k] = v`` when ``use`` is its ``d``; else ``_NONE``."""
        sub = use.parent
        if not (
            isinstance(sub, gast.Subscript)
            and isinstance(sub.ctx, gast.Store)
            and isinstance(use.grand, gast.Assign)
            and use.grand.targets == [sub]
        ):
            return _NONE
        if not isinstance(sub.slice, gast.Constant):
            raise self.error(f"the dict '{d.name}' needs a constant key here", sub.slice)
        return sub.slice.value

    def replace(self, d: _Dict, use: _Use, held) -> None:
        parent, grand, name = use.parent, use.grand, d.name
        sure, possible = held(use.path)

        def known(key: object, node: gast.AST) -> bool:
            if key in sure:
                return True
            if key not in possible:
                return False
            raise self.error(
                f"the dict '{name}' may or may not hold the key {key!r} here; srcad needs to "
                "know (store it on every path first)",
                node,
            )

        def all_known(node: gast.AST) -> list:
            if set(sure) != possible:
                raise self.error(
                    f"the keys of the dict '{name}' here depend on the path taken; srcad needs "
                    "to know them (store each key on every path first)",
                    node,
                )
            return sure

        if isinstance(parent, gast.Subscript) and parent.value is use.node:
            if isinstance(parent.ctx, gast.Store):
                if self.store_key(d, use) is _NONE:
                    raise self.error(
                        f"'{name}[k] = v' is supported as a statement of its own", parent
                    )
                return
            if not isinstance(parent.slice, gast.Constant):
                raise self.error(f"the dict '{name}' needs a constant key here", parent.slice)
            key = parent.slice.value
            if key not in possible:
                raise self.error(f"the dict '{name}' has no key {key!r} here", parent)
            if d.in_loop and key not in sure:
                raise self.error(
                    f"the dict '{name}' may or may not hold the key {key!r} here; srcad needs "
                    "to know (store it on every path first)",
                    parent,
                )
            _swap(use, parent, build.load(self.variable(d, key)))
            return
        if (
            isinstance(parent, gast.Attribute)
            and parent.attr == "get"
            and isinstance(grand, gast.Call)
            and grand.func is parent
            and 1 <= len(grand.args) <= 2
            and not grand.keywords
            and isinstance(grand.args[0], gast.Constant)
        ):
            key = grand.args[0].value
            if known(key, grand):
                value = build.load(self.variable(d, key))
            else:
                value = grand.args[1] if len(grand.args) == 2 else build.const(None)
            _swap(use, grand, value)
            return
        if (
            isinstance(parent, gast.Compare)
            and len(parent.ops) == 1
            and isinstance(parent.ops[0], (gast.In, gast.NotIn))
            and parent.comparators[0] is use.node
            and isinstance(parent.left, gast.Constant)
        ):
            present = known(parent.left.value, parent)
            _swap(use, parent, build.const(present == isinstance(parent.ops[0], gast.In)))
            return
        if (
            isinstance(parent, gast.Call)
            and len(parent.args) == 1
            and not parent.keywords
            and self.source.resolve(parent.func, set()) is builtins.len
        ):
            _swap(use, parent, build.const(len(all_known(parent))))
            return
        loop = use.stmt if isinstance(use.stmt, gast.For) else None
        view = None
        if loop is not None and loop.iter is use.node:
            view = "keys"
        elif (
            loop is not None
            and isinstance(parent, gast.Attribute)
            and parent.attr in _VIEWS
            and isinstance(grand, gast.Call)
            and loop.iter is grand
            and not grand.args
            and not grand.keywords
        ):
            view = parent.attr
        if view is not None:
            keys = all_known(loop.iter)
            for inner in gast.walk(loop):
                if (
                    isinstance(inner, gast.Subscript)
                    and isinstance(inner.ctx, gast.Store)
                    and isinstance(inner.value, gast.Name)
                    and inner.value.id == name
                ):
                    raise self.error(
                        f"changing the dict '{name}' while looping over it is not supported",
                        inner,
                    )
            loop.iter = gast.copy_location(self.view(d, view, keys), loop.iter)
            return
        if isinstance(use.stmt, gast.Return) and (
            use.stmt.value is use.node
            or isinstance(use.stmt.value, gast.Tuple)
            and any(e is use.node for e in use.stmt.value.elts)
        ):
            keys = all_known(use.node)
            rebuilt = gast.Dict(
                keys=[build.const(k) for k in keys],
                values=[build.load(self.variable(d, k)) for k in keys],
            )
            _swap(use, use.node, rebuilt)
            return
        raise self.error(
            f"the dict '{name}' is used here in a way srcad cannot follow; supported: "
            f"{name}[k] with a constant key, {name}.get(k), k in {name}, len({name}), "
            f"'for ... in {name}' (.keys(), .values(), .items()) and 'return {name}'",
            use.node,
        )

    def view(self, d: _Dict, view: str, keys: list) -> gast.Tuple:
        def value(key: object) -> gast.expr:
            return build.load(self.variable(d, key))

        if view == "keys":
            elts = [build.const(k) for k in keys]
        elif view == "values":
            elts = [value(k) for k in keys]
        else:
            elts = [build.tuple_([build.const(k), value(k)]) for k in keys]
        return build.tuple_(elts)


class _Missing:
    pass


_NONE = _Missing()


def _uses(stmt: gast.stmt, path: tuple, name: str):
    """Each occurrence of ``name`` in ``stmt``'s own parts, with its parent and grandparent."""

    def visit(node: gast.AST, parent: gast.AST | None, grand: gast.AST | None):
        if isinstance(node, gast.Name) and node.id == name:
            yield _Use(node, parent, grand, stmt, path)
        for child in gast.iter_child_nodes(node):
            yield from visit(child, node, parent)

    for part in own_parts(stmt):
        yield from visit(part, stmt, None)


def _swap(use: _Use, old: gast.AST, new: gast.AST) -> None:
    """Put ``new`` where ``old`` is in the statement of ``use``."""
    gast.copy_location(new, old)
    for node in gast.walk(use.stmt):
        for field_name, value in gast.iter_fields(node):
            if value is old:
                setattr(node, field_name, new)
                return
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
                        return


def _after(made: tuple, path: tuple) -> bool:
    """Whether the statement at ``path`` runs after the one at ``made``, in its block (or
    inside a statement there)."""
    block = made[:-1]
    if len(path) <= len(block) or path[: len(block)] != block:
        return False
    return path[len(block)][0] > made[-1][0]


def lower_dicts(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Replace the dicts built in ``tree`` by one variable per key (see module doc)."""
    lower = _Lower(tree, source, namer)
    while lower.run():  # a value that is itself a dict display is lowered next round
        pass
    return tree
