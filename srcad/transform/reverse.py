"""Reverse mode: a forward sweep (the primal, recording what the tape plan asks for), then
a backward sweep that runs each active statement's adjoint in reverse order.

Control flow is reversed structurally: ``if`` becomes ``if`` on the same decision, a loop
over a range runs over the reversed range, a ``while`` runs as many times as it did.
Adjoints are plain local variables whose presence is tracked statically: the first
contribution assigns, later ones add, a variable's own assignment ends its adjoint, and
zeros are only written where a loop or branch needs the same adjoints on every path.

This module holds the driver and the sweep's statement dispatch and adjoint bookkeeping;
the parts live next to it: reverse_context.py (what every part reads), settle.py (the
recording plan and the code settled together), adjoint_statements.py (one assignment's
rule), reverse_control.py (branches, loops, tapes), packaging.py (the functions made).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from srcad.errors import NoAdjointError, TransformError
from srcad.runtime import accumulate, inplace, lists
from srcad.transform import build
from srcad.transform import control_templates as shapes
from srcad.transform.adjoint_statements import RuleAdjoints, multiple_results
from srcad.transform.analyses.activity import active_tapes, analyse_activity, targets
from srcad.transform.analyses.effects import refuse_unfollowed
from srcad.transform.analyses.masking import masked_adjoints
from srcad.transform.analyses.shapes import Rank, analyse_ranks, analyse_shapes
from srcad.transform.analyses.tbr import Recording, stable_names
from srcad.transform.anno import getanno
from srcad.transform.calls import MethodVJP, generated_call, missing_rule_hint
from srcad.transform.callsites import UserCall, rewrite_user_calls
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import clone
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.inplace import alias_groups
from srcad.transform.normalize.jumps import breaks_out
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import (
    annotate_purity,
    classify,
    operand_names,
    tape_call,
    tape_names,
)
from srcad.transform.packaging import package
from srcad.transform.reverse_context import (
    Context,
    generated,
    reads_of_primal,
    recomputed_copy,
)
from srcad.transform.reverse_control import ControlAdjoints, prepare_trip_counters
from srcad.transform.settle import settle
from srcad.transform.templates import fill, rule_operands


@dataclass
class Sweep(RuleAdjoints, ControlAdjoints):
    """One generation of forward and backward code under a recording plan."""

    ctx: Context
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
    # the flags the innermost ``for`` around the statement stops on (it breaks out where
    # one is set)
    breaking: frozenset[str] = frozenset()
    #: which generation under a plan this is (settle.py: 1 when the predicted plan held)
    round: int = 1

    def read_by(self, stmt: gast.AST, code: list[gast.AST]) -> None:
        """Record that the backward code ``code`` of ``stmt`` reads primal names."""
        for name in reads_of_primal(code, self.ctx):
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
        stmt = generated(build.assign(adj, value))
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
        # (where=True, the whole array, is left out as unreduce's default)
        rest = [*args[2:4], *(kw.value for kw in keywords)]
        if len(args) > 4 or not all(
            isinstance(a, gast.Constant) and a.value in (None, False) for a in rest
        ):
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
        return generated(build.assign(self.adj(name), build.call(helper, build.load(name))))

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
                namer, tape = self.ctx.namer, self.ctx.tape_name
                parts = self.ctx.setitem_parts(stmt)
                if parts is not None:
                    # an update in place: save only the part it overwrites
                    index = clone(parts[1])
                    save = fill(shapes.push_saved, namer, tape=tape, array=parts[0], index=index)
                    return [*(generated(s, False) for s in save), stmt], self.assign_backward
                pushes = [
                    generated(s, False)
                    for n in targets(stmt)
                    if n in self.plan.pushed_names
                    for s in fill(shapes.push, namer, tape=tape, value=n)
                ]
                fwd = pushes + fwd
            if breaks_out(stmt, self.breaking):
                # the rest of the turn is guarded by the flag: leave the loop now
                fwd = [*fwd, generated(gast.Break(), False)]
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
            ctx = self.ctx
            callee = ctx.source.resolve(stmt.value.func, ctx.local)
            if getattr(callee, "__module__", "") == inplace.__name__:
                # generated code restoring an array it updated in place
                raise ctx.source.error(
                    "a derivative that updates arrays in place cannot be differentiated "
                    "again yet (its backward pass restores them in place)",
                    stmt,
                )
        return [stmt], []

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
        # values computed again just before the backward code of their anchor (the last
        # statement of the block that reads them), where what they read is as it was
        again: dict[int, list[gast.stmt]] = {}
        for stmt in body:
            anchor = self.plan.recomputed.get(id(stmt))
            if anchor is not None:
                again.setdefault(anchor, []).append(stmt)
        backward: list[gast.stmt] = []
        for stmt, rev in zip(reversed(body), reversed(parts)):
            try:
                code = rev(stmt) if callable(rev) else rev
                recomputed = [recomputed_copy(s) for s in again.get(id(stmt), [])]
                if recomputed:
                    self.read_by(stmt, recomputed)
                backward.extend([*recomputed, *code])
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
            if not isinstance(target, gast.Name) and not multiple_results(stmt, ctx):
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
        tape, namer = ctx.tape_name, ctx.namer
        if id(stmt) in self.plan.pushed and parts is not None:
            index = clone(parts[1])
            put_back = fill(shapes.restore_popped, namer, tape=tape, array=parts[0], index=index)
            out.extend(generated(s, False) for s in put_back)
        elif id(stmt) in self.plan.pushed:
            # pushed in order, so popped in reverse
            for name in reversed([n for n in names if n in self.plan.pushed_names]):
                popped = fill(shapes.pop_into, namer, name=name, tape=tape)
                out.extend(generated(s, False) for s in popped)
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
        out.append(generated(build.assign(grads, value), False))
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
    prepare_trip_counters(body, namer)
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
    # a kept value or a union of dicts, whose gradient would be missed (zero until stop 28)
    refuse_unfollowed(body, source, local, activity, tapes)
    annotate_purity(body, source, local)
    # memory that an update changes in place is not stable, under any of its names
    stable = stable_names(body, inputs) - set().union(*groups.values())
    # code to be differentiated again checks its output at run time (one element is
    # allowed there): nothing may assume it a scalar
    scalar = output if mode != "vjp" and not again else None
    shapes = analyse_shapes(body, source, local, stable, scalar)
    ctx = Context(
        source, namer, local, activity, shapes, namer.fresh("xp"), namer.fresh_temp("tape"),
        {}, stable, getanno(tree, "setitem") or (),
    )  # fmt: skip
    ctx.tapes = {tape: namer.adjoint(tape) for tape in sorted(tapes)}
    ctx.active_tapes = active_tapes(body, tapes, activity)
    ctx.updated_memory = frozenset().union(*groups.values())
    ctx.method_results = _method_results(body, namer)
    ctx.masked = masked_adjoints(body, source, local, outputs if masked else ())
    _mask_user_calls(body, ctx)
    if facts is not None:
        ctx.ranks = analyse_ranks(body, source, local, facts)
    seeds = [ctx.adjoint_names.setdefault(o, namer.adjoint(o)) for o in outputs]
    sweep, forward, backward = settle(body, ctx, outputs, groups, Sweep, tree)
    return package(
        tree, ret, body, sweep, forward, backward, wrt=wrt, single=single, mode=mode,
        facts=facts, again=again, groups=groups, updated=updated, seeds=seeds,
    )  # fmt: skip


def _method_results(body: list[gast.stmt], namer: Namer) -> frozenset[str]:
    """The names bound to what a method of an object returns (its class known only when
    it runs)."""
    return frozenset(
        name
        for stmt in all_statements(body)
        if (call := getanno(stmt, "user_call")) is not None
        and isinstance(namer.globals.get(call.handle), MethodVJP)
        for name in call.outputs
    )


def _mask_user_calls(body: list[gast.stmt], ctx: Context) -> None:
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
