"""The recording plan and the code generated under it, settled together.

What the backward pass reads of the primal, and so what must be recorded (see
analyses/tbr.py), depends on the code generated; the code depends on the plan (a value
that is kept or restored may be read where one that is gone may not) and on which
adjoints are loose (may hold a broadcast term not yet reduced to their variable's shape).
The sweep generates the code under a plan and a set of loose adjoints; both are computed
again from that code, until the next round would generate the same code. A plan that
does not settle is srcad's own failure, and raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gast

from srcad.errors import InternalError
from srcad.transform.analyses.activity import targets
from srcad.transform.analyses.tbr import Recording, Structure, plan_recording
from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import all_statements
from srcad.transform.reverse_context import Context, reads_of_primal

if TYPE_CHECKING:
    from srcad.transform.reverse import Sweep

#: rounds before a plan that has not settled is reported (programs met so far need at
#: most 6: loose adjoints are followed exactly for 3 rounds, then only added to)
_ROUNDS = 8
#: from this round on, loose adjoints found are added to those assumed, never dropped
_ACCUMULATE = 4


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
    available = set(fixed)
    loose: set[str] = set()
    plan = Recording(stable)
    for round_ in range(1, _ROUNDS + 1):
        sweep = sweep_type(ctx, plan, available, loose)
        sweep.state = set(outputs)
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
        for name, group in groups.items():
            # reading a view of an updated array reads the array's memory
            shared = set().union(*(sweep.readers.get(n, set()) for n in group))
            if shared:
                readers[name] = shared
                need.add(name)
                kept.add(name)
        new_plan = plan_recording(
            structure, stable, need, ctx.source, ctx.local, readers, kept, ctx.updated_memory
        )
        recomputed = {
            n for s in all_statements(body) if id(s) in new_plan.recomputed for n in targets(s)
        }
        new_available = fixed | new_plan.pushed_names | recomputed
        # adjoints found loose are assumed loose from the start next time round (a loop can
        # bring a loose adjoint back to code generated before it was found); later rounds
        # add to those assumed, so that the assumption settles
        new_loose = set(sweep.loose) | (loose if round_ >= _ACCUMULATE else set())
        if (
            new_plan.pushed == plan.pushed
            and new_plan.recomputed == plan.recomputed
            and new_available == available
            and new_loose == loose
        ):
            return sweep, forward, backward  # the next round would generate the same code
        plan, available, loose = new_plan, new_available, new_loose
    raise unsettled(ctx.source, where)


def unsettled(source: Source, where: gast.AST) -> InternalError:
    """The error for a recording plan that did not settle."""
    filename, lineno, _, _ = source.location(where)
    return InternalError(
        f"srcad could not settle what to record for {source.name} ({filename}:{lineno}); "
        "please report it"
    )
