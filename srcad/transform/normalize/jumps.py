"""Lower ``break``, ``continue`` and early ``return`` to boolean flags and guards.

After this pass control flow is structured: ``if``, ``for`` over a range without break,
and ``while``. A jump sets its flag; the statements after it in its block run under
``if not flag``; a loop with ``break`` (or a ``return`` inside) becomes a ``while`` whose
condition tests the flags, so its trip count is decided by data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer


@dataclass
class _Loop:
    brk: str | None = None
    cont: str | None = None
    used: set[str] = field(default_factory=set)


def _has(body: list[gast.stmt], kinds: tuple, into_loops: bool) -> bool:
    for stmt in body:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If) and (
            _has(stmt.body, kinds, into_loops) or _has(stmt.orelse, kinds, into_loops)
        ):
            return True
        if into_loops and isinstance(stmt, (gast.For, gast.While)):
            if _has(stmt.body, kinds, into_loops) or _has(stmt.orelse, kinds, into_loops):
                return True
    return False


def _not_any(flags: list[str]) -> gast.expr:
    if len(flags) == 1:
        return gast.UnaryOp(op=gast.Not(), operand=build.load(flags[0]))
    return gast.UnaryOp(
        op=gast.Not(), operand=gast.BoolOp(op=gast.Or(), values=[build.load(f) for f in flags])
    )


class _Lower:
    def __init__(self, namer: Namer, returns: bool) -> None:
        self.namer = namer
        self.ret_flag = namer.fresh_temp("_returned") if returns else None
        self.ret_value = namer.fresh_temp("_result") if returns else None

    def mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def block(self, body: list[gast.stmt], loop: _Loop | None) -> tuple[list[gast.stmt], set]:
        out: list[gast.stmt] = []
        jumps: set[str] = set()
        for k, stmt in enumerate(body):
            lowered, flags = self.statement(stmt, loop)
            out.extend(lowered)
            jumps |= flags
            rest = body[k + 1 :]
            if flags and rest:
                inner, more = self.block(rest, loop)
                jumps |= more
                if inner:
                    guard = gast.If(test=_not_any(sorted(flags)), body=inner, orelse=[])
                    out.append(self.mark(guard, rest[0]))
                break
        return out, jumps

    def statement(self, stmt: gast.stmt, loop: _Loop | None) -> tuple[list[gast.stmt], set]:
        if isinstance(stmt, gast.Return) and self.ret_flag is not None:
            value = stmt.value if stmt.value is not None else build.const(None)
            return [
                self.mark(build.assign(self.ret_value, value), stmt),
                self.mark(build.assign(self.ret_flag, build.const(True)), stmt),
            ], {self.ret_flag}
        if isinstance(stmt, gast.Break):
            loop.brk = loop.brk or self.namer.fresh_temp("_break")
            return [self.mark(build.assign(loop.brk, build.const(True)), stmt)], {loop.brk}
        if isinstance(stmt, gast.Continue):
            loop.cont = loop.cont or self.namer.fresh_temp("_continue")
            return [self.mark(build.assign(loop.cont, build.const(True)), stmt)], {loop.cont}
        if isinstance(stmt, gast.If):
            body, j1 = self.block(stmt.body, loop)
            orelse, j2 = self.block(stmt.orelse, loop)
            stmt.body, stmt.orelse = body, orelse
            return [stmt], j1 | j2
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt)
        return [stmt], set()

    def loop(self, stmt: gast.For | gast.While) -> tuple[list[gast.stmt], set]:
        inner = _Loop()
        body, jumps = self.block(stmt.body, inner)
        escapes = {self.ret_flag} & jumps if self.ret_flag else set()
        pre: list[gast.stmt] = []
        if inner.cont:
            body = [self.mark(build.assign(inner.cont, build.const(False)), stmt), *body]
        stop_flags = [f for f in (inner.brk, *escapes) if f]
        if inner.brk:
            pre.append(self.mark(build.assign(inner.brk, build.const(False)), stmt))
        orelse, more = self.block(stmt.orelse, None) if stmt.orelse else ([], set())
        if orelse and inner.brk:
            orelse = [self.mark(gast.If(test=_not_any([inner.brk]), body=orelse, orelse=[]), stmt)]
        if not stop_flags:
            stmt.body = body
            stmt.orelse = []
            return [*pre, stmt, *orelse], escapes | more
        if isinstance(stmt, gast.For):
            seq = self.namer.fresh_temp("_range")
            count = self.namer.fresh_temp("_k")
            pre += [
                self.mark(build.assign(seq, stmt.iter), stmt),
                self.mark(build.assign(count, build.const(0)), stmt),
            ]
            test: gast.expr = gast.Compare(
                left=build.load(count),
                ops=[gast.Lt()],
                comparators=[build.call("len", build.load(seq))],
            )
            body = [
                self.mark(build.assign(stmt.target, gast.Subscript(
                    value=build.load(seq), slice=build.load(count), ctx=gast.Load())), stmt),
                self.mark(build.assign(count, build.binop(
                    build.load(count), gast.Add(), build.const(1))), stmt),
                *body,
            ]  # fmt: skip
        else:
            test = stmt.test
        guarded = gast.BoolOp(op=gast.And(), values=[_not_any(stop_flags), test])
        loop = self.mark(gast.While(test=guarded, body=body, orelse=[]), stmt)
        return [*pre, loop, *orelse], escapes | more


def lower_jumps(tree: gast.FunctionDef, namer: Namer) -> gast.FunctionDef:
    """Rewrite ``tree`` so no break, continue or early return remains (see module doc)."""
    body = tree.body
    final = body[-1] if body and isinstance(body[-1], gast.Return) else None
    early = _has(body[:-1] if final else body, (gast.Return,), into_loops=True)
    lower = _Lower(namer, returns=early)
    if not early:
        lowered, _ = lower.block(body, None)
        tree.body = lowered
        return tree
    init = [
        lower.mark(build.assign(lower.ret_flag, build.const(False)), body[0]),
        lower.mark(build.assign(lower.ret_value, build.const(None)), body[0]),
    ]
    lowered, _ = lower.block(body, None)
    result = lower.mark(build.ret(build.load(lower.ret_value)), final or body[-1])
    tree.body = [*init, *lowered, result]
    return tree
