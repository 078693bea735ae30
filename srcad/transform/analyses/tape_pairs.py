"""Tape pairs: which pushes each pop of a tape (of generated code) may take, by following
the tape's stack through the code."""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from srcad.transform.normalize.walk import all_statements, own_parts
from srcad.transform.ops import tape_call


@dataclass(frozen=True)
class Turns:
    """What a loop leaves on a tape: its turns, each pushing ``turn`` (oldest first)."""

    turn: tuple[Entry, ...]


@dataclass(frozen=True)
class Fork:
    """What a branch leaves on a tape when its arms push differently: ``body`` where
    ``test`` (the names holding the decision, or its text) held, ``orelse`` where not."""

    test: frozenset[str]
    body: tuple[Entry, ...]
    orelse: tuple[Entry, ...]


#: an entry of a tape's stack: one value, which the pushes (their ids) in the set put there
Entry = frozenset[int] | Turns | Fork


@dataclass(frozen=True)
class TapePairs:
    """For each pop (by id) of a followed tape, the pushes it may take; ``lost``: the
    tapes whose stack the code does not say (a loop taking back what came before it, a
    tape used otherwise than by push and pop statements): there a pop may take any push."""

    pops: dict[int, frozenset[int]]
    lost: frozenset[str]

    def pushes_of(self, pop: gast.stmt) -> frozenset[int]:
        """The pushes ``pop`` may take (its tape must not be lost)."""
        return self.pops.get(id(pop), frozenset())

    def pops_of(self) -> dict[int, set[int]]:
        """For each push (by id), the pops that may take it."""
        taken: dict[int, set[int]] = {}
        for pop, pushes in self.pops.items():
            for push in pushes:
                taken.setdefault(push, set()).add(pop)
        return taken


def pair_tapes(body: list[gast.stmt], tapes: set[str]) -> TapePairs:
    """Follow each tape's stack through ``body``: a push adds its statement, a pop takes
    the top. A loop adds its turns; a loop whose turn takes back one turn of the loop
    just below it takes them all back (generated code undoes a loop in a loop of as many
    turns). A branch whose arms push differently adds a fork, which a later branch on the
    same test takes back arm by arm (generated code undoes a branch on the same decision)."""
    walk = _Walk(tapes)
    walk.block(body, {t: [] for t in tapes})
    return TapePairs(
        {pop: frozenset(pushes) for pop, pushes in walk.pops.items()}, frozenset(walk.lost)
    )


Stacks = dict[str, list[Entry]]


