"""Dicts built in the function with constant keys become one variable per key.

``d = {"a": u}; d["b"] = v; return np.sum(d["a"] * d["b"])`` becomes ``d_a = u; d_b = v;
return np.sum(d_a * d_b)``, which the later passes differentiate like any names
(``dict(a=u)`` reads as ``{"a": u}``). Besides ``d[k]`` (read or assigned; ``d[k] += v`` is
already ``d[k] = d[k] + v``) a dict may be read by ``d.get(k, default)``, ``k in d``,
``len(d)``, ``for ... in d`` (or ``d.keys()``, ``d.values()``, ``d.items()``) and ``return
d`` (rebuilt as a display), where the keys it holds there are known. Any other use of such
a dict is refused.

Iterations are written out first (:meth:`_Lower.write_out`): ``enumerate(d)``, ``zip(d,
ys)``, ``sorted(d)``, ``list(d)``, ``tuple(d)``, ``reversed(d)`` and the same of the views
become displays of the keys (values as ``d["a"]``), and the loops over them are unrolled
with the keys as constants, so ``d[k]`` in the body reads a constant key. ``if k in d``
with a known answer keeps the arm it takes.
"""

from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass, field

import gast

from srcad.transform import build
from srcad.transform.analyses.tbr import positions
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import replace_node
from srcad.transform.normalize.loops import unroll_written_out
from srcad.transform.normalize.pytree_iteration import indexes_with
from srcad.transform.normalize.sequences import added
from srcad.transform.normalize.walk import all_statements, own_parts, rewrite_bodies

_VIEWS = ("keys", "values", "items")
SPREAD_KEYWORDS = (
    "'**kwargs' in a call is supported for a dict built in the function with constant keys "
    '(d = {"a": u}; f(**d)) or an argument holding a dict only'
)
#: calls a loop over written-out items may wrap them in
_WRAPPERS = (builtins.enumerate, builtins.zip, builtins.reversed)


@dataclass
class _Use:
    """One occurrence of the dict's name: what holds it (nearest first, up to its
    statement), in which statement, where."""

    node: gast.Name
    ancestors: tuple
    stmt: gast.stmt
    path: tuple

    @property
    def parent(self) -> gast.AST:
        return self.ancestors[0]

    @property
    def grand(self) -> gast.AST | None:
        return self.ancestors[1] if len(self.ancestors) > 1 else None


