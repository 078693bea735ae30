"""Dead code: drop pure assignments nobody reads, and comments left heading nothing."""

from __future__ import annotations

import gast

from srcad.transform import build
from srcad.transform.anno import getanno
from srcad.transform.optimize.usage import assigned, reads


def _sweep(body: list[gast.stmt], live: set[str]) -> tuple[list[gast.stmt], bool]:
    kept: list[gast.stmt] = []
    changed = False
    for stmt in reversed(body):
        if isinstance(stmt, gast.FunctionDef):
            inner, inner_changed = _sweep(stmt.body, set())
            stmt.body = inner
            changed |= inner_changed
            live |= set(reads(stmt))
            kept.append(stmt)
            continue
        if build.is_comment(stmt):
            kept.append(stmt)
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            # conservative: a loop body may read anything the loop reads, on the next turn
            inner_live = set(live)
            if not isinstance(stmt, gast.If):
                inner_live |= set(reads(stmt))
            stmt.body, c1 = _sweep(stmt.body, set(inner_live))
            stmt.orelse, c2 = _sweep(stmt.orelse, set(inner_live))
            changed |= c1 or c2
            if not stmt.body and not stmt.orelse and not isinstance(stmt, gast.While):
                changed = True
                continue
            live |= set(reads(stmt))
            kept.append(stmt)
            continue
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                if target.value.id not in live:
                    changed = True
                    continue
            else:
                names = assigned(stmt)
                if getanno(stmt, "pure", False) and not set(names) & live:
                    changed = True
                    continue
                live -= set(names)
        live |= set(reads(stmt))
        kept.append(stmt)
    kept.reverse()
    return kept, changed


def drop_dead_code(tree: gast.FunctionDef) -> bool:
    """Remove dead pure statements from ``tree`` in place; whether anything changed."""
    tree.body, changed = _sweep(tree.body, set())
    return changed


def drop_orphan_comments(tree: gast.AST) -> None:
    """Remove comment markers not followed by code of their own."""
    body = []
    for k, stmt in enumerate(tree.body):
        if build.is_comment(stmt):
            nxt = tree.body[k + 1] if k + 1 < len(tree.body) else None
            if nxt is None or build.is_comment(nxt) or isinstance(nxt, gast.Return):
                continue
        if isinstance(stmt, gast.FunctionDef):
            drop_orphan_comments(stmt)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            drop_orphan_comments(stmt)
            holder = _Orelse(stmt.orelse)
            drop_orphan_comments(holder)
            stmt.orelse = holder.body
        body.append(stmt)
    tree.body = body


class _Orelse:
    def __init__(self, body: list[gast.stmt]) -> None:
        self.body = body