@dataclass
class _Walk:
    tapes: set[str]
    pops: dict[int, set[int]] = field(default_factory=dict)
    lost: set[str] = field(default_factory=set)
    #: per tape, the depth at which the loop being walked started: only the turns right
    #: below it (the loop just before) may be taken back turn by turn
    start: dict[str, int] = field(default_factory=dict)
    #: tapes on which the loop being walked took back a turn of the loop below it
    undone: set[str] = field(default_factory=set)
    #: per tape, the least depth the stack had in the arm being walked
    low: dict[str, int] = field(default_factory=dict)
    #: names holding a copy of another name's value (``_t3 = flag``): that name
    copies: dict[str, str] = field(default_factory=dict)

    def block(self, body: list[gast.stmt], stacks: Stacks) -> Stacks:
        for stmt in body:
            push, pop = tape_call(stmt, self.tapes, "push"), tape_call(stmt, self.tapes, "pop")
            if push is not None:
                self.mentioned(push.args)
                stacks[push.func.value.id].append(frozenset({id(stmt)}))
            elif pop is not None:
                if isinstance(stmt, gast.Assign):
                    self.mentioned(stmt.targets)
                self.pop(pop.func.value.id, stmt, stacks)
            elif isinstance(stmt, gast.If):
                self.mentioned(own_parts(stmt))
                stacks = self.branch(stmt, stacks)
            elif isinstance(stmt, (gast.For, gast.While)):
                self.mentioned([*own_parts(stmt), *stmt.orelse])
                stacks = self.loop(stmt, stacks)
            elif _new_tape(stmt, self.tapes):
                stacks[stmt.targets[0].id] = []
            else:
                self.mentioned([stmt])
            self.copied(stmt)
        return stacks

    def copied(self, stmt: gast.stmt) -> None:
        """Follow names copied from others (ANF gives each test a name of its own): a
        branch's decision is known by the name it was copied from."""
        bound = {
            n.id
            for part in own_parts(stmt)
            for n in gast.walk(part)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        }
        for name in [n for n, root in self.copies.items() if n in bound or root in bound]:
            del self.copies[name]
        if not isinstance(stmt, gast.Assign):
            return
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, gast.Name) and isinstance(value, gast.Name) and target.id != value.id:
            self.copies[target.id] = value.id

    def decision(self, test: gast.expr) -> frozenset[str]:
        """What a branch tests: the names holding its test's value (copies of one
        another), or the test's text."""
        if not isinstance(test, gast.Name):
            return frozenset({gast.dump(test)})
        same = {test.id}
        while True:
            more = {r for n, r in self.copies.items() if n in same}
            more |= {n for n, r in self.copies.items() if r in same}
            if more <= same:
                return frozenset(same)
            same |= more

    def mentioned(self, parts: list) -> None:
        """A tape read otherwise than by a push or pop statement (a pop inside an
        expression, a tape passed on): its stack is not followed."""
        for part in parts:
            for node in gast.walk(part):
                if isinstance(node, gast.Name) and node.id in self.tapes:
                    self.lost.add(node.id)

    def expose(self, tape: str, stack: list[Entry]) -> None:
        """Turns on top of ``stack`` taken back by the loop being walked: one turn's
        entries come off one by one (a turn of a loop nested in it stays whole)."""
        if stack and isinstance(stack[-1], Turns) and len(stack) == self.start.get(tape):
            self.undone.add(tape)
            stack.extend(stack[-1].turn)

    def pop(self, tape: str, stmt: gast.stmt, stacks: Stacks) -> None:
        stack = stacks[tape]
        self.expose(tape, stack)
        top = stack.pop() if stack else None
        if isinstance(top, Fork):
            top = _merged(top)  # taken whichever arm ran
        if not isinstance(top, frozenset):
            # below what the code pushed, or a loop's or branch's values taken back
            # otherwise than by the loop or branch undoing it
            self.lost.add(tape)
            return
        self.low[tape] = min(self.low.get(tape, len(stack)), len(stack))
        self.pops.setdefault(id(stmt), set()).update(top)

    def branch(self, stmt: gast.If, stacks: Stacks) -> Stacks:
        test = self.decision(stmt.test)
        arms, copies, undone = [], [], []
        outer, entry, before = self.low, self.copies, self.undone
        # the tapes whose values this branch takes back (a branch undoing one on the same
        # decision pops first)
        undoing = {
            t for t in stacks if "pop" in (_first_use(stmt.body, t), _first_use(stmt.orelse, t))
        }
        for arm, side in ((stmt.body, "body"), (stmt.orelse, "orelse")):
            mine = _copy(stacks)
            self.low, self.copies, self.undone = {}, dict(entry), set()
            for tape, stack in mine.items():
                below = stack[-1].turn if stack and isinstance(stack[-1], Turns) else ()
                if tape in undoing and (
                    _forked(stack, test)
                    or (len(stack) == self.start.get(tape) and _forked(list(below), test))
                ):
                    self.expose(tape, stack)
                    fork = stack.pop()
                    self.low[tape] = len(stack)
                    stack.extend(getattr(fork, side))  # the arm that ran then
                else:
                    self.low[tape] = len(stack)
            arms.append((self.block(arm, mine), self.low))
            copies.append(self.copies)
            undone.append(self.undone)
        self.low, self.undone = outer, before | undone[0] | undone[1]
        # a loop's turn taken back on one side only: how many remain is not known
        self.lost |= undone[0] ^ undone[1]
        self.copies = {n: r for n, r in copies[0].items() if copies[1].get(n) == r}
        (one, one_low), (other, other_low) = arms
        joined: Stacks = {}
        for tape, stack in one.items():
            theirs = other[tape]
            # below ``keep`` neither arm changed the stack
            keep = min(one_low[tape], other_low[tape], len(stack), len(theirs))
            if stack == theirs:
                joined[tape] = stack
            elif _same_shape(stack[keep:], theirs[keep:]):
                merged = [_union(a, b) for a, b in zip(stack[keep:], theirs[keep:])]
                joined[tape] = [*stack[:keep], *merged]
            else:
                fork = Fork(test, tuple(stack[keep:]), tuple(theirs[keep:]))
                joined[tape] = [*stack[:keep], fork]
            self.low[tape] = min(self.low.get(tape, keep), keep)
        return joined

    def loop(self, stmt: gast.For | gast.While, stacks: Stacks) -> Stacks:
        if _jumps(stmt.body):
            # a turn cut short pushes less than the others: not followed
            self.mentioned(stmt.body)
        for tape, stack in stacks.items():
            if (
                stack
                and isinstance(stack[-1], Turns)
                and isinstance(stack[-1].turn[-1], Turns)
                and _first_use(stmt.body, tape) == "pop"
            ):
                # a turn of the loop being walked ends in a nested loop's turns, which this
                # loop (the nested loop undone) takes back
                self.expose(tape, stack)
        # a copy stays one only where the loop assigns neither name (any turn may be the
        # first, or the last)
        assigned = _assigned([stmt])
        self.copies = {
            n: r for n, r in self.copies.items() if n not in assigned and r not in assigned
        }
        entry = self.copies
        outer = self.start, self.undone, self.low
        self.start = {t: len(s) for t, s in stacks.items()}
        self.undone, self.low = set(), dict(self.start)
        after = self.block(stmt.body, _copy(stacks))
        undone, low = self.undone, self.low
        self.start, self.undone, self.low = outer
        self.copies = entry
        result: Stacks = {}
        for tape, before in stacks.items():
            now = after[tape]
            if now == before:
                # a turn leaves the stack as it was; one that took back a turn of the loop
                # below takes all of them back (generated code runs them as many times)
                result[tape] = before[:-1] if tape in undone else before
            elif tape not in undone and low[tape] >= len(before) and now[: len(before)] == before:
                result[tape] = [*before, Turns(tuple(now[len(before) :]))]
            else:
                self.lost.add(tape)
                result[tape] = before
            self.low[tape] = min(self.low.get(tape, len(result[tape])), len(result[tape]))
        return result


