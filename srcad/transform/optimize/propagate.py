"""Copy and constant propagation for generated names, and coalescing of copies into targets.

``_dx = zeros(...); _dx[i] = g; dx = _dx`` becomes ``dx = zeros(...); dx[i] = g``;
``d_t = 1.0; dy = d_t * c`` becomes ``dy = 1.0 * c``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import gast

from srcad.transform.naming import Namer
from srcad.transform.optimize.usage import (
    Rename,
    assigned,
    bodies,
    counts,
    in_loops,
    mutated,
    reads,
)


@dataclass
class _Facts:
    """What the pass knows of the function, kept up to date as it changes things."""

    read: Counter
    written: Counter
    returned: set[str]
    in_loops: set[str]
    mutated: set[str]
    # ``a -> b`` replacements made at the end of the pass, in one walk
    pending: dict[str, gast.expr] = field(default_factory=dict)
    pending_values: set[str] = field(default_factory=set)
    coalesced: set[str] = field(default_factory=set)


def _mentions(stmt: gast.stmt, name: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt))


def _is_constant(expr: gast.expr) -> bool:
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    return (
        isinstance(expr, gast.UnaryOp)
        and isinstance(expr.op, gast.USub)
        and _is_constant(expr.operand)
    )


def _coalesce(body: list[gast.stmt], k: int, namer: Namer, facts: _Facts) -> bool:
    """``a = b`` where ``b`` is a temporary used only here: rename ``b`` to ``a`` upward."""
    stmt = body[k]
    a, b = stmt.targets[0].id, stmt.value.id
    if b not in namer.generated or facts.written[b] != 1 or b in facts.pending_values:
        return False
    j = next((m for m in range(k - 1, -1, -1) if b in assigned(body[m])), None)
    if j is None:
        return False
    # every mention of b lies between its definition and this copy
    local = sum(reads(s).count(b) + assigned(s).count(b) for s in body[j : k + 1])
    if local != facts.read[b] + facts.written[b]:
        return False
    if any(_mentions(body[m], a) for m in range(j, k)):
        return False
    # between definition and copy, ``b`` may only be filled in place (``b[i] = g``), never read
    for m in range(j + 1, k):
        if _mentions(body[m], b) and (b in assigned(body[m]) or b not in mutated(body[m])):
            return False
        if isinstance(body[m], gast.Assign) and b in reads(body[m].value):
            return False
    rename = Rename(names={b: a})
    for m in range(j, k):
        rename.visit(body[m])
    del body[k]
    facts.read[a] += facts.read[b] - 1
    facts.read[b] = facts.written[b] = 0
    facts.coalesced.add(b)
    return True


def _forward(body: list[gast.stmt], k: int, namer: Namer, facts: _Facts) -> bool:
    """``a = b`` where ``a`` is generated and assigned once: read ``b`` wherever ``a`` is read."""
    stmt = body[k]
    a = stmt.targets[0].id
    value = stmt.value
    if a not in namer.generated or facts.written[a] != 1:
        return False
    if a in facts.returned:
        return False  # returned gradients keep their names (``dy = _t1; return dy``)
    if isinstance(value, gast.Name):
        # ``b`` must hold one value wherever ``a`` is read: assigned at most once, outside
        # loops, and never changed in place
        b = value.id
        if facts.written[b] > 1 or b in facts.in_loops or b in facts.mutated:
            return False
        if b in facts.coalesced:
            return False
        facts.read[b] += facts.read[a]
        facts.pending_values.add(b)
    facts.pending[a] = value
    facts.read[a] = facts.written[a] = 0
    del body[k]
    return True


def _forward_local(body: list[gast.stmt], k: int, namer: Namer, facts: _Facts) -> bool:
    """``a = b`` with ``a`` generated and read only later in this block, before ``b`` changes:
    read ``b`` there instead."""
    stmt = body[k]
    a, b = stmt.targets[0].id, stmt.value.id
    if a not in namer.generated or facts.written[a] != 1 or b in facts.coalesced:
        return False
    seen = 0
    users = []
    for later in body[k + 1 :]:
        here = reads(later).count(a)
        copy_back = (
            isinstance(later, gast.Assign)
            and isinstance(later.targets[0], gast.Name)
            and later.targets[0].id == b
            and isinstance(later.value, gast.Name)
            and later.value.id == a
        )
        changes_b = not copy_back and (b in assigned(later) or b in mutated(later))
        if here:
            if changes_b and (
                isinstance(later, (gast.If, gast.For, gast.While)) or b in mutated(later)
            ):
                return False
            users.append(later)
            seen += here
        if changes_b or seen == facts.read[a]:
            break
    if seen != facts.read[a]:
        return False
    rename = Rename(names={})
    rename.loads = {a: gast.Name(id=b, ctx=gast.Load(), annotation=None, type_comment=None)}
    for user in users:
        rename.visit(user)
    del body[k]
    facts.read[b] += facts.read[a]
    facts.read[a] = facts.written[a] = 0
    return True


def _drop_self_assignments(tree: gast.FunctionDef) -> bool:
    changed = False
    for body in bodies(tree):
        keep = [
            s
            for s in body
            if not (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Name)
                and s.targets[0].id == s.value.id
            )
        ]
        if len(keep) != len(body):
            body[:] = keep
            changed = True
    return changed


def propagate_copies(tree: gast.FunctionDef, namer: Namer) -> bool:
    """Apply copy/constant propagation to ``tree`` in place; whether anything changed."""
    changed = _drop_self_assignments(tree)
    read, written = counts(tree)
    all_bodies = bodies(tree)
    facts = _Facts(
        read,
        written,
        returned={n for blist in all_bodies for s in blist if isinstance(s, gast.Return)
                  for n in reads(s)},
        in_loops=in_loops(tree),
        mutated={n for blist in all_bodies for s in blist for n in mutated(s)},
    )  # fmt: skip
    for body in all_bodies:
        k = 0
        while k < len(body):
            stmt = body[k]
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                value = stmt.value
                if isinstance(value, gast.Name) and value.id != stmt.targets[0].id:
                    if (
                        _coalesce(body, k, namer, facts)
                        or _forward(body, k, namer, facts)
                        or _forward_local(body, k, namer, facts)
                    ):
                        changed = True
                        continue
                elif _is_constant(value) and _forward(body, k, namer, facts):
                    changed = True
                    continue
            k += 1
    if facts.pending:
        Rename(loads={a: _resolve(v, facts.pending) for a, v in facts.pending.items()}).visit(tree)
    return changed


def _resolve(value: gast.expr, pending: dict[str, gast.expr]) -> gast.expr:
    seen = set()
    while isinstance(value, gast.Name) and value.id in pending and value.id not in seen:
        seen.add(value.id)
        value = pending[value.id]
    return value
