"""The derivative functions made from the settled sweep's forward and backward code.

``grad`` mode gives one function: the forward code, the seed, the backward code, and the
value with the gradients (or the gradients alone, for a gradient differentiated again).
``vjp`` mode gives a forward function returning the value and the residuals (what the
backward code reads of the primal) and a backward function of the residuals and the
cotangents. Both start from a prologue: the array namespace, the tape, and placeholders
for names that code reads where the branch or loop assigning them may not have run.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

import gast

from srcad.runtime import accumulate, complexes, inplace
from srcad.runtime.backend import array_namespace
from srcad.runtime.errors import NoOutputError
from srcad.runtime.tape import Tape
from srcad.transform import build
from srcad.transform.analyses.activity import targets
from srcad.transform.analyses.shapes import Rank
from srcad.transform.analyses.tbr import definitions, may_precede
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import MISSING, Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import clone
from srcad.transform.rebind import reads_through_namespace
from srcad.transform.reverse_context import Context, generated, reads_of_primal

if TYPE_CHECKING:
    from srcad.transform.reverse import Sweep


@dataclass
class _Parts:
    """What every derivative function is made of."""

    prologue: list[gast.stmt]
    forward: list[gast.stmt]
    backward: list[gast.stmt]
    #: the value the function returns, and the return statement it comes from (where an
    #: error about it points)
    value: gast.expr
    ret: gast.Return
    grads: gast.expr


def package(
    tree: gast.FunctionDef,
    ret: gast.Return,
    body: list[gast.stmt],
    sweep: Sweep,
    forward: list[gast.stmt],
    backward: list[gast.stmt],
    *,
    wrt: list[str],
    single: bool,
    mode: str,
    facts: dict[str, Rank] | None,
    again: bool,
    groups: dict[str, set[str]],
    updated: set[str],
    seeds: list[str],
) -> gast.FunctionDef | list[gast.FunctionDef]:
    """The gradient function (``mode`` grad or gradient) or the forward and backward
    functions (vjp) of ``tree``, whose normalized ``body`` the sweep differentiated."""
    ctx, plan = sweep.ctx, sweep.plan
    namer = ctx.namer
    params = [a.id for a in tree.args.posonlyargs + tree.args.args]
    # keyword-only parameters hold their values from the start too (never placeholders)
    inputs = [*params, *(a.id for a in tree.args.kwonlyargs)]
    output = ret.value.id
    returned = getanno(tree, "outputs")
    # (a vjp's gradients go to generated code, never to the user: nothing to fit, and its
    # backward function does not hold the parameters)
    grads, finish = _gradients(sweep, wrt, again and mode != "vjp")
    prologue = _prologue(sweep, body, params, inputs)
    # arrays the backward pass restores in place (their memory, under any name)
    restored = set().union(*groups.values()) if sweep.pushes else set()
    # any restore in place: the output may share that memory through a call returning its
    # argument, which alias groups do not follow (generated code differentiated again
    # returns fit_to(dx, x), which is dx: its pullback changed the caller's value)
    if restored or (output not in ctx.stable and output in plan.pushed_names):
        # the backward pass restores the output's variable: return the value it had (in
        # memory of its own where it is restored in place: a pullback must not change it)
        value_name = namer.fresh_temp("value")
        value: gast.expr = build.load(output)
        if restored:
            value = build.call(namer.bind_global(inplace.copied, "copied"), value)
        forward.append(generated(build.assign(value_name, value), False))
        ret = build.ret(build.load(value_name))
    adjoint_tapes = [
        generated(build.assign(d_tape, build.call(namer.bind_global(Tape, "Tape"))))
        for d_tape in ctx.tapes.values()
    ]
    backward = adjoint_tapes + backward + finish
    grads_expr = grads[0] if single else build.tuple_(grads)
    value_expr: gast.expr = ret.value if not returned else clone(returned[0])
    if returned and restored:
        # (the same for each part of a returned tuple or pytree)
        copies: dict[str, str] = {}
        for node in gast.walk(value_expr):
            if isinstance(node, gast.Name) and node.id in restored:
                if node.id not in copies:
                    copies[node.id] = namer.fresh_temp(f"_{node.id}_value")
                    helper = namer.bind_global(inplace.copied, "copied")
                    forward.append(generated(build.assign(
                        copies[node.id], build.call(helper, build.load(node.id)))))  # fmt: skip
                node.id = copies[node.id]
    aux = getanno(tree, "aux")
    if aux is not None:
        value_expr = build.tuple_([ret.value, build.load(aux)])
    parts = _Parts(prologue, forward, backward, value_expr, ret, grads_expr)
    if mode in ("grad", "gradient"):
        return _grad_function(tree, ctx, parts, output, mode, facts, again, seeds[0])
    return _vjp_functions(tree, sweep, parts, body, inputs, updated, seeds)


def _prologue(
    sweep: Sweep, body: list[gast.stmt], params: list[str], inputs: list[str]
) -> list[gast.stmt]:
    """The namespace line, the tape, and placeholders for names read before (or without)
    an assignment."""
    ctx, plan = sweep.ctx, sweep.plan
    prologue = [_namespace_line(ctx, params)]
    if sweep.pushes:
        tape_class = ctx.namer.bind_global(Tape, "Tape")
        prologue.append(generated(build.assign(ctx.tape_name, build.call(tape_class)), False))
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
                prologue.append(generated(build.assign(name, build.const(None)), False))
    # a branch's backward zeros an adjoint the other branch made, and a loop's before the
    # loop, reading the variable, which only a branch or loop that did not run may assign
    # (generated code's ``if`` and its backward's, on one test): None reads as a zero then
    placeheld = _placeheld(prologue)
    for name in sorted(sweep.zeroed - _top_level(body) - set(inputs) - placeheld):
        if name in ctx.local and name not in ctx.source.lists:
            prologue.append(generated(build.assign(name, build.const(None)), False))
    return prologue


def _grad_function(
    tree: gast.FunctionDef,
    ctx: Context,
    parts: _Parts,
    output: str,
    mode: str,
    facts: dict[str, Rank] | None,
    again: bool,
    seed: str,
) -> gast.FunctionDef:
    """``(value, grads)`` in one function, or the gradients alone (see reverse())."""
    namer, source = ctx.namer, ctx.source
    new = copy.copy(tree)
    setanno(new, "xp_name", ctx.xp_name)
    with_value = mode == "grad" or (facts is not None and ctx.ranks.get(output, (None,))[0] != 0)
    setanno(new, "returns_value", with_value)
    new.name = namer.fresh(("value_and_grad_" if with_value else "grad_") + tree.name)
    seed_value: gast.expr = build.const(1.0)
    if again:
        # no caller sees the value to check it is a scalar (a gradient differentiated
        # again): the code checks, and starts an output of one element from ones
        helper = namer.bind_global(accumulate.seed_like, "seed_like")
        seed_value = build.call(helper, build.load(output), build.const(source.name))
    seed_line = generated(build.assign(seed, seed_value))
    result = build.tuple_([parts.value, parts.grads]) if with_value else parts.grads
    forward = parts.forward
    if not with_value and output not in ctx.activity.varied:
        # a gradient returned without the value: a value that does not vary may be None
        forward.append(_none_check(output, source, namer, parts.ret))
    new.body = [*parts.prologue, *forward, seed_line, *parts.backward, build.ret(result)]
    return new


def _vjp_functions(
    tree: gast.FunctionDef,
    sweep: Sweep,
    parts: _Parts,
    body: list[gast.stmt],
    inputs: list[str],
    updated: set[str],
    seeds: list[str],
) -> list[gast.FunctionDef]:
    """The forward function, returning ``(value, residuals)``, and the backward function,
    taking ``(residuals, *cotangents)`` and returning the gradients."""
    ctx, plan = sweep.ctx, sweep.plan
    namer = ctx.namer
    prologue, backward = parts.prologue, parts.backward
    extra = {ctx.tape_name} if sweep.pushes else set()
    if _reads_namespace(backward, ctx):
        extra.add(ctx.xp_name)
    residual_names = sorted(reads_of_primal(backward, ctx) | extra)
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
    placeheld = _placeheld(prologue)
    top = _top_level(body)
    for name in residual_names:
        if (
            name in ctx.local
            and name not in top
            and name not in inputs
            and name not in plan.pushed_names
            and name not in placeheld
        ):
            # assigned only inside a branch or loop that may not run: still a residual
            prologue.append(generated(build.assign(name, build.const(None)), False))
    fwd = copy.copy(tree)
    setanno(fwd, "xp_name", ctx.xp_name)
    fwd.name = namer.fresh(tree.name + "_fwd")
    fwd.body = [*prologue, *parts.forward, build.ret(build.tuple_([parts.value, residuals]))]
    bwd_args = gast.arguments(
        args=[build.param(namer.fresh_temp("residuals")), *map(build.param, seeds)],
        posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[],
    )  # fmt: skip
    unpack_target = build.tuple_(
        [build.store(n) for n in [*residual_names, *finals.values()]], gast.Store()
    )
    unpack = generated(build.assign(unpack_target, build.load(bwd_args.args[0].id)), False)
    bwd_body = [unpack]
    if sweep.pushes:
        tape_class = namer.bind_global(Tape, "Tape")
        bwd_body.append(generated(build.assign(
            ctx.tape_name, build.call(tape_class, build.load(ctx.tape_name))), False))  # fmt: skip
        reset = namer.bind_global(inplace.reset, "reset")
        for name, final in finals.items():
            put_back = generated(gast.Expr(value=build.call(
                reset, build.load(name), build.load(final))), False)  # fmt: skip
            if name not in top:  # None where its branch or loop did not run
                test = gast.Compare(
                    left=build.load(name), ops=[gast.IsNot()], comparators=[build.const(None)]
                )
                put_back = gast.If(test=test, body=[put_back], orelse=[])
            bwd_body.append(put_back)
    bwd = gast.FunctionDef(
        name=namer.fresh(tree.name + "_bwd"), args=bwd_args,
        body=[*bwd_body, *backward, build.ret(parts.grads)],
        decorator_list=[], returns=None, type_comment=None, type_params=[],
    )  # fmt: skip
    setanno(bwd, "xp_name", ctx.xp_name)
    setanno(bwd, "residuals_param", bwd_args.args[0].id)
    return [fwd, bwd]


def _placeheld(prologue: list[gast.stmt]) -> set[str]:
    """The names the prologue assigns."""
    return {s.targets[0].id for s in prologue if isinstance(s, gast.Assign)}


def _top_level(body: list[gast.stmt]) -> set[str]:
    """The names assigned outside every branch and loop (they have a value at the end)."""
    return {n for s in body if isinstance(s, gast.Assign) for n in targets(s)}


def _gradients(
    sweep: Sweep, wrt: list[str], again: bool = False
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
            finish.append(generated(build.assign(adj, exact)))
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
    return generated(gast.If(test=test, body=[fail], orelse=[]), False)


def _namespace_line(ctx: Context, params: list[str]) -> gast.stmt:
    """``xp = array_namespace(*params)``."""
    namespace = ctx.namer.bind_global(array_namespace, "array_namespace")
    line = build.assign(ctx.xp_name, build.call(namespace, *map(build.load, params)))
    # kept until rebind knows whether NumPy calls use it
    return generated(line, False)


def _reads_namespace(stmts: list[gast.stmt], ctx: Context) -> bool:
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
