"""Masking: which adjoints (reverse mode) and tangents (forward mode) may be exactly zero
where a selection (``np.where``, ``clip``, ``maximum``, ...) did not choose a value.

The elementwise rules that read such a derivative multiply zero-safely
(``where(g != 0, g * f'(x), 0)``), so an untaken branch's infinite or NaN derivative (sqrt
at 0, log of a negative) adds exactly 0. Both analyses are may-analyses over the whole
function, flow-insensitive by name (names are single-assignment in straight-line code):
branches, loops, calls of user functions, indexing and reshaping are followed; reductions
and products that mix elements (sum, ``@``) end the chain.
"""

from __future__ import annotations

from collections.abc import Iterable

import gast

from srcad.transform.analyses.activity import targets
from srcad.transform.anno import getanno
from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import USER_CALL, classify, differentiable_operand_names, operand_names
from srcad.transform.templates import ADJOINT

# What a rule's op does is declared with the rule (registry.TRAITS): ``selects`` (its
# derivative is zero for an operand where it was not chosen), ``elementwise`` and
# ``moves`` (each result element is one operand element: a mask passes through, and the
# rule needs no zero-safe product itself).


def is_elementwise(rule) -> bool:
    """Whether ``rule``'s derivative is zero wherever the incoming one is (elementwise)."""
    return rule is not None and (rule.shape_preserving or rule.elementwise)


def _passes_masks(rule) -> bool:
    """Whether a mask on one side of ``rule``'s op reaches the other (elementwise, moves)."""
    return rule is not None and (is_elementwise(rule) or rule.moves)


def masked_adjoints(
    body: list[gast.stmt], source: Source, local: set[str], seeds: Iterable[str] = ()
) -> frozenset[str]:
    """Names whose adjoint may be masked: operands of a selection, and operands of an
    elementwise op, a move (a rule's ``moves``) or a user function's call whose result's adjoint
    may be.
    ``seeds``: adjoints masked on entry (a helper's outputs, when its caller's are)."""
    masked = set(seeds)
    flows = []
    for stmt in all_statements(body):
        if not isinstance(stmt, gast.Assign):
            continue
        call = getanno(stmt, "user_call")
        if call is not None:
            operands = set().union(*(operand_names(a) for a in call.arguments))
            flows.append((set(call.outputs), operands, False))
            continue
        op = classify(stmt.value, source, local)
        rule = op.rule
        if op.nondifferentiable or not _passes_masks(rule):
            continue
        operands = differentiable_operand_names(stmt.value, op)
        flows.append((set(targets(stmt)), operands, rule.selects))
    return _closure(masked, flows)


def masked_tangents(
    body: list[gast.stmt], source: Source, local: set[str], seeds: Iterable[str] = ()
) -> frozenset[str]:
    """Names whose tangent may be masked: results of a selection, and results of an
    elementwise op, a move or a user function's call with an operand whose tangent may be.
    ``seeds``: tangents masked on entry (a helper's parameters, when its caller's are)."""
    flows = []
    for stmt in all_statements(body):
        if not isinstance(stmt, gast.Assign):
            continue
        op = classify(stmt.value, source, local)
        if op.key is USER_CALL:
            flows.append((operand_names(stmt.value), set(targets(stmt)), False))
            continue
        rule = op.rule
        if op.nondifferentiable or not _passes_masks(rule):
            continue
        operands = differentiable_operand_names(stmt.value, op)
        flows.append((operands, set(targets(stmt)), rule.selects))
    return _closure(set(seeds), flows)


def _closure(masked: set[str], flows: list[tuple[set[str], set[str], bool]]) -> frozenset[str]:
    """The least set holding ``masked`` and, for each ``(sources, reached, always)``,
    ``reached`` when ``always`` or when it meets ``sources``."""
    changed = True
    while changed:
        changed = False
        for sources, reached, always in flows:
            if (always or sources & masked) and not reached <= masked:
                masked |= reached
                changed = True
    return frozenset(masked)


def keeps_zeros(term: gast.expr) -> bool:
    """Whether an instantiated rule's ``term`` reads nothing but ``d[y]`` and numbers
    (``-d[y]``, ``0.1 * d[y]``): a zero derivative stays zero there without a mask."""
    inside = set()
    for node in gast.walk(term):
        if isinstance(node, gast.Subscript) and getattr(node.value, "id", None) == ADJOINT:
            inside.update(id(n) for n in gast.walk(node))
    return not any(isinstance(n, gast.Name) and id(n) not in inside for n in gast.walk(term))
