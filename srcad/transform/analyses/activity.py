"""Activity: a variable is active when it varies with the inputs and is useful to the output."""

from __future__ import annotations

from dataclasses import dataclass

import gast

from srcad.transform.analyses.tape_pairs import TapePairs, pair_tapes, tape_statements
from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import (
    classify,
    differentiable_operand_names,
    operand_names,
    tape_call,
    tape_names,
)


@dataclass(frozen=True)
class Activity:
    """Which names vary with the differentiated inputs, and which reach the output."""

    varied: frozenset[str]
    useful: frozenset[str]
    #: pushes (by id, on tapes of generated code) of varied values that no pop into a
    #: useful name takes: the adjoint their pops hand back is zero, never read (a pop
    #: whose value is dropped hands back None)
    unread: frozenset[int] = frozenset()

    def active(self, name: str) -> bool:
        """Whether the adjoint of ``name`` is needed."""
        return name in self.varied and name in self.useful


def targets(stmt: gast.stmt) -> list[str]:
    """Names an assignment statement binds."""
    if isinstance(stmt, gast.Assign):
        return [n.id for n in gast.walk(stmt.targets[0]) if isinstance(n, gast.Name)]
    return []


def _forward(body: list[gast.stmt], ctx: _Flow, varied: set[str]) -> None:
    for stmt in body:
        push, pop = tape_call(stmt, ctx.tapes, "push"), tape_call(stmt, ctx.tapes, "pop")
        if push is not None:
            # a value taken off a tape varies when one put on it does (see _Flow.channel)
            if operand_names(push.args[0]) & varied:
                ctx.carrying.add(ctx.channel(push, push.args[0]))
        elif pop is not None:
            if ctx.pushed_varied(stmt, pop, varied):
                varied.update(targets(stmt))
        elif isinstance(stmt, gast.Assign):
            op = classify(stmt.value, ctx.source, ctx.local)
            if not op.nondifferentiable and differentiable_operand_names(stmt.value, op) & varied:
                varied.update(targets(stmt))
        elif isinstance(stmt, gast.If):
            _forward(stmt.body, ctx, varied)
            _forward(stmt.orelse, ctx, varied)
        elif isinstance(stmt, (gast.For, gast.While)):
            while True:
                before = len(varied), len(ctx.carrying)
                _forward(stmt.body, ctx, varied)
                if (len(varied), len(ctx.carrying)) == before:
                    break


def _popped_into(stmt: gast.stmt) -> gast.expr | None:
    """The target of ``a = tape.pop()``; None for a pop whose value is dropped."""
    return stmt.targets[0] if isinstance(stmt, gast.Assign) else None


def _backward(body: list[gast.stmt], ctx: _Flow, useful: set[str]) -> None:
    for stmt in reversed(body):
        push, pop = tape_call(stmt, ctx.tapes, "push"), tape_call(stmt, ctx.tapes, "pop")
        if push is not None:
            if ctx.popped_useful(stmt, push, useful):
                useful |= operand_names(push.args[0])
        elif pop is not None:
            if set(targets(stmt)) & useful:
                ctx.carrying.add(ctx.channel(pop, _popped_into(stmt)))
        elif isinstance(stmt, gast.Assign):
            if set(targets(stmt)) & useful:
                useful |= operand_names(stmt.value)
        elif isinstance(stmt, gast.If):
            _backward(stmt.body, ctx, useful)
            _backward(stmt.orelse, ctx, useful)
        elif isinstance(stmt, (gast.For, gast.While)):
            while True:
                before = len(useful), len(ctx.carrying)
                _backward(stmt.body, ctx, useful)
                if (len(useful), len(ctx.carrying)) == before:
                    break


