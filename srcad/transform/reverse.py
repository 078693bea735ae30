"""Reverse mode: a forward sweep (the primal, recording what the tape plan asks for), then
a backward sweep that runs each active statement's adjoint in reverse order.

Control flow is reversed structurally: ``if`` becomes ``if`` on the same decision, a loop
over a range runs over the reversed range, a ``while`` runs as many times as it did.
Adjoints are plain local variables whose presence is tracked statically: the first
contribution assigns, later ones add, a variable's own assignment ends its adjoint, and
zeros are only written where a loop or branch needs the same adjoints on every path.
"""

from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass, field

import gast

from srcad.errors import NoAdjointError, NoOutputError, TransformError
from srcad.runtime import accumulate, complexes, inplace, lists
from srcad.runtime.backend import array_namespace
from srcad.runtime.tape import Tape
from srcad.transform import build
from srcad.transform.analyses.activity import Activity, active_tapes, analyse_activity, targets
from srcad.transform.analyses.masking import (
    SELECTIONS,
    is_elementwise,
    keeps_zeros,
    masked_adjoints,
)
from srcad.transform.analyses.shapes import Rank, SameShape, analyse_ranks, analyse_shapes
from srcad.transform.analyses.tbr import (
    Recording,
    definitions,
    loop_targets,
    may_precede,
    plan_recording,
    stable_names,
)
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import LIST_GRADIENT_HINT, generated_call, missing_rule_hint
from srcad.transform.callsites import UserCall, rewrite_user_calls
from srcad.transform.frontend import MISSING, Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer, clone, names
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.inplace import alias_groups
from srcad.transform.normalize.walk import all_statements, rewrite_bodies
from srcad.transform.ops import (
    annotate_purity,
    classify,
    differentiable_operand_names,
    operand_names,
    tape_call,
    tape_names,
)
from srcad.transform.rebind import reads_through_namespace
from srcad.transform.templates import (
    ADJOINT,
    TemplateError,
    instantiate,
    result_names,
    rule_operands,
    stored_params,
)

#: Rules whose adjoint is correct for an incoming gradient broadcast beyond the result's
#: shape (elementwise templates, and products whose helpers reduce it first).
_BROADCAST_TRANSPARENT = {
    "add", "sub", "mul", "mul_self", "truediv", "power", "mod", "maximum", "minimum",
    "where", "clip", "matmul", "dot", "identity", "neg", "copy",
}  # fmt: skip
_ROUNDS = 8
#: Rules that take a list built in the function as a list (its gradient is a list).
_LIST_AWARE = {
    "list_append", "list_literal", "list_item", "stack_list", "concatenate_list",
    "vstack_list", "hstack_list", "dstack_list", "column_stack_list", "tuple_of_list",
    "builtin_sum", "identity",
}  # fmt: skip


@dataclass
class _Context:
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


