"""Every ``for`` loop becomes a loop over ``range``; literal sequences are unrolled.

``for row in A`` becomes ``for _k in range(len(A)): row = A[_k]``; ``enumerate`` and
``zip`` likewise index their sequences, so the reverse pass only ever reverses ranges; an
item bound whole (``for p in zip(x, y)``) is ``p = (x[_k], y[_k])``, split into one name
per element by unpacking.py.
A loop over a name bound once to a range (``_t1 = range(n)``, as generated code keeps
the range of a loop that can break) whose variable a range loop sets too (the backward
loop) is a loop over ``range(_t1.start, _t1.stop, _t1.step)``.
A loop over a display is unrolled, its items evaluated before the loop as Python does;
:func:`unroll_written_out` unrolls loops whose items are written out while transforming
(a dict's keys: see ``dicts.py``), binding constants in the body.
"""

from __future__ import annotations

import builtins
import copy

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import MISSING, Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.folding import constant_of
from srcad.transform.normalize.walk import RenameNames, all_statements, own_parts, rewrite_bodies

_ITERATORS = {builtins.reversed, builtins.map, builtins.filter, builtins.iter}


def _jumps_out(body: list[gast.stmt]) -> bool:
    """Whether ``body`` has a break/continue belonging to the loop that holds it."""
    for stmt in body:
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return True
        if isinstance(stmt, gast.If) and (_jumps_out(stmt.body) or _jumps_out(stmt.orelse)):
            return True
    return False


def _whole(target: gast.Name, count: int, namer: Namer) -> gast.Tuple:
    """Fresh names for the ``count`` parts of a loop's item bound whole (``for p in zip(x,
    y)``), as a target."""
    parts = [build.store(namer.fresh(f"{target.id}_part")) for _ in range(count)]
    return build.tuple_(parts, gast.Store())


def _joined(target: gast.Name, parts: list[gast.Name]) -> list[gast.stmt]:
    """``p = (p_part, p_part_1)``: the item put together again from its parts."""
    loads = [build.load(part.id) for part in parts]
    return [build.assign(target.id, gast.Tuple(elts=loads, ctx=gast.Load()))]


