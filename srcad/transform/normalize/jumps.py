"""Lower ``break``, ``continue`` and early ``return`` to boolean flags and guards.

After this pass control flow is structured: ``if``, ``for`` over a range and ``while``,
with no jump left. Each jump sets a flag of its own (one per ``break``, ``continue`` or
``return`` written), and the statements after it in its block run under ``if not flag``.
``if c: continue`` at the top of a loop body sets its flag to ``c`` itself, a value the
reverse pass may recompute instead of recording it.

A ``for`` that a ``break`` (or a ``return`` inside) can end keeps its range and index: its
body runs under ``if not flag`` for each flag it ``stops`` on (an annotation), so that the
turns after the jump do nothing (forward mode and elementwise kernels run them so); the
reverse pass runs the body without those guards (:func:`unguarded`), breaks out where a
flag is set (:func:`breaks_out`, :func:`exits_after`), counts its turns, and its backward
loop puts each flag back to False at the start of every turn it undoes (where it held
False). A ``while`` tests its flags with its condition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer


@dataclass
class _Loop:
    #: one flag per ``break`` (False before the loop, True once it ran: the last turn)
    breaks: list[str] = field(default_factory=list)
    #: one flag per ``continue`` that is set to False at the start of every turn
    resets: list[str] = field(default_factory=list)


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


def _not(flag: str) -> gast.expr:
    return gast.UnaryOp(op=gast.Not(), operand=build.load(flag))


def _continue_test(stmt: gast.stmt) -> gast.expr | None:
    """``c`` of ``if c: continue`` where ``c`` is a comparison or a negation (a truth value
    of its own, which the flag can hold)."""
    if not (
        isinstance(stmt, gast.If)
        and not stmt.orelse
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], gast.Continue)
    ):
        return None
    test = stmt.test
    if isinstance(test, gast.Compare) or (
        isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not)
    ):
        return test
    return None


class _Lower:
    def __init__(self, namer: Namer, returns: bool) -> None:
        self.namer = namer
        self.returns = returns
        self.ret_flags: list[str] = []
        self.ret_value = namer.fresh_temp("_result") if returns else None

    def mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def guard(
        self, flags: list[str], body: list[gast.stmt], origin: gast.stmt, anno: str = ""
    ) -> gast.If:
        """``body`` under ``if not flag``, one ``if`` per flag (each test a negation, which
        elementwise kernels take and the reverse pass computes again); ``anno`` marks each."""
        for flag in reversed(flags):
            guard = self.mark(gast.If(test=_not(flag), body=body, orelse=[]), origin)
            if anno:
                setanno(guard, anno, True)
            body = [guard]
        return body[0]

    def block(
        self, body: list[gast.stmt], loop: _Loop | None, top: bool = False
    ) -> tuple[list[gast.stmt], set]:
        """``top``: ``body`` is a loop body (a flag set there is set on every turn)."""
        out: list[gast.stmt] = []
        jumps: set[str] = set()
        for k, stmt in enumerate(body):
            lowered, flags = self.statement(stmt, loop, top)
            out.extend(lowered)
            jumps |= flags
            rest = body[k + 1 :]
            if flags and rest:
                inner, more = self.block(rest, loop, top)
                jumps |= more
                if inner:
                    out.append(self.guard(sorted(flags), inner, rest[0]))
                break
        return out, jumps

    def statement(
        self, stmt: gast.stmt, loop: _Loop | None, top: bool
    ) -> tuple[list[gast.stmt], set]:
        if isinstance(stmt, gast.Return) and self.returns:
            flag = self.namer.fresh_temp("_returned")
            self.ret_flags.append(flag)
            value = stmt.value if stmt.value is not None else build.const(None)
            return [
                self.mark(build.assign(self.ret_value, value), stmt),
                self.mark(build.assign(flag, build.const(True)), stmt),
            ], {flag}
        if isinstance(stmt, gast.Break):
            flag = self.namer.fresh_temp("_break")
            loop.breaks.append(flag)
            return [self.mark(build.assign(flag, build.const(True)), stmt)], {flag}
        if isinstance(stmt, gast.Continue):
            flag = self.namer.fresh_temp("_continue")
            loop.resets.append(flag)
            return [self.mark(build.assign(flag, build.const(True)), stmt)], {flag}
        if isinstance(stmt, gast.If):
            test = _continue_test(stmt) if top else None
            if test is not None:
                # assigned on every turn that gets here, and read only after: no reset
                flag = self.namer.fresh_temp("_continue")
                return [self.mark(build.assign(flag, test), stmt)], {flag}
            body, j1 = self.block(stmt.body, loop)
            orelse, j2 = self.block(stmt.orelse, loop)
            stmt.body, stmt.orelse = body, orelse
            return [stmt], j1 | j2
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt, loop)
        return [stmt], set()

    def loop(self, stmt: gast.For | gast.While, outer: _Loop | None) -> tuple[list[gast.stmt], set]:
        inner = _Loop()
        body, jumps = self.block(stmt.body, inner, top=True)
        escapes = jumps & set(self.ret_flags)
        pre: list[gast.stmt] = []
        if inner.resets:
            resets = [self.mark(build.assign(f, build.const(False)), stmt) for f in inner.resets]
            body = [*resets, *body]
            setanno(stmt, "resets", list(inner.resets))
        stops = [*inner.breaks, *sorted(escapes)]
        pre += [self.mark(build.assign(f, build.const(False)), stmt) for f in inner.breaks]
        # (a jump in the else clause is the enclosing loop's)
        orelse, more = self.block(stmt.orelse, outer) if stmt.orelse else ([], set())
        if orelse and stops:
            # the else clause runs when the loop ran out, not when a jump left it
            orelse = [self.guard(stops, orelse, stmt)]
        stmt.orelse = []
        if not stops:
            stmt.body = body
            return [*pre, stmt, *orelse], escapes | more
        setanno(stmt, "stops", stops)
        if isinstance(stmt, gast.For):
            # the turns after a jump do nothing; derivative code breaks out instead
            stmt.body = [self.guard(stops, body, stmt, "stop_guard")]
        else:
            stmt.test = gast.BoolOp(op=gast.And(), values=[*map(_not, stops), stmt.test])
            stmt.body = body
        return [*pre, stmt, *orelse], escapes | more


def stop_flags(loop: gast.For | gast.While) -> list[str]:
    """The flags a loop stops on: a ``while`` tests them, and derivative code breaks out of
    a ``for`` once one is set (its turns after that would do nothing)."""
    if isinstance(loop, gast.For) and unguarded(loop) is None:
        return []
    return list(getanno(loop, "stops") or ())


def unguarded(loop: gast.For) -> list[gast.stmt] | None:
    """The body of a ``for`` that stops on flags, without its guards (and what computes
    their tests): what a turn does before the loop has stopped (code that breaks out runs
    just that); None for other loops."""
    stops = getanno(loop, "stops")
    if not stops:
        return None
    body = loop.body
    for _ in stops:
        guard = body[-1] if body else None
        if not (isinstance(guard, gast.If) and getanno(guard, "stop_guard")):
            return None
        body = guard.body
    return body


def breaks_out(stmt: gast.stmt, flags: frozenset[str]) -> bool:
    """Whether ``stmt`` sets one of ``flags`` (those the ``for`` around it stops on): code
    breaking out for real puts ``break`` after it (the rest of the turn is guarded)."""
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and stmt.targets[0].id in flags
        and isinstance(stmt.value, gast.Constant)
        and stmt.value.value is True
    )


def exits_after(loop: gast.stmt, flags: frozenset[str]) -> list[gast.stmt]:
    """``if flag: break`` for each of ``flags`` (those the ``for`` around ``loop`` stops
    on) that ``loop`` may set: a ``return`` inside both loops."""
    inner = {n.targets[0].id for n in gast.walk(loop) if breaks_out(n, flags)}
    return [gast.If(test=build.load(f), body=[gast.Break()], orelse=[]) for f in sorted(inner)]


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
    lowered, _ = lower.block(body, None)
    init = [lower.mark(build.assign(flag, build.const(False)), body[0]) for flag in lower.ret_flags]
    init.append(lower.mark(build.assign(lower.ret_value, build.const(None)), body[0]))
    result = lower.mark(build.ret(build.load(lower.ret_value)), final or body[-1])
    tree.body = [*init, *lowered, result]
    return tree
