"""Control flow and tapes in reverse mode, mixed into the sweep of srcad/transform/reverse.py.

``if`` reverses into ``if`` on the same decision, a loop over a range into a loop over the
reversed range, a ``while`` into a loop run as many times as it ran (its trip counter).
A ``for`` that stops on jump flags (normalize/jumps.py) breaks out for real and counts its
turns; its backward loop runs over the turns that ran, reversed, and, as a ``while``'s,
makes those flags False again at the start of each turn it undoes. A loop's backward body
is generated until the adjoints it carries are the same on every turn. Pushes and pops on
the tapes of generated code being differentiated again pair with pops and pushes on their
adjoint tapes. The shapes of that code are templates (srcad/transform/control_templates.py).
"""

from __future__ import annotations

import gast

from srcad.transform import build
from srcad.transform import control_templates as shapes
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer
from srcad.transform.nodes import clone
from srcad.transform.normalize.jumps import exits_after, stop_flags, unguarded
from srcad.transform.normalize.walk import rewrite_bodies
from srcad.transform.ops import operand_names
from srcad.transform.reverse_context import generated
from srcad.transform.templates import fill


class ControlAdjoints:
    """The sweep's backward code for branches, loops and tape operations (mixed into
    reverse.Sweep, whose adjoint state it reads and updates)."""

    def push_backward(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A value pushed on a tape gets the adjoint its pop handed on."""
        value = stmt.value.args[0]
        tape = self.ctx.tapes[stmt.value.func.value.id]
        namer = self.ctx.namer
        unread = id(stmt) in self.ctx.activity.unread  # only dropped or useless pops take it
        if unread or not operand_names(value) & self.ctx.activity.varied:
            return [generated(s, False) for s in fill(shapes.pop, namer, tape=tape)]
        if not isinstance(value, gast.Name):
            raise self.ctx.source.error(
                "differentiating this tape push again is not supported", stmt
            )
        # the pop runs even where its value is not needed: later pops take what is under it
        popped = fill(shapes.popped, namer, tape=tape)
        out = self.contribute(value, popped, False, stmt) or fill(shapes.pop, namer, tape=tape)
        return [generated(s, False) for s in out]

    def dropped_pop_backward(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A pop whose value is dropped still pairs with a push: its adjoint tape gets a
        None in its place (the push it pairs with saved a value that does not vary, whose
        adjoint is never read; were it read, None would fail loudly, never add silently)."""
        tape = self.ctx.tapes[stmt.value.func.value.id]
        push = fill(shapes.push, self.ctx.namer, tape=tape, value=build.const(None))
        return [generated(s, False) for s in push]

    def pop_backward(self, stmt: gast.Assign, call: gast.Call) -> list[gast.stmt]:
        """The adjoint of a value taken off a tape goes on the adjoint tape, for its push."""
        name = stmt.targets[0].id
        tape = self.ctx.tapes[call.func.value.id]
        push = fill(shapes.push, self.ctx.namer, tape=tape, value=self.reduced_adjoint(name))
        self.state.discard(name)
        self.owned.discard(name)
        return [generated(s, False) for s in push]

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
        body = body or [gast.Pass()]
        test = clone(stmt.test)
        return fill(shapes.same_branch, self.ctx.namer, test=test, body=body, orelse=orelse)

    def loop_backward(
        self, owner: gast.stmt, deferred, header, stops: list[str] = ()
    ) -> list[gast.stmt]:
        """The reversed loop body run until the adjoints it carries are the same each time;
        ``stops``: flags the loop stops on, False again at the start of each turn undone."""
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
        # (the turns before the last ran to their end: no flag was set in them)
        for flag in stops:
            body.extend(map(generated, fill(shapes.not_stopped, self.ctx.namer, flag=flag)))
        loop = header(body)
        self.read_by(owner, [loop.iter])
        return [*prelude, loop]

    def for_loop(self, stmt: gast.For):
        """The loop with its body's forward code; its backward runs the range reversed (a
        loop that stops on flags: the part of it that ran, counted)."""
        stops = stop_flags(stmt)
        outer, self.breaking = self.breaking, frozenset(stops)
        body_f, part = self.deferred(unguarded(stmt) if stops else stmt.body)
        self.breaking = outer
        namer = self.ctx.namer
        if stops:
            (forward,) = fill(
                shapes.counting_for,
                namer,
                target=stmt.target,
                iterable=stmt.iter,
                body=body_f,
                counter=getanno(stmt, "counter"),
            )
            generated(forward.body[0])
        else:
            forward = gast.For(
                target=stmt.target, iter=stmt.iter, body=body_f, orelse=[], type_comment=None
            )

        def backward(s: gast.For) -> list[gast.stmt]:
            def header(body: list[gast.stmt]) -> gast.For:
                turns = self.turns(s.iter, getanno(s, "counter")) if stops else clone(s.iter)
                target = clone(s.target)
                (loop,) = fill(shapes.undone_for, namer, target=target, turns=turns, body=body)
                return loop

            return self.loop_backward(s, part, header, stops)

        return [gast.copy_location(forward, stmt), *self.exits_after(stmt)], backward

    def exits_after(self, loop: gast.stmt) -> list[gast.stmt]:
        """``if flag: break`` after an inner loop that may set a flag the ``for`` around
        it stops on (a ``return`` inside both)."""
        return [generated(s, False) for s in exits_after(loop, self.breaking)]

    def turns(self, iterator: gast.expr, counter: str) -> gast.expr:
        """``iterator[:counter]`` (a loop's range, cut to the turns that ran) as a range."""
        namer = self.ctx.namer
        if (
            isinstance(iterator, gast.Call)
            and not iterator.keywords
            and self.ctx.source.resolve(iterator.func, self.ctx.local) is range
        ):
            args = iterator.args
            if len(args) == 1:
                return fill(shapes.first_turns, namer, count=counter)
            start = clone(args[0])
            if len(args) < 3:
                return fill(shapes.first_turns_from, namer, start=start, count=counter)
            step = clone(args[2])
        else:  # a name holding the range the loop started with
            start, step = build.attr(clone(iterator), "start"), build.attr(clone(iterator), "step")
        return fill(shapes.first_turns_by, namer, start=start, count=counter, step=step)

    def while_loop(self, stmt: gast.While):
        """The loop counting its trips; its backward runs the body that many times."""
        counter = getanno(stmt, "counter")
        # (a break in its body would skip the count at its end: its flags end it)
        outer, self.breaking = self.breaking, frozenset()
        body_f, part = self.deferred(stmt.body)
        self.breaking = outer
        namer = self.ctx.namer
        (forward,) = fill(
            shapes.counting_while, namer, test=stmt.test, body=body_f, counter=counter
        )
        generated(forward.body[-1])

        def backward(s: gast.While) -> list[gast.stmt]:
            def header(body: list[gast.stmt]) -> gast.For:
                index = namer.fresh_temp("_")
                (loop,) = fill(shapes.undone_while, namer, index=index, trips=counter, body=body)
                return loop

            return self.loop_backward(s, part, header, stop_flags(s))

        return [gast.copy_location(forward, stmt), *self.exits_after(stmt)], backward


def prepare_trip_counters(body: list[gast.stmt], namer: Namer) -> None:
    """Give each while loop, and each for loop that stops on flags, a trip counter,
    assigned just before the loop."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            counted = isinstance(stmt, gast.While) or (
                isinstance(stmt, gast.For) and stop_flags(stmt)
            )
            if counted and getanno(stmt, "counter") is None:
                counter = namer.fresh_temp("_trips")
                init = generated(build.assign(counter, build.const(0)))
                setanno(init, "counter", True)
                setanno(stmt, "counter", counter)
                out.append(init)
            out.append(stmt)
        return out

    body[:] = rewrite_bodies(body, block)
