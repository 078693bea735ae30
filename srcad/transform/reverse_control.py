"""Control flow and tapes in reverse mode, mixed into the sweep of srcad/transform/reverse.py.

``if`` reverses into ``if`` on the same decision, a loop over a range into a loop over the
reversed range, a ``while`` into a loop run as many times as it ran (its trip counter).
A loop's backward body is generated until the adjoints it carries are the same on every
turn. Pushes and pops on the tapes of generated code being differentiated again pair with
pops and pushes on their adjoint tapes.
"""

from __future__ import annotations

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer
from srcad.transform.nodes import clone
from srcad.transform.normalize.walk import rewrite_bodies
from srcad.transform.ops import operand_names
from srcad.transform.reverse_context import generated


class ControlAdjoints:
    """The sweep's backward code for branches, loops and tape operations (mixed into
    reverse.Sweep, whose adjoint state it reads and updates)."""

    def push_backward(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A value pushed on a tape gets the adjoint its pop handed on."""
        value = stmt.value.args[0]
        tape = self.ctx.tapes[stmt.value.func.value.id]
        pop = build.call(build.attr(build.load(tape), "pop"))
        if not operand_names(value) & self.ctx.activity.varied:
            return [generated(gast.Expr(value=pop), False)]
        if not isinstance(value, gast.Name):
            raise self.ctx.source.error(
                "differentiating this tape push again is not supported", stmt
            )
        # the pop runs even where its value is not needed: later pops take what is under it
        out = self.contribute(value, pop, False, stmt) or [gast.Expr(value=pop)]
        return [generated(s, False) for s in out]

    def dropped_pop_backward(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A pop whose value is dropped still pairs with a push: its adjoint tape gets a
        None in its place (the push it pairs with saved a value that does not vary, whose
        adjoint is never read; were it read, None would fail loudly, never add silently)."""
        tape = self.ctx.tapes[stmt.value.func.value.id]
        push = build.call(build.attr(build.load(tape), "push"), build.const(None))
        return [generated(gast.Expr(value=push), False)]

    def pop_backward(self, stmt: gast.Assign, call: gast.Call) -> list[gast.stmt]:
        """The adjoint of a value taken off a tape goes on the adjoint tape, for its push."""
        name = stmt.targets[0].id
        tape = self.ctx.tapes[call.func.value.id]
        adjoint = self.reduced_adjoint(name)
        push = build.call(build.attr(build.load(tape), "push"), adjoint)
        self.state.discard(name)
        self.owned.discard(name)
        return [generated(gast.Expr(value=push), False)]

    def if_backward(self, stmt: gast.If, body_part, else_part) -> list[gast.stmt]:
        """Both arms reversed; an adjoint only one arm makes starts as zeros in the other."""
        before, before_owned = set(self.state), set(self.owned)
        body = self.run_backward(body_part)
        after_body, owned_body = self.state, self.owned
        self.state, self.owned = set(before), set(before_owned)
        orelse = self.run_backward(else_part)
        # (a copy: self.zeros below marks names owned in self.owned, for either branch)
        after_else, owned_else = self.state, set(self.owned)
        for name in sorted(after_body - after_else):
            orelse.append(self.zeros(name))
            owned_else.add(name)
        for name in sorted(after_else - after_body):
            body.append(self.zeros(name))
            owned_body.add(name)
        self.state = after_body | after_else
        self.owned = owned_body & owned_else
        if not body and not orelse:
            return []
        self.read_by(stmt, [stmt.test])
        return [gast.If(test=clone(stmt.test), body=body or [gast.Pass()], orelse=orelse)]

    def loop_backward(self, owner: gast.stmt, deferred, header) -> list[gast.stmt]:
        """The reversed loop body run until the adjoints it carries are the same each time."""
        entry = set(self.state)
        entry_owned = set(self.owned)
        prelude: list[gast.stmt] = []
        # a round that does not settle adds names to ``entry`` or ``self.loose``, which only
        # grow, or else takes names out of ``entry_owned & entry`` for good: the rounds end
        while True:
            self.state, self.owned = set(entry), set(entry_owned)
            carried = set(self.loose)
            body = self.run_backward(deferred)
            exit_ = self.state
            missing = exit_ - entry
            # an adjoint updated in place on one turn must still be unshared on the next
            lost = (entry_owned & entry) - self.owned - (entry - exit_)
            # an adjoint found loose on one turn is loose in the code of the next turn that
            # runs before the point where it was found
            found = self.loose - carried
            if not missing and not lost and not found:
                break
            for name in sorted(missing):
                prelude.append(self.zeros(name))
            entry |= missing
            entry_owned = (entry_owned | missing) - lost
        for name in sorted(entry - exit_):
            body.append(self.zeros(name))
        self.state, self.owned = entry, entry_owned
        if not body:
            return prelude
        loop = header(body)
        self.read_by(owner, [loop.iter])
        return [*prelude, loop]

    def for_loop(self, stmt: gast.For):
        """The loop with its body's forward code; its backward runs the range reversed."""
        body_f, part = self.deferred(stmt.body)
        forward = gast.For(
            target=stmt.target, iter=stmt.iter, body=body_f, orelse=[], type_comment=None
        )

        def backward(s: gast.For) -> list[gast.stmt]:
            def header(body: list[gast.stmt]) -> gast.For:
                reverse = self.ctx.namer.bind_global(reversed, "reversed")
                return gast.For(
                    target=clone(s.target),
                    iter=build.call(reverse, clone(s.iter)),
                    body=body,
                    orelse=[],
                    type_comment=None,
                )

            return self.loop_backward(s, part, header)

        return [gast.copy_location(forward, stmt)], backward

    def while_loop(self, stmt: gast.While):
        """The loop counting its trips; its backward runs the body that many times."""
        counter = getanno(stmt, "counter")
        body_f, part = self.deferred(stmt.body)
        increment = generated(
            build.assign(counter, build.binop(build.load(counter), gast.Add(), build.const(1)))
        )
        forward = gast.While(test=stmt.test, body=[*body_f, increment], orelse=[])

        def backward(s: gast.While) -> list[gast.stmt]:
            def header(body: list[gast.stmt]) -> gast.For:
                return gast.For(
                    target=build.store(self.ctx.namer.fresh_temp("_")),
                    iter=build.call("range", build.load(counter)),
                    body=body,
                    orelse=[],
                    type_comment=None,
                )

            return self.loop_backward(s, part, header)

        return [gast.copy_location(forward, stmt)], backward


def prepare_while_counters(body: list[gast.stmt], namer: Namer) -> None:
    """Give each while loop a trip counter, assigned just before the loop."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.While) and getanno(stmt, "counter") is None:
                counter = namer.fresh_temp("_trips")
                init = generated(build.assign(counter, build.const(0)))
                setanno(init, "counter", True)
                setanno(stmt, "counter", counter)
                out.append(init)
            out.append(stmt)
        return out

    body[:] = rewrite_bodies(body, block)