@dataclass
class _Spot:
    """Where a dict is iterated: the expression that becomes a display of its keys, values
    or items (``view``), and how (``how``: as a view does, or list/tuple/sorted/reversed; or
    ``sum`` of the values, added up)."""

    old: gast.expr
    view: str
    how: str
    above: tuple


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
        if self.forward_alias(places, made):
            return True
        if self.write_out(places, made):
            return True  # the loops unrolled: the uses are found again
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

    def forward_alias(self, places: list, made: list) -> bool:
        """``d = {...}; e = d`` in one block, ``d`` read nowhere else and ``e`` bound
        nowhere else nor read before: ``e = {...}`` (a helper written out returns its dict
        so); whether there was one."""
        for stmt, path, _ in made:
            name = stmt.targets[0].id
            uses = [u for s, _, _, _, p in places for u in _uses(s, p, name) if u.stmt is not stmt]
            if len(uses) != 1 or any(_binds(s, name) for s, *_ in places if s is not stmt):
                continue
            (use,) = uses
            alias = use.stmt
            if not (
                isinstance(alias, gast.Assign)
                and alias.value is use.node
                and len(alias.targets) == 1
                and isinstance(alias.targets[0], gast.Name)
                and len(use.path) == len(path)
                and _after(path, use.path)
            ):
                continue
            other = alias.targets[0].id
            if any(_binds(s, other) for s, *_ in places if s is not alias):
                continue
            if any(
                not _after(use.path, u.path)
                for s, _, _, _, p in places
                for u in _uses(s, p, other)
                if u.stmt is not alias
            ):
                continue
            stmt.targets = [build.store(other)]

            def block(stmts: list[gast.stmt], alias: gast.stmt = alias) -> list[gast.stmt]:
                return [s for s in stmts if s is not alias]

            self.tree.body = rewrite_bodies(self.tree.body, block)
            return True
        return False

    def write_out(self, places: list, made: list) -> bool:
        """Iterations over the dicts ``made`` become displays of their keys, values or items
        (``for k, v in d.items()``: ``for k, v in (("a", d["a"]), ...)``), and the loops over
        them are unrolled with the keys written as constants, so that ``d[k]`` reads a
        constant key; whether any was. Loops over ``enumerate``/``zip`` of displays of
        constants whose body indexes with the loop's names are unrolled too."""
        unroll: dict[int, gast.For] = {}
        arms: dict[int, list[gast.stmt]] = {}
        for stmt, path, in_loop in made:
            name = stmt.targets[0].id
            uses = [u for s, _, _, _, p in places for u in _uses(s, p, name)]
            spots = [(u, spot) for u in uses if (spot := self.iteration(u)) is not None]
            tests = [u for u in uses if self.form(u) == "in" and self.is_test(u)]
            if not spots and not tests:
                continue
            loops = {id(spot): _loop_over(spot, self.source) for _, spot in spots}
            inside = {
                id(inner)
                for loop in loops.values()
                if loop is not None
                for inner in all_statements(loop.body)
            }
            again = [s for s, _, _, _, _ in places if s is not stmt and _binds(s, name)]
            if self.unfollowable(name, stmt, path, uses, again, inside) is not None:
                continue  # refused (or kept) when the dict itself is lowered
            d = _Dict(name, stmt, path, in_loop)
            stores = self.stores(uses)
            for use, spot in spots:
                loop = loops[id(spot)]
                if loop is not None:
                    self.refuse_new_keys(d, loop, uses)
                    unroll[id(loop)] = loop
                keys = self.all_known(d, stores, use.path, spot.old)
                _swap(use, spot.old, self.display(d, spot, keys))
            for use in tests:
                # ``if k in d`` with the answer known: the arm it takes (the other may read
                # a key the dict lacks, as unrolling ``for k in ("a", "z")`` writes)
                sure, possible = self.held(d, stores, use.path)
                test = use.stmt.test
                key = test.left.value
                if key in sure or key not in possible:
                    taken = (key in sure) == isinstance(test.ops[0], gast.In)
                    arms[id(use.stmt)] = use.stmt.body if taken else use.stmt.orelse
        for stmt, *_ in places:
            if isinstance(stmt, gast.For) and self.indexes_with_constants(stmt):
                unroll[id(stmt)] = stmt
        if not unroll and not arms:
            return False

        def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
            out: list[gast.stmt] = []
            for stmt in stmts:
                if id(stmt) in arms:
                    out.extend(arms[id(stmt)])
                    continue
                if id(stmt) not in unroll:
                    out.append(stmt)
                    continue
                new = unroll_written_out(stmt, self.source, self.namer)
                if new is None:
                    raise self.error(
                        "break/continue in a loop over a dict built in the function is not "
                        "supported; loop over range(len(...)) instead",
                        stmt,
                    )
                out.extend(new)
            return out

        self.tree.body = rewrite_bodies(self.tree.body, block)
        return True

    def is_test(self, use: _Use) -> bool:
        """Whether a membership ``use`` is the whole test of an ``if``."""
        return isinstance(use.stmt, gast.If) and use.stmt.test is self.viewed(use)[2][0]

    def indexes_with_constants(self, loop: gast.For) -> bool:
        """``for i, k in enumerate(("a", "b"))`` whose body indexes with ``i`` or ``k``."""
        it = loop.iter
        if not isinstance(it, gast.Call) or self.source.resolve(it.func, set()) not in _WRAPPERS:
            return False
        displays = [
            n for n in gast.walk(it) if isinstance(n, (gast.Tuple, gast.List)) and n is not it
        ]
        constants = [
            d for d in displays if d.elts and all(isinstance(e, gast.Constant) for e in d.elts)
        ]
        targets = {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
        return bool(constants) and indexes_with(loop.body, targets)

    def iteration(self, use: _Use) -> _Spot | None:
        """Where ``use`` iterates the dict (see :class:`_Spot`), or None. Its values are
        written out only for a loop (a display of them elsewhere is a container of
        differentiable values); its keys anywhere (``names = sorted(d)``)."""
        spot = self.spot(use)
        if spot is None or spot.view == "keys" or spot.how == "sum" or _passed(spot):
            return spot
        return spot if _loop_over(spot, self.source) is not None else None

    def spot(self, use: _Use) -> _Spot | None:
        view, seq, rest = self.viewed(use)
        if not rest:
            return None
        holder = rest[0]
        if isinstance(holder, gast.For):
            return _Spot(seq, view, "live", rest) if holder.iter is seq else None
        if not isinstance(holder, gast.Call) or not any(a is seq for a in holder.args):
            return None
        fn = self.source.resolve(holder.func, set())
        if fn is builtins.zip or fn is builtins.enumerate and holder.args[0] is seq:
            return _Spot(seq, view, "live", rest)
        if len(holder.args) != 1:
            return None
        if fn is builtins.sum and view == "values" and not holder.keywords:
            return _Spot(holder, view, "sum", rest[1:])  # ``sum(d.values())``: added up
        if fn in (builtins.list, builtins.tuple, builtins.reversed) and not holder.keywords:
            how = "reversed" if fn is builtins.reversed else fn.__name__
            return _Spot(holder, view, how, rest[1:])
        if (
            fn is builtins.sorted
            and view != "values"  # (values compare as arrays)
            and all(k.arg == "reverse" for k in holder.keywords)
            and all(isinstance(k.value, gast.Constant) for k in holder.keywords)
        ):
            return _Spot(holder, view, "sorted", rest[1:])
        return None

    def viewed(self, use: _Use) -> tuple[str, gast.expr, tuple]:
        """What ``use`` reads of the dict (``keys`` for the bare name, or the view called),
        the expression reading it, and what holds that expression."""
        a = use.ancestors
        if (
            len(a) >= 3
            and isinstance(a[0], gast.Attribute)
            and a[0].attr in _VIEWS
            and isinstance(a[1], gast.Call)
            and a[1].func is a[0]
            and not a[1].args
            and not a[1].keywords
        ):
            return a[0].attr, a[1], a[2:]
        return "keys", use.node, a

    def display(self, d: _Dict, spot: _Spot, keys: list) -> gast.expr:
        """The keys, values or items of ``d`` written out, for ``spot``."""
        if spot.how == "sorted":
            backwards = any(k.value.value for k in spot.old.keywords)
            try:
                keys = sorted(keys, reverse=backwards)
            except TypeError:
                raise self.error(
                    f"sorted() of the keys of the dict '{d.name}': they do not compare", spot.old
                ) from None
        elif spot.how == "reversed":
            keys = keys[::-1]

        def item(key: object) -> gast.expr:
            if spot.view == "keys":
                return build.const(key)
            read = gast.Subscript(value=build.load(d.name), slice=build.const(key), ctx=gast.Load())
            return read if spot.view == "values" else build.tuple_([build.const(key), read])

        elts = [item(k) for k in keys]
        if spot.how == "sum":
            return gast.copy_location(added(elts), spot.old)
        node = gast.List(elts=elts, ctx=gast.Load()) if spot.how in ("list", "sorted") else None
        node = node or build.tuple_(elts)
        # a view read on each turn (list(), tuple() and sorted() read it all at once)
        setanno(node, "live", spot.how in ("live", "reversed"))
        return gast.copy_location(node, spot.old)

    def refuse_new_keys(self, d: _Dict, loop: gast.For, uses: list[_Use]) -> None:
        """A store inside a loop over ``d`` of a key ``d`` lacks: Python refuses it (the
        dict changes size while iterated), and srcad could not follow its keys."""
        inside = {id(s) for s in all_statements(loop.body)}
        before = [k for k, u in self.stores(uses) if id(u.stmt) not in inside]
        keys = {k.value for k in d.made.value.keys} | set(before)
        for use in uses:
            if id(use.stmt) not in inside or self.form(use) != "store":
                continue
            key = use.parent.slice
            if isinstance(key, gast.Constant) and key.value not in keys:
                raise self.error(
                    f"changing the dict '{d.name}' while looping over it is not supported "
                    f"(the key {key.value!r} is new)",
                    use.parent,
                )

    def stores(self, uses: list[_Use]) -> list[tuple[object, _Use]]:
        """The stores with a constant key among ``uses``, with their keys."""
        return [
            (u.parent.slice.value, u)
            for u in uses
            if self.form(u) == "store" and isinstance(u.parent.slice, gast.Constant)
        ]

    def held(self, d: _Dict, stores: list, path: tuple) -> tuple[list, set]:
        """The keys ``d`` holds at ``path``: sure (display, stores earlier in the dict's own
        block) and possible (also stores nested in earlier statements or in the use's
        statement)."""
        level = len(d.path) - 1
        k_use = path[level][0]
        sure = [k.value for k in d.made.value.keys]
        possible = set(sure)
        for key, store in stores:
            k = store.path[level][0]
            if k < k_use or (k == k_use and len(store.path) > level + 1):
                possible.add(key)
                if len(store.path) == level + 1 and k < k_use and key not in sure:
                    sure.append(key)
        return sure, possible

    def all_known(self, d: _Dict, stores: list, path: tuple, node: gast.AST) -> list:
        """The keys ``d`` holds at ``path``, which must not depend on the path taken."""
        sure, possible = self.held(d, stores, path)
        if set(sure) != possible:
            raise self.error(
                f"the keys of the dict '{d.name}' here depend on the path taken; srcad needs "
                "to know them (store each key on every path first)",
                node,
            )
        return sure

    def unfollowable(
        self, name, stmt, path, uses, again, inside: set[int] | None = None
    ) -> tuple[str, gast.AST] | None:
        """Why the uses of the dict ``name`` made by ``stmt`` cannot be followed (message,
        node), or None. ``inside``: the statements of loops over the dict about to be
        unrolled, where ``d[k]`` may name the loop's key."""
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
                    f"'for ... in {name}' (.keys(), .values(), .items(); through enumerate, "
                    f"zip, sorted, list, tuple, reversed) and 'return {name}'"
                )
                return message, use.node
            open_key = inside is not None and id(use.stmt) in inside
            if form in ("item", "store") and not isinstance(use.parent.slice, gast.Constant):
                if not open_key:
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
        if spread_by(use.node, parent):
            return "spread"  # ``{**d, "b": v}``, ``f(**d)`` (a keyword's parent is the call)
        if self.copied(use) is not None:
            return "copy"  # ``d.copy()``, ``dict(d, b=v)``, ``copy.copy(d)``
        view, seq, rest = self.viewed(use)
        holder = rest[0] if rest else None
        if (
            isinstance(holder, gast.Compare)
            and view == "keys"
            and len(holder.ops) == 1
            and isinstance(holder.ops[0], (gast.In, gast.NotIn))
            and holder.comparators[0] is seq
            and isinstance(holder.left, gast.Constant)
        ):
            return "in"
        if (
            isinstance(holder, gast.Call)
            and len(holder.args) == 1
            and holder.args[0] is seq
            and not holder.keywords
            and self.source.resolve(holder.func, set()) is builtins.len
        ):
            return "len"
        if self.iteration(use) is not None:
            return "iterate"
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

    def copied(self, use: _Use) -> gast.Call | None:
        """The call making a new dict of the same items from ``use``'s (``d.copy()``,
        ``dict(d)``, ``dict(d, b=v)``, ``copy.copy(d)``), or None."""
        parent, grand = use.parent, use.grand
        if (
            isinstance(parent, gast.Attribute)
            and parent.attr == "copy"
            and isinstance(grand, gast.Call)
            and grand.func is parent
            and not grand.args
            and not grand.keywords
        ):
            return grand
        if (
            isinstance(parent, gast.Call)
            and len(parent.args) == 1
            and parent.args[0] is use.node
            and all(k.arg is not None for k in parent.keywords)
            and self.source.resolve(parent.func, set()) in (builtins.dict, copy.copy)
        ):
            return parent
        return None

    def variable(self, d: _Dict, key: object) -> str:
        if key not in d.variables:
            label = key if isinstance(key, str) and key.isidentifier() else "item"
            d.variables[key] = self.namer.fresh(f"{d.name}_{label}")
        return d.variables[key]

    def lower(self, d: _Dict, uses: list[_Use]) -> None:
        display = d.made.value
        uses = [u for u in uses if not (u.stmt is d.made and isinstance(u.node.ctx, gast.Store))]
        stores = self.stores(uses)
        taken = set()
        for key, value in zip(display.keys, display.values):
            if isinstance(value, gast.Name) and getanno(value, "dict_part"):
                d.variables[key.value] = value.id  # a name for this value alone: no copy
                taken.add(key.value)
        for use in uses:
            self.replace(d, use, stores)
        for key, store in stores:
            store.grand.targets[0] = build.store(self.variable(d, key))
        assigns = [
            build.assign(self.variable(d, key.value), value)
            for key, value in zip(display.keys, display.values)
            if key.value not in taken
        ]
        for new in assigns:
            gast.copy_location(new, d.made)
            setanno(new, "origin", getanno(d.made, "origin", d.made))
        self.tree.body = rewrite_bodies(
            self.tree.body,
            lambda body: [s for stmt in body for s in (assigns if stmt is d.made else [stmt])],
        )

    def replace(self, d: _Dict, use: _Use, stores: list) -> None:
        parent, grand, name = use.parent, use.grand, d.name
        sure, possible = self.held(d, stores, use.path)

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
            return self.all_known(d, stores, use.path, node)

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
            compare = self.viewed(use)[2][0]
            present = known(compare.left.value, compare)
            _swap(use, compare, build.const(present == isinstance(compare.ops[0], gast.In)))
        elif form == "len":
            call = self.viewed(use)[2][0]
            _swap(use, call, build.const(len(all_known(call))))
        elif form == "spread" and isinstance(parent, gast.Dict):
            k = next(i for i, v in enumerate(parent.values) if v is use.node)
            keys = all_known(use.node)
            # (a key written again later wins, as in Python: its store comes later)
            parent.keys[k : k + 1] = [build.const(key) for key in keys]
            parent.values[k : k + 1] = [build.load(self.variable(d, key)) for key in keys]
        elif form == "spread":
            keys = all_known(use.node)
            if not all(isinstance(key, str) and key.isidentifier() for key in keys):
                raise self.error(f"'**{name}' passes keys that are not names ({keys!r})", use.node)
            k = next(i for i, kw in enumerate(grand.keywords) if kw is parent)
            grand.keywords[k : k + 1] = [
                gast.keyword(arg=key, value=build.load(self.variable(d, key))) for key in keys
            ]
        elif form == "copy":
            call = self.copied(use)
            keys = all_known(use.node)
            rebuilt = gast.Dict(
                keys=[build.const(k) for k in keys] + [build.const(k.arg) for k in call.keywords],
                values=[build.load(self.variable(d, k)) for k in keys]
                + [k.value for k in call.keywords],
            )
            _swap(use, call, rebuilt)
        elif form == "return":
            keys = all_known(use.node)
            rebuilt = gast.Dict(
                keys=[build.const(k) for k in keys],
                values=[build.load(self.variable(d, k)) for k in keys],
            )
            _swap(use, use.node, rebuilt)
        else:  # (iterations are written out before: see write_out)
            raise AssertionError(f"dict use {form!r} left to lower")


