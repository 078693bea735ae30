"""Activity: a variable is active when it varies with the inputs and is useful to the output."""

from __future__ import annotations

from dataclasses import dataclass

import gast

from srcad.transform.frontend import Source
from srcad.transform.ops import classify, differentiable_operand_names, operand_names


@dataclass(frozen=True)
class Activity:
    """Which names vary with the differentiated inputs, and which reach the output."""

    varied: frozenset[str]
    useful: frozenset[str]

    def active(self, name: str) -> bool:
        """Whether the adjoint of ``name`` is needed."""
        return name in self.varied and name in self.useful


def _targets(stmt: gast.stmt) -> list[str]:
    if isinstance(stmt, gast.Assign):
        return [n.id for n in gast.walk(stmt.targets[0]) if isinstance(n, gast.Name)]
    return []


def analyse_activity(
    body: list[gast.stmt], source: Source, local: set[str], wrt: list[str], output: str
) -> Activity:
    """Varied (forward from ``wrt``) and useful (backward from ``output``) names of ``body``."""
    varied = set(wrt)
    for stmt in body:
        if not isinstance(stmt, gast.Assign):
            continue
        op = classify(stmt.value, source, local)
        if op.nondifferentiable:
            continue
        if differentiable_operand_names(stmt.value, op) & varied:
            varied.update(_targets(stmt))
    useful = {output}
    for stmt in reversed(body):
        if isinstance(stmt, gast.Assign) and set(_targets(stmt)) & useful:
            useful |= operand_names(stmt.value)
    return Activity(frozenset(varied), frozenset(useful))
