"""To-be-recorded: which overwritten values the backward pass needs, and how it gets them.

A name defined once outside any loop or branch is *stable*: its value is still in its
variable when the backward pass needs it, so nothing is recorded. A needed name that is
overwritten (assigned in a loop, in a branch, or more than once) is either recomputed in
the backward pass, or its old value is pushed on the tape before each assignment and
popped back after that assignment's adjoint. Branch decisions and trip counts are names
like any other here.

A value is recomputed when a cheap op (arithmetic, a comparison, a view, an elementwise
ufunc) makes it inside a loop from values the backward pass has anyway (stable names,
loop indices, names it restores, jump flags, other recomputed values) and only its own
turn reads it: the backward pass computes it again just before the backward code of the
last statement of its block that reads it, where what it reads holds the values it had.
A jump flag set in a loop that stops on it (or resets it every turn) is not pushed: the
flag was False there, and the backward pass puts it back (see normalize/jumps.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import gast
import numpy as np

from srcad.adjoints.registry import COPY, GETITEM, Attribute, Operator
from srcad.transform.anno import getanno
from srcad.transform.frontend import Source
from srcad.transform.normalize.jumps import stop_flags
from srcad.transform.normalize.walk import own_parts
from srcad.transform.ops import COMPARE, DYNAMIC_GETITEM, SQUARE, classify, operand_names

_RECOMPUTABLE = {
    GETITEM, DYNAMIC_GETITEM, COMPARE, COPY, SQUARE, Attribute("T"), Attribute("shape"),
    Attribute("real"), Attribute("imag"), Operator("Add"), Operator("Sub"), Operator("Mult"),
    Operator("Div"), Operator("FloorDiv"), Operator("Mod"), Operator("Pow"), Operator("USub"),
    Operator("UAdd"), Operator("Not"),
}  # fmt: skip


@dataclass
class Definition:
    """One assignment of a name, with the loops around it."""

    stmt: gast.Assign
    loops: list[gast.stmt]
    nested: bool
    block: list[gast.stmt]
    root: list[gast.stmt]
    path: tuple = ()


@dataclass
class Recording:
    """The plan: statements that push/pop, statements recomputed in the backward pass."""

    stable: frozenset[str]
    pushed: set[int] = field(default_factory=set)
    #: a recomputed statement -> the statement of its block before whose backward code
    #: it is computed again
    recomputed: dict[int, int] = field(default_factory=dict)
    pushed_names: set[str] = field(default_factory=set)


def definitions(body: list[gast.stmt]) -> dict[str, list[Definition]]:
    """Every assignment of every name in ``body``, with its enclosing loops and position."""
    found: dict[str, list[Definition]] = {}
    for stmt, loops, nested, block, path in positions(body):
        if isinstance(stmt, gast.Assign):
            for node in gast.walk(stmt.targets[0]):
                if isinstance(node, gast.Name):
                    found.setdefault(node.id, []).append(
                        Definition(stmt, loops, nested, block, body, path)
                    )
    return found


def positions(body: list[gast.stmt]):
    """Each statement with its loops, whether nested, its block and its path of positions.

    A path is a tuple of (index, arm) steps; arm 0/1 are an if's body/else.
    """

    def visit(stmts, loops, nested, path):
        for k, stmt in enumerate(stmts):
            here = path + ((k, 0),)
            yield stmt, loops, nested, stmts, here
            if isinstance(stmt, gast.If):
                yield from visit(stmt.body, loops, True, path + ((k, 0),))
                yield from visit(stmt.orelse, loops, True, path + ((k, 1),))
            elif isinstance(stmt, (gast.For, gast.While)):
                yield from visit(stmt.body, loops + [stmt], True, path + ((k, 0),))

    yield from visit(body, [], False, ())


def may_precede(a: tuple, b: tuple) -> bool:
    """Whether the statement at path ``a`` can run before the one at ``b`` (no loops)."""
    for (ka, arm_a), (kb, arm_b) in zip(a, b):
        if ka != kb:
            return ka < kb
        if arm_a != arm_b:
            return False  # the two arms of one if: never both
    return len(a) < len(b)


def _old_value_needed(definition: Definition, readers: set[int], places: dict[int, tuple]) -> bool:
    """Whether the backward pass of some statement that may run before this assignment
    (or around it, in a loop they share) reads the value this assignment overwrites."""
    own_loops = {id(loop) for loop in definition.loops}
    for reader in readers:
        if reader == id(definition.stmt):
            if definition.loops:
                return True  # next time round, this statement's own value is the old one
            continue
        loops, path = places[reader]
        if own_loops & {id(loop) for loop in loops}:
            return True
        if may_precede(path, definition.path):
            return True
    return False


def loop_targets(body: list[gast.stmt]) -> set[str]:
    """Variables of range loops (the backward loop sets them again)."""
    names = set()
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            names.add(node.target.id)
        if isinstance(node, (gast.If, gast.For, gast.While)):
            todo.extend(node.body + node.orelse)
        elif isinstance(node, gast.FunctionDef):
            todo.extend(node.body)
    return names


def stable_names(body: list[gast.stmt], params: list[str]) -> frozenset[str]:
    """Names whose single value lives from its definition to the end of the function."""
    defs = definitions(body)
    stable = {p for p in params if p not in defs}
    stable |= {name for name, found in defs.items() if len(found) == 1 and not found[0].nested}
    return frozenset(stable - loop_targets(body))


def jump_flags(body: list[gast.stmt]) -> set[str]:
    """The flags loops stop on or reset every turn (see normalize/jumps.py)."""
    flags: set[str] = set()
    for stmt, *_ in positions(body):
        if isinstance(stmt, (gast.For, gast.While)):
            flags.update(stop_flags(stmt))
            flags.update(getanno(stmt, "resets") or ())
    return flags


def _put_back_each_turn(definition: Definition) -> bool:
    """``flag = True`` in a loop that stops on the flag (or resets it every turn): the flag
    was False before, and the backward pass makes it False again at the start of the turn
    (or pops the value the reset overwrote), so nothing is pushed here."""
    stmt = definition.stmt
    if not definition.loops or not isinstance(stmt.targets[0], gast.Name):
        return False
    if not (isinstance(stmt.value, gast.Constant) and stmt.value.value is True):
        return False
    loop = definition.loops[-1]
    flags = [*stop_flags(loop), *(getanno(loop, "resets") or ())]
    return stmt.targets[0].id in flags


class Structure:
    """The facts about a function body that its recording plan reads, each computed once
    on first use (the body does not change while the plan settles round after round)."""

    def __init__(self, body: list[gast.stmt]) -> None:
        self.body = body

    @cached_property
    def definitions(self) -> dict[str, list[Definition]]:
        return definitions(self.body)

    @cached_property
    def places(self) -> dict[int, tuple[list[gast.stmt], tuple]]:
        """Each statement's loops and path, by the statement's id."""
        return {id(stmt): (loops, path) for stmt, loops, _, _, path in positions(self.body)}

    @cached_property
    def loop_targets(self) -> set[str]:
        return loop_targets(self.body)

    @cached_property
    def jump_flags(self) -> set[str]:
        return jump_flags(self.body)

    @cached_property
    def loads(self) -> dict[str, list[tuple]]:
        return _load_paths(self.body)


def plan_recording(
    body: Structure,
    stable: frozenset[str],
    need: set[str],
    source: Source,
    local: set[str],
    readers: dict[str, set[int]],
    kept: set[str] | None = None,
    shared: frozenset[str] = frozenset(),
) -> Recording:
    """Decide, for each needed name, whether it is stable, recomputed or pushed.

    ``body`` is the function body's Structure; ``stable`` is the caller's set
    (stable_names, less memory updated in place);
    ``readers`` maps a name to the statements whose backward code reads it (a recomputed
    value's reads count as its anchor's); ``kept``: the names the backward code reads other
    than to recompute values (restored anyway; all of ``need`` if None); ``shared``: names
    of memory updated in place (never read to recompute a value).
    """
    plan = Recording(stable)
    defs = body.definitions
    targets = body.loop_targets
    places = body.places
    recompute = _Recompute(body, stable, source, local, readers)
    recompute.kept = set(need if kept is None else kept)
    recompute.shared = shared
    # the values needed, and what they are computed from, in turn
    todo = sorted(need - stable - targets, reverse=True)
    seen = set(todo)
    while todo:
        name = todo.pop()
        found = defs.get(name, [])
        if len(found) == 1 and recompute.consider(name, found[0]):
            more = recompute.operands(found[0]) - stable - targets - seen
            seen |= more
            todo.extend(sorted(more, reverse=True))
    plan.recomputed = recompute.settle()
    chosen = {id(recompute.candidates[n].stmt) for n in recompute.accepted}
    for name in sorted(need - stable - targets):
        for definition in defs.get(name, []):
            if id(definition.stmt) in chosen or _put_back_each_turn(definition):
                continue
            if _old_value_needed(definition, readers.get(name, set()), places):
                plan.pushed.add(id(definition.stmt))
                plan.pushed_names.add(name)
    return plan


def _is_cheap(stmt: gast.Assign, source: Source, local: set[str]) -> bool:
    """Arithmetic, a comparison, a view, or an elementwise ufunc (not a reduction, a
    product of matrices or a decomposition, which cost more than a push)."""
    op = classify(stmt.value, source, local)
    if op.key in _RECOMPUTABLE:
        return True
    callee = op.callee
    if isinstance(callee, np.ufunc):
        return callee.signature is None and callee.nout == 1
    return callee is not None and getattr(callee, "__module__", None) == math.__name__


class _Recompute:
    """Which needed values the backward pass computes again, and where (see module doc)."""

    def __init__(self, body: Structure, stable, source, local, readers) -> None:
        self.defs = body.definitions
        self.places = body.places
        self.stable = stable
        self.source = source
        self.local = local
        self.readers = readers
        self.kept: set[str] = set()
        self.shared: frozenset[str] = frozenset()
        self.flags = body.jump_flags
        self.loads = body.loads
        self.candidates: dict[str, Definition] = {}
        #: the last position in its block whose backward code reads the value
        self.last: dict[str, int] = {}
        self.accepted: set[str] = set()

    def consider(self, name: str, definition: Definition) -> bool:
        """Take ``name`` as a candidate if its op is cheap and only its turn reads it."""
        stmt = definition.stmt
        if not isinstance(stmt.targets[0], gast.Name) or not definition.loops:
            return False
        if getanno(stmt, "counter"):
            return False  # a while loop's trip counter also changes where the analysis cannot see
        if name in self.shared or name in self.source.lists:
            return False
        if not _is_cheap(stmt, self.source, self.local):
            return False
        prefix, k = definition.path[:-1], definition.path[-1][0]
        last = k
        for path in self.loads.get(name, []):
            at = _position_in(prefix, path)
            if at is None or at <= k:
                return False  # read outside its block, or before (or by) its own assignment
            last = max(last, at)
        for reader in self.readers.get(name, ()):
            at = _position_in(prefix, self.places[reader][1]) if reader in self.places else None
            if at is None or at < k:
                return False
            last = max(last, at)
        self.candidates[name] = definition
        self.last[name] = last
        return True

    def settle(self) -> dict[int, int]:
        """The accepted candidates' anchors, after dropping those whose operands would not
        hold their values where the value is computed again."""
        self.accepted = set(self.candidates)
        while True:
            anchors = self.anchors()
            dropped = {n for n in self.accepted if not self.valid(n, anchors)}
            if not dropped:
                break
            self.accepted -= dropped
        return {
            id(self.candidates[n].stmt): id(self.candidates[n].block[anchors[n]])
            for n in self.accepted
        }

    def anchors(self) -> dict[str, int]:
        """Each accepted value's anchor: its last reader, or later, where a value computed
        again from it is (that one is computed first, in program order)."""
        anchors = {n: self.last[n] for n in self.accepted}
        changed = True
        while changed:
            changed = False
            for name in self.accepted:
                d = self.candidates[name]
                anchor_path = (*d.path[:-1], (anchors[name], 0))
                for operand in self.operands(d) & self.accepted:
                    od = self.candidates[operand]
                    at = _position_in(od.path[:-1], anchor_path)
                    if at is not None and at > anchors[operand]:
                        anchors[operand] = at
                        changed = True
        return anchors

    def operands(self, definition: Definition) -> set[str]:
        return operand_names(definition.stmt.value) & self.local

    def constant_in_loops(self, operand: str, definition: Definition) -> bool:
        """Whether no loop around ``definition`` assigns ``operand`` (it keeps its value
        while they run, and nothing is pushed to read it there)."""
        around = {id(loop) for loop in definition.loops}
        return all(not around & {id(loop) for loop in d.loops} for d in self.defs.get(operand, []))

    def set_before(self, flag: str, definition: Definition) -> bool:
        """Whether every assignment of ``flag`` in the loop around ``definition`` comes
        before it in the turn (a flag is not popped back where it is set)."""
        loop = id(definition.loops[-1])
        return all(
            may_precede(d.path, definition.path)
            for d in self.defs.get(flag, [])
            if loop in {id(lp) for lp in d.loops}
        )

    def valid(self, name: str, anchors: dict[str, int]) -> bool:
        d = self.candidates[name]
        operands = self.operands(d)
        if name in operands:
            return False
        indices = {lp.target.id for lp in d.loops if isinstance(lp, gast.For)}
        k = d.path[-1][0]
        for operand in operands:
            if operand in self.stable or operand in indices:
                continue
            if operand in self.flags:
                if self.set_before(operand, d):
                    continue
                return False  # set later in the turn: put back only when the turn is undone
            if operand in self.shared or operand in self.source.lists:
                return False
            if operand in self.accepted:
                od = self.candidates[operand]
                at = _position_in(od.path[:-1], d.path)
                if at is None or at <= od.path[-1][0]:
                    return False  # not computed before it in the same turn
                continue
            if operand in self.kept or self.constant_in_loops(operand, d):
                continue
            return False  # it would have to be recorded for this value alone
        # what it reads keeps its value from the assignment to the anchor
        stored = {
            n.id
            for s in d.block[k + 1 : anchors[name] + 1]
            for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }
        return not stored & operands


def _position_in(prefix: tuple, path: tuple) -> int | None:
    """The index, in the block at ``prefix``, of the statement holding the one at ``path``."""
    n = len(prefix)
    if len(path) <= n or path[:n] != prefix:
        return None
    return path[n][0]


def _load_paths(body: list[gast.stmt]) -> dict[str, list[tuple]]:
    """For each name, the paths of the statements that read it (a compound statement by its
    test or header)."""
    found: dict[str, list[tuple]] = {}
    for stmt, _, _, _, path in positions(body):
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    found.setdefault(node.id, []).append(path)
    return found
