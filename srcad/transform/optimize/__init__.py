"""Optimization passes over generated code, repeated until nothing changes."""

from __future__ import annotations

import gast

from srcad.transform.naming import Namer
from srcad.transform.optimize.broadcasts import drop_redundant_unbroadcasts
from srcad.transform.optimize.dce import drop_dead_code, drop_orphan_comments
from srcad.transform.optimize.fold import fold
from srcad.transform.optimize.inline import inline_single_use
from srcad.transform.optimize.propagate import propagate_copies

_MAX_ROUNDS = 20


def optimize(tree: gast.FunctionDef, namer: Namer) -> gast.FunctionDef:
    """Fold, propagate copies and constants, inline single-use temporaries, drop redundant
    unbroadcasts and dead code."""
    for round_ in range(_MAX_ROUNDS):
        changed = fold(tree, namer)
        changed |= propagate_copies(tree, namer)
        inlined = inline_single_use(tree, namer)
        changed |= inlined
        # the shape classes of names in the first round; later rounds make nested
        # unbroadcasts only by inlining, not new names of a reduced shape
        if round_ == 0 or inlined:
            changed |= drop_redundant_unbroadcasts(tree, namer, with_shapes=round_ == 0)
        changed |= drop_dead_code(tree)
        if not changed:
            break
    drop_orphan_comments(tree)
    return tree