class _Loops:
    def __init__(
        self, source: Source, namer: Namer, ranges: set[str] | frozenset[str] = frozenset()
    ) -> None:
        self.source = source
        self.namer = namer
        #: names bound once, to a range (see :func:`_range_names`)
        self.ranges = ranges
        #: the variables of loops over a range call
        self.range_targets: set[str] = set()

    def builtin(self, name: str) -> gast.Name:
        return build.load(self.namer.bind_global(getattr(builtins, name), name))

    def callee(self, node: gast.expr) -> object:
        if isinstance(node, gast.Call):
            return self.source.resolve(node.func, set())
        return MISSING

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            if isinstance(stmt, gast.For):
                out.extend(self.loop(stmt))
            else:
                out.append(stmt)
        return out

    def _mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def loop(self, stmt: gast.For) -> list[gast.stmt]:
        it = stmt.iter
        fn = self.callee(it)
        if fn is builtins.range:
            if not isinstance(stmt.target, gast.Name):
                raise self.source.error("a range loop needs a single loop variable", stmt.target)
            return [stmt]
        if isinstance(it, (gast.Tuple, gast.List)):
            return self.unroll(stmt)
        if (
            isinstance(it, gast.Name)
            and it.id in self.ranges
            and isinstance(stmt.target, gast.Name)
            and stmt.target.id in self.range_targets
        ):
            # a range held in a name (generated code keeps the range of a loop that can
            # break and changes its bound), with a variable another range loop sets too
            # (the backward loop): a range loop over its parts, whose variable stays the
            # loops' own (indexing the range would assign it outside a loop header)
            parts = [build.attr(build.load(it.id), p) for p in ("start", "stop", "step")]
            stmt.iter = gast.copy_location(build.call(self.builtin("range"), *parts), it)
            return [stmt]
        if (
            fn is builtins.reversed
            and len(it.args) == 1
            and isinstance(it.args[0], gast.Name)
            and it.args[0].id in self.ranges
        ):
            # the backward loop of a loop over a range held in a name (``reversed(_t1)``):
            # the reversed range of its parts, as below
            held = it.args[0]
            parts = [build.attr(build.load(held.id), p) for p in ("start", "stop", "step")]
            it.args[0] = gast.copy_location(build.call(self.builtin("range"), *parts), held)
        if fn is builtins.reversed and len(it.args) == 1 and self.callee(it.args[0]) is range:
            # reversed(range(...)) (as generated backward loops read): the reversed range
            steps = self.namer.fresh_temp("_steps")
            backwards = gast.Slice(lower=None, upper=None, step=build.const(-1))
            value = gast.Subscript(value=it.args[0], slice=backwards, ctx=gast.Load())
            parts = [build.attr(build.load(steps), p) for p in ("start", "stop", "step")]
            stmt.iter = gast.copy_location(build.call(self.builtin("range"), *parts), it)
            return [self._mark(build.assign(steps, value), stmt), stmt]
        if fn in _ITERATORS or (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Attribute)
            and it.func.attr in ("items", "keys", "values")
        ):
            raise self.source.error(
                "loops over this iterable are not supported; loop over range(), an array, a "
                "list or tuple, enumerate() or zip()",
                it,
            )
        pre: list[gast.stmt] = []
        index = build.store(self.namer.fresh_temp("_k"))
        bound = build.call(self.builtin("len"), build.load("?"))
        if fn is builtins.enumerate:
            # ``for e in enumerate(xs)``: ``e = (_k, xs[_k])``, a tuple of names once
            # unpacking.py has split it (as ``for p in zip(...)`` below)
            whole = isinstance(stmt.target, gast.Name)
            if not (whole or isinstance(stmt.target, gast.Tuple) and len(stmt.target.elts) == 2):
                raise self.source.error("'for i, v in enumerate(...)' needs two targets", stmt)
            if len(it.args) != 1 or it.keywords:
                raise self.source.error("enumerate(seq, start) with a start is not supported", it)
            parts = _whole(stmt.target, 2, self.namer) if whole else stmt.target
            counter, value = parts.elts
            item, joins = value, []
            if self.callee(it.args[0]) is builtins.zip:
                zipped = it.args[0]
                if isinstance(value, gast.Name) and not zipped.keywords:
                    value = _whole(item, len(zipped.args), self.namer)
                    joins = _joined(item, value.elts)
                if (
                    zipped.keywords
                    or not isinstance(value, gast.Tuple)
                    or len(value.elts) != len(zipped.args)
                ):
                    raise self.source.error(
                        "'for i, (a, b) in enumerate(zip(...))' needs one target per sequence",
                        stmt,
                    )
                # enumerate(zip(x, y)): a zip cannot be indexed, its sequences can
                seqs = [self._sequence(arg, pre, stmt) for arg in zipped.args]
                bound = self._shortest(seqs)
                items = [build.assign(t, self._item(s, index.id)) for t, s in zip(value.elts, seqs)]
            else:
                seq = self._sequence(it.args[0], pre, stmt)
                bound.args = [build.load(seq)]
                items = [build.assign(value, self._item(seq, index.id))]
            prefix = [build.assign(counter, build.load(index.id)), *items, *joins]
            if whole:
                prefix += _joined(stmt.target, [counter, item])
        elif fn is builtins.zip:
            target = stmt.target
            if isinstance(target, gast.Name) and not it.keywords:
                stmt.target = _whole(target, len(it.args), self.namer)
            if it.keywords or not isinstance(stmt.target, gast.Tuple):
                raise self.source.error(
                    "'for a, b in zip(...)' needs one target per sequence", stmt
                )
            if len(stmt.target.elts) != len(it.args):
                raise self.source.error("zip: as many targets as sequences are needed", stmt)
            seqs = [self._sequence(arg, pre, stmt) for arg in it.args]
            bound = self._shortest(seqs)
            prefix = [
                build.assign(t, self._item(s, index.id)) for t, s in zip(stmt.target.elts, seqs)
            ]
            if isinstance(target, gast.Name):
                prefix += _joined(target, stmt.target.elts)
        else:
            seq = self._sequence(it, pre, stmt)
            bound.args = [build.load(seq)]
            prefix = [build.assign(stmt.target, self._item(seq, index.id))]
        for node in prefix:
            self._mark(node, stmt)
        new = gast.For(
            target=index,
            iter=build.call(self.builtin("range"), bound),
            body=prefix + stmt.body,
            orelse=stmt.orelse,
            type_comment=None,
        )
        self._mark(new, stmt)
        return pre + [new]

    def _shortest(self, seqs: list[str]) -> gast.expr:
        """The length of the shortest of ``seqs``, as ``zip`` stops."""
        lengths = [build.call(self.builtin("len"), build.load(s)) for s in seqs]
        return lengths[0] if len(lengths) == 1 else build.call(self.builtin("min"), *lengths)

    def _item(self, seq: str, index: str) -> gast.Subscript:
        return gast.Subscript(value=build.load(seq), slice=build.load(index), ctx=gast.Load())

    def _sequence(self, expr: gast.expr, pre: list[gast.stmt], origin: gast.stmt) -> str:
        if isinstance(expr, gast.Name):
            return expr.id
        if self.callee(expr) is builtins.tuple and len(expr.args) == 1 and not expr.keywords:
            # iterated the same: a list, whose gradient is one per element (a tuple's zero
            # gradient was a number, which the loop's gradient indexed: a TypeError)
            expr = build.call(self.builtin("list"), expr.args[0])
        name = self.namer.fresh_temp("_seq")
        pre.append(self._mark(build.assign(name, expr), origin))
        return name

    def unroll(self, stmt: gast.For) -> list[gast.stmt]:
        if _jumps_out(stmt.body):
            raise self.source.error(
                "break/continue in a loop over a literal list or tuple is not supported; "
                "loop over range(len(...)) instead",
                stmt,
            )
        out: list[gast.stmt] = []
        elts = []
        stored = _stored_names(stmt)
        for elt in stmt.iter.elts:
            # Python evaluates the whole display before the first turn: a later item
            # reading a name the body assigns must see its value from before the loop
            elts.append(_once(elt, stored, self.namer, out))
        for new in out:
            self._mark(new, stmt)
        for elt in elts:
            out.append(self._mark(build.assign(copy.deepcopy(stmt.target), elt), stmt))
            out.extend(self.block(copy.deepcopy(stmt.body)))
        out.extend(stmt.orelse)
        return out


