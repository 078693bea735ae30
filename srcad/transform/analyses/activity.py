"""Activity: a variable is active when it varies with the inputs and is useful to the output."""

from __future__ import annotations

from dataclasses import dataclass

import gast

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
            # a value taken off a tape varies when one put on it does (pairs go by order)
            if operand_names(push.args[0]) & varied:
                ctx.carrying.add(push.func.value.id)
        elif pop is not None:
            if pop.func.value.id in ctx.carrying:
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


def _backward(body: list[gast.stmt], ctx: _Flow, useful: set[str]) -> None:
    for stmt in reversed(body):
        push, pop = tape_call(stmt, ctx.tapes, "push"), tape_call(stmt, ctx.tapes, "pop")
        if push is not None:
            if push.func.value.id in ctx.carrying:
                useful |= operand_names(push.args[0])
        elif pop is not None:
            if set(targets(stmt)) & useful:
                ctx.carrying.add(pop.func.value.id)
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
    tapes: set[str]
    carrying: set[str]


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
    value a tape carries is followed from its push to its pop."""
    tapes = tape_names(body, source, local)
    varied = set(wrt)
    _fixpoint(body, _Flow(source, local, tapes, set()), varied, _forward)
    useful = set(outputs)
    _fixpoint(body, _Flow(source, local, tapes, set()), useful, _backward)
    return Activity(frozenset(varied), frozenset(useful))


def active_tapes(body: list[gast.stmt], tapes: set[str], activity: Activity) -> frozenset[str]:
    """The ``tapes`` (of generated code) that some push of a varied value or pop into a
    varied name uses. Every push and pop on such a tape needs its derivative, varied or
    not: the derivative's own tape pairs them up by order, as the tape does."""
    active = set()
    for stmt in all_statements(body):
        push, pop = tape_call(stmt, tapes, "push"), tape_call(stmt, tapes, "pop")
        if push is not None and operand_names(push.args[0]) & activity.varied:
            active.add(push.func.value.id)
        elif pop is not None and set(targets(stmt)) & activity.varied:
            active.add(pop.func.value.id)
    return frozenset(active)
