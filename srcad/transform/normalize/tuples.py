"""A name only ever assigned tuple displays of one length becomes one name per element:

``state = (h, 2 * c)`` ... ``h = state[0]`` ... ``a, b = state`` becomes
``state_0, state_1 = h, 2 * c`` ... ``h = state_0`` ... ``a, b = state_0, state_1``, which
differentiates like any names (a tuple of differentiable values is otherwise refused). A
constant index picks a name, ``len`` is a constant, and any other read (``np.stack(state)``,
``return state``) is the tuple written out, ``(state_0, state_1)``: the same value.

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.naming import Namer
>>> text = "def f(x):\\n    y = (x, 2 * x)\\n    y = (y[1], y[0])\\n    return y[0] * len(y)"
>>> tree = gast.parse(text).body[0]
>>> print(to_source(split_tuples(tree, Namer.for_tree(tree))), end="")
def f(x):
    y_0, y_1 = (x, 2 * x)
    y_0, y_1 = (y_1, y_0)
    return y_0 * 2
"""

from __future__ import annotations

import builtins
import copy

import gast

from srcad.transform import build
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import binds_name, rename_until, rewrite_bodies

#: the most rounds of splitting (each follows a tuple one copy or one nesting further)
_MAX_ROUNDS = 16


def split_tuples(
    tree: gast.FunctionDef, namer: Namer, builtin_len: bool = True
) -> gast.FunctionDef:
    """One name per element for each tuple name that allows it (see module doc);
    ``builtin_len``: ``len`` is Python's (not shadowed by the function's module).

    Repeated while it splits: a name read whole is written out as the display of its
    elements, so a copy of it (``r = result``, as code written out by the inliner binds a
    helper's result) is a name assigned a display the next round; so is a tuple nested in
    one (``out, (t, q)``: ``result_1`` of ``result_0, result_1 = (a, (t, q))``).

    In generated code differentiated again, a tuple on a tape (a custom rule's residuals
    recorded in a loop) splits too: ``tape.push(r)`` pushes each element, ``r = tape.pop()``
    pops them back in reverse order, and the ``r = None`` that starts a name pushed before
    it is assigned starts each element so."""
    tree.body = rewrite_bodies(tree.body, lambda body: _rebound(body, namer))
    for _ in range(_MAX_ROUNDS):
        if not _split_once(tree, namer, builtin_len):
            break
    return tree


class _Join(gast.NodeTransformer):
    """``(a, b) + (c,)`` is ``(a, b, c)``: a tuple name written out and joined to another
    display is a display, which the name it is assigned to then splits into."""

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        if (
            isinstance(node.op, gast.Add)
            and isinstance(node.left, gast.Tuple)
            and isinstance(node.right, gast.Tuple)
        ):
            return gast.copy_location(build.tuple_([*node.left.elts, *node.right.elts]), node)
        return node


def _rebound(body: list[gast.stmt], namer: Namer) -> list[gast.stmt]:
    """A name bound to a tuple display and, further down the same block, to a tuple of
    another length (``args = (x, y)`` ... ``args = args + (z,)``): the first tuple gets a
    name of its own up to that statement, so that each name holds tuples of one length
    (statements between, branches and loops too, such as a helper written out, read the
    first tuple unless they bind the name themselves)."""
    for i, stmt in enumerate(body):
        value = stmt.value if binds_name(stmt) else None
        joined_before = isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)
        if not (isinstance(value, gast.Tuple) or joined_before):
            continue
        if joined_before and not any(isinstance(v, gast.Tuple) for v in (value.left, value.right)):
            continue  # (a tuple joined to a display: its length is not read here)
        name = stmt.targets[0].id
        length = len(value.elts) if isinstance(value, gast.Tuple) else None
        for j in range(i + 1, len(body)):
            later = body[j]
            if any(isinstance(n, (gast.FunctionDef, gast.Lambda)) for n in gast.walk(later)):
                break  # (a closure would read the later tuple)
            if binds_name(later) and later.targets[0].id == name:
                value = later.value
                joined = isinstance(value, gast.BinOp) and name in {
                    getattr(value.left, "id", None),
                    getattr(value.right, "id", None),
                }
                other = isinstance(value, gast.Tuple) and len(value.elts) != length
                if joined or other:
                    rename_until(body, i, j, namer.fresh(f"{name}_first"))
                break
            if any(
                isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
                for n in gast.walk(later)
            ):
                break  # bound otherwise (unpacked into)
    return body