def _assigned(body: list[gast.stmt]) -> set[str]:
    """Names ``body`` binds (a loop's target included)."""
    bound: set[str] = set()
    for stmt in all_statements(body):
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    bound.add(node.id)
    return bound


def _first_use(body: list[gast.stmt], tape: str) -> str | None:
    """Whether ``body`` first pushes on ``tape`` or pops off it ("push", "pop", None)."""
    for stmt in all_statements(body):
        for kind in ("push", "pop"):
            if tape_call(stmt, {tape}, kind) is not None:
                return kind
    return None


def _forked(stack: list[Entry], test: frozenset[str]) -> bool:
    """Whether ``stack`` ends in what a branch on ``test`` pushed (a name holding the
    decision then holds it now: generated code restores what its backward branches test)."""
    return bool(stack) and isinstance(stack[-1], Fork) and bool(stack[-1].test & test)


def _same_shape(one: list[Entry], other: list[Entry]) -> bool:
    """Whether two arms' entries can be merged one by one (values, in the same places)."""
    return len(one) == len(other) and all(
        a == b or (isinstance(a, frozenset) and isinstance(b, frozenset))
        for a, b in zip(one, other)
    )


def _union(one: Entry, other: Entry) -> Entry:
    return one | other if isinstance(one, frozenset) else one  # type: ignore[operator]


def _merged(fork: Fork) -> Entry | None:
    """A fork's top value, whichever arm ran: the union of both arms' top values when each
    pushed one value more; None when that is not known."""
    if fork.body and fork.orelse and len(fork.body) == len(fork.orelse) == 1:
        a, b = fork.body[0], fork.orelse[0]
        if isinstance(a, frozenset) and isinstance(b, frozenset):
            return a | b
    return None


def _jumps(body: list[gast.stmt]) -> bool:
    """Whether a ``break`` or ``continue`` of the loop whose body is ``body`` is in it."""
    for stmt in body:
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return True
        if isinstance(stmt, gast.If) and (_jumps(stmt.body) or _jumps(stmt.orelse)):
            return True
    return False


def _copy(stacks: Stacks) -> Stacks:
    return {tape: list(stack) for tape, stack in stacks.items()}


def _new_tape(stmt: gast.stmt, tapes: set[str]) -> bool:
    """``tape = Tape()``: the tape starts empty here."""
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id in tapes
        and isinstance(stmt.value, gast.Call)
        and not stmt.value.args
        and not stmt.value.keywords
    )


def tape_statements(body: list[gast.stmt], tapes: set[str]):
    """Every push and pop statement of ``tapes`` in ``body``: (statement, call, kind)."""
    for stmt in all_statements(body):
        for kind in ("push", "pop"):
            call = tape_call(stmt, tapes, kind)
            if call is not None:
                yield stmt, call, kind
