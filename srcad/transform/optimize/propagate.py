"""Copy and constant propagation for generated names, and coalescing of copies into targets.

``_dx = zeros(...); _dx[i] = g; dx = _dx`` becomes ``dx = zeros(...); dx[i] = g``;
``d_t = 1.0; dy = d_t * c`` becomes ``dy = 1.0 * c``.
"""

from __future__ import annotations

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


def _coalesce(body: list[gast.stmt], k: int, tree: gast.FunctionDef, namer: Namer) -> bool:
    """``a = b`` where ``b`` is a temporary used only here: rename ``b`` to ``a`` upward."""
    stmt = body[k]
    a, b = stmt.targets[0].id, stmt.value.id
    if b not in namer.generated:
        return False
    defs = [j for j in range(k) if b in assigned(body[j])]
    if len(defs) != 1:
        return False
    j = defs[0]
    mentions = [
        (bi, si)
        for bi, blist in enumerate(bodies(tree))
        for si, s in enumerate(blist)
        if _mentions(s, b)
    ]
    home = next(bi for bi, blist in enumerate(bodies(tree)) if blist is body)
    if any(bi != home or not j <= si <= k for bi, si in mentions):
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
    return True


def _forward(
    body: list[gast.stmt], k: int, tree: gast.FunctionDef, namer: Namer, facts: tuple
) -> bool:
    """``a = b`` where ``a`` is generated and assigned once: read ``b`` wherever ``a`` is read."""
    stmt = body[k]
    a = stmt.targets[0].id
    value = stmt.value
    if a not in namer.generated:
        return False
    _, written = facts
    if written[a] != 1:
        return False
    # returned gradients keep their names (``dy = _t1; return dy``)
    if any(isinstance(s, gast.Return) and a in reads(s) for blist in bodies(tree) for s in blist):
        return False
    if isinstance(value, gast.Name):
        # ``b`` must hold one value wherever ``a`` is read: assigned at most once, outside
        # loops, and never changed in place
        b = value.id
        if written[b] > 1 or b in in_loops(tree):
            return False
        if any(b in mutated(s) for blist in bodies(tree) for s in blist):
            return False
    rename = Rename(loads={a: value})
    del body[k]
    for blist in bodies(tree):
        for s in blist:
            rename.visit(s)
    return True


def _forward_local(
    body: list[gast.stmt], k: int, tree: gast.FunctionDef, namer: Namer, facts: tuple
) -> bool:
    """``a = b`` with ``a`` generated and read only later in this block, before ``b`` changes:
    read ``b`` there instead."""
    stmt = body[k]
    a, b = stmt.targets[0].id, stmt.value.id
    if a not in namer.generated:
        return False
    read, written = facts
    if written[a] != 1:
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
        if changes_b or seen == read[a]:
            break
    if seen != read[a]:
        return False
    rename = Rename(names={})
    rename.loads = {a: gast.Name(id=b, ctx=gast.Load(), annotation=None, type_comment=None)}
    for user in users:
        rename.visit(user)
    del body[k]
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
    progress = True
    while progress:
        progress = False
        facts = counts(tree)
        for body in bodies(tree):
            for k, stmt in enumerate(body):
                if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
                    continue
                value = stmt.value
                if isinstance(value, gast.Name) and value.id != stmt.targets[0].id:
                    if (
                        _coalesce(body, k, tree, namer)
                        or _forward(body, k, tree, namer, facts)
                        or _forward_local(body, k, tree, namer, facts)
                    ):
                        progress = changed = True
                        break
                elif _is_constant(value) and _forward(body, k, tree, namer, facts):
                    progress = changed = True
                    break
            if progress:
                break
    return changed


__all__ = ["propagate_copies", "reads"]