def _stored_names(loop: gast.For, target: bool = True) -> set[str]:
    """The names a loop's body (and ``target``: its target) assigns."""
    return {
        n.id
        for part in ([loop.target, *loop.body] if target else loop.body)
        for n in gast.walk(part)
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    }


def _fixed(expr: gast.expr, stored: set[str]) -> bool:
    """Whether ``expr`` has the same value on every turn of a loop assigning ``stored``:
    a constant, or a name the loop does not assign."""
    if isinstance(expr, gast.Constant):
        return True
    return isinstance(expr, gast.Name) and expr.id not in stored


def _once(expr: gast.expr, stored: set[str], namer: Namer, before: list[gast.stmt]) -> gast.expr:
    """``expr`` as a loop's item: evaluated before the loop (into ``before``) unless it is
    the same on every turn; a tuple display part by part, so its constants stay constants
    and no tuple of differentiable values is made."""
    if _fixed(expr, stored) or isinstance(expr, gast.Starred):
        return expr
    if isinstance(expr, gast.Tuple) and not any(isinstance(e, gast.Starred) for e in expr.elts):
        return build.tuple_([_once(e, stored, namer, before) for e in expr.elts])
    held = namer.fresh_temp("_item")
    before.append(build.assign(held, expr))
    return build.load(held)


