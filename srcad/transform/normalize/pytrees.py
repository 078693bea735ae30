"""Pytree parameters become one parameter per leaf, specialized to the call's structure.

``params["W"]`` (or ``params.W`` on a namedtuple, a dataclass or a class registered with
names, ``layers[0]`` on a list) is replaced by a parameter ``params_W`` of its own; a name
bound to a sub-tree (``layer = params["layer1"]``) and tuple unpacking of a sequence
(``W1, W2 = weights``) follow the structure too. A registered class is read only through
its named children. The gradient then is one array per leaf, rebuilt into the argument's
structure by the API. Besides constant keys the pass resolves:

- slices with constant bounds of a list or tuple: ``params[1:-1]``, ``params[::2]``;
- loops, unrolled (one copy of the body per item), over a list or tuple, a slice of one,
  ``reversed(params)``, ``enumerate(params, start)``, ``zip(Ws, bs)`` (of those and of
  ``range`` with constant bounds), with nested targets (``for i, (W, b) in
  enumerate(zip(Ws, bs))``, ``for W, b in layers``);
- loops over a dict, ``d.keys()``, ``d.values()`` and ``d.items()``, in the dict's key
  order: the key's name is bound to the constant key, so ``d[k]`` in the body resolves;
  so does a loop over a display of constants whose body indexes with the loop's name
  (``for k in ("a", "b")``, what ``sum(np.sum(d[k]) for k in ("a", "b"))`` becomes);
- ``d.get("a")``, ``d.get("a", default)``, ``len(d)``, ``sum(params)``, ``sum(d.values())``;
- a sub-tree, or a list/tuple/dict display holding parts of one, passed to a Python function
  of the user's (``mlp(params, x)``, ``predict(params["enc"], x)``): passed leaf by leaf
  through a :class:`~srcad.transform.calls.FlatCall`, the callee transformed for that
  structure.

A name bound to different sub-trees on different paths (``if``/``else``, a loop) is refused
where it is read; so are a dynamic key, ``break``/``continue`` in an unrolled loop, and any
other use of a sub-tree as a whole. (``pytree_views.py`` resolves what an expression denotes,
``pytree_iteration.py`` what a loop binds.)
"""

from __future__ import annotations

import copy
import re
from typing import Any

import gast

from srcad.errors import UnknownStructureError
from srcad.pytree import Treedef
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import FlatCall, plain_function, user_callee
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.folding import constant_of
from srcad.transform.normalize.pytree_iteration import DICT_VIEWS, Iteration, has_jump
from srcad.transform.normalize.pytree_views import Const, View, kind_label, merged


