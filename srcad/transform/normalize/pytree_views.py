"""What the pytree pass knows about a name, and what an expression denotes.

The pass (``pytrees.py``) resolves reads of pytree parameters statically, so it tracks what
each name is bound to along the straight-line code it walks: a :class:`View` (a sub-tree and
its leaves' parameter names), a :class:`Const` (a dict key or an index an unrolled loop
bound), or :data:`AMBIGUOUS` (different sub-trees on different paths: refused where read).
A :class:`Resolver` tells which sub-tree an expression (``params["enc"]["W"]``,
``layers[1:]``, ``d.get("a")``) denotes under those bindings.
"""

from __future__ import annotations

import builtins
from typing import Any

import gast

from srcad.pytree import Treedef
from srcad.transform import build
from srcad.transform.frontend import Source

#: operators folded over constant indices (``params[i + 1]`` with ``i`` from ``enumerate``)
_FOLD = {gast.Add: int.__add__, gast.Sub: int.__sub__, gast.Mult: int.__mul__}


class View:
    """A sub-tree of a pytree parameter: its structure and its leaves' parameter names."""

    def __init__(self, treedef: Treedef, leaves: list[str]) -> None:
        self.treedef = treedef
        self.leaves = leaves

    @classmethod
    def tuple_of(cls, parts: list[View]) -> View:
        """The tuple ``(a, b, ...)`` of sub-trees (an item of ``zip`` bound to one name)."""
        treedef = ("tuple", tuple, len(parts), tuple(p.treedef for p in parts))
        return cls(treedef, [leaf for p in parts for leaf in p.leaves])

    @property
    def is_leaf(self) -> bool:
        return self.treedef[0] == "leaf"

    def children(self) -> list[View]:
        out = []
        start = 0
        for child in self.treedef[3]:
            count = count_leaves(child)
            out.append(View(child, self.leaves[start : start + count]))
            start += count
        return out

    def labels(self) -> list[Any]:
        keys = self.treedef[2]
        return list(keys) if isinstance(keys, tuple) else list(range(keys))

    def child(self, key: Any) -> View | None:
        if self.is_leaf:
            return None
        labels = self.labels()
        if self.treedef[0] == "custom" and not isinstance(self.treedef[2], tuple):
            return None  # a registered class without names: its children are unnamed
        if isinstance(key, int) and not isinstance(key, bool) and self.is_sequence():
            if -len(labels) <= key < len(labels):
                return self.children()[key % len(labels)]
            return None
        if key in labels:
            return self.children()[labels.index(key)]
        return None

    def sliced(self, bounds: slice) -> View:
        """``self[bounds]`` of a sequence: a list for a list, a plain tuple otherwise (as
        slicing a namedtuple gives)."""
        children = self.children()[bounds]
        kind, cls = ("list", list) if self.treedef[0] == "list" else ("tuple", tuple)
        treedef = (kind, cls, len(children), tuple(c.treedef for c in children))
        return View(treedef, [leaf for c in children for leaf in c.leaves])

    def is_sequence(self) -> bool:
        return self.treedef[0] in ("list", "tuple", "namedtuple")

    def same(self, other: Any) -> bool:
        return (
            isinstance(other, View)
            and other.treedef == self.treedef
            and other.leaves == self.leaves
        )