def desugar_loops(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Rewrite every ``for`` loop of ``tree`` into a loop over ``range`` (see module doc)."""
    _own_loop_variables(tree, namer)
    loops = _Loops(source, namer, _range_names(tree, source))
    loops.range_targets = {
        stmt.target.id
        for stmt in all_statements(tree.body)
        if isinstance(stmt, gast.For)
        and isinstance(stmt.target, gast.Name)
        and any(loops.callee(stmt.iter) is f for f in (builtins.range, builtins.reversed))
    }
    tree.body = rewrite_bodies(tree.body, loops.block)
    for stmt in all_statements(tree.body):
        if isinstance(stmt, gast.For):
            _check_loop_variable(stmt, tree, source)
    return tree


def _range_names(tree: gast.FunctionDef, source: Source) -> set[str]:
    """The names ``tree`` binds once by ``name = range(...)``, and otherwise only to the
    value a tape gives back or to the placeholder None (generated code differentiated
    again records a range held in a name that a loop assigns)."""
    bound: dict[str, int] = {}
    ranges: set[str] = set()
    for stmt in all_statements(tree.body):
        stores = [
            n.id
            for part in own_parts(stmt)
            for n in gast.walk(part)
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))
        ]
        single = (
            isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
        )
        if single and (_popped(stmt.value) or _none(stmt.value)):
            continue
        for name in stores:
            bound[name] = bound.get(name, 0) + 1
        if (
            single
            and isinstance(stmt.value, gast.Call)
            and source.resolve(stmt.value.func, set()) is builtins.range
        ):
            ranges.add(stmt.targets[0].id)
    params = tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs
    return {n for n in ranges if bound[n] == 1} - {a.id for a in params}


def _popped(value: gast.expr) -> bool:
    """``tape.pop()``."""
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Attribute)
        and value.func.attr == "pop"
        and isinstance(value.func.value, gast.Name)
        and not value.args
        and not value.keywords
    )


def _none(value: gast.expr) -> bool:
    return isinstance(value, gast.Constant) and value.value is None


def _own_loop_variables(tree: gast.FunctionDef, namer: Namer) -> None:
    """A loop variable the function also assigns outside the loops over it, and reads only
    inside them (``for _ in ...`` beside ``_ = f()``), renamed in each such loop: the loop
    owns its variable (nothing outside reads the value it leaves)."""
    loops = [
        s
        for s in all_statements(tree.body)
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name)
    ]
    args = tree.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    for name in sorted({loop.target.id for loop in loops} - params):
        mine = [loop for loop in loops if loop.target.id == name]
        inside = {id(n) for loop in mine for n in gast.walk(loop)}
        outside = [
            n
            for n in gast.walk(tree)
            if isinstance(n, gast.Name) and n.id == name and id(n) not in inside
        ]
        if not outside or any(not isinstance(n.ctx, gast.Store) for n in outside):
            continue
        nested = {id(n) for loop in mine for n in gast.walk(loop) if n is not loop}
        for loop in mine:
            if id(loop) not in nested:  # a loop inside another over it shares its variable
                RenameNames({name: namer.fresh(name.strip("_") or "turn")}).visit(loop)


def _check_loop_variable(loop: gast.For, tree: gast.FunctionDef, source: Source) -> None:
    """A range loop's variable is set by the reverse loop too: it must belong to loops only."""
    name = loop.target.id
    args = tree.args
    if name in {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}:
        raise source.error(f"the loop variable '{name}' is a parameter; use another name", loop)
    inside: set[int] = set()
    for stmt in all_statements(tree.body):
        if isinstance(stmt, gast.For) and stmt.target.id == name:
            inside.update(id(s) for s in all_statements(stmt.body))
    for stmt in all_statements(tree.body):
        if isinstance(stmt, gast.Assign) and any(
            isinstance(n, gast.Name) and n.id == name for t in stmt.targets for n in gast.walk(t)
        ):
            raise source.error(
                f"the loop variable '{name}' is also assigned outside the loop header; "
                "give the loop its own variable",
                stmt,
            )
        if id(stmt) in inside or isinstance(stmt, gast.For) and stmt.target.id == name:
            continue
        for part in own_parts(stmt):
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(part)):
                raise source.error(
                    f"the loop variable '{name}' is read after its loop; keep the value in "
                    "another variable inside the loop",
                    stmt,
                )