class _Expand(Iteration):
    """The pass: statements rewritten to read leaves (see module doc)."""

    def __init__(self, source: Source, namer: Namer, env: dict[str, Any], local: set[str]) -> None:
        super().__init__(source, env, local)
        self.namer = namer
        self.flat_calls: dict[tuple, str] = {}
        #: names no statement assigns again: a sub-tree's leaves may be read through them
        self.stable = {leaf for view in env.values() for leaf in view.leaves}

    # ---- expressions ----

    def expression(self, expr: gast.expr) -> gast.expr:
        view = self.resolve(expr)
        if view is not None:
            if view.is_leaf:
                return gast.copy_location(build.load(view.leaves[0]), expr)
            raise self.error(
                "a pytree argument (or part of one) is used as a whole here; read its "
                "arrays with constant keys, unpack it, loop over it, or pass it to a "
                "function of your own",
                expr,
            )
        if isinstance(expr, gast.Call):
            self.spread(expr)
            done = self.call(expr)
            if done is not None:
                return gast.copy_location(done, expr)
        if isinstance(expr, gast.Compare):
            found = self.membership(expr) or self.compared_keys(expr)
            if found is not None:
                return gast.copy_location(found, expr)
        if isinstance(expr, gast.Subscript):
            self.constant_keys(expr)
        for field, value in gast.iter_fields(expr):
            if isinstance(value, gast.expr):
                setattr(expr, field, self.expression(value))
            elif isinstance(value, list):
                setattr(
                    expr,
                    field,
                    [
                        self.expression(v) if isinstance(v, gast.expr) else self.nested(v)
                        for v in value
                    ],
                )
            elif isinstance(value, gast.AST):
                setattr(expr, field, self.nested(value))
        return expr

    def spread(self, expr: gast.Call) -> None:
        """``f(*args, **kwargs)`` of sub-trees as ``f(args[0], args[1], k=kwargs["k"])``:
        one argument per child, each resolved like any other read."""
        args: list[gast.expr] = []
        for arg in expr.args:
            view = self.resolve(arg.value) if isinstance(arg, gast.Starred) else None
            if view is None or not view.is_sequence():
                args.append(arg)
                continue
            args.extend(
                gast.Subscript(
                    value=copy.deepcopy(arg.value), slice=build.const(k), ctx=gast.Load()
                )
                for k in range(len(view.labels()))
            )
        expr.args = args
        keywords: list[gast.keyword] = []
        for kw in expr.keywords:
            view = self.resolve(kw.value) if kw.arg is None else None
            if view is None or view.treedef[0] != "dict":
                keywords.append(kw)
                continue
            for key in view.labels():
                if not isinstance(key, str) or not key.isidentifier():
                    raise self.error(f"'**' of a dict with the key {key!r}", kw.value)
                item = gast.Subscript(
                    value=copy.deepcopy(kw.value), slice=build.const(key), ctx=gast.Load()
                )
                keywords.append(gast.keyword(arg=key, value=item))
        expr.keywords = keywords

    def membership(self, expr: gast.Compare) -> gast.expr | None:
        """``"k" in d`` of a dict sub-tree: a constant (its keys are the call's)."""
        if len(expr.ops) != 1 or not isinstance(expr.ops[0], (gast.In, gast.NotIn)):
            return None
        view = self.resolve(expr.comparators[0])
        key = expr.left
        if view is None or view.treedef[0] != "dict" or not isinstance(key, gast.Constant):
            return None
        found = key.value in view.labels()
        return build.const(found if isinstance(expr.ops[0], gast.In) else not found)

    def call(self, expr: gast.Call) -> gast.expr | None:
        """A call reading a pytree argument, rewritten; None for any other call."""
        got = self.get_call(expr)
        if got is not None:
            return self.expression(got[1])  # the key is absent: the default
        func = expr.func
        if len(expr.args) == 1 and not expr.keywords and isinstance(func, gast.Name):
            if func.id == "len":
                return self.length(expr)
            if func.id == "sum":
                return self.total(expr)
        if isinstance(func, gast.Attribute) and func.attr in ("stack", "concatenate"):
            inner = self.resolve(expr.args[0]) if expr.args else None
            if inner is not None and not inner.is_leaf and inner.is_sequence():
                elts = [self.leaf_or_fail(child, expr) for child in inner.children()]
                expr.args = [gast.List(elts=elts, ctx=gast.Load()), *expr.args[1:]]
                expr.args[1:] = [self.expression(a) for a in expr.args[1:]]
                expr.keywords = [self.nested(k) for k in expr.keywords]
                return expr
        return self.user_call(expr)

    def length(self, expr: gast.Call) -> gast.expr | None:
        """``len()`` of a sub-tree, or of an iterable over one."""
        inner = self.resolve(expr.args[0])
        if inner is not None and not inner.is_leaf and inner.treedef[0] == "custom":
            raise self.error(
                f"len() of a {kind_label(inner)} argument calls its own __len__, which "
                "srcad cannot read; pass the length as an argument",
                expr,
            )
        if inner is not None and not inner.is_leaf:
            return build.const(len(inner.labels()))
        arg = expr.args[0]
        viewed = isinstance(arg, gast.Call) and isinstance(arg.func, gast.Attribute)
        if viewed and arg.func.attr in DICT_VIEWS or isinstance(arg, (gast.Tuple, gast.List)):
            items = self.items(arg)  # d.keys(), d.values(), d.items(), a display
            return None if items is None else build.const(len(items))
        return None

    def total(self, expr: gast.Call) -> gast.expr | None:
        """``sum()`` of arrays in a pytree argument: their plain sum."""
        inner = self.resolve(expr.args[0])
        if inner is not None and not inner.is_sequence():
            return None  # a dict sums its keys: used as a whole
        items = self.items(expr.args[0])
        if items is None or not all(isinstance(i, View) for i in items):
            return None
        total: gast.expr = build.const(0)
        for item in items:
            total = build.binop(total, gast.Add(), self.leaf_or_fail(item, expr))
        return total

    def leaf_or_fail(self, view: View, where: gast.AST) -> gast.expr:
        if not view.is_leaf:
            raise self.error("nested containers here are not supported", where)
        return build.load(view.leaves[0])

    def nested(self, node: Any) -> Any:
        if isinstance(node, gast.keyword):
            node.value = self.expression(node.value)
        elif isinstance(node, gast.comprehension):
            raise self.error("comprehensions are not supported yet", node.iter)
        return node

    # ---- a pytree passed to a function of the user's ----

    def user_call(self, expr: gast.Call) -> gast.Call | None:
        """``f(params, x)`` with ``f`` a plain Python function of the user's: containers
        holding parts of a pytree argument are passed leaf by leaf (see module doc)."""
        trees = [self.tree_of(arg) for arg in expr.args]
        if all(t is None for t in trees):
            return None
        callee = self.source.resolve(expr.func, self.local)
        if not self.flat_callable(callee, expr):
            return None
        structures = tuple((k, t[0]) for k, t in enumerate(trees) if t is not None)
        args: list[gast.expr] = []
        for arg, tree in zip(expr.args, trees):
            args.extend(tree[1] if tree is not None else [self.expression(arg)])
        expr.func = gast.copy_location(build.load(self.flat_call(callee, structures, expr)), expr)
        expr.args = args
        expr.keywords = [self.nested(k) for k in expr.keywords]
        return expr

    def flat_callable(self, callee: Any, expr: gast.Call) -> bool:
        """Whether the call can pass containers leaf by leaf; refused when it cannot and a
        sub-tree is passed whole (other calls of displays keep their meaning)."""
        whole = any((v := self.resolve(a)) is not None and not v.is_leaf for a in expr.args) or any(
            self.holds_view(k.value) for k in expr.keywords
        )
        plain = plain_function(callee)
        starred = any(isinstance(a, gast.Starred) for a in expr.args)
        if plain and not starred and not any(self.holds_view(k.value) for k in expr.keywords):
            return True
        if not whole or not callable(callee) or user_callee(callee) is None:
            return False  # a library function: the sub-tree is used as a whole
        name = getattr(callee, "__qualname__", None) or "this function"
        raise self.error(
            f"a pytree argument (or part of one) is passed whole to {name}; srcad passes "
            "one leaf by leaf only to a plain Python function of your own without *args, "
            "as a positional argument",
            expr,
        )

    def flat_call(self, callee: Any, structures: tuple, where: gast.Call) -> str:
        """The global name of the :class:`FlatCall` of ``callee`` for ``structures``."""
        key = (id(callee), structures, len(where.args))
        if key not in self.flat_calls:
            flat = FlatCall(callee, structures, len(where.args))
            name = self.namer.bind_global(flat, f"{_sanitize(callee.__name__)}_by_leaf")
            self.source.namespace[name] = flat
            self.flat_calls[key] = name
        return self.flat_calls[key]

    def holds_view(self, node: gast.expr) -> bool:
        """Whether ``node`` is a sub-tree or a display holding (parts of) one."""
        if self.resolve(node) is not None:
            return True
        if isinstance(node, (gast.List, gast.Tuple)):
            return any(self.holds_view(e) for e in node.elts)
        if isinstance(node, gast.Dict):
            return any(self.holds_view(v) for v in node.values)
        return False

    def nests_views(self, node: gast.expr, top: bool = False) -> bool:
        """Whether a display holds parts of a pytree argument in a way that only a sub-tree
        alias supports: a sub-tree in it, or a tuple, or a list inside (a list of arrays
        and a dict of them are lowered as lists and dicts of the function's own)."""
        if not self.holds_view(node) or self.resolve(node) is not None:
            return False
        parts = node.values if isinstance(node, gast.Dict) else node.elts

        def nests(part: gast.expr) -> bool:
            if isinstance(part, (gast.List, gast.Tuple, gast.Dict)):
                return isinstance(part, (gast.List, gast.Tuple)) or self.nests_views(part)
            view = self.resolve(part)
            return view is not None and not view.is_leaf

        return (top and isinstance(node, gast.Tuple)) or any(nests(p) for p in parts)

    def display_alias(self, name: str, display: gast.expr, origin: gast.stmt) -> list[gast.stmt]:
        """``pairs = [(params["W1"], b1), ...]``: ``pairs`` becomes a sub-tree whose leaves
        are the parameters' and, for the other values, fresh variables holding them."""
        treedef, leaves = self.display_tree(display)
        out: list[gast.stmt] = []
        names = []
        for leaf in leaves:
            if isinstance(leaf, gast.Name) and leaf.id in self.stable:
                names.append(leaf.id)
                continue
            fresh = self.namer.fresh_temp(f"_{name}_leaf")
            self.stable.add(fresh)
            out.append(self.mark(build.assign(fresh, leaf), origin))
            names.append(fresh)
        self.env[name] = View(treedef, names)
        return out

    def tree_of(self, node: gast.expr) -> tuple[Treedef, list[gast.expr]] | None:
        """The structure and leaf expressions of an argument holding a sub-tree (itself, or
        a display with parts of one in it); None for any other argument."""
        view = self.resolve(node)
        if view is not None and view.is_leaf:
            return None
        if view is None and not self.holds_view(node):
            return None
        return self.display_tree(node)

    def display_tree(self, node: gast.expr) -> tuple[Treedef, list[gast.expr]]:
        view = self.resolve(node)
        if view is not None:
            return view.treedef, [gast.copy_location(build.load(n), node) for n in view.leaves]
        if isinstance(node, (gast.List, gast.Tuple)) and not any(
            isinstance(e, gast.Starred) for e in node.elts
        ):
            parts = [self.display_tree(e) for e in node.elts]
            kind, cls = ("list", list) if isinstance(node, gast.List) else ("tuple", tuple)
            treedef = (kind, cls, len(parts), tuple(p[0] for p in parts))
            return treedef, [leaf for p in parts for leaf in p[1]]
        if isinstance(node, gast.Dict):
            keys = [self.constant(k) if k is not None else (False, None) for k in node.keys]
            labels = tuple(v for _, v in keys)
            if not all(ok for ok, _ in keys) or len(set(labels)) != len(labels):
                raise self.error(
                    "a dict display holding parts of a pytree argument needs distinct "
                    "constant keys (and no **) to be passed to a function",
                    node,
                )
            parts = [self.display_tree(v) for v in node.values]
            treedef = ("dict", dict, labels, tuple(p[0] for p in parts))
            return treedef, [leaf for p in parts for leaf in p[1]]
        return ("leaf",), [self.expression(node)]

    # ---- statements ----

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            view = self.resolve(stmt.value)
            if isinstance(target, gast.Name) and view is not None and not view.is_leaf:
                self.env[target.id] = view  # an alias of a sub-tree: resolved statically
                return []
            if isinstance(target, (gast.Tuple, gast.List)) and view is not None:
                return self.unpack(stmt, target, view)
            if isinstance(target, (gast.Tuple, gast.List)):
                rows = self.zip_rows(stmt.value)
                if rows is not None:
                    return self.unpack_rows(stmt, target, rows)
            if isinstance(target, (gast.Tuple, gast.List)) and self.holds_view(stmt.value):
                pairs = self.display_pairs(target, stmt.value)
                if pairs is not None:
                    return self.unpack_display(stmt, pairs)
            if isinstance(target, gast.Name) and self.nests_views(stmt.value, top=True):
                return self.display_alias(target.id, stmt.value, stmt)
        if isinstance(stmt, gast.For):
            items = self.loop_items(stmt)
            if items is not None:
                return self.unroll(stmt, items)
        if isinstance(stmt, gast.If):
            test = self.expression(stmt.test)
            if isinstance(test, gast.Constant) and isinstance(test.value, bool):
                # ``if "k" in kwargs``: only the arm the call's keys choose is read
                return self.block(stmt.body if test.value else stmt.orelse)
            stmt.test = test
            return [self.branches(stmt)]
        if isinstance(stmt, (gast.For, gast.While)):
            return [self.loop(stmt)]
        for field, value in gast.iter_fields(stmt):
            if isinstance(value, gast.expr) and field != "target":
                setattr(stmt, field, self.expression(value))
        for target in getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]:
            if target is not None:
                self.constant_keys(target)
        self.forget(stmt)  # after its value: ``k = d[k]`` reads the old ``k``
        self.remember_constant(stmt)
        return [stmt]

    def compared_keys(self, expr: gast.Compare) -> gast.expr | None:
        """``k != "b"`` with ``k`` a key of an unrolled loop: the answer (a comprehension's
        filter picks its keys statically)."""
        parts = [self.constant(p) for p in (expr.left, *expr.comparators)]
        if not all(ok for ok, _ in parts):
            return None
        values = [build.const(v) for _, v in parts]
        found = constant_of(gast.Compare(left=values[0], ops=expr.ops, comparators=values[1:]))
        return None if found is None else build.const(found[0])

    def constant_keys(self, node: gast.AST) -> None:
        """``out[k] = v`` with ``k`` a key of an unrolled loop (``out`` a dict the function
        builds: a comprehension's): the key written as the constant it is."""
        for sub in gast.walk(node):
            if isinstance(sub, gast.Subscript) and isinstance(sub.slice, gast.Name):
                ok, value = self.constant(sub.slice)
                if ok and type(value) is str:
                    sub.slice = gast.copy_location(build.const(value), sub.slice)

    def forget(self, node: gast.AST) -> None:
        """Drop what is known of the names ``node`` stores to."""
        for name in gast.walk(node):
            if isinstance(name, gast.Name) and not isinstance(name.ctx, gast.Load):
                self.env.pop(name.id, None)

    def remember_constant(self, stmt: gast.stmt) -> None:
        """``k = "W"``: ``params[k]`` then reads a constant key."""
        if (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Constant)
            and type(stmt.value.value) in (str, int)
        ):
            self.env[stmt.targets[0].id] = Const(stmt.value.value)

    def branches(self, stmt: gast.If) -> gast.If:
        """An ``if``: each arm from the same bindings; afterwards what both agree on."""
        before = dict(self.env)
        stmt.body = self.block(stmt.body) or [gast.Pass()]
        after_body, self.env = self.env, before
        stmt.orelse = self.block(stmt.orelse)
        self.env = merged(after_body, self.env)
        return stmt

    def loop(self, stmt: gast.For | gast.While) -> gast.stmt:
        """A loop kept as a loop: its body sees what holds on every iteration, and so does
        the code after it."""
        if isinstance(stmt, gast.For):
            stmt.iter = self.expression(stmt.iter)  # evaluated once, before the loop
            self.forget(stmt.target)
        entry = dict(self.env)
        # a trial run over a copy tells which bindings the body changes
        self.block(copy.deepcopy(stmt.body))
        self.env = merged(entry, self.env)
        top = dict(self.env)
        if isinstance(stmt, gast.While):
            stmt.test = self.expression(stmt.test)
        stmt.body = self.block(stmt.body) or [gast.Pass()]
        self.env = merged(top, self.env)
        stmt.orelse = self.block(stmt.orelse)
        return stmt

    def bind(self, target: gast.expr, item: Any, origin: gast.stmt) -> list[gast.stmt]:
        """Bind a loop's target to one item (see :meth:`items`)."""
        if isinstance(item, tuple):
            return self.bind_parts(target, item, origin)
        if isinstance(target, gast.Name) and isinstance(item, Const):
            self.env[target.id] = item
            return [self.mark(build.assign(target.id, build.const(item.value)), origin)]
        if isinstance(target, gast.Name) and isinstance(item, View):
            if item.is_leaf:
                self.env.pop(target.id, None)
                return [self.mark(build.assign(target.id, build.load(item.leaves[0])), origin)]
            self.env[target.id] = item
            return []
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, View):
            return self.unpack(origin, target, item)
        raise self.error("unsupported target for a pytree value", target)

    def bind_parts(self, target: gast.expr, parts: tuple, origin: gast.stmt) -> list[gast.stmt]:
        """Bind a target to an item of ``zip``, ``enumerate`` or ``.items()``."""
        if isinstance(target, gast.Name) and all(isinstance(p, View) for p in parts):
            return self.bind(target, View.tuple_of(list(parts)), origin)
        if not isinstance(target, (gast.Tuple, gast.List)):
            raise self.error(
                "unpack the items of enumerate(), zip() or .items() over a pytree argument "
                "in the loop's target (for i, W in enumerate(params))",
                target,
            )
        if len(target.elts) != len(parts) or any(isinstance(e, gast.Starred) for e in target.elts):
            raise self.error(
                f"the items here have {len(parts)} parts; unpack them into as many names",
                target,
            )
        out: list[gast.stmt] = []
        for elt, part in zip(target.elts, parts):
            out.extend(self.bind(elt, part, origin))
        return out

    def mark(self, new: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(new, origin)
        setanno(new, "origin", getanno(origin, "origin", origin))
        return new

    def unpack(self, stmt: gast.stmt, target: gast.expr, view: View) -> list[gast.stmt]:
        if not view.is_sequence() or len(view.labels()) != len(target.elts):
            raise self.error(
                "unpacking a pytree argument needs a list or tuple of the same length", stmt
            )
        out: list[gast.stmt] = []
        for elt, child in zip(target.elts, view.children()):
            out.extend(self.bind(elt, child, stmt))
        return out

    def zip_rows(self, value: gast.expr) -> list | None:
        """The items of ``zip(...)`` of sub-trees (``zip(*params)`` of a list of pairs
        too), or None for any other value."""
        if not (isinstance(value, gast.Call) and self.builtin(value.func, "zip")):
            return None
        self.spread(value)
        return self.items(value)

    def unpack_rows(self, stmt: gast.Assign, target: gast.expr, rows: list) -> list[gast.stmt]:
        """``Ws, bs = zip(*params)``: each name a tuple of the sub-trees of one item."""
        if len(rows) != len(target.elts):
            raise self.error(
                f"unpacking zip() over a pytree argument into {len(target.elts)} names; it "
                f"has {len(rows)} items",
                stmt,
            )
        return self.bind_parts(target, tuple(rows), stmt)

    def display_pairs(self, target: gast.expr, value: gast.expr) -> list | None:
        """``(p,), (dp,) = primals, tangents``: each target part with the value it gets,
        matched through displays of the same length; None where they do not match."""
        nested = isinstance(target, (gast.Tuple, gast.List))
        if not (nested and isinstance(value, (gast.Tuple, gast.List))):
            return [(target, value)]
        parts = [*target.elts, *value.elts]
        if len(target.elts) != len(value.elts) or any(isinstance(p, gast.Starred) for p in parts):
            return None
        pairs: list = []
        for elt, part in zip(target.elts, value.elts):
            whole = self.resolve(part) is not None
            inner = [(elt, part)] if whole else self.display_pairs(elt, part)
            if inner is None:
                return None
            pairs.extend(inner)
        return pairs

    def unpack_display(self, stmt: gast.Assign, pairs: list) -> list[gast.stmt]:
        """Unpack a display holding sub-trees: the sub-trees bound statically, the other
        values first held in temporaries (Python evaluates the whole right side before it
        assigns, so ``x, (a,) = a, params`` reads the old ``a``)."""
        out: list[gast.stmt] = []
        later: list[tuple[gast.expr, Any]] = []
        for target, value in pairs:
            view = self.resolve(value)
            if view is not None:
                later.append((target, view))
                continue
            held = self.namer.fresh_temp("_unpacked")
            out.append(self.mark(build.assign(held, self.expression(value)), stmt))
            later.append((target, held))
        for target, value in later:
            if isinstance(value, View):
                out.extend(self.bind(target, value, stmt))
            else:
                out.extend(self.statement(self.mark(build.assign(target, build.load(value)), stmt)))
        return out

    def unroll(self, stmt: gast.For, items: list) -> list[gast.stmt]:
        """One copy of the loop's body per item, the target bound to the item."""
        if has_jump(stmt):
            raise self.error(
                "break/continue in a loop over a pytree argument is not supported", stmt
            )
        out: list[gast.stmt] = []
        for item in items:
            out.extend(self.bind(stmt.target, item, stmt))
            out.extend(self.block(copy.deepcopy(stmt.body)))
        out.extend(self.block(stmt.orelse))
        return out


def _sanitize(label: Any) -> str:
    text = re.sub(r"\W", "_", str(label)).strip("_")
    return text or "leaf"


def expand_pytree_params(
    tree: gast.FunctionDef, source: Source, namer: Namer, structures: dict[str, Treedef]
) -> dict[str, list[str]]:
    """Give each pytree parameter one parameter per leaf (see module doc)."""
    from srcad.pytree import paths

    env: dict[str, Any] = {}
    leaves_of: dict[str, list[str]] = {}
    new_args: list[gast.Name] = []
    args = list(tree.args.args)
    vararg = tree.args.vararg
    if vararg is not None and vararg.id in structures:
        # *args of a known length: a tuple parameter, expanded like any other
        args.append(vararg)
        tree.args.vararg = None
    kwarg = tree.args.kwarg
    if kwarg is not None and kwarg.id in structures:
        # **kwargs with known keywords: a dict parameter after them (call_arguments's order)
        args.append(kwarg)
        tree.args.kwarg = None
    for arg in args:
        treedef = structures.get(arg.id)
        if treedef is None or treedef[0] == "leaf":
            new_args.append(arg)
            continue
        names = [
            namer.fresh("_".join([arg.id, *(_sanitize(p) for p in path)]))
            for path in paths(treedef)
        ]
        leaves_of[arg.id] = names
        env[arg.id] = View(treedef, names)
        new_args.extend(build.param(n) for n in names)
    local = local_names(tree)
    tree.args.args = new_args
    tree.args.defaults = []
    tree.body = _Expand(source, namer, env, local).block(tree.body)
    return leaves_of


def refuse_unknown_structures(source: Source, names: list[str]) -> None:
    """Refuse a differentiated parameter indexed by string keys when its structure is unknown.

    Without example arguments srcad cannot know that ``params`` is a dict, and code that
    treats it as one array (``zeros_like(params)``) would crash when run.
    """
    for node in gast.walk(source.tree):
        if (
            isinstance(node, gast.Subscript)
            and isinstance(node.value, gast.Name)
            and node.value.id in names
            and isinstance(node.slice, gast.Constant)
            and isinstance(node.slice.value, str)
        ):
            name = node.value.id
            raise source.error(
                f"parameter '{name}' is indexed by the key {node.slice.value!r}, but its "
                "structure is not known: call the derivative with the arguments, or pass "
                "example arguments (srcad.export(..., example_args=...), --example NAME)",
                node,
                UnknownStructureError,
            )