def _split_once(tree: gast.FunctionDef, namer: Namer, builtin_len: bool) -> bool:
    """One round of :func:`split_tuples`; whether it split any name."""
    _Join().visit(tree)
    parents = _parents(tree)
    tapes, restored = _tapes(tree, namer)
    params = {a.id for a in [*tree.args.posonlyargs, *tree.args.args, *tree.args.kwonlyargs]}
    lengths: dict[str, int | None] = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id not in params:
            lengths[node.id] = _agree(lengths.get(node.id, 0), _use(node, parents, tapes, restored))
    # a name started as None is split only as the placeholder a tape's push needs, read
    # only by pushes, constant indexes and copies (a test ``r is None`` would read
    # ``(r_0, r_1) is None``)
    placeholders = {n.id for n in gast.walk(tree) if _stores_none(n, parents)}
    refused = (placeholders - restored) | {
        n.id
        for n in gast.walk(tree)
        if isinstance(n, gast.Name) and n.id in placeholders
        and isinstance(n.ctx, gast.Load) and not _kept(n, parents)
    }  # fmt: skip
    bound = {name for name, n in lengths.items() if n is not None and n > 0 and name not in refused}
    # a name stored by a tuple display somewhere, whose every use allows splitting
    split = {
        name: lengths[name]
        for name in sorted(bound)  # (sorted: fresh names in the same order every run)
        if any(
            isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
            for n in gast.walk(tree)
        )
    }
    for node in gast.walk(tree):  # an index out of range keeps Python's IndexError
        if (
            isinstance(node, gast.Subscript)
            and isinstance(node.value, gast.Name)
            and node.value.id in split
        ):
            index = _constant_index(node.slice)
            if index is not None and not -split[node.value.id] <= index < split[node.value.id]:
                del split[node.value.id]
    if not split:
        return False
    elements = {name: [namer.fresh(f"{name}_{k}") for k in range(n)] for name, n in split.items()}
    _Split(elements, builtin_len, tapes, restored).visit(tree)
    return True


def _tapes(tree: gast.FunctionDef, namer: Namer) -> tuple[set[str], set[str]]:
    """Names generated code binds to a new :class:`~srcad.runtime.tape.Tape` with no bare
    ``tape.pop()`` (a value dropped, whose push is not known), and the names they restore:
    as many ``tape.push(name)`` statements as ``name = tape.pop()`` ones, as generated
    code mirrors each push by a pop (a value saved in one name, or none, and taken back
    into another is not, and is left whole), so that splitting one splits its pushes and
    pops alike."""
    from collections import Counter

    from srcad.runtime.tape import Tape

    parents = _parents(tree)
    tapes = {
        node.targets[0].id
        for node in gast.walk(tree)
        if isinstance(node, gast.Assign)
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Call)
        and isinstance(node.value.func, gast.Name)
        and namer.globals.get(node.value.func.id) is Tape
    }
    kept, restored, unpaired = set(), set(), set()
    for tape in tapes:
        pushed: Counter[str] = Counter()
        popped: Counter[str] = Counter()
        bare = False
        for node in gast.walk(tree):
            parent = parents.get(id(node))
            if _tape_method(node, {tape}, "push", 1) and isinstance(parent, gast.Expr):
                if isinstance(node.args[0], gast.Name):
                    pushed[node.args[0].id] += 1
            elif _tape_method(node, {tape}, "pop", None):
                if isinstance(parent, gast.Assign) and isinstance(parent.targets[0], gast.Name):
                    popped[parent.targets[0].id] += 1
                bare |= isinstance(parent, gast.Expr)
        if not bare:
            kept.add(tape)
            restored |= {n for n in pushed if pushed[n] == popped[n]}
            unpaired |= {n for n in pushed | popped if pushed[n] != popped[n]}
    return kept, restored - unpaired