@dataclass
class _Flow:
    """What a pass of the analysis reads, and the tapes (of generated code being
    differentiated again) it found carrying varied (useful) values so far."""

    source: Source
    local: set[str]
    body: list[gast.stmt]
    tapes: set[str]
    #: per tape, the names pushed and popped into, whose values travel apart (channel)
    by_name: dict[str, set[str]]
    carrying: set[tuple[str, str | None]]
    #: the pushes each pop takes, on the tapes whose stacks the code says
    pairs: TapePairs

    def pushed_varied(self, stmt: gast.stmt, pop: gast.Call, varied: set[str]) -> bool:
        """Whether the value ``stmt`` takes off a tape may vary."""
        if pop.func.value.id in self.pairs.lost:
            return self.channel(pop, _popped_into(stmt)) in self.carrying
        return any(self.pushed[p] & varied for p in self.pairs.pushes_of(stmt))

    def popped_useful(self, stmt: gast.stmt, push: gast.Call, useful: set[str]) -> bool:
        """Whether the value ``stmt`` puts on a tape may be taken into a useful name."""
        if push.func.value.id in self.pairs.lost:
            return self.channel(push, push.args[0]) in self.carrying
        return any(self.popped[p] & useful for p in self.taken_by.get(id(stmt), ()))

    def __post_init__(self) -> None:
        self.pushed: dict[int, set[str]] = {}
        self.popped: dict[int, set[str]] = {}
        for stmt, call, kind in tape_statements(self.body, self.tapes):
            if kind == "push":
                self.pushed[id(stmt)] = operand_names(call.args[0])
            else:
                self.popped[id(stmt)] = set(targets(stmt))
        self.taken_by = self.pairs.pops_of()

    def channel(self, call: gast.Call, value: gast.expr | None) -> tuple[str, str | None]:
        """What a push or pop travels on: the tape, and on a tape whose pushes and pops
        pair by name, the name too (generated code restores a value into the name it was
        saved from, so a constant saved beside varied values stays constant)."""
        tape = call.func.value.id
        if isinstance(value, gast.Name) and value.id in self.by_name[tape]:
            return tape, value.id
        return tape, None


def _fixpoint(body: list[gast.stmt], ctx: _Flow, names: set[str], sweep) -> None:
    """Sweep ``body`` until ``names`` and the carrying tapes stop growing (a pop may
    come before its push in the code, in a loop's body)."""
    while True:
        before = len(names), len(ctx.carrying)
        sweep(body, ctx, names)
        if (len(names), len(ctx.carrying)) == before:
            return


def analyse_activity(
    body: list[gast.stmt],
    source: Source,
    local: set[str],
    wrt: list[str],
    outputs: list[str],
) -> Activity:
    """Varied (forward from ``wrt``) and useful (backward from ``outputs``) names; a
    value a tape carries is followed from its push to the pops that take it (see
    tape_pairs.py: an integer restored beside varied arrays stays constant), or, on a
    tape whose stack the code does not say, to every pop of the tape (see _Flow.channel)."""
    tapes = tape_names(body, source, local)
    by_name = _paired_by_name(body, tapes)
    pairs = pair_tapes(body, tapes)
    varied = set(wrt)
    _fixpoint(body, _Flow(source, local, body, tapes, by_name, set(), pairs), varied, _forward)
    useful = set(outputs)
    back = _Flow(source, local, body, tapes, by_name, set(), pairs)
    _fixpoint(body, back, useful, _backward)
    unread = {
        id(stmt)
        for stmt, call, kind in tape_statements(body, tapes)
        if kind == "push"
        and operand_names(call.args[0]) & varied
        and not back.popped_useful(stmt, call, useful)
    }
    return Activity(frozenset(varied), frozenset(useful), frozenset(unread))


def _paired_by_name(body: list[gast.stmt], tapes: set[str]) -> dict[str, set[str]]:
    """For each of ``tapes``, the names both pushed and popped into: generated code puts
    a value saved from a name back into that name (the tapes of restored values). Other
    pushes and pops (``saved(u, 0)`` split into a temporary, an adjoint tape whose pops are
    added into sums) pair with each other by order alone."""
    pushed: dict[str, set[str]] = {t: set() for t in tapes}
    popped: dict[str, set[str]] = {t: set() for t in tapes}
    for stmt in all_statements(body):
        push, pop = tape_call(stmt, tapes, "push"), tape_call(stmt, tapes, "pop")
        if push is not None and isinstance(value := push.args[0], gast.Name):
            pushed[push.func.value.id].add(value.id)
        elif pop is not None and isinstance(target := _popped_into(stmt), gast.Name):
            popped[pop.func.value.id].add(target.id)
    return {t: pushed[t] & popped[t] for t in tapes}


def active_tapes(body: list[gast.stmt], tapes: set[str], activity: Activity) -> frozenset[str]:
    """The ``tapes`` (of generated code) that some push of a varied value or pop into a
    varied name uses. Every push and pop on such a tape needs its derivative, varied or
    not: the derivative's own tape pairs them up by order, as the tape does."""
    active = set()
    for stmt, call, kind in tape_statements(body, tapes):
        if kind == "push" and operand_names(call.args[0]) & activity.varied:
            active.add(call.func.value.id)
        elif kind == "pop" and set(targets(stmt)) & activity.varied:
            active.add(call.func.value.id)
    return frozenset(active)
