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
        self.kept: set[int] = set()
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
            if id(stmt) not in self.kept
            and isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Dict)
        ]
        if not made:
            return False
        stmt, path, in_loop = made[0]
        name = stmt.targets[0].id
        uses = [u for s, _, _, _, p in places for u in _uses(s, p, name)]
        again = [s for s, _, _, _, _ in places if s is not stmt and _binds(s, name)]
        problem = self.unfollowable(name, stmt, path, uses, again)
        if problem is None:
            self.lower(_Dict(name, stmt, path, in_loop), uses)
        elif any(_changes(u) for u in uses):
            raise self.error(*problem)
        else:
            # never changed after it is made: left as it is (a constant dict of options)
            self.kept.add(id(stmt))
        return True

    def unfollowable(self, name, stmt, path, uses, again) -> tuple[str, gast.AST] | None:
        """Why the uses of the dict ``name`` made by ``stmt`` cannot be followed (message,
        node), or None."""
        if again:
            return f"the dict '{name}' is assigned more than once; use one name per dict", again[0]
        for key in stmt.value.keys:
            if not isinstance(key, gast.Constant):
                message = f"the dict '{name}' needs constant keys ('\"a\"', 1) to be differentiated"
                return message, key if key is not None else stmt.value
        for use in uses:
            if use.stmt is stmt and isinstance(use.node.ctx, gast.Store):
                continue
            if not _after(path, use.path):
                message = (
                    f"the dict '{name}' is used here outside the block it is made in, or "
                    "before it is made; srcad follows a dict only after 'name = {...}' in the "
                    "same block"
                )
                return message, use.node
            form = self.form(use)
            if form is None:
                message = (
                    f"the dict '{name}' is used here in a way srcad cannot follow; supported: "
                    f"{name}[k] with a constant key, {name}.get(k), k in {name}, len({name}), "
                    f"'for ... in {name}' (.keys(), .values(), .items()) and 'return {name}'"
                )
                return message, use.node
            if form in ("item", "store") and not isinstance(use.parent.slice, gast.Constant):
                return f"the dict '{name}' needs a constant key here", use.parent.slice
        return None

    def form(self, use: _Use) -> str | None:
        """What ``use`` does with the dict: one of the forms srcad follows, or None."""
        parent, grand = use.parent, use.grand
        if isinstance(parent, gast.Subscript) and parent.value is use.node:
            if isinstance(parent.ctx, gast.Load):
                return "item"
            if isinstance(grand, gast.Assign) and grand.targets == [parent]:
                return "store"
            return None
        if (
            isinstance(parent, gast.Attribute)
            and parent.attr == "get"
            and isinstance(grand, gast.Call)
            and grand.func is parent
            and 1 <= len(grand.args) <= 2
            and not grand.keywords
            and isinstance(grand.args[0], gast.Constant)
        ):
            return "get"
        if (
            isinstance(parent, gast.Compare)
            and len(parent.ops) == 1
            and isinstance(parent.ops[0], (gast.In, gast.NotIn))
            and parent.comparators[0] is use.node
            and isinstance(parent.left, gast.Constant)
        ):
            return "in"
        if (
            isinstance(parent, gast.Call)
            and parent.args == [use.node]
            and not parent.keywords
            and self.source.resolve(parent.func, set()) is builtins.len
        ):
            return "len"
        loop = use.stmt if isinstance(use.stmt, gast.For) else None
        if loop is not None and loop.iter is use.node:
            return "keys"
        if (
            loop is not None
            and isinstance(parent, gast.Attribute)
            and parent.attr in _VIEWS
            and isinstance(grand, gast.Call)
            and loop.iter is grand
            and not grand.args
            and not grand.keywords
        ):
            return parent.attr
        if isinstance(use.stmt, gast.Return) and (
            use.stmt.value is use.node
            or isinstance(use.stmt.value, gast.Tuple)
            and any(e is use.node for e in use.stmt.value.elts)
        ):
            return "return"
        return None

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

    def lower(self, d: _Dict, uses: list[_Use]) -> None:
        display = d.made.value
        uses = [u for u in uses if not (u.stmt is d.made and isinstance(u.node.ctx, gast.Store))]
        stores = [(u.parent.slice.value, u) for u in uses if self.form(u) == "store"]
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

        form = self.form(use)
        if form == "store":
            return  # (its target is replaced once every read is)
        if form == "item":
            key = parent.slice.value
            if key not in possible:
                raise self.error(f"the dict '{name}' has no key {key!r} here", parent)
            if d.in_loop and key not in sure:
                # a value stored in an earlier turn would be read instead of a KeyError
                raise self.error(
                    f"the dict '{name}' may or may not hold the key {key!r} here; srcad needs "
                    "to know (store it on every path first)",
                    parent,
                )
            _swap(use, parent, build.load(self.variable(d, key)))
        elif form == "get":
            key = grand.args[0].value
            if known(key, grand):
                value = build.load(self.variable(d, key))
            else:
                value = grand.args[1] if len(grand.args) == 2 else build.const(None)
            _swap(use, grand, value)
        elif form == "in":
            present = known(parent.left.value, parent)
            _swap(use, parent, build.const(present == isinstance(parent.ops[0], gast.In)))
        elif form == "len":
            _swap(use, parent, build.const(len(all_known(parent))))
        elif form == "return":
            keys = all_known(use.node)
            rebuilt = gast.Dict(
                keys=[build.const(k) for k in keys],
                values=[build.load(self.variable(d, k)) for k in keys],
            )
            _swap(use, use.node, rebuilt)
        else:
            loop = use.stmt
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
            loop.iter = gast.copy_location(self.view(d, form, keys), loop.iter)

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


def _binds(stmt: gast.stmt, name: str) -> bool:
    """Whether ``stmt`` assigns ``name`` itself."""
    return any(
        isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
        for part in own_parts(stmt)
        for n in gast.walk(part)
    )


def _changes(use: _Use) -> bool:
    """Whether ``use`` may change the dict: ``d[k] = v``, or a method other than a read."""
    if isinstance(use.parent, gast.Subscript) and isinstance(use.parent.ctx, gast.Store):
        return True
    return isinstance(use.parent, gast.Attribute) and use.parent.attr not in ("get", *_VIEWS)


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