def _tape_method(node: gast.AST, tapes: set[str], method: str, count: int | None) -> bool:
    """Whether ``node`` is the call ``tape.<method>(...)`` (with ``count`` positional
    arguments and no others; None: any)."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, gast.Name)
        and node.func.value.id in tapes
        and (count is None or (len(node.args) == count and not node.keywords))
    )


def _popped(node: gast.Name, parents: dict[int, gast.AST], tapes: set[str]) -> bool:
    """Whether ``node`` is the whole target of ``node = tape.pop()``."""
    parent = parents.get(id(node))
    return (
        isinstance(parent, gast.Assign)
        and parent.targets == [node]
        and _tape_method(parent.value, tapes, "pop", 0)
    )


def _kept(node: gast.Name, parents: dict[int, gast.AST]) -> bool:
    """Whether a read of a name holding None keeps its meaning split into Nones: pushed
    on a tape (popped back the same), indexed by a constant, or copied whole (also as an
    element of a display: ``r = (a, r_1)``, the copy an earlier round made)."""
    parent = parents.get(id(node))
    if isinstance(parent, gast.Subscript) and parent.value is node:
        return _constant_index(parent.slice) is not None
    child: gast.AST = node
    while isinstance(parent, gast.Tuple) and isinstance(parent.ctx, gast.Load):
        child, parent = parent, parents.get(id(parent))
    if isinstance(parent, gast.Assign) and parent.value is child:
        return isinstance(parent.targets[0], (gast.Name, gast.Tuple))
    return (
        isinstance(parent, gast.Call)
        and isinstance(parent.func, gast.Attribute)
        and parent.func.attr == "push"
        and isinstance(parents.get(id(parent)), gast.Expr)
    )


def _stores_none(node: gast.AST, parents: dict[int, gast.AST]) -> bool:
    """Whether ``node`` is the whole target of ``node = None``."""
    parent = parents.get(id(node))
    return (
        isinstance(node, gast.Name)
        and isinstance(parent, gast.Assign)
        and parent.targets == [node]
        and isinstance(parent.value, gast.Constant)
        and parent.value.value is None
    )


def _agree(known: int | None, length: int) -> int | None:
    """The length two uses need together (0: any), or None when they cannot agree."""
    if known is None or length == -1:
        return None
    if known == 0 or known == length:
        return length
    return known if length == 0 else None


def _parents(tree: gast.AST) -> dict[int, gast.AST]:
    parents: dict[int, gast.AST] = {}
    for node in gast.walk(tree):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _use(node: gast.Name, parents: dict[int, gast.AST], tapes: set[str], restored: set[str]) -> int:
    """The tuple length this occurrence of a name needs (0 for any), or -1 when it rules
    splitting out (``restored``: names a tape of ``tapes`` restores, see :func:`_tapes`)."""
    parent = parents.get(id(node))
    if isinstance(node.ctx, gast.Store):
        restoring = node.id in restored and _popped(node, parents, tapes)
        if restoring or _stores_none(node, parents):
            return 0  # (as many elements as the tape's push, or Nones, as the rest need)
        value = _stored_display(node, parents)
        return -1 if value is None else len(value.elts)
    if not isinstance(node.ctx, gast.Load):
        return -1
    if isinstance(parent, gast.Assign) and parent.value is node:
        target = parent.targets[0]
        if len(parent.targets) == 1 and isinstance(target, (gast.Tuple, gast.List)):
            if not any(isinstance(e, gast.Starred) for e in target.elts):
                return len(target.elts)
    # any other read (y[k], len(y), f(y), return y) is the same with (y_0, y_1) written out
    return 0


def _stored_display(node: gast.Name, parents: dict[int, gast.AST]) -> gast.Tuple | None:
    """The tuple display an assignment stores in ``node``: ``y = (a, b)``, or an element
    of a target matched by a display (``r0, r1 = (a, (t, q))`` stores ``(t, q)`` in r1)."""
    value = _stored_value(node, parents)
    if (
        isinstance(value, gast.Tuple)
        and value.elts
        and not any(isinstance(e, gast.Starred) for e in value.elts)
    ):
        return value
    return None


def _stored_value(node: gast.Name, parents: dict[int, gast.AST]) -> gast.expr | None:
    """The expression an assignment stores in ``node``: its value, or the element of a
    display matched to ``node`` in a target tuple; None when that is not written out."""
    path: list[int] = []
    child: gast.AST = node
    parent = parents.get(id(node))
    while isinstance(parent, gast.Tuple) and isinstance(parent.ctx, gast.Store):
        path.append(next(k for k, e in enumerate(parent.elts) if e is child))
        child, parent = parent, parents.get(id(parent))
    if not (isinstance(parent, gast.Assign) and parent.targets == [child]):
        return None
    value, target = parent.value, child
    for k in reversed(path):
        if not (
            isinstance(value, gast.Tuple)
            and isinstance(target, gast.Tuple)
            and len(value.elts) == len(target.elts)
        ):
            return None
        value, target = value.elts[k], target.elts[k]
    return value


def _constant_index(node: gast.expr) -> int | None:
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, gast.UnaryOp)
        and isinstance(node.op, gast.USub)
        and isinstance(node.operand, gast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


class _Split(gast.NodeTransformer):
    def __init__(
        self, elements: dict[str, list[str]], builtin_len: bool, tapes: set[str], restored: set[str]
    ) -> None:
        self.elements = elements
        self.builtin_len = builtin_len
        self.tapes = tapes
        self.restored = restored

    def names(self, name: str, ctx: type) -> gast.Tuple:
        elts = [gast.Name(n, ctx(), None, None) for n in self.elements[name]]
        return gast.Tuple(elts=elts, ctx=ctx())

    def visit_Expr(self, node: gast.Expr) -> gast.AST | list[gast.stmt]:
        value = node.value
        if (
            _tape_method(value, self.tapes, "push", 1)
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id in self.elements
            and value.args[0].id in self.restored
        ):
            # one push per element (the pops take them back last first)
            return [
                gast.copy_location(
                    gast.Expr(gast.Call(copy.deepcopy(value.func), [build.load(n)], [])), node
                )
                for n in self.elements[value.args[0].id]
            ]
        return self.generic_visit(node)

    def visit_Assign(self, node: gast.Assign) -> gast.AST | list[gast.stmt]:
        target = node.targets[0]
        if isinstance(target, gast.Name) and target.id in self.elements:
            value = node.value
            if (target.id in self.restored and _tape_method(value, self.tapes, "pop", 0)) or (
                isinstance(value, gast.Constant) and value.value is None
            ):
                # ``r_1 = tape.pop()``, ``r_0 = tape.pop()``; ``r_0 = None``, ``r_1 = None``
                names = self.elements[target.id]
                ordered = names[::-1] if isinstance(value, gast.Call) else names
                return [
                    gast.copy_location(build.assign(n, copy.deepcopy(value)), node) for n in ordered
                ]
        self.generic_visit(node)
        target = node.targets[0]
        if isinstance(target, gast.Name) and target.id in self.elements:
            node.targets = [gast.copy_location(self.names(target.id, gast.Store), target)]
        return node

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        value = node.value
        if isinstance(value, gast.Name) and value.id in self.elements:
            names = self.elements[value.id]
            index = _constant_index(node.slice)
            if index is not None:
                return gast.copy_location(build.load(names[index]), node)
        return self.generic_visit(node)

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id in self.elements and isinstance(node.ctx, gast.Load):
            return gast.copy_location(self.names(node.id, gast.Load), node)
        if node.id in self.elements and isinstance(node.ctx, gast.Store):
            # (an element of a nested target; a whole target is visit_Assign's)
            return gast.copy_location(self.names(node.id, gast.Store), node)
        return node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        func, args = node.func, node.args
        if (
            self.builtin_len
            and isinstance(func, gast.Name)
            and func.id == "len"
            and len(args) == 1
            and isinstance(args[0], gast.Name)
            and args[0].id in self.elements
        ):
            return gast.copy_location(build.const(len(self.elements[args[0].id])), node)
        return self.generic_visit(node)


def name_indexed_displays(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """A tuple display indexed where it is written (``(u, v)[0]``, and ``tuple([u, v])[0]``,
    as forward-mode code differentiated again writes a tuple's tangent) given a name first,
    ``_t1 = (u, v)`` just before its statement, so that the name splits like any tuple
    name (it was refused as "building a container"). Not out of a lambda, a comprehension,
    an arm of ``a if c else b`` or a later operand of ``and``/``or``: those may not run."""
    local = local_names(tree)
    comprehensions = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)

    def indexed(node: gast.expr) -> bool:
        if not isinstance(node, gast.Subscript) or not isinstance(node.slice, gast.Constant):
            return False
        if not isinstance(node.slice.value, int) or isinstance(node.slice.value, bool):
            return False
        value = node.value
        if isinstance(value, gast.Tuple):
            return not any(isinstance(e, gast.Starred) for e in value.elts)
        return (
            isinstance(value, gast.Call)
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], (gast.Tuple, gast.List))
            and source.resolve(value.func, local) in (builtins.tuple, builtins.list)
        )

    def hoist(node: gast.AST, before: list[gast.stmt]) -> None:
        for field, child in gast.iter_fields(node):
            if isinstance(node, (gast.Lambda, *comprehensions)):
                return
            if isinstance(node, gast.IfExp) and field != "test":
                continue
            if isinstance(node, gast.BoolOp) and field == "values":
                child = child[:1]
            for part in child if isinstance(child, list) else [child]:
                if not isinstance(part, gast.AST):
                    continue
                hoist(part, before)
                if isinstance(part, gast.expr) and indexed(part):
                    name = namer.temp()
                    before.append(gast.copy_location(build.assign(name, part.value), part))
                    part.value = build.load(name)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
                before: list[gast.stmt] = []
                hoist(stmt, before)
                out.extend(before)
            out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return tree
