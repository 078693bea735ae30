"""Activity: a variable is active when it varies with the inputs and is useful to the output."""

from __future__ import annotations

from dataclasses import dataclass

import gast

from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import classify, differentiable_operand_names, operand_names, tape_call


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


def _forward(body: list[gast.stmt], source: Source, local: set[str], varied: set[str]) -> None:
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            op = classify(stmt.value, source, local)
            if not op.nondifferentiable and differentiable_operand_names(stmt.value, op) & varied:
                varied.update(targets(stmt))
        elif isinstance(stmt, gast.If):
            _forward(stmt.body, source, local, varied)
            _forward(stmt.orelse, source, local, varied)
        elif isinstance(stmt, (gast.For, gast.While)):
            while True:
                before = len(varied)
                _forward(stmt.body, source, local, varied)
                if len(varied) == before:
                    break


def _backward(body: list[gast.stmt], useful: set[str]) -> None:
    for stmt in reversed(body):
        if isinstance(stmt, gast.Assign):
            if set(targets(stmt)) & useful:
                useful |= operand_names(stmt.value)
        elif isinstance(stmt, gast.If):
            _backward(stmt.body, useful)
            _backward(stmt.orelse, useful)
        elif isinstance(stmt, (gast.For, gast.While)):
            while True:
                before = len(useful)
                _backward(stmt.body, useful)
                if len(useful) == before:
                    break


def analyse_activity(
    body: list[gast.stmt],
    source: Source,
    local: set[str],
    wrt: list[str],
    outputs: list[str],
) -> Activity:
    """Varied (forward from ``wrt``) and useful (backward from ``outputs``) names."""
    varied = set(wrt)
    _forward(body, source, local, varied)
    useful = set(outputs)
    _backward(body, useful)
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