def spread_by(name: gast.Name, parent: gast.AST | None) -> bool:
    """Whether ``parent`` spreads ``name``: ``{**d, ...}`` or ``f(**d)``."""
    if isinstance(parent, gast.keyword):
        return parent.arg is None
    return isinstance(parent, gast.Dict) and any(
        k is None and v is name for k, v in zip(parent.keys, parent.values)
    )


class _Missing:
    pass


_NONE = _Missing()


def _uses(stmt: gast.stmt, path: tuple, name: str):
    """Each occurrence of ``name`` in ``stmt``'s own parts, with what holds it."""

    def visit(node: gast.AST, ancestors: tuple):
        if isinstance(node, gast.Name) and node.id == name:
            yield _Use(node, ancestors, stmt, path)
        for child in gast.iter_child_nodes(node):
            yield from visit(child, (node, *ancestors))

    for part in own_parts(stmt):
        yield from visit(part, (stmt,))


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
    replace_node(use.stmt, old, new)


def _loop_over(spot: _Spot, source: Source) -> gast.For | None:
    """The loop whose items ``spot`` gives, through enumerate/zip/reversed, or None."""
    current = spot.old
    for above in spot.above:
        if isinstance(above, gast.For):
            return above if above.iter is current else None
        callee = source.resolve(above.func, set()) if isinstance(above, gast.Call) else None
        if callee not in _WRAPPERS or not any(a is current for a in above.args):
            return None
        current = above
    return None


def _passed(spot: _Spot) -> bool:
    """``np.stack(list(d.values()))``: the values written out as an argument of a call
    (a display there is stacked, or passed element by element, or refused by name)."""
    holder = spot.above[0] if spot.above else None
    return (
        spot.how in ("list", "tuple")
        and isinstance(holder, gast.Call)
        and any(a is spot.old for a in holder.args)
    )


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
    args = tree.args
    params = {a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    for node in gast.walk(tree):
        if isinstance(node, gast.Call) and any(
            k.arg is None and getattr(k.value, "id", None) not in params for k in node.keywords
        ):
            # (one the fence let through: a local name, not a dict srcad follows; a
            # parameter's is passed as it is: one not differentiated)
            raise source.error(SPREAD_KEYWORDS, node)
    return tree
