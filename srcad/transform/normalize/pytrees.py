"""Pytree parameters become one parameter per leaf, specialized to the call's structure.

``params["W"]`` (or ``params.W`` on a namedtuple, a dataclass or a class registered with
names, ``layers[0]`` on a list) is replaced by a parameter ``params_W`` of its own; a name
bound to a sub-tree (``layer = params["layer1"]``), tuple unpacking of a sequence
(``W1, W2 = weights``) and a loop over a sequence (``for W in weights``, unrolled) follow
the structure too. A registered class is read only through its named children. The gradient
then is one array per leaf, rebuilt into the argument's structure by the API.
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
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer


class _View:
    """A sub-tree of a pytree parameter: its structure and its leaves' parameter names."""

    def __init__(self, treedef: Treedef, leaves: list[str]) -> None:
        self.treedef = treedef
        self.leaves = leaves

    @property
    def is_leaf(self) -> bool:
        return self.treedef[0] == "leaf"

    def children(self) -> list[_View]:
        out = []
        start = 0
        for child in self.treedef[3]:
            count = _count(child)
            out.append(_View(child, self.leaves[start : start + count]))
            start += count
        return out

    def labels(self) -> list[Any]:
        keys = self.treedef[2]
        return list(keys) if isinstance(keys, tuple) else list(range(keys))

    def child(self, key: Any) -> _View | None:
        if self.is_leaf:
            return None
        labels = self.labels()
        if self.treedef[0] == "custom" and not isinstance(self.treedef[2], tuple):
            return None  # a registered class without names: its children are unnamed
        if (
            isinstance(key, int)
            and not isinstance(key, bool)
            and self.treedef[0] in ("list", "tuple", "namedtuple")
        ):
            if -len(labels) <= key < len(labels):
                return self.children()[key % len(labels)]
            return None
        if key in labels:
            return self.children()[labels.index(key)]
        return None

    def is_sequence(self) -> bool:
        return self.treedef[0] in ("list", "tuple", "namedtuple")


def _count(treedef: Treedef) -> int:
    return 1 if treedef[0] == "leaf" else sum(_count(c) for c in treedef[3])


def _kind(view: _View) -> str:
    return f"registered pytree class {view.treedef[1].__name__}"


def _names(view: _View) -> str:
    keys = view.treedef[2]
    return "names: " + ", ".join(keys) if isinstance(keys, tuple) and keys else "none given"


def _constant(node: gast.expr) -> tuple[bool, Any]:
    if isinstance(node, gast.Constant):
        return True, node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        ok, value = _constant(node.operand)
        if ok and isinstance(value, int):
            return True, -value
    return False, None