class Const:
    """A name known to hold a constant (a dict key, an index an unrolled loop bound)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def same(self, other: Any) -> bool:
        return (
            isinstance(other, Const)
            and type(other.value) is type(self.value)
            and other.value == self.value
        )


#: bound to different sub-trees on different paths (a branch, a loop)
AMBIGUOUS = object()


def count_leaves(treedef: Treedef) -> int:
    return 1 if treedef[0] == "leaf" else sum(count_leaves(c) for c in treedef[3])


def merged(*envs: dict[str, Any]) -> dict[str, Any]:
    """What every path agrees a name is bound to, after paths join (the arms of an ``if``,
    a loop run zero or more times): a sub-tree bound differently on some path becomes
    :data:`AMBIGUOUS`; a constant not known on every path is forgotten."""
    out: dict[str, Any] = {}
    for name in set().union(*envs):
        values = [env.get(name) for env in envs]
        first = values[0]
        if first is not None and all(_same(first, v) for v in values[1:]):
            out[name] = first
        elif any(isinstance(v, View) or v is AMBIGUOUS for v in values):
            out[name] = AMBIGUOUS
    return out


def _same(a: Any, b: Any) -> bool:
    return a is b or (isinstance(a, (View, Const)) and a.same(b))


def kind_label(view: View) -> str:
    """How errors name a registered class."""
    return f"registered pytree class {view.treedef[1].__name__}"


def _names(view: View) -> str:
    keys = view.treedef[2]
    return "names: " + ", ".join(keys) if isinstance(keys, tuple) and keys else "none given"


class Resolver:
    """What expressions denote, under the bindings in ``env`` (a name's :class:`View`,
    :class:`Const` or :data:`AMBIGUOUS`)."""

    def __init__(self, source: Source, env: dict[str, Any], local: set[str]) -> None:
        self.source = source
        self.env = env
        #: the function's own names (a call through one is not a builtin's)
        self.local = local

    def error(self, message: str, node: gast.AST) -> Exception:
        return self.source.error(message, node)

    def resolve(self, expr: gast.expr) -> View | None:
        """The sub-tree ``expr`` denotes, or None for any other value."""
        if isinstance(expr, gast.Name) and isinstance(expr.ctx, gast.Load):
            bound = self.env.get(expr.id)
            if bound is AMBIGUOUS:
                raise self.error(
                    f"'{expr.id}' is bound to different parts of a pytree argument on different "
                    "paths (an if/else, or a loop); srcad reads pytree arguments statically: "
                    "read the arrays with constant keys where the name is bound",
                    expr,
                )
            return bound if isinstance(bound, View) else None
        if isinstance(expr, gast.Subscript):
            return self.subscript(expr)
        if isinstance(expr, gast.Attribute):
            return self.attribute(expr)
        if isinstance(expr, gast.Call):
            got = self.get_call(expr)
            if got is not None:
                found, default = got
                return found if found is not None else self.resolve(default)
        return None

    def subscript(self, expr: gast.Subscript) -> View | None:
        base = self.resolve(expr.value)
        if base is None or base.is_leaf:
            return None  # indexing an array (a leaf): an ordinary read of its variable
        if base.treedef[0] == "custom":
            raise self.error(
                f"a {kind_label(base)} argument is indexed here; srcad cannot know what its "
                "__getitem__ reads: read its children as attributes (see "
                "srcad.register_pytree_node's names=)",
                expr,
            )
        if isinstance(expr.slice, gast.Slice):
            return self.sliced(base, expr.slice, expr)
        ok, key = self.constant(expr.slice)
        found = base.child(key) if ok else None
        if found is None:
            raise self.error(
                "a pytree argument is read with an index srcad cannot resolve here; "
                "use constant keys (params['W'], layers[0])",
                expr,
            )
        return found

    def sliced(self, base: View, bounds: gast.Slice, where: gast.AST) -> View:
        """``base[lower:upper:step]`` with constant bounds."""
        if not base.is_sequence():
            raise self.error("only a list or tuple pytree argument can be sliced", where)
        values = []
        for part in (bounds.lower, bounds.upper, bounds.step):
            ok, value = self.constant(part) if part is not None else (True, None)
            if not ok or not (value is None or type(value) is int):
                raise self.error(
                    "a pytree argument is sliced with bounds srcad cannot resolve here; "
                    "use constant bounds (params[1:-1], layers[:2])",
                    where,
                )
            values.append(value)
        if values[2] == 0:
            raise self.error("slice step cannot be zero", where)
        return base.sliced(slice(*values))

    def attribute(self, expr: gast.Attribute) -> View | None:
        base = self.resolve(expr.value)
        if base is None or base.is_leaf:
            return None  # an array's attribute (params["W"].T): read from its variable
        found = base.child(expr.attr)
        if found is None and base.treedef[0] == "custom":
            raise self.error(
                f"'{expr.attr}' is not a child of the {kind_label(base)} argument that srcad "
                "can name; srcad reads a registered class only through the attributes "
                f"given as register_pytree_node's names= ({_names(base)})",
                expr,
            )
        if found is None and base.treedef[0] in ("list", "tuple", "dict"):
            raise self.error(
                f"'.{expr.attr}' of a pytree argument (or of a container holding parts of one) "
                "is not supported here; read its arrays with constant keys, loop over it, or "
                "pass it to a function of your own",
                expr,
            )
        if found is None:
            raise self.error(f"the pytree argument has no field '{expr.attr}'", expr)
        return found

    def get_call(self, expr: gast.Call) -> tuple[View | None, gast.expr] | None:
        """For ``d.get(key[, default])`` on a pytree dict: its entry (None when the key is
        absent) and the default's node."""
        func = expr.func
        if not (isinstance(func, gast.Attribute) and func.attr == "get"):
            return None
        base = self.resolve(func.value)
        if base is None or base.treedef[0] != "dict":
            return None
        if expr.keywords or not 1 <= len(expr.args) <= 2:
            raise self.error("a dict's get takes a key and an optional default", expr)
        ok, key = self.constant(expr.args[0])
        if not ok:
            raise self.error(
                "a pytree argument is read with an index srcad cannot resolve here; "
                "use constant keys (params.get('W'))",
                expr,
            )
        default = expr.args[1] if len(expr.args) == 2 else build.const(None)
        return base.child(key), default

    def constant(self, node: gast.expr) -> tuple[bool, Any]:
        """``(True, value)`` when ``node`` is a constant srcad can tell statically."""
        if isinstance(node, gast.Constant):
            return True, node.value
        if isinstance(node, gast.Name) and isinstance(self.env.get(node.id), Const):
            return True, self.env[node.id].value
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            ok, value = self.constant(node.operand)
            if ok and type(value) is int:
                return True, -value
        if isinstance(node, gast.BinOp) and type(node.op) in _FOLD:
            (ok_left, left), (ok_right, right) = map(self.constant, (node.left, node.right))
            if ok_left and ok_right and type(left) is int and type(right) is int:
                return True, _FOLD[type(node.op)](left, right)
        return False, None

    def builtin(self, func: gast.expr, name: str) -> bool:
        """Whether ``func`` is Python's builtin ``name`` (not shadowed)."""
        return (
            isinstance(func, gast.Name)
            and func.id == name
            and self.source.resolve(func, self.local) is getattr(builtins, name)
        )
