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
            inner_live = set(live)
            if not isinstance(stmt, gast.If):
                inner_live = _loop_live(stmt, inner_live)
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


def _loop_live(loop: gast.For | gast.While, after: set[str]) -> set[str]:
    """What is live at the end of a loop's body: what is read after the loop, by its
    header, or by the body on the next turn before it is assigned (a fixpoint). A value
    only the loop itself reads (``loss = loss + ...`` in a gradient) is dead."""
    header = loop.test if isinstance(loop, gast.While) else loop.iter
    live = after | set(reads(header))
    while True:
        more = live | _live_before(loop.body, live)
        if more == live:
            return live
        live = more


def _live_before(body: list[gast.stmt], live: set[str]) -> set[str]:
    """What is live at the start of ``body`` (what :func:`_sweep` keeps reads), given
    what is live at its end; nested statements count as reading all they read."""
    live = set(live)
    for stmt in reversed(body):
        if build.is_comment(stmt):
            continue
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                if target.value.id not in live:
                    continue
            else:
                names = set(assigned(stmt))
                if getanno(stmt, "pure", False) and not names & live:
                    continue
                live -= names
        live |= set(reads(stmt))
    return live


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
