"""What every part of one reverse transformation reads, and the helpers they share."""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from srcad.transform.analyses.activity import Activity
from srcad.transform.analyses.shapes import Rank, SameShape
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import clone, names


@dataclass
class Context:
    """What every part of one reverse transformation reads."""

    source: Source
    namer: Namer
    local: set[str]
    activity: Activity
    shapes: SameShape
    xp_name: str
    tape_name: str
    adjoint_names: dict[str, str]
    stable: frozenset[str]
    #: the names of the in-place update helpers (setitem, scatter)
    setitem: tuple[str, ...] = ()
    #: names of memory that an update changes in place (under any of its names)
    updated_memory: frozenset[str] = frozenset()
    #: tapes of generated code being differentiated again, and the tapes of their adjoints
    tapes: dict[str, str] = field(default_factory=dict)
    #: those of ``tapes`` carrying a varied value: every push and pop on them gets its
    #: adjoint, so that the adjoint tape's pushes and pops pair up as the tape's do
    active_tapes: frozenset[str] = frozenset()
    #: ``(ndim, full)`` of names, when specialized for the arguments' ranks
    ranks: dict[str, Rank] = field(default_factory=dict)
    #: names whose adjoint may be zero where a selection did not choose the value (see
    #: srcad/transform/analyses/masking.py): the elementwise rules reading them multiply
    #: zero-safely, so an untaken branch's infinite or NaN derivative adds 0
    masked: frozenset[str] = frozenset()
    #: names bound to what a method of an object returns: a dict there is one srcad
    #: cannot follow (its keys are known only at run time)
    method_results: frozenset[str] = frozenset()

    def setitem_parts(self, stmt: gast.stmt) -> tuple[str, gast.expr] | None:
        """``(array, index)`` if ``stmt`` is an in-place element update."""
        value = getattr(stmt, "value", None)
        if (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and value.func.id in self.setitem
        ):
            return value.args[0].id, value.args[1]
        return None


def recomputed_copy(stmt: gast.stmt) -> gast.stmt:
    """A copy of the primal ``stmt``, computing its value again in the backward code."""
    copy = clone(stmt)
    setanno(copy, "recomputed", True)
    return copy


def generated(stmt: gast.stmt, pure: bool = True) -> gast.stmt:
    """``stmt`` marked as generated (``pure``: the optimizer may drop or inline it)."""
    setanno(stmt, "pure", pure)
    setanno(stmt, "generated", True)
    return stmt


def reads_of_primal(stmts: list[gast.stmt], ctx: Context, recomputed: bool = True) -> set[str]:
    """The local primal names ``stmts`` read (what the backward pass needs of the primal);
    ``recomputed=False`` leaves out what values computed again there read."""
    local = ctx.local
    found = {
        n.id for n in _live_names(stmts, recomputed) if type(n.ctx) is gast.Load and n.id in local
    }
    return found.difference(ctx.adjoint_names.values()) if found else found


def _live_names(stmts: list[gast.AST], recomputed: bool = True) -> list[gast.Name]:
    """Every Name in ``stmts``, leaving out statements superseded by a later rewrite (and
    values computed again, unless ``recomputed``)."""
    out: list[gast.Name] = []
    for stmt in stmts:
        if getanno(stmt, "superseded", False):
            continue
        if not recomputed and getanno(stmt, "recomputed", False):
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            out.extend(names(stmt.test) if isinstance(stmt, (gast.If, gast.While)) else [])
            if isinstance(stmt, gast.For):
                out.extend(names(stmt.target) + names(stmt.iter))
            out.extend(_live_names(stmt.body, recomputed) + _live_names(stmt.orelse, recomputed))
        else:
            out.extend(names(stmt))
    return out
