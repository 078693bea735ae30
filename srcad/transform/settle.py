"""The recording plan and the code generated under it, settled together.

What the backward pass reads of the primal, and so what must be recorded (see
analyses/tbr.py), depends on the code generated; the code depends on the plan (a value
that is kept or restored may be read where one that is gone may not) and on which
adjoints are loose (may hold a broadcast term not yet reduced to their variable's shape).
The plan is first predicted from what the rules' templates read (analyses/residuals.py:
their residuals by value, and by shape where the operand still holds its value), with no
code generated; the code is generated under it once, and what that code reads is
planned again as a check: the plan is the same for every function the test suite and the
fuzz campaigns differentiate. Should it differ (srcad's own misprediction), the code is
generated again under the plan found, until the next round would generate the same code
(under ``strict``, as in the test suite, the misprediction raises at once). A plan that
does not settle is srcad's own failure, and raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gast

from srcad.errors import InternalError
from srcad.transform.analyses.activity import targets
from srcad.transform.analyses.residuals import Residuals
from srcad.transform.analyses.tbr import Recording, Structure, plan_recording
from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import operand_names
from srcad.transform.reverse_context import Context, reads_of_primal

if TYPE_CHECKING:
    from srcad.transform.reverse import Sweep

#: rounds before a plan that has not settled is reported (programs met so far need at
#: most 6 from the predicted plan: loose adjoints are followed exactly for 3 rounds, then
#: only added to)
_ROUNDS = 8
#: from this round on, loose adjoints found are added to those assumed, never dropped
_ACCUMULATE = 4
#: whether a predicted plan that does not hold is reported at once instead of the code
#: generated again (the test suite sets it: every function it meets is generated once)
strict = False


def settle(
    body: list[gast.stmt],
    ctx: Context,
    outputs: list[str],
    groups: dict[str, set[str]],
    sweep_type: type[Sweep],
    where: gast.AST,
) -> tuple[Sweep, list[gast.stmt], list[gast.stmt]]:
    """The sweep of ``body`` under a settled plan, with its forward and backward code.

    ``groups`` are the names sharing memory with an array updated in place; ``where`` is
    the function, named in the error if the plan does not settle.
    """
    stable = ctx.stable
    structure = Structure(body)
    fixed = set(stable) | structure.loop_targets
    plan, available, loose = predicted_plan(body, structure, ctx, outputs, groups, fixed)
    for round_ in range(1, _ROUNDS + 1):
        sweep = sweep_type(ctx, plan, available, loose)
        sweep.state = set(outputs)
        sweep.round = round_
        try:
            forward, backward = sweep.block(body)
        except Exception:
            if sweep.errors:  # a consequence of the statements skipped: report the first
                raise sweep.errors[-1] from None
            raise
        if sweep.errors:
            raise sweep.errors[-1]
        need = reads_of_primal(backward, ctx) | sweep.held
        # what the backward code reads other than to compute values again: kept anyway
        kept = reads_of_primal(backward, ctx, recomputed=False) | sweep.held
        readers = dict(sweep.readers)
        views_read(groups, sweep.readers, readers, need, kept)
        new_plan = plan_recording(
            structure, stable, need, ctx.source, ctx.local, readers, kept, ctx.updated_memory
        )
        recomputed = {
            n for s in all_statements(body) if id(s) in new_plan.recomputed for n in targets(s)
        }
        new_available = fixed | new_plan.pushed_names | recomputed
        # adjoints found loose are assumed loose from the start next time round (a loop can
        # bring a loose adjoint back to code generated before it was found); later rounds
        # add to those assumed, so that the assumption settles. Code generated assuming an
        # adjoint loose that was not is right (it is reduced where read): the first round's
        # assumption, the predicted one, stands if every adjoint found loose is in it.
        new_loose = set(sweep.loose) | (loose if round_ >= _ACCUMULATE else set())
        exact = 1 < round_ < _ACCUMULATE
        if (
            new_plan.pushed == plan.pushed
            and new_plan.recomputed == plan.recomputed
            and new_available == available
            and (sweep.loose == loose if exact else sweep.loose <= loose)
        ):
            return sweep, forward, backward  # the next round would generate the same code
        if strict:
            raise unsettled(ctx.source, where, predicted=True)
        plan, available, loose = new_plan, new_available, new_loose
    raise unsettled(ctx.source, where)


def predicted_plan(
    body: list[gast.stmt],
    structure: Structure,
    ctx: Context,
    outputs: list[str],
    groups: dict[str, set[str]],
    fixed: set[str],
) -> tuple[Recording, set[str], set[str]]:
    """The plan, the names holding their values in the backward pass and the loose
    adjoints, from what the rules' templates read (analyses/residuals.py), before any
    code is generated.

    What is read only for its shape is read only where the name holds its value, which
    the plan decides: planned again until it gives the same (else the last one stands,
    only a start for settle's rounds)."""
    stable = ctx.stable
    if ctx.local <= fixed:
        # every name holds its one value to the end (straight-line code): nothing to plan,
        # and no operand's value is gone (no adjoint left loose)
        return Recording(stable), set(fixed), set()
    statements = {id(s): s for s in all_statements(body)}
    residuals = Residuals(body, ctx, outputs)
    available = set(fixed)
    plan = Recording(stable)
    loose: set[str] = set()
    for round_ in range(_ROUNDS):
        # (the first plan from what is read whatever is loose: a loose adjoint is one whose
        # operand's value is gone, and that depends on the plan)
        found = residuals.loose(available) if round_ else set()
        # (from _ACCUMULATE on, loose adjoints are only added to, as settle's rounds do: a
        # plan pushing a value because its adjoint is loose, and keeping it from being
        # loose by pushing it, would alternate; fuzz seed 6400123)
        loose = found | loose if round_ >= _ACCUMULATE else found
        readers, superseded = residuals.reads(available, loose)
        # (zeros written where a branch or loop needs an adjoint read no statement's)
        kept = {n for n, ids in readers.items() if any((i, n) not in superseded for i in ids)}
        kept |= residuals.zeroed
        for name, ids in residuals.control_reads(plan.pushed).items():
            readers[name] = readers.get(name, set()) | ids
            kept.add(name)
        need = set(kept)
        for stmt_id, anchor in plan.recomputed.items():
            # a value computed again reads its operands where it is computed
            for name in operand_names(statements[stmt_id].value) & ctx.local:
                readers.setdefault(name, set()).add(anchor)
                need.add(name)
        views_read(groups, readers, readers, need, kept)
        new_plan = plan_recording(
            structure, stable, need, ctx.source, ctx.local, readers, kept, ctx.updated_memory
        )
        recomputed = {n for i in new_plan.recomputed for n in targets(statements[i])}
        new_available = fixed | new_plan.pushed_names | recomputed
        if (
            new_plan.pushed == plan.pushed
            and new_plan.recomputed == plan.recomputed
            and new_available == available
            and round_
        ):
            break
        plan, available = new_plan, new_available
    return plan, available, loose


def views_read(
    groups: dict[str, set[str]],
    found: dict[str, set],
    readers: dict[str, set],
    need: set[str],
    kept: set[str],
) -> None:
    """Reading a view of an updated array reads the array's memory: each array of
    ``groups`` is read where the names sharing its memory are (by ``found``)."""
    for name, group in groups.items():
        shared = set().union(*(found.get(n, set()) for n in group))
        if shared:
            readers[name] = shared
            need.add(name)
            kept.add(name)


def unsettled(source: Source, where: gast.AST, predicted: bool = False) -> InternalError:
    """The error for a recording plan that did not settle (``predicted``: a predicted plan
    that did not hold, under ``strict``)."""
    filename, lineno, _, _ = source.location(where)
    at = f"{source.name} ({filename}:{lineno})"
    if predicted:
        what = f"the recording plan srcad predicted for {at} did not hold"
    else:
        what = f"srcad could not settle what to record for {at}"
    return InternalError(what + "; please report it")