def unroll_constant_loops(tree: gast.FunctionDef) -> gast.FunctionDef:
    """``for k in ("a", "b"): ... d[k] ...`` as one copy of the body per constant, with the
    constant written for ``k`` (``d["a"]``), before dicts are lowered: a dict built in the
    function is then read with constant keys (what ``sum(np.sum(d[k]) for k in ("a",
    "b"))`` becomes). ``k`` keeps its value after the loop, as in Python. Loops with
    ``break``/``continue`` or assigning ``k`` are left to ``desugar_loops``."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if not _over_constants(stmt):
                out.append(stmt)
                continue
            name = stmt.target.id
            for elt in stmt.iter.elts:
                out.append(gast.copy_location(build.assign(name, copy.deepcopy(elt)), stmt))
                for inner in copy.deepcopy(stmt.body):
                    out.extend(_decided_arms(_Substitute(name, elt).visit(inner)))
            out.extend(stmt.orelse)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    return tree


def _over_constants(stmt: gast.stmt) -> bool:
    return (
        isinstance(stmt, gast.For)
        and isinstance(stmt.target, gast.Name)
        and isinstance(stmt.iter, (gast.Tuple, gast.List))
        and bool(stmt.iter.elts)
        and all(
            isinstance(e, gast.Constant) and isinstance(e.value, (str, int)) for e in stmt.iter.elts
        )
        and not _jumps_out(stmt.body)
        and not any(
            isinstance(n, gast.Name) and n.id == stmt.target.id and not isinstance(n.ctx, gast.Load)
            for s in stmt.body
            for n in gast.walk(s)
        )
    )


class _Substitute(gast.NodeTransformer):
    """Reads of ``name`` as the constant ``value``."""

    def __init__(self, name: str, value: gast.Constant) -> None:
        self.name = name
        self.value = value

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return gast.copy_location(copy.deepcopy(self.value), node)
        return node


#: iterators the written-out unroller cannot index (a sequence passed to zip can be)
_NOT_INDEXABLE = {builtins.enumerate, builtins.zip, *_ITERATORS}


class _WrittenOut:
    """The items of a loop whose items are written out while transforming: a display,
    and ``enumerate``, ``zip`` (with other sequences) and ``reversed`` of displays."""

    def __init__(self, loop: gast.For, source: Source, namer: Namer) -> None:
        self.loop = loop
        self.source = source
        self.namer = namer
        self.stored = _stored_names(loop)
        #: what is evaluated once, before the loop
        self.before: list[gast.stmt] = []

    def callee(self, expr: gast.expr) -> object:
        if isinstance(expr, gast.Call):
            return self.source.resolve(expr.func, set())
        return MISSING

    def items(self, expr: gast.expr) -> tuple[list[gast.expr], list[list[str]]] | None:
        """The items ``expr`` yields, with (for each) the sequences whose length must
        exceed its index for it to be yielded (zip stops at the shortest); None when they
        are not written out."""
        if isinstance(expr, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in expr.elts):
                return None
            # a dict view written out reads each value on its turn, as the view does;
            # any other display is evaluated whole, before the loop
            live = getanno(expr, "live", False)
            elts = [e if live else self.once(e) for e in expr.elts]
            return elts, [[] for _ in elts]
        fn = self.callee(expr)
        if fn is builtins.reversed and len(expr.args) == 1 and not expr.keywords:
            found = self.items(expr.args[0])
            return None if found is None else (found[0][::-1], found[1][::-1])
        if fn is builtins.enumerate:
            return self.enumerated(expr)
        if fn is builtins.zip:
            return self.zipped(expr)
        return None

    def enumerated(self, expr: gast.Call) -> tuple[list, list] | None:
        given = [*expr.args[1:], *(k.value for k in expr.keywords if k.arg == "start")]
        if not expr.args or len(given) + 1 != len(expr.args) + len(expr.keywords):
            return None
        start = given[0] if given else build.const(0)
        if not (isinstance(start, gast.Constant) and type(start.value) is int):
            return None
        found = self.items(expr.args[0])
        if found is None:
            return None
        items = [build.tuple_([build.const(start.value + k), e]) for k, e in enumerate(found[0])]
        return items, found[1]

    def zipped(self, expr: gast.Call) -> tuple[list, list] | None:
        if any(
            k.arg != "strict" or not isinstance(k.value, gast.Constant) or k.value.value
            for k in expr.keywords
        ):
            return None  # zip(..., strict=True) is left to the loop kept as a loop
        parts: list = []
        for arg in expr.args:
            found = self.items(arg) or self.range_items(arg)
            if found is None and self.callee(arg) in _NOT_INDEXABLE:
                return None
            parts.append(found if found is not None else self.sequence(arg))
        written = [p for p in parts if isinstance(p, tuple)]
        if not written:
            return None
        count = min(len(p[0]) for p in written)
        items, bounds = [], []
        for k in range(count):
            elts, needs = [], []
            for part in parts:
                if isinstance(part, tuple):
                    elts.append(part[0][k])
                    needs.extend(part[1][k])
                else:
                    read = gast.Subscript(
                        value=build.load(part), slice=build.const(k), ctx=gast.Load()
                    )
                    elts.append(read)
                    needs.append(part)
            items.append(build.tuple_(elts))
            bounds.append(needs)
        return items, bounds

    def range_items(self, expr: gast.expr) -> tuple[list, list] | None:
        """``range`` of constants, inside ``zip``."""
        if self.callee(expr) is not builtins.range or expr.keywords:
            return None
        bounds = [a.value if isinstance(a, gast.Constant) else None for a in expr.args]
        if not bounds or any(type(b) is not int for b in bounds):
            return None
        values = range(*bounds)
        return [build.const(v) for v in values], [[] for _ in values]

    def once(self, expr: gast.expr) -> gast.expr:
        return _once(expr, self.stored, self.namer, self.before)

    def sequence(self, expr: gast.expr) -> str:
        """The name of a sequence zip reads, evaluated once before the loop."""
        if isinstance(expr, gast.Name) and expr.id not in self.stored:
            return expr.id
        held = self.namer.fresh_temp("_seq")
        self.before.append(build.assign(held, expr))
        return held


def unroll_written_out(loop: gast.For, source: Source, namer: Namer) -> list[gast.stmt] | None:
    """One copy of ``loop``'s body per item when its items are written out (see
    :class:`_WrittenOut`): a name bound to a constant (a dict's key, an index of
    ``enumerate``) is written as the constant in the copy, so ``d[k]`` reads a constant
    key; an item of ``zip`` that another sequence may lack is guarded by its length. None
    when the items are not written out or the body has ``break``/``continue``."""
    if _jumps_out(loop.body):
        return None
    written = _WrittenOut(loop, source, namer)
    found = written.items(loop.iter)
    if found is None:
        return None
    length = build.load(namer.bind_global(builtins.len, "len"))
    out = list(written.before)
    assigned = _stored_names(loop, target=False)
    for index, (item, needs) in enumerate(zip(*found)):
        fixed: dict[str, gast.Constant] = {}
        body = [_mark(s, loop) for s in _bind(loop.target, item, fixed, assigned)]
        for stmt in copy.deepcopy(loop.body):
            for name, value in fixed.items():
                stmt = _Substitute(name, value).visit(stmt)
            body.extend(_decided_arms(stmt) if fixed else [stmt])
        if not needs:
            out.extend(body)
            continue
        tests = [
            gast.Compare(
                left=build.call(copy.deepcopy(length), build.load(n)),
                ops=[gast.Gt()],
                comparators=[build.const(index)],
            )
            for n in needs
        ]
        test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
        out.append(_mark(gast.If(test=test, body=body, orelse=[]), loop))
    for stmt in written.before:
        _mark(stmt, loop)
    return out + loop.orelse


def _decided_arms(stmt: gast.stmt) -> list[gast.stmt]:
    """An ``if`` whose test the constants written in made a literal (``if "a" != "b"``, a
    comprehension's filter on its keys): the arm it takes; other statements as they are."""
    if not isinstance(stmt, gast.If):
        return [stmt]
    decided = constant_of(stmt.test)
    if decided is None:
        return [stmt]
    return [s for arm in (stmt.body if decided[0] else stmt.orelse) for s in _decided_arms(arm)]


def _mark(node: gast.stmt, origin: gast.stmt) -> gast.stmt:
    gast.copy_location(node, origin)
    setanno(node, "origin", getanno(origin, "origin", origin))
    return node


def _bind(
    target: gast.expr, item: gast.expr, fixed: dict[str, gast.Constant], assigned: set[str]
) -> list[gast.stmt]:
    """``target = item``, part by part where both are tuples; a name bound to a constant
    the body does not assign (``assigned``) goes into ``fixed``."""
    if (
        isinstance(target, (gast.Tuple, gast.List))
        and isinstance(item, gast.Tuple)
        and len(target.elts) == len(item.elts)
        and not any(isinstance(t, gast.Starred) for t in target.elts)
    ):
        return [s for t, i in zip(target.elts, item.elts) for s in _bind(t, i, fixed, assigned)]
    if isinstance(target, gast.Name) and isinstance(item, gast.Constant):
        if target.id not in assigned:
            fixed[target.id] = item
    return [build.assign(copy.deepcopy(target), copy.deepcopy(item))]


def unroll_function_loops(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """``for act in (np.tanh, relu): ... act(h) ...`` as one copy of the body per function,
    written for ``act`` (``np.tanh(h)``, then ``relu(h)``): each call is then of a function
    srcad knows, by its rule or its source. Also over a name bound once, at the top of the
    function, to such a display (``acts = [np.tanh, relu]``). Before your functions are
    written out, so ``relu`` is written out too where they are; left as it was where the
    loop jumps out, assigns ``act`` or ``act`` is read outside it."""
    local = local_names(tree)
    displays = _function_displays(tree, source, local)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            elts = _functions_looped(stmt, displays, tree)
            if elts is None:
                out.append(stmt)
                continue
            for elt in elts:
                for inner in copy.deepcopy(stmt.body):
                    out.append(_Substitute(stmt.target.id, elt).visit(inner))
            out.extend(stmt.orelse)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    read = {
        n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
    tree.body = [
        s
        for s in tree.body
        if not (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in displays
            and s.targets[0].id not in read
        )
    ]
    return tree


def _function_displays(
    tree: gast.FunctionDef, source: Source, local: set[str]
) -> dict[str, list[gast.expr]]:
    """The names bound once, at the top of ``tree``, to a display of functions from outside
    it, with the display's elements; a display written in a loop header is found there."""

    def functions(expr: gast.expr) -> bool:
        return (
            isinstance(expr, (gast.Tuple, gast.List))
            and bool(expr.elts)
            and all(
                isinstance(e, (gast.Name, gast.Attribute))
                and callable(source.resolve(e, local))
                and source.resolve(e, local) is not MISSING
                for e in expr.elts
            )
        )

    stores: dict[str, int] = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
    found = {
        stmt.targets[0].id: stmt.value.elts
        for stmt in tree.body
        if isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], gast.Name)
        and stores.get(stmt.targets[0].id) == 1
        and functions(stmt.value)
    }
    for node in gast.walk(tree):
        if isinstance(node, gast.For) and functions(node.iter):
            found[id(node.iter)] = node.iter.elts
    return found


def _functions_looped(
    stmt: gast.stmt, displays: dict, tree: gast.FunctionDef
) -> list[gast.expr] | None:
    """The functions ``stmt`` loops over, when it is a loop to unroll over them."""
    if not (isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name)):
        return None
    key = stmt.iter.id if isinstance(stmt.iter, gast.Name) else id(stmt.iter)
    elts = displays.get(key)
    if elts is None or _jumps_out(stmt.body):
        return None
    name = stmt.target.id
    inside = {id(n) for s in stmt.body for n in gast.walk(s)} | {id(stmt.target)}
    if any(
        isinstance(n, gast.Name) and n.id == name and id(n) not in inside for n in gast.walk(tree)
    ):
        return None  # (assigned or read elsewhere: Python's loop variable is kept)
    if any(
        isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
        for s in stmt.body
        for n in gast.walk(s)
    ):
        return None
    return elts