@dataclass
class _Sweep:
    """One generation of forward and backward code under a recording plan."""

    ctx: _Context
    plan: Recording
    available: set[str]
    loose_in: set[str]
    state: set[str] = field(default_factory=set)
    loose: set[str] = field(default_factory=set)
    pushes: bool = False
    last_origin: object = None
    readers: dict[str, set[int]] = field(default_factory=dict)
    #: arrays updated in place later that a user call's residuals hold (its backward pass
    #: reads them as they were at the call: they must be put back by then)
    held: set[str] = field(default_factory=set)
    contributed: set[str] = field(default_factory=set)
    # adjoints holding an array this code made and nothing else refers to: safe to update
    # in place (``dx[i] += g`` instead of a zero array per read)
    owned: set[str] = field(default_factory=set)
    # the operation that made an owned adjoint: kept unfolded if it is updated in place
    # (``dy = d_out * 1.0`` must not fold to the caller's cotangent)
    owners: dict[str, gast.stmt] = field(default_factory=dict)
    buffers: set[str] = field(default_factory=set)
    # adjoints that are one number broadcast to their variable's shape (a whole-array sum's
    # ``unreduce(g, x)``): an elementwise rule of the same shape may read ``g`` itself
    uniform: dict[str, gast.expr] = field(default_factory=dict)
    # names whose adjoint starts as ``zeros_like(name)`` somewhere in the backward code
    zeroed: set[str] = field(default_factory=set)
    # ops without a rule, latest first in program order: the sweep goes on to report the
    # earliest (``eig`` rather than the ``.real`` of its result, which fails because of it)
    errors: list[NoAdjointError] = field(default_factory=list)

    def read_by(self, stmt: gast.AST, code: list[gast.AST]) -> None:
        """Record that the backward code ``code`` of ``stmt`` reads primal names."""
        for name in _reads_of_primal(code, self.ctx):
            self.readers.setdefault(name, set()).add(id(stmt))

    # ---- adjoint variables ----

    def adj(self, name: str) -> str:
        names = self.ctx.adjoint_names
        if name not in names:
            names[name] = self.ctx.namer.adjoint(name)
        return names[name]

    def is_loose(self, name: str) -> bool:
        return name in self.loose or name in self.loose_in

    def contribute(self, target: gast.expr, value: gast.expr, loose: bool, where: gast.AST):
        varied = operand_names(target) & self.ctx.activity.varied
        if not varied:
            return []
        if not isinstance(target, gast.Name):
            raise self.ctx.source.error(
                "the gradient flows into a list or expression here, which is not supported "
                "yet; pass arrays as separate arguments (e.g. np.stack([a, b]) for arrays)",
                where,
            )
        name = target.id
        adj = self.adj(name)
        self.contributed.add(name)
        was_loose = self.is_loose(name)
        # a second term makes the adjoint no longer one number broadcast
        self.forget_uniform({name, adj})
        seed = None if name in self.state or loose or was_loose else self.uniform_seed(value, name)
        if loose:
            self.loose.add(name)
        if name in self.state:
            if name in self.ctx.source.lists:
                helper = self.ctx.namer.bind_global(lists.add_gradients, "add_gradients")
                value = build.call(helper, build.load(adj), value)
            elif loose or was_loose:
                # terms broadcast differently only add up once each is reduced to the
                # variable's shape (the variable is then needed, so it is kept or restored)
                helper = self.ctx.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
                value = build.binop(
                    build.call(helper, build.load(adj), build.load(name)),
                    gast.Add(),
                    build.call(helper, value, build.load(name)),
                )
            else:
                value = build.binop(build.load(adj), gast.Add(), value)
        self.state.add(name)
        fresh = isinstance(value, gast.BinOp) or (
            isinstance(value, gast.Name) and value.id in self.buffers
        )
        stmt = _generated(build.assign(adj, value))
        if fresh and name not in self.ctx.source.lists:
            self.owned.add(name)
            self.owners[name] = stmt
        else:
            self.owned.discard(name)
        if seed is not None:
            self.uniform[name] = (seed, stmt)
        return [stmt]

    def uniform_seed(self, value: gast.expr, name: str) -> gast.expr | None:
        """``g`` if ``value`` is ``unreduce(g, name)`` for a whole-array reduction."""
        if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)):
            return None
        if self.ctx.namer.globals.get(value.func.id) is not accumulate.unreduce:
            return None
        args, keywords = value.args, value.keywords
        if len(args) < 2 or not (isinstance(args[1], gast.Name) and args[1].id == name):
            return None
        rest = [*args[2:], *(kw.value for kw in keywords)]
        if not all(isinstance(a, gast.Constant) and a.value in (None, False) for a in rest):
            return None
        if any(kw.arg not in ("axis", "keepdims") for kw in keywords):
            return None
        if self.reads_loose(args[0]):
            return None
        return args[0]

    def forget_uniform(self, names: set[str]) -> None:
        """Drop the uniform adjoints of ``names``, and those whose number reads them."""
        for key, (seed, _) in list(self.uniform.items()):
            if key in names or names & operand_names(seed):
                del self.uniform[key]

    def zeros(self, name: str) -> gast.stmt:
        if name not in self.ctx.source.lists:
            self.owned.add(name)
        self.zeroed.add(name)
        helper = self.ctx.namer.bind_global(accumulate.zeros_like, "zeros_like")
        return _generated(build.assign(self.adj(name), build.call(helper, build.load(name))))

    # ---- statements ----

    def block(self, body: list[gast.stmt]) -> tuple[list[gast.stmt], list[gast.stmt]]:
        """Forward code for ``body`` and the backward code that undoes it."""
        forward, part = self.deferred(body)
        return forward, self.run_backward(part)

    def statement_forward(self, stmt: gast.stmt):
        if isinstance(stmt, gast.Assign):
            fwd = [stmt]
            if id(stmt) in self.plan.pushed:
                self.pushes = True
                parts = self.ctx.setitem_parts(stmt)
                if parts is not None:
                    # an update in place: save only the part it overwrites
                    helper = self.ctx.namer.bind_global(inplace.saved, "saved")
                    part = build.call(helper, build.load(parts[0]), clone(parts[1]))
                    push = build.call(build.attr(build.load(self.ctx.tape_name), "push"), part)
                    return [_generated(gast.Expr(value=push), False), stmt], self.assign_backward
                pushes = [
                    _generated(gast.Expr(value=build.call(
                        build.attr(build.load(self.ctx.tape_name), "push"), build.load(n))), False)
                    for n in targets(stmt)
                    if n in self.plan.pushed_names
                ]  # fmt: skip
                fwd = pushes + fwd
            return fwd, self.assign_backward
        if isinstance(stmt, gast.If):
            body_f, body_sweep = self.deferred(stmt.body)
            else_f, else_sweep = self.deferred(stmt.orelse)
            new = gast.If(test=stmt.test, body=body_f, orelse=else_f)
            return [gast.copy_location(new, stmt)], lambda s: self.if_backward(
                s, body_sweep, else_sweep
            )
        if isinstance(stmt, gast.For):
            return self.for_loop(stmt)
        if isinstance(stmt, gast.While):
            return self.while_loop(stmt)
        push = tape_call(stmt, set(self.ctx.tapes), "push")
        if push is not None and push.func.value.id in self.ctx.active_tapes:
            return [stmt], self.push_backward
        pop = tape_call(stmt, set(self.ctx.tapes), "pop")
        if pop is not None and pop.func.value.id in self.ctx.active_tapes:
            return [stmt], self.dropped_pop_backward
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
            callee = self.ctx.source.resolve(stmt.value.func, self.ctx.local)
            lists_given = (
                operand_names(stmt.value) & self.ctx.activity.varied & self.ctx.source.lists
            )
            if lists_given and callee is not builtins.print:
                # it may append to the list it is given, which has no adjoint
                raise self.ctx.source.error(
                    "a call for its side effect on a differentiated value cannot be "
                    "differentiated; assign its result instead",
                    getanno(stmt, "expr") or stmt,
                )
            callee = self.ctx.source.resolve(stmt.value.func, self.ctx.local)
            if getattr(callee, "__module__", "") == inplace.__name__:
                # generated code restoring an array it updated in place
                raise self.ctx.source.error(
                    "a derivative that updates arrays in place cannot be differentiated "
                    "again yet (its backward pass restores them in place)",
                    stmt,
                )
        return [stmt], []

    def push_backward(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A value pushed on a tape gets the adjoint its pop handed on."""
        value = stmt.value.args[0]
        tape = self.ctx.tapes[stmt.value.func.value.id]
        pop = build.call(build.attr(build.load(tape), "pop"))
        if not operand_names(value) & self.ctx.activity.varied:
            return [_generated(gast.Expr(value=pop), False)]
        if not isinstance(value, gast.Name):
            raise self.ctx.source.error(
                "differentiating this tape push again is not supported", stmt
            )
        # the pop runs even where its value is not needed: later pops take what is under it
        out = self.contribute(value, pop, False, stmt) or [gast.Expr(value=pop)]
        return [_generated(s, False) for s in out]

    def dropped_pop_backward(self, stmt: gast.Expr) -> list[gast.stmt]:
        """A pop whose value is dropped still pairs with a push: its adjoint tape gets a
        None in its place (the push it pairs with saved a value that does not vary, whose
        adjoint is never read; were it read, None would fail loudly, never add silently)."""
        tape = self.ctx.tapes[stmt.value.func.value.id]
        push = build.call(build.attr(build.load(tape), "push"), build.const(None))
        return [_generated(gast.Expr(value=push), False)]

    def pop_backward(self, stmt: gast.Assign, call: gast.Call) -> list[gast.stmt]:
        """The adjoint of a value taken off a tape goes on the adjoint tape, for its push."""
        name = stmt.targets[0].id
        tape = self.ctx.tapes[call.func.value.id]
        adjoint = self.reduced_adjoint(name)
        push = build.call(build.attr(build.load(tape), "push"), adjoint)
        self.state.discard(name)
        self.owned.discard(name)
        return [_generated(gast.Expr(value=push), False)]

    def deferred(self, body: list[gast.stmt]):
        """Forward code now; the backward code is generated later, in backward order."""
        forward = []
        parts = []
        for stmt in body:
            fwd, rev = self.statement_forward(stmt)
            forward.extend(fwd)
            parts.append(rev)
        return forward, (body, parts)

    def run_backward(self, deferred) -> list[gast.stmt]:
        body, parts = deferred
        self.last_origin = None
        self.uniform = {}
        backward = [clone(s) for s in body if id(s) in self.plan.recomputed]
        for stmt, rev in zip(reversed(body), reversed(parts)):
            try:
                backward.extend(rev(stmt) if callable(rev) else rev)
            except NoAdjointError as exc:
                if any(exc is e for e in self.errors):
                    raise  # the one reported, on its way out of a loop or branch
                self.errors.append(exc)
                if isinstance(stmt, gast.Assign):  # its operands' own statements get checked
                    self.state |= operand_names(stmt.value) & self.ctx.activity.varied
            except TransformError:
                if self.errors:  # met while looking for an earlier missing rule
                    raise self.errors[-1] from None
                raise
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                # what a body knew of uniform adjoints holds only in it (it may not run)
                self.uniform = {}
        return backward

    def if_backward(self, stmt: gast.If, body_part, else_part) -> list[gast.stmt]:
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
        for _ in range(_ROUNDS):
            self.state, self.owned = set(entry), set(entry_owned)
            saved_loose = set(self.loose)
            body = self.run_backward(deferred)
            exit_ = self.state
            missing = exit_ - entry
            # an adjoint updated in place on one turn must still be unshared on the next
            lost = (entry_owned & entry) - self.owned - (entry - exit_)
            if not missing and not lost:
                break
            for name in sorted(missing):
                prelude.append(self.zeros(name))
            entry |= missing
            entry_owned = (entry_owned | missing) - lost
            self.loose = saved_loose
        for name in sorted(entry - exit_):
            body.append(self.zeros(name))
        self.state, self.owned = entry, entry_owned
        if not body:
            return prelude
        loop = header(body)
        self.read_by(owner, [loop.iter])
        return [*prelude, loop]

    def for_loop(self, stmt: gast.For):
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
        counter = getanno(stmt, "counter")
        body_f, part = self.deferred(stmt.body)
        increment = _generated(
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

    # ---- one assignment ----

    def assign_backward(self, stmt: gast.Assign) -> list[gast.stmt]:
        ctx = self.ctx
        out: list[gast.stmt] = []
        names = targets(stmt)
        target = stmt.targets[0]
        live = [n for n in names if n in self.state]
        call = getanno(stmt, "user_call")
        pop = tape_call(stmt, set(ctx.tapes), "pop")
        self.contributed: set[str] = set()
        if pop is not None:
            if pop.func.value.id in ctx.active_tapes:
                out.extend(self.pop_backward(stmt, pop))
        elif call is not None:
            if any(n in self.state for n in call.outputs):
                out.extend(self.user_call_backward(stmt, call))
                held = operand_names(gast.Tuple(elts=call.arguments, ctx=gast.Load()))
                held &= self.ctx.updated_memory
                self.held |= held
                self.read_by(stmt, [build.load(n) for n in sorted(held)])
        elif live:
            if not isinstance(target, gast.Name) and not _multiple_results(stmt, ctx):
                op = classify(stmt.value, ctx.source, ctx.local)
                where = getanno(stmt, "expr") or stmt
                if op.rule is None and not op.nondifferentiable and not generated_call(op.callee):
                    rule_operands(None, op, ctx.source, where)  # "no adjoint rule for ..."
                raise ctx.source.error(
                    "unpacking a differentiable value into several names is not supported yet"
                    + missing_rule_hint(op.callee),
                    where,
                )
            origin = getanno(stmt, "origin")
            if origin is not None and origin is not self.last_origin:
                out.append(build.comment("grad of: " + ctx.source.line_text(origin)))
                self.last_origin = origin
            out.extend(self.adjoint(stmt))
        self.read_by(stmt, out)
        for name in names:
            if name not in self.contributed:  # an op reading its own target re-adds it
                self.state.discard(name)
                self.owned.discard(name)
        self.forget_uniform(set(names))
        parts = ctx.setitem_parts(stmt)
        if id(stmt) in self.plan.pushed and parts is not None:
            helper = ctx.namer.bind_global(inplace.restore, "restore")
            pop = build.call(build.attr(build.load(ctx.tape_name), "pop"))
            call = build.call(helper, build.load(parts[0]), clone(parts[1]), pop)
            out.append(_generated(gast.Expr(value=call), False))
        elif id(stmt) in self.plan.pushed:
            # pushed in order, so popped in reverse
            for name in reversed([n for n in names if n in self.plan.pushed_names]):
                pop = build.call(build.attr(build.load(ctx.tape_name), "pop"))
                out.append(_generated(build.assign(name, pop), False))
        return out

    def user_call_backward(self, stmt: gast.Assign, call: UserCall) -> list[gast.stmt]:
        """``grads = f_vjp.backward(residuals, dy)``, then one contribution per argument."""
        ctx = self.ctx
        out: list[gast.stmt] = []
        origin = getanno(stmt, "origin")
        if origin is not None and origin is not self.last_origin:
            out.append(build.comment("grad of: " + ctx.source.line_text(origin)))
            self.last_origin = origin
        cotangents = [self.reduced_adjoint(n) for n in call.outputs]
        grads = ctx.namer.fresh_temp("_grads")
        backward = build.attr(build.load(call.handle), "backward")
        value = build.call(backward, build.load(call.residuals), *cotangents)
        out.append(_generated(build.assign(grads, value), False))
        for name in call.outputs:
            self.state.discard(name)
            self.owned.discard(name)
        for k, node in enumerate(call.arguments):
            part = gast.Subscript(value=build.load(grads), slice=build.const(k), ctx=gast.Load())
            out.extend(self.contribute(node, part, False, call.where))
        return out

    def reduced_adjoint(self, name: str) -> gast.expr:
        """The adjoint of ``name`` in its variable's shape, as a call's backward pass takes
        it: a loose adjoint (a broadcast term not yet reduced) is unbroadcast first."""
        if name not in self.state:
            return self.zeros(name).value
        if not self.is_loose(name):
            return build.load(self.adj(name))
        helper = self.ctx.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
        return build.call(helper, build.load(self.adj(name)), build.load(name))

    def adjoint(self, stmt: gast.Assign) -> list[gast.stmt]:
        ctx = self.ctx
        source = ctx.source
        target = stmt.targets[0]
        where = getanno(stmt, "expr") or stmt
        op = classify(stmt.value, source, ctx.local)
        if op.nondifferentiable:
            return []
        if not differentiable_operand_names(stmt.value, op) & ctx.activity.varied:
            return []  # e.g. an output that does not depend on what is differentiated
        rule = op.rule
        bound = rule_operands(rule, op, source, where)
        if rule.name not in _LIST_AWARE:
            for node in bound.values():
                if isinstance(node, gast.Name) and node.id in source.lists:
                    if getattr(op.callee, "__module__", "").startswith("srcad.runtime"):
                        # generated code: a list's gradient reaches a helper for arrays
                        raise source.error(
                            f"{op.label} receives the list '{node.id}'{LIST_GRADIENT_HINT}",
                            where,
                        )
                    if _unrolled(rule):  # np.select's lists: its rule takes them one by one
                        raise source.error(
                            f"{op.label} receives the list '{node.id}'; write its elements "
                            f"out in the call ({op.label}([a, b], [x, y]))",
                            where,
                        )
                    raise source.error(
                        f"{op.label} receives the list '{node.id}'; turn it into an array "
                        f"first (np.stack({node.id}) or np.concatenate({node.id}))",
                        where,
                    )
        stored = stored_params(rule)
        for param, node in bound.items():
            if (
                param not in stored
                and param not in rule.static
                and operand_names(node) & ctx.activity.varied
            ):
                raise source.error(
                    f"the gradient of {op.label} with respect to its argument '{param}' is "
                    "not implemented",
                    where,
                )
        if rule.results:
            return self.multiple_results_adjoint(stmt, rule, bound, where, op.label)
        if not isinstance(target, gast.Name):
            raise source.error(f"{op.label} returns one value; it cannot be unpacked", where)
        try:
            body = instantiate(rule, build.load(target.id), bound, ctx.namer, ctx.xp_name)
        except TemplateError as exc:
            raise source.error(f"{op.label}: {exc}", where) from None
        out: list[gast.stmt] = []
        name = target.id
        transparent = rule.shape_preserving or rule.name in _BROADCAST_TRANSPARENT
        if self.is_loose(name) and not transparent:
            helper = ctx.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
            exact = build.call(helper, build.load(self.adj(name)), build.load(name))
            out.append(_generated(build.assign(self.adj(name), exact)))
        scatter = self.scatter_in_place(rule, op, name, bound)
        if scatter is not None:
            return out + scatter
        reader = _ReadAdjoints(self, build.load(name))
        uniform = self.uniform.get(name)
        if uniform is not None and not self.is_loose(name):
            if _keeps_shape(rule, op) or self.operands_keep_shape(rule, op, name):
                reader.uniform = {name: uniform[0]}
        if name in operand_names(stmt.value):
            # the op reads the name it assigns (only after unpacking or in odd user code):
            # take the incoming gradient aside before the operand's adjoint starts afresh
            incoming = ctx.namer.fresh_temp("d" + name + "_out")
            out.append(_generated(build.assign(incoming, build.load(self.adj(name)))))
            reader.renamed = {name: incoming}
            self.state.discard(name)
        read_uniform = fell_back = False
        chained = is_elementwise(rule) and rule.name not in SELECTIONS and name in ctx.masked
        for tstmt in body:
            if isinstance(tstmt, gast.Assign):
                dest = tstmt.targets[0]
                reader.lazy = False
                tvalue = tstmt.value
                if chained and _is_adjoint_store(dest):
                    tvalue = self.zero_safe(tvalue, name)
                # (the reader rewrites in place: a fallback below reads the template again)
                value = reader.visit(copy.deepcopy(tvalue))
                spread = None
                if reader.used_uniform and not _elementwise_in(value, operand_names(stmt.value)):
                    spread = self.spread_uniform(dest, value, name)
                    if spread is None:
                        # the number alone would lose the shape: read the broadcast adjoint
                        reader.uniform = {}
                        value = _ReadAdjoints(self, build.load(name)).visit(tvalue)
                    else:
                        value = spread
                if reader.used_uniform:
                    read_uniform = True
                    fell_back |= not reader.uniform
                reader.used_uniform = False
                if isinstance(dest, gast.Subscript) and getattr(dest.value, "id", None) == ADJOINT:
                    loose = reader.lazy or self.reads_loose(value)
                    out.extend(self.contribute(dest.slice, value, loose, where))
                    continue
                new = gast.Assign(targets=[reader.visit(dest)], value=value, type_comment=None)
                if (
                    isinstance(new.targets[0], gast.Name)
                    and isinstance(value, gast.Call)
                    and isinstance(value.func, gast.Attribute)
                    and value.func.attr == "zeros_like"
                ):
                    self.buffers.add(new.targets[0].id)
                out.append(_generated(new))
            else:
                out.append(_generated(reader.visit(tstmt), False))
        if read_uniform and not fell_back:
            # the broadcast adjoint is read no more: its operand need not be kept
            setanno(uniform[1], "superseded", True)
        return out

    def zero_safe(self, term: gast.expr, name: str) -> gast.expr:
        """``term`` (an elementwise rule's contribution from ``d[name]``) made zero where
        ``d[name]`` is: ``where(d[name] != 0, term, 0)``, inside the rule's unbroadcast."""
        if keeps_zeros(term):
            return term  # -d[y] or d[y] itself: zeros stay zeros
        func = getattr(term, "func", None)
        if (
            isinstance(func, gast.Name)
            and self.ctx.namer.globals.get(func.id) is accumulate.unbroadcast
            and len(term.args) == 2
        ):
            inner = self.zero_safe(term.args[0], name)
            return build.call(func.id, inner, term.args[1])
        incoming = gast.Subscript(
            value=build.load(ADJOINT), slice=build.load(name), ctx=gast.Load()
        )
        nonzero = gast.Compare(left=incoming, ops=[gast.NotEq()], comparators=[build.const(0)])
        where = build.attr(build.load(self.ctx.xp_name), "where")
        return build.call(where, nonzero, term, build.const(0))

    def operands_keep_shape(self, rule, op, name: str) -> bool:
        """Whether ``name = a op b`` is elementwise with both operands certainly of the
        result's shape (the facts of specialized code prove it for ``x * y`` of two 1-d
        arrays without length-1 axes)."""
        if rule.name not in ("add", "sub", "mul", "truediv"):
            return False
        return all(isinstance(a, gast.Name) and self.operand_shaped(a.id, name) for a in op.args)

    def operand_shaped(self, operand: str, name: str) -> bool:
        """Whether ``operand`` of the elementwise op that makes ``name`` certainly has its
        shape: by shape classes, or by ranks (an operand of the result's rank without
        axes of length 1 was not broadcast)."""
        if self.ctx.shapes.same(build.load(operand), build.load(name)):
            return True
        ranks = self.ctx.ranks
        a, y = ranks.get(operand), ranks.get(name)
        return a is not None and y is not None and a[1] and a[0] == y[0]

    def spread_uniform(self, dest: gast.expr, value: gast.expr, name: str) -> gast.expr | None:
        """``unreduce(c, a)`` for ``d[a] = c`` where ``c`` is a number made of the uniform
        adjoint's number alone (``d[a] = d[y]`` of an add, ``-d[y]`` of a subtraction) and
        ``a`` has the shape of ``y``: the operand's adjoint is uniform in turn, and its
        readers may use ``c`` itself."""
        if not (
            isinstance(dest, gast.Subscript)
            and isinstance(dest.slice, gast.Name)
            and getattr(dest.value, "id", None) == ADJOINT
        ):
            return None
        seed = operand_names(self.uniform[name][0])
        for node in gast.walk(value):
            if isinstance(node, gast.Name):
                if node.id not in seed:
                    return None
            elif not isinstance(node, _NUMBER_PARTS):
                return None
        operand = dest.slice.id
        if not self.operand_shaped(operand, name):
            return None
        helper = self.ctx.namer.bind_global(accumulate.unreduce, "unreduce")
        return build.call(helper, value, build.load(operand))

    def multiple_results_adjoint(
        self, stmt: gast.Assign, rule, bound: dict, where: gast.AST, label: str
    ) -> list[gast.stmt]:
        """The adjoint of ``w, v = op(a)``: results without an adjoint start as zeros."""
        ctx = self.ctx
        names = result_names(stmt, rule, label, ctx.source, where)
        out: list[gast.stmt] = []
        for name in names:
            if name not in self.state:
                out.append(self.zeros(name))
                self.state.add(name)
            elif self.is_loose(name):
                helper = ctx.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
                exact = build.call(helper, build.load(self.adj(name)), build.load(name))
                out.append(_generated(build.assign(self.adj(name), exact)))
        try:
            body = instantiate(rule, [build.load(n) for n in names], bound, ctx.namer, ctx.xp_name)
        except TemplateError as exc:
            raise ctx.source.error(f"{label}: {exc}", where) from None
        reader = _ReadAdjoints(self, gast.Constant(value=None, kind=None))
        for tstmt in body:
            if isinstance(tstmt, gast.Assign):
                dest = tstmt.targets[0]
                value = reader.visit(tstmt.value)
                if isinstance(dest, gast.Subscript) and getattr(dest.value, "id", None) == ADJOINT:
                    out.extend(self.contribute(dest.slice, value, self.reads_loose(value), where))
                    continue
                new = gast.Assign(targets=[reader.visit(dest)], value=value, type_comment=None)
                out.append(_generated(new))
            else:
                out.append(_generated(reader.visit(tstmt), False))
        return out

    def scatter_in_place(self, rule, op, name: str, bound: dict) -> list[gast.stmt] | None:
        """``dx[i] += dy`` into an adjoint this code owns, instead of a new zero array."""
        if rule.name not in ("getitem", "getitem_dynamic"):
            return None
        source = op.args[0]
        if not isinstance(source, gast.Name):
            return None
        x = source.id
        if (
            x not in self.state
            or x not in self.owned
            or self.is_loose(x)
            or x in self.ctx.source.lists
            or x not in self.ctx.activity.varied
        ):
            return None
        owner = self.owners.get(x)
        if owner is not None:
            setanno(owner, "copies", True)
        g = build.load(self.adj(name))
        dx = self.adj(x)
        index = clone(bound["index"])
        if rule.name == "getitem":
            part = gast.Subscript(value=build.load(dx), slice=index, ctx=gast.Load())
            target = gast.Subscript(value=build.load(dx), slice=clone(index), ctx=gast.Store())
            stmt = gast.Assign(
                targets=[target], value=build.binop(part, gast.Add(), g), type_comment=None
            )
            return [_generated(stmt)]
        helper = self.ctx.namer.bind_global(accumulate.add_at, "add_at")
        return [_generated(gast.Expr(value=build.call(helper, build.load(dx), index, g)), False)]

    def reads_loose(self, value: gast.expr) -> bool:
        """Whether ``value`` carries a loose adjoint outside every reducing helper call."""
        loose_names = {
            self.adj(n) for n in self.loose | self.loose_in if n in self.ctx.adjoint_names
        }
        if not loose_names:
            return False
        helpers = {n for n, obj in self.ctx.namer.globals.items() if _is_helper(obj)}

        def walk(node: gast.AST) -> bool:
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
                if node.func.id in helpers:
                    return False
            if isinstance(node, gast.Name) and node.id in loose_names:
                return True
            return any(walk(child) for child in gast.iter_child_nodes(node))

        return walk(value)


def _unrolled(rule) -> set[str]:
    """The operands a rule's template loops over (``for i, c in enumerate(choicelist)``),
    which must be lists written out in the call."""
    return {
        node.iter.args[0].id
        for node in rule.body
        if isinstance(node, gast.For)
        and isinstance(node.iter, gast.Call)
        and node.iter.args
        and isinstance(node.iter.args[0], gast.Name)
    }


def _is_helper(obj: object) -> bool:
    return getattr(obj, "__module__", "") == accumulate.__name__


class _ReadAdjoints(Transformer):
    """``d[y]`` reads become adjoint names; unbroadcasts are elided where shapes allow."""

    def __init__(self, sweep: _Sweep, result: gast.Name) -> None:
        self.sweep = sweep
        self.result = result
        self.lazy = False
        self.renamed: dict[str, str] = {}
        self.uniform: dict[str, gast.expr] = {}
        self.used_uniform = False
        namer = sweep.ctx.namer
        self.unbroadcast = namer.bind_global(accumulate.unbroadcast, "unbroadcast")

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        if isinstance(node.value, gast.Name) and node.value.id == ADJOINT:
            if isinstance(node.slice, gast.List):  # the results of an op with a list of them
                return gast.List(elts=[self.visit_Subscript(gast.Subscript(
                    value=node.value, slice=e, ctx=gast.Load())) for e in node.slice.elts],
                    ctx=gast.Load())  # fmt: skip
            name = node.slice.id
            if name in self.uniform:
                self.used_uniform = True
                return clone(self.uniform[name])
            return build.load(self.renamed.get(name) or self.sweep.adj(name))
        return self.generic_visit(node)

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Name) and func.id == self.unbroadcast and len(node.args) == 2:
            value, operand = node.args
            if self.sweep.ctx.shapes.same(operand, self.result):
                return value
            exact = self.exact_unbroadcast(value, operand)
            if exact is not None:
                return exact
            if isinstance(operand, gast.Name) and operand.id not in self.sweep.available:
                # the operand's value is gone by now: leave the gradient broadcast, and let
                # whoever reads this adjoint reduce it (see _BROADCAST_TRANSPARENT)
                self.lazy = True
                return value
        if isinstance(func, gast.Name) and len(node.args) == 3 and not node.keywords:
            helper = self.sweep.ctx.namer.globals.get(func.id)
            if helper in (accumulate.grad_matmul_lhs, accumulate.grad_matmul_rhs):
                return self.plain_matmul(node, helper is accumulate.grad_matmul_lhs)
        return node

    def result_rank(self) -> Rank | None:
        """The rank of the op's result, when its adjoint has exactly the result's shape."""
        result = self.result
        if not isinstance(result, gast.Name) or self.sweep.is_loose(result.id):
            return None
        return self.sweep.ctx.ranks.get(result.id)

    def exact_unbroadcast(self, value: gast.expr, operand: gast.expr) -> gast.expr | None:
        """``unbroadcast(g, x)`` as the reduction it is, when ranks say which: ``g`` itself
        or ``g.sum(axis=0)`` (``x`` has no axis of length 1, so only leading axes were
        added)."""
        result = self.result_rank()
        x = self.sweep.ctx.ranks.get(operand.id) if isinstance(operand, gast.Name) else None
        if result is None or x is None or not x[1] or result[0] < x[0]:
            return None
        lead = result[0] - x[0]
        if lead == 0:
            return value
        axis = build.const(0) if lead == 1 else build.tuple_([build.const(k) for k in range(lead)])
        return gast.Call(
            func=build.attr(value, "sum"),
            args=[],
            keywords=[gast.keyword(arg="axis", value=axis)],
        )

    def plain_matmul(self, node: gast.Call, lhs: bool) -> gast.expr:
        """``g @ b.T`` / ``a.T @ g`` for the gradient of ``a @ b`` with both 2-d."""
        g, a, b = node.args
        ranks = self.sweep.ctx.ranks
        if self.result_rank() is None or not all(
            isinstance(x, gast.Name) and ranks.get(x.id, (None,))[0] == 2 for x in (a, b)
        ):
            return node
        if lhs:
            return build.binop(g, gast.MatMult(), build.attr(b, "T"))
        return build.binop(build.attr(a, "T"), gast.MatMult(), g)


#: what an expression of numbers is made of (with names of numbers)
_NUMBER_PARTS = (gast.Constant, gast.UnaryOp, gast.BinOp, gast.operator, gast.unaryop, gast.Load)


def _multiple_results(stmt: gast.Assign, ctx: _Context) -> bool:
    """Whether ``stmt`` unpacks the results of an op whose rule has several."""
    rule = classify(stmt.value, ctx.source, ctx.local).rule
    return rule is not None and bool(rule.results)


#: calls in adjoint templates that do not keep the shape of their array argument
_NOT_ELEMENTWISE = {"sum", "mean", "prod", "max", "min", "amax", "amin", "reshape", "ravel",
                    "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "dot",
                    "matmul", "einsum", "broadcast_to", "take", "diag", "cumsum"}  # fmt: skip


def _keeps_shape(rule, op) -> bool:
    """Whether ``name = op(...)`` has its operand's shape exactly: ``x * x``, or a
    one-argument elementwise function."""
    return rule.name == "mul_self" or (rule.shape_preserving and len(op.args) == 1)


def _elementwise_in(value: gast.expr, operands: set[str]) -> bool:
    """Whether ``value`` is an elementwise expression that reads one of ``operands`` (so it
    has their shape) and nothing that reduces or reshapes."""
    found = False
    for node in gast.walk(value):
        if isinstance(node, gast.Call):
            func = node.func
            if not isinstance(func, gast.Attribute) or func.attr in _NOT_ELEMENTWISE:
                return False
        elif isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
            if node.value.id in operands:
                return False  # ``x.shape``, ``x.T``: not the elementwise value
        elif isinstance(node, gast.Subscript):
            return False
        elif isinstance(node, gast.Name) and node.id in operands:
            found = True
    return found


def _generated(stmt: gast.stmt, pure: bool = True) -> gast.stmt:
    setanno(stmt, "pure", pure)
    setanno(stmt, "generated", True)
    return stmt


def _prepare_while_counters(body: list[gast.stmt], namer: Namer) -> None:
    """Give each while loop a trip counter, assigned just before the loop."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.While) and getanno(stmt, "counter") is None:
                counter = namer.fresh_temp("_trips")
                init = _generated(build.assign(counter, build.const(0)))
                setanno(init, "counter", True)
                setanno(stmt, "counter", counter)
                out.append(init)
            out.append(stmt)
        return out

    body[:] = rewrite_bodies(body, block)


def _live_names(stmts: list[gast.AST]) -> list[gast.Name]:
    """Every Name in ``stmts``, leaving out statements superseded by a later rewrite."""
    out: list[gast.Name] = []
    for stmt in stmts:
        if getanno(stmt, "superseded", False):
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            out.extend(names(stmt.test) if isinstance(stmt, (gast.If, gast.While)) else [])
            if isinstance(stmt, gast.For):
                out.extend(names(stmt.target) + names(stmt.iter))
            out.extend(_live_names(stmt.body) + _live_names(stmt.orelse))
        else:
            out.extend(names(stmt))
    return out


def _is_adjoint_store(dest: gast.expr) -> bool:
    return isinstance(dest, gast.Subscript) and getattr(dest.value, "id", None) == ADJOINT


def _reads_namespace(stmts: list[gast.stmt], ctx: _Context) -> bool:
    """Whether ``stmts`` read ``xp``, now or once rebound (``np.e`` in an operand becomes
    ``xp.e``): a backward function then takes ``xp`` among its residuals."""
    for stmt in stmts:
        for n in gast.walk(stmt):
            if not isinstance(n, gast.Name) or not isinstance(n.ctx, gast.Load):
                continue
            if n.id == ctx.xp_name:
                return True
            if n.id not in ctx.local:
                obj = ctx.source.lookup(n.id)
                if obj is MISSING:
                    obj = ctx.namer.globals.get(n.id)
                if reads_through_namespace(obj):
                    return True
    return False


def _reads_of_primal(stmts: list[gast.stmt], ctx: _Context) -> set[str]:
    local = ctx.local
    found = {n.id for n in _live_names(stmts) if type(n.ctx) is gast.Load and n.id in local}
    return found.difference(ctx.adjoint_names.values()) if found else found


def reverse(
    tree: gast.FunctionDef,
    source: Source,
    namer: Namer,
    wrt: list[str],
    single: bool,
    mode: str = "grad",
    facts: dict[str, Rank] | None = None,
    masked: bool = False,
    again: bool = False,
) -> gast.FunctionDef | list[gast.FunctionDef]:
    """Build the gradient function of the normalized ``tree`` with respect to ``wrt``.

    ``mode="grad"`` gives one function returning ``(value, grads)`` (``"gradient"``: the
    gradients alone, a function that can be differentiated again); ``mode="vjp"`` gives a
    forward function returning ``(value, residuals)`` and a backward function
    ``(residuals, cotangent) -> grads``.

    ``facts`` gives the ``(ndim, full)`` of the parameters for code specialized to
    arguments of those ranks: exact reductions instead of broadcasting helpers, and in
    ``"gradient"`` mode the value is returned too (``"returns_value"`` on the result) unless
    the ranks prove it a scalar (the caller checks that the function's output is one).

    ``masked``: the cotangents of the outputs may be zero where a selection in the caller
    did not choose them (a helper's call there); the backward rules reading them then
    multiply zero-safely.
    ``again``: the code will be differentiated again (no caller checks its output): it
    checks that the output is a scalar or has one element, and starts from ones.
    """
    body = list(tree.body)
    ret = body.pop()
    output = ret.value.id
    returned = getanno(tree, "outputs")
    outputs = returned[1] if returned else [output]
    params = [a.id for a in tree.args.posonlyargs + tree.args.args]
    # keyword-only parameters hold their values from the start too (never placeholders)
    inputs = [*params, *(a.id for a in tree.args.kwonlyargs)]
    _prepare_while_counters(body, namer)
    local = local_names(gast.FunctionDef(
        name=tree.name, args=tree.args, body=body, decorator_list=[], returns=None,
        type_comment=None, type_params=[]))  # fmt: skip
    activity = analyse_activity(body, source, local, wrt, outputs)
    tapes = tape_names(body, source, local)
    updated = set(getanno(tree, "inplace") or ())
    # before user calls are rewritten: a helper's result may be the array it was given
    groups = alias_groups(body, updated, source, local)
    if rewrite_user_calls(body, source, namer, local, activity, tapes):
        local = local_names(gast.FunctionDef(
            name=tree.name, args=tree.args, body=body, decorator_list=[], returns=None,
            type_comment=None, type_params=[]))  # fmt: skip
        activity = analyse_activity(body, source, local, wrt, outputs)
    annotate_purity(body, source, local)
    # memory that an update changes in place is not stable, under any of its names
    stable = stable_names(body, inputs) - set().union(*groups.values())
    # code to be differentiated again checks its output at run time (one element is
    # allowed there): nothing may assume it a scalar
    scalar = output if mode != "vjp" and not again else None
    shapes = analyse_shapes(body, source, local, stable, scalar)
    ctx = _Context(
        source, namer, local, activity, shapes, namer.fresh("xp"), namer.fresh_temp("tape"),
        {}, stable, getanno(tree, "setitem") or (),
    )  # fmt: skip
    ctx.tapes = {tape: namer.adjoint(tape) for tape in sorted(tapes)}
    ctx.active_tapes = active_tapes(body, tapes, activity)
    ctx.updated_memory = frozenset().union(*groups.values())
    ctx.masked = masked_adjoints(body, source, local, outputs if masked else ())
    _mask_user_calls(body, ctx)
    if facts is not None:
        ctx.ranks = analyse_ranks(body, source, local, facts)
    seeds = [ctx.adjoint_names.setdefault(o, namer.adjoint(o)) for o in outputs]
    seed = seeds[0]
    available = set(stable) | loop_targets(body)
    loose: set[str] = set()
    plan = Recording(stable)
    seen: list[set[str]] = []
    for _ in range(_ROUNDS):
        sweep = _Sweep(ctx, plan, available, loose)
        sweep.state = set(outputs)
        try:
            forward, backward = sweep.block(body)
        except Exception:
            if sweep.errors:  # a consequence of the statements skipped: report the first
                raise sweep.errors[-1] from None
            raise
        if sweep.errors:
            raise sweep.errors[-1]
        need = _reads_of_primal(backward, ctx) | sweep.held
        readers = dict(sweep.readers)
        for name, group in groups.items():
            # reading a view of an updated array reads the array's memory
            shared = set().union(*(sweep.readers.get(n, set()) for n in group))
            if shared:
                readers[name] = shared
                need.add(name)
        new_plan = plan_recording(body, stable, need, source, local, readers)
        recomputed = {
            n for s in all_statements(body) if id(s) in new_plan.recomputed for n in targets(s)
        }
        new_available = set(stable) | loop_targets(body) | new_plan.pushed_names | recomputed
        consistent = sweep.loose <= loose and need <= new_available
        if consistent and new_plan.pushed == plan.pushed and new_plan.recomputed == plan.recomputed:
            break
        seen.append(sweep.loose)
        # adjoints found loose are assumed loose from the start next time round (a loop can
        # bring a loose adjoint back to code generated before it was found)
        loose = set(sweep.loose) | (loose if len(seen) > 3 else set())
        available = new_available
        plan = new_plan
    grads, finish = _gradients(sweep, wrt, again)
    prologue = [_namespace_line(ctx, params)]
    if sweep.pushes:
        tape_class = namer.bind_global(Tape, "Tape")
        prologue.append(_generated(build.assign(ctx.tape_name, build.call(tape_class)), False))
        # a name may be pushed before anything was assigned to it: push a placeholder then
        defs = definitions(body)
        for name in sorted(plan.pushed_names - set(inputs)):
            pushed = [d for d in defs.get(name, []) if id(d.stmt) in plan.pushed]
            assigned_first = any(
                not d.nested
                and id(d.stmt) not in plan.pushed
                and all(may_precede(d.path, p.path) for p in pushed)
                for d in defs.get(name, [])
            )
            if not assigned_first:
                prologue.append(_generated(build.assign(name, build.const(None)), False))
    # a branch's backward zeros an adjoint the other branch made, and a loop's before the
    # loop, reading the variable, which only a branch or loop that did not run may assign
    # (generated code's ``if`` and its backward's, on one test): None reads as a zero then
    placeheld = {s.targets[0].id for s in prologue if isinstance(s, gast.Assign)}
    top = {n for s in body if isinstance(s, gast.Assign) for n in targets(s)}
    for name in sorted(sweep.zeroed - top - set(inputs) - placeheld):
        if name in local and name not in source.lists:
            prologue.append(_generated(build.assign(name, build.const(None)), False))
    # arrays the backward pass restores in place (their memory, under any name)
    restored = set().union(*groups.values()) if sweep.pushes else set()
    if output not in stable and output in plan.pushed_names | restored:
        # the backward pass restores the output's variable: return the value it had (in
        # memory of its own where it is restored in place: a pullback must not change it)
        value_name = namer.fresh_temp("value")
        value: gast.expr = build.load(output)
        if output in restored:
            value = build.call(namer.bind_global(inplace.copied, "copied"), value)
        forward.append(_generated(build.assign(value_name, value), False))
        ret = build.ret(build.load(value_name))
    adjoint_tapes = [
        _generated(build.assign(d_tape, build.call(namer.bind_global(Tape, "Tape"))))
        for d_tape in ctx.tapes.values()
    ]
    backward = adjoint_tapes + backward + finish
    grads_expr = grads[0] if single else build.tuple_(grads)
    new = copy.copy(tree)
    setanno(new, "xp_name", ctx.xp_name)
    value_expr: gast.expr = ret.value if not returned else clone(returned[0])
    if returned and restored:
        # (the same for each part of a returned tuple or pytree)
        copies: dict[str, str] = {}
        for node in gast.walk(value_expr):
            if isinstance(node, gast.Name) and node.id in restored:
                if node.id not in copies:
                    copies[node.id] = namer.fresh_temp(f"_{node.id}_value")
                    helper = namer.bind_global(inplace.copied, "copied")
                    forward.append(_generated(build.assign(
                        copies[node.id], build.call(helper, build.load(node.id)))))  # fmt: skip
                node.id = copies[node.id]
    aux = getanno(tree, "aux")
    if aux is not None:
        value_expr = build.tuple_([ret.value, build.load(aux)])
    if mode in ("grad", "gradient"):
        with_value = mode == "grad" or (
            facts is not None and ctx.ranks.get(output, (None,))[0] != 0
        )
        setanno(new, "returns_value", with_value)
        new.name = namer.fresh(("value_and_grad_" if with_value else "grad_") + tree.name)
        seed_value: gast.expr = build.const(1.0)
        if again:
            # no caller sees the value to check it is a scalar (a gradient differentiated
            # again): the code checks, and starts an output of one element from ones
            helper = namer.bind_global(accumulate.seed_like, "seed_like")
            seed_value = build.call(helper, build.load(output), build.const(source.name))
        seed_line = _generated(build.assign(seed, seed_value))
        result = build.tuple_([value_expr, grads_expr]) if with_value else grads_expr
        if not with_value and output not in activity.varied:
            # a gradient returned without the value: a value that does not vary may be None
            forward.append(_none_check(output, source, namer, ret))
        new.body = [*prologue, *forward, seed_line, *backward, build.ret(result)]
        return new
    extra = {ctx.tape_name} if sweep.pushes else set()
    if _reads_namespace(backward, ctx):
        extra.add(ctx.xp_name)
    residual_names = sorted(_reads_of_primal(backward, ctx) | extra)
    # arrays the backward pass restores in place: keep their final contents too, and put
    # them back at the start of every backward call (other residuals may view the memory)
    finals = {
        name: namer.fresh_temp(f"_{name}_final")
        for name in residual_names
        if name in updated and sweep.pushes
    }
    residuals = build.tuple_([build.load(n) for n in residual_names] + [
        build.call(namer.bind_global(inplace.copied, "copied"), build.load(n)) for n in finals
    ])  # fmt: skip
    placeheld = {s.targets[0].id for s in prologue if isinstance(s, gast.Assign)}
    for name in residual_names:
        if (
            name in local
            and name not in top
            and name not in inputs
            and name not in plan.pushed_names
            and name not in placeheld
        ):
            # assigned only inside a branch or loop that may not run: still a residual
            prologue.append(_generated(build.assign(name, build.const(None)), False))
    fwd = copy.copy(tree)
    setanno(fwd, "xp_name", ctx.xp_name)
    fwd.name = namer.fresh(tree.name + "_fwd")
    fwd.body = [*prologue, *forward, build.ret(build.tuple_([value_expr, residuals]))]
    bwd_args = gast.arguments(
        args=[build.param(namer.fresh_temp("residuals")), *map(build.param, seeds)],
        posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[],
    )  # fmt: skip
    unpack_target = build.tuple_(
        [build.store(n) for n in [*residual_names, *finals.values()]], gast.Store()
    )
    unpack = _generated(build.assign(unpack_target, build.load(bwd_args.args[0].id)), False)
    bwd_body = [unpack]
    if sweep.pushes:
        tape_class = namer.bind_global(Tape, "Tape")
        bwd_body.append(_generated(build.assign(
            ctx.tape_name, build.call(tape_class, build.load(ctx.tape_name))), False))  # fmt: skip
        reset = namer.bind_global(inplace.reset, "reset")
        for name, final in finals.items():
            put_back = _generated(gast.Expr(value=build.call(
                reset, build.load(name), build.load(final))), False)  # fmt: skip
            if name not in top:  # None where its branch or loop did not run
                test = gast.Compare(
                    left=build.load(name), ops=[gast.IsNot()], comparators=[build.const(None)]
                )
                put_back = gast.If(test=test, body=[put_back], orelse=[])
            bwd_body.append(put_back)
    bwd = gast.FunctionDef(
        name=namer.fresh(tree.name + "_bwd"), args=bwd_args,
        body=[*bwd_body, *backward, build.ret(grads_expr)],
        decorator_list=[], returns=None, type_comment=None, type_params=[],
    )  # fmt: skip
    setanno(bwd, "xp_name", ctx.xp_name)
    setanno(bwd, "residuals_param", bwd_args.args[0].id)
    return [fwd, bwd]


def _mask_user_calls(body: list[gast.stmt], ctx: _Context) -> None:
    """Calls of user functions whose results' adjoints may be masked call the variant of
    the function's derivative that treats its cotangent as masked."""
    for stmt in all_statements(body):
        call = getanno(stmt, "user_call")
        if call is None or not set(call.outputs) & ctx.masked:
            continue
        variant = getattr(ctx.namer.globals[call.handle], "masked", None)
        if variant is None:
            continue  # a derivative written by hand: its own rules apply
        call.handle = ctx.namer.bind_global(variant(), call.handle + "_masked")
        stmt.value.func = build.attr(build.load(call.handle), "forward")


def _gradients(
    sweep: _Sweep, wrt: list[str], again: bool = False
) -> tuple[list[gast.expr], list[gast.stmt]]:
    """The returned gradient of each ``wrt`` parameter, and statements that finish them.
    ``again``: each is ``fit_to(dx, x)``, the real part for a real ``x``, as the API makes
    it (complex values met on the way leave an imaginary part that is no part of it), so
    that the code differentiated again differentiates what the user sees."""
    grads: list[gast.expr] = []
    finish: list[gast.stmt] = []
    helper = sweep.ctx.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
    for name in wrt:
        adj = sweep.adj(name)
        if name not in sweep.state:
            finish.append(sweep.zeros(name))
        elif sweep.is_loose(name):
            exact = build.call(helper, build.load(adj), build.load(name))
            finish.append(_generated(build.assign(adj, exact)))
        if again:
            fit = sweep.ctx.namer.bind_global(complexes.fit_to, "fit_to")
            grads.append(build.call(fit, build.load(adj), build.load(name)))
        else:
            grads.append(build.load(adj))
    return grads, finish


def _none_check(output: str, source: Source, namer: Namer, ret: gast.stmt) -> gast.stmt:
    """``if output is None: raise NoOutputError(...)``."""
    error = namer.bind_global(NoOutputError, "NoOutputError")
    message = str(source.error(f"{source.name} returned None; grad needs a scalar", ret))
    test = gast.Compare(left=build.load(output), ops=[gast.Is()], comparators=[build.const(None)])
    fail = gast.Raise(exc=build.call(error, build.const(message)), cause=None)
    return _generated(gast.If(test=test, body=[fail], orelse=[]), False)


def _namespace_line(ctx: _Context, params: list[str]) -> gast.stmt:
    namespace = ctx.namer.bind_global(array_namespace, "array_namespace")
    line = build.assign(ctx.xp_name, build.call(namespace, *map(build.load, params)))
    # kept until rebind knows whether NumPy calls use it
    return _generated(line, False)