class _Expand:
    def __init__(self, source: Source, env: dict[str, _View]) -> None:
        self.source = source
        self.env = env

    def resolve(self, expr: gast.expr) -> _View | None:
        if isinstance(expr, gast.Name) and isinstance(expr.ctx, gast.Load):
            return self.env.get(expr.id)
        if isinstance(expr, gast.Subscript):
            base = self.resolve(expr.value)
            if base is None:
                return None
            ok, key = _constant(expr.slice)
            if base.treedef[0] == "custom":
                raise self.source.error(
                    f"a {_kind(base)} argument is indexed here; srcad cannot know what its "
                    "__getitem__ reads: read its children as attributes (see "
                    "srcad.register_pytree_node's names=)",
                    expr,
                )
            found = base.child(key) if ok else None
            if found is None:
                raise self.source.error(
                    "a pytree argument is read with an index srcad cannot resolve here; "
                    "use constant keys (params['W'], layers[0])",
                    expr,
                )
            return found
        if isinstance(expr, gast.Attribute):
            base = self.resolve(expr.value)
            if base is None:
                return None
            found = base.child(expr.attr)
            if found is None and base.treedef[0] == "custom":
                raise self.source.error(
                    f"'{expr.attr}' is not a child of the {_kind(base)} argument that srcad "
                    "can name; srcad reads a registered class only through the attributes "
                    f"given as register_pytree_node's names= ({_names(base)})",
                    expr,
                )
            if found is None:
                raise self.source.error(f"the pytree argument has no field '{expr.attr}'", expr)
            return found
        return None

    def expression(self, expr: gast.expr) -> gast.expr:
        view = self.resolve(expr)
        if view is not None:
            if view.is_leaf:
                return gast.copy_location(build.load(view.leaves[0]), expr)
            raise self.source.error(
                "a pytree argument (or part of one) is used as a whole here; read its "
                "arrays with constant keys, unpack it, or loop over it",
                expr,
            )
        if isinstance(expr, gast.Call) and len(expr.args) == 1 and not expr.keywords:
            inner = self.resolve(expr.args[0])
            func = expr.func
            if inner is not None and not inner.is_leaf and isinstance(func, gast.Name):
                if func.id == "len" and inner.treedef[0] == "custom":
                    raise self.source.error(
                        f"len() of a {_kind(inner)} argument calls its own __len__, which "
                        "srcad cannot read; pass the length as an argument",
                        expr,
                    )
                if func.id == "len":
                    return gast.copy_location(build.const(len(inner.labels())), expr)
                if func.id == "sum" and inner.is_sequence():
                    # sum over a tuple of arrays: their plain sum
                    total: gast.expr = build.const(0)
                    for child in inner.children():
                        total = build.binop(
                            total, gast.Add(), self.expression(self._leaf_or_fail(child, expr))
                        )
                    return gast.copy_location(total, expr)
            if (
                inner is not None
                and not inner.is_leaf
                and inner.is_sequence()
                and isinstance(func, gast.Attribute)
                and func.attr in ("stack", "concatenate")
            ):
                elts = [self._leaf_or_fail(child, expr) for child in inner.children()]
                expr.args = [gast.List(elts=elts, ctx=gast.Load())]
                return expr
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

    def _leaf_or_fail(self, view: _View, where: gast.AST) -> gast.expr:
        if not view.is_leaf:
            raise self.source.error("nested containers here are not supported", where)
        return build.load(view.leaves[0])

    def nested(self, node: Any) -> Any:
        if isinstance(node, gast.keyword):
            node.value = self.expression(node.value)
        elif isinstance(node, gast.comprehension):
            raise self.source.error("comprehensions are not supported yet", node.iter)
        return node

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
        if isinstance(stmt, gast.For):
            view = self.resolve(stmt.iter)
            if view is not None:
                return self.unroll(stmt, view)
        for name in _stored_names(stmt):
            self.env.pop(name, None)
        if isinstance(stmt, (gast.If, gast.While)):
            stmt.test = self.expression(stmt.test)
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
            return [stmt]
        if isinstance(stmt, gast.For):
            stmt.iter = self.expression(stmt.iter)
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
            return [stmt]
        for field, value in gast.iter_fields(stmt):
            if isinstance(value, gast.expr) and field not in ("target",):
                setattr(stmt, field, self.expression(value))
        return [stmt]

    def bind(self, target: gast.expr, view: _View, origin: gast.stmt) -> list[gast.stmt]:
        if isinstance(target, gast.Name):
            if view.is_leaf:
                self.env.pop(target.id, None)
                new = build.assign(target.id, build.load(view.leaves[0]))
                gast.copy_location(new, origin)
                setanno(new, "origin", getanno(origin, "origin", origin))
                return [new]
            self.env[target.id] = view
            return []
        if isinstance(target, (gast.Tuple, gast.List)):
            return self.unpack(origin, target, view)
        raise self.source.error("unsupported target for a pytree value", target)

    def unpack(self, stmt: gast.stmt, target: gast.expr, view: _View) -> list[gast.stmt]:
        if not view.is_sequence() or len(view.labels()) != len(target.elts):
            raise self.source.error(
                "unpacking a pytree argument needs a list or tuple of the same length", stmt
            )
        out: list[gast.stmt] = []
        for elt, child in zip(target.elts, view.children()):
            out.extend(self.bind(elt, child, stmt))
        return out

    def unroll(self, stmt: gast.For, view: _View) -> list[gast.stmt]:
        if view.is_leaf:
            return [stmt]
        if any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(stmt)):
            raise self.source.error(
                "break/continue in a loop over a pytree argument is not supported", stmt
            )
        out: list[gast.stmt] = []
        children = view.children()
        if view.treedef[0] == "custom":
            raise self.source.error(
                f"a loop over a {_kind(view)} argument runs its own __iter__, which srcad "
                "cannot read; read its children as attributes",
                stmt,
            )
        if view.treedef[0] == "dict":  # iterating a dict gives its keys
            raise self.source.error(
                "a loop over a dict argument is not supported; read its entries with "
                "constant keys (params['W'])",
                stmt,
            )
        for child in children:
            out.extend(self.bind(stmt.target, child, stmt))
            out.extend(self.block(copy.deepcopy(stmt.body)))
        out.extend(self.block(stmt.orelse))
        return out


def _stored_names(stmt: gast.stmt) -> list[str]:
    targets = stmt.targets if isinstance(stmt, gast.Assign) else []
    if isinstance(stmt, (gast.AugAssign, gast.For)):
        targets = [stmt.target]
    return [n.id for t in targets for n in gast.walk(t) if isinstance(n, gast.Name)]


def _sanitize(label: Any) -> str:
    text = re.sub(r"\W", "_", str(label)).strip("_")
    return text or "leaf"


def expand_pytree_params(
    tree: gast.FunctionDef, source: Source, namer: Namer, structures: dict[str, Treedef]
) -> dict[str, list[str]]:
    """Give each pytree parameter one parameter per leaf (see module doc)."""
    from srcad.pytree import paths

    env: dict[str, _View] = {}
    leaves_of: dict[str, list[str]] = {}
    new_args: list[gast.Name] = []
    args = list(tree.args.args)
    vararg = tree.args.vararg
    if vararg is not None and vararg.id in structures:
        # *args of a known length: a tuple parameter, expanded like any other
        args.append(vararg)
        tree.args.vararg = None
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
        env[arg.id] = _View(treedef, names)
        new_args.extend(build.param(n) for n in names)
    tree.args.args = new_args
    tree.args.defaults = []
    tree.body = _Expand(source, env).block(tree.body)
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
