"""Forward mode: every active statement is followed by the statement computing its tangent.

Control flow stays as it is (a loop computes its tangents as it goes), so forward mode
needs no tape. Tangents are plain local variables named like adjoints (``dh`` for ``h``);
a value that does not vary with the differentiated inputs has no tangent at all, and a
rule's terms for such operands are dropped when the code is generated.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import gast

from srcad.adjoints.registry import lookup_tangent
from srcad.runtime import inplace, lists, tangents
from srcad.runtime.backend import array_namespace
from srcad.transform import build
from srcad.transform import control_templates as shapes
from srcad.transform.analyses.activity import Activity, active_tapes, analyse_activity, targets
from srcad.transform.analyses.aliasing import viewed_name
from srcad.transform.analyses.effects import refuse_unfollowed
from srcad.transform.analyses.masking import (
    is_elementwise,
    keeps_zeros,
    masked_tangents,
)
from srcad.transform.analyses.shapes import SameShape, analyse_shapes
from srcad.transform.analyses.tbr import stable_names
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import (
    CallJVP,
    CustomJVP,
    CustomJVPCall,
    CustomVJP,
    MethodJVP,
    generated_call,
    missing_rule_hint,
)
from srcad.transform.callsites import (
    differentiated_arguments,
    identifier,
    is_method_of_object,
    unpacked_names,
)
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.inplace import alias_groups
from srcad.transform.ops import (
    COPY,
    LIST,
    USER_CALL,
    annotate_purity,
    classify,
    operand_names,
    tape_call,
    tape_names,
)
from srcad.transform.templates import (
    ADJOINT,
    TemplateError,
    bind,
    fill,
    instantiate,
    result_names,
    rule_operands,
    tangent_params,
)


@dataclass
class _Forward:
    """One forward-mode transformation: the tangent names and what the statements need."""

    source: Source
    namer: Namer
    local: set[str]
    activity: Activity
    xp_name: str
    updated: set[str]
    sharing: set[str] = field(default_factory=set)
    shapes: SameShape | None = None
    tapes: set[str] = field(default_factory=set)
    #: those of ``tapes`` carrying a varied value (every push and pop on them gets a tangent)
    active_tapes: frozenset[str] = frozenset()
    tangents: dict[str, str] = field(default_factory=dict)
    handles: dict[tuple, str] = field(default_factory=dict)
    #: names whose tangent may be zero where a selection did not choose the value (see
    #: srcad/transform/analyses/masking.py): elementwise rules reading them multiply
    #: zero-safely, so an untaken branch's infinite or NaN derivative adds 0
    masked: frozenset[str] = frozenset()

    def tangent(self, name: str) -> str:
        if name not in self.tangents:
            self.tangents[name] = self.namer.adjoint(name)
        return self.tangents[name]

    def active(self, name: str) -> bool:
        return self.activity.active(name)

    def zeros(self, node: gast.expr) -> gast.expr:
        helper = self.namer.bind_global(tangents.zero_tangent, "zero_tangent")
        return build.call(helper, copy.deepcopy(node))

    def tangent_of(self, node: gast.expr) -> gast.expr:
        """The tangent of an operand expression: its tangent variable, or zeros."""
        if isinstance(node, gast.Name) and self.active(node.id):
            return build.load(self.tangent(node.id))
        if not isinstance(node, gast.Name) and operand_names(node) & self.activity.varied:
            # a display of differentiable values (``k((x, y))``): zeros would be wrong
            raise self.source.error(
                "the tangent flows into a list or expression here, which is not supported "
                "yet; pass arrays as separate arguments (e.g. np.stack([a, b]) for arrays)",
                node,
            )
        return self.zeros(node)

    # ---- statements ----

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            if isinstance(stmt, gast.Assign):
                out.extend(self.assign(stmt))
            elif isinstance(stmt, gast.If):
                stmt.body = self.block(stmt.body) or [gast.Pass()]
                stmt.orelse = self.block(stmt.orelse)
                out.append(stmt)
            elif isinstance(stmt, (gast.For, gast.While)):
                stmt.body = self.block(stmt.body)
                out.append(stmt)
            else:
                out.extend([stmt, *self.tape_push(stmt)])
        return out

    # ---- the tape of generated code differentiated again: tangents ride a tape of their own

    def tape_push(self, stmt: gast.stmt) -> list[gast.stmt]:
        call = tape_call(stmt, self.tapes, "push")
        dropped = tape_call(stmt, self.tapes, "pop")
        if dropped is not None:
            # a pop whose value is dropped: its tangent, on the tangent tape, is dropped too
            if dropped.func.value.id not in self.active_tapes:
                return []
            pop = fill(shapes.pop, self.namer, tape=self.tangent(dropped.func.value.id))
            return [_generated(s, False) for s in pop]
        if call is None:
            # (a call that may keep a differentiated value was refused before: effects.py)
            if (
                isinstance(stmt, gast.Expr)
                and operand_names(stmt.value) & self.activity.varied
                and _restores(stmt, self.source, self.local)
            ):
                raise self.source.error(
                    "a derivative that updates arrays in place cannot be differentiated "
                    "again yet (its backward pass restores them in place)",
                    stmt,
                )
            return []
        value = call.args[0]
        if call.func.value.id not in self.active_tapes:
            return []
        if operand_names(value) & self.activity.varied and not isinstance(value, gast.Name):
            raise self.source.error("differentiating this tape push again is not supported", stmt)
        tape = self.tangent(call.func.value.id)
        push = fill(shapes.push, self.namer, tape=tape, value=self.tangent_of(value))
        return [_generated(s, False) for s in push]

    def tape_pop(self, stmt: gast.Assign, call: gast.Call) -> list[gast.stmt]:
        name = stmt.targets[0].id
        if call.func.value.id not in self.active_tapes:
            return [stmt]
        tape = self.tangent(call.func.value.id)
        if not self.active(name):
            return [stmt, *(_generated(s, False) for s in fill(shapes.pop, self.namer, tape=tape))]
        pop = fill(shapes.pop_into, self.namer, name=self.tangent(name), tape=tape)
        return [stmt, *(_generated(s, False) for s in pop)]

    def assign(self, stmt: gast.Assign) -> list[gast.stmt]:
        pop = tape_call(stmt, self.tapes, "pop")
        if pop is not None:
            return self.tape_pop(stmt, pop)
        if isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in self.tapes:
            tape = stmt.targets[0].id
            new = build.assign(self.tangent(tape), copy.deepcopy(stmt.value))
            return [stmt, _generated(new)]
        names = [n for n in targets(stmt) if self.active(n)]
        if not names:
            return [stmt]
        where = getanno(stmt, "expr") or stmt
        target = stmt.targets[0]
        op = classify(stmt.value, self.source, self.local)
        if op.key is USER_CALL and unpacked_names(target):
            return self.user_call(stmt, op, where)
        rule = lookup_tangent(op.key)
        if rule is not None and rule.results:
            return self.multiple_results(stmt, op, rule, where)
        if not isinstance(target, gast.Name):
            if rule is None and not op.nondifferentiable and not generated_call(op.callee):
                rule_operands(rule, op, self.source, where, tangent=True)  # "no rule for"
            raise self.source.error(
                "unpacking a differentiable value into several names is not supported yet"
                + missing_rule_hint(op.callee),
                where,
            )
        name = target.id
        if is_method_of_object(op, self.activity):
            return self.user_call(stmt, op, where)
        varied = operand_names(stmt.value) & self.activity.varied
        if op.nondifferentiable or not varied:
            # a loop-carried or updated value starts here from something constant
            return [
                stmt,
                _generated(build.assign(self.tangent(name), self.zeros(build.load(name)))),
            ]
        if op.key is LIST:
            elements = gast.List(elts=[self.tangent_of(e) for e in op.args], ctx=gast.Load())
            return [stmt, _generated(build.assign(self.tangent(name), elements))]
        rule = lookup_tangent(op.key)
        bound = rule_operands(rule, op, self.source, where, tangent=True)
        self.check_operands(rule, bound, op.label, where)
        primal = [stmt]
        result = name
        if name in operand_names(stmt.value):
            # the op reads the name it assigns: its rule must still see the old value
            result = self.namer.temp()
            primal = [
                gast.Assign(targets=[build.store(result)], value=stmt.value, type_comment=None),
                build.assign(name, build.load(result)),
            ]
            primal[0] = gast.copy_location(primal[0], stmt)
            for new in primal:
                for key in ("origin", "expr"):
                    setanno(new, key, getanno(stmt, key))
        try:
            body = instantiate(rule, build.load(result), bound, self.namer, self.xp_name)
        except TemplateError as exc:
            raise self.source.error(f"{op.label}: {exc}", where) from None
        safe = is_elementwise(op.rule) and not op.rule.selects
        tangent_stmts = self.contributions(body, name, op.label, where, safe)
        if (
            op.key not in (inplace.setitem, inplace.scatter)
            and name in self.sharing
            and viewed_name(stmt.value) is None
        ):
            # a new array that updates change in place gets a new tangent: the rule's may
            # be (or fold to) another tangent, perhaps the caller's (``y = x * 1.0``: dx)
            # (an update itself writes into the tangent that its array's definition owns)
            tangent_stmts = self.own(tangent_stmts)
        if op.key is not COPY:
            # a tangent computed from one that an update changes in place later must stay
            # a new array, as the primal is (``a = u * 1.0`` must not fold to ``da = du``)
            changing = {self.tangents[n] for n in self.sharing if n in self.tangents}
            for tstmt in tangent_stmts:
                if operand_names(tstmt.value) & changing:
                    setanno(tstmt, "copies", True)
        if len(primal) == 2:
            return [primal[0], *tangent_stmts, primal[1]]
        if op.key is lists.append:
            # the append changes its list in place: the tangent reads the list before it
            return [*tangent_stmts, *primal]
        return [*primal, *tangent_stmts]

    def check_operands(self, rule, bound: dict, label: str, where: gast.AST) -> None:
        """A located error when a varying operand's tangent would be dropped: its rule
        reads no tangent of that parameter."""
        read = tangent_params(rule)
        for param, node in bound.items():
            if (
                param not in read
                and param not in rule.static
                and operand_names(node) & self.activity.varied
            ):
                raise self.source.error(
                    f"the derivative of {label} with respect to its argument '{param}' is "
                    "not implemented",
                    where,
                )

    def contributions(
        self,
        body: list[gast.stmt],
        name: str | list[str],
        label: str,
        where: gast.AST,
        zero_safe: bool = False,
    ) -> list[gast.stmt]:
        """The template's temporaries, then one assignment of the summed contributions per
        result (``name``: the result, or the list of an op's results); with ``zero_safe``
        (an elementwise rule) a term reading a masked tangent is zero where it is."""
        names = name if isinstance(name, list) else [name]
        temps: list[gast.stmt] = []
        terms: dict[str, list[tuple[gast.expr, list[gast.expr]]]] = {n: [] for n in names}
        dropped = {n: False for n in names}
        varying: set[str] = set()  # temporaries computed from tangents that vary
        for tstmt in body:
            if not isinstance(tstmt, gast.Assign):
                raise self.source.error(f"the tangent rule of {label} is not a template", where)
            dest = tstmt.targets[0]
            reads = _tangent_reads(tstmt.value)
            for r in reads:
                if (
                    isinstance(r, (gast.List, gast.Tuple))
                    and operand_names(r) & self.activity.varied
                ):
                    raise self.source.error(
                        f"the derivative of {label} flows through a list written in the call, "
                        "which is not supported yet; make it an array first (np.stack([...]))",
                        where,
                    )
            varies = any(isinstance(r, gast.Name) and self.active(r.id) for r in reads) or bool(
                operand_names(tstmt.value) & varying
            )
            masked = [
                r.id
                for r in reads
                if isinstance(r, gast.Name) and r.id in self.masked and self.active(r.id)
            ]
            safe = zero_safe and masked and not keeps_zeros(tstmt.value)
            value = _TangentReader(self).visit(tstmt.value)
            if safe:
                value = self.zero_safe(value, masked)
            if isinstance(dest, gast.Subscript) and getattr(dest.value, "id", None) == ADJOINT:
                # d[y] for the (single) result, d[w] for one of several, d[results] for all
                key = dest.slice.id if len(names) > 1 and isinstance(dest.slice, gast.Name) else "*"
                key = names[0] if len(names) == 1 else key
                if varies:
                    terms.setdefault(key, []).append((value, reads))
                else:
                    dropped[key] = True
                continue
            tstmt.value = value
            if varies:
                varying.update(
                    operand_names(dest)
                    | {n.id for n in gast.walk(dest) if isinstance(n, gast.Name)}
                )
            temps.append(_generated(tstmt))
        out = list(temps)
        if "*" in terms or "*" in dropped:  # one expression gives every result's tangent
            together = terms.get("*", [])
            value = together[0][0] if together else None
            for n in names:
                out.append(_generated(build.assign(
                    self.tangent(n),
                    gast.Subscript(value=value, slice=build.const(names.index(n)), ctx=gast.Load())
                    if value is not None else self.zeros(build.load(n)))))  # fmt: skip
            return out
        for n in names:
            summed = len(terms[n]) > 1 and not dropped[n]
            exprs = [self.unbroadcast_term(t, reads, summed) for t, reads in terms[n]]
            if not exprs:
                value: gast.expr = self.zeros(build.load(n))
            else:
                value = exprs[0]
                for term in exprs[1:]:
                    value = build.binop(value, gast.Add(), term)
            out.append(_generated(build.assign(self.tangent(n), value)))
        return out

    def zero_safe(self, term: gast.expr, masked: list[str]) -> gast.expr:
        """``where(dx != 0, term, 0)`` for each masked tangent ``dx`` the term reads, inside
        the rule's ``broadcast_like``."""
        helper = self.namer.globals.get(getattr(getattr(term, "func", None), "id", None))
        if helper is tangents.broadcast_like:
            term.args[0] = self.zero_safe(term.args[0], masked)
            return term
        for name in masked:
            nonzero = gast.Compare(
                left=build.load(self.tangent(name)), ops=[gast.NotEq()],
                comparators=[build.const(0)],
            )  # fmt: skip
            term = build.call(
                build.attr(build.load(self.xp_name), "where"), nonzero, term, build.const(0)
            )
        return term

    def multiple_results(self, stmt: gast.Assign, op, rule, where: gast.AST) -> list[gast.stmt]:
        """``w, v = op(a)``, then the tangent of each result."""
        names = result_names(stmt, rule, op.label, self.source, where)
        if op.nondifferentiable or not operand_names(stmt.value) & self.activity.varied:
            zeros = [build.assign(self.tangent(n), self.zeros(build.load(n))) for n in names]
            return [stmt, *map(_generated, zeros)]
        try:
            bound = bind(rule, op.args, op.keywords, op.callee)
            body = instantiate(
                rule, [build.load(n) for n in names], bound, self.namer, self.xp_name
            )
        except TemplateError as exc:
            raise self.source.error(f"{op.label}: {exc}", where) from None
        self.check_operands(rule, bound, op.label, where)
        return [stmt, *self.contributions(body, names, op.label, where), *self.own_results(names)]

    def unbroadcast_term(self, term: gast.expr, reads: list[gast.expr], summed: bool) -> gast.expr:
        """``broadcast_like(t, y)`` as ``t`` where the shape already is ``y``'s: the term is
        summed with the terms of all the other operands (together they broadcast to the
        result's shape), or its operand is known to have the result's shape."""
        helper = self.namer.globals.get(getattr(getattr(term, "func", None), "id", None))
        if helper is not tangents.broadcast_like:
            return term
        result = term.args[1]
        if summed or (len(reads) == 1 and self.shapes.same(reads[0], result)):
            return term.args[0]
        return term

    def own(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """An array updated in place gets a tangent no other tangent shares."""
        last = stmts[-1]
        value = last.value
        if isinstance(value, (gast.Name, gast.Call, gast.Subscript)):
            helper = self.namer.bind_global(inplace.copied, "copied")
            last.value = build.call(helper, value)
        else:
            # a new array, as the primal's is: ``du * 1.0`` must not fold to ``du``
            setanno(last, "copies", True)
        return stmts

    def own_results(self, names: list[str]) -> list[gast.stmt]:
        """``dy = copied(dy)`` for each result updated in place later (a callee's tangent
        may be one of the tangents it was given)."""
        helper = self.namer.bind_global(inplace.copied, "copied")
        return [
            _generated(
                build.assign(self.tangent(n), build.call(helper, build.load(self.tangent(n))))
            )
            for n in names
            if n in self.sharing
        ]

    def user_call(self, stmt: gast.Assign, op, where: gast.AST) -> list[gast.stmt]:
        """``y, dy = f_jvp((da,), a, b)``: the callee's own forward-mode function."""
        outputs = unpacked_names(stmt.targets[0])
        if isinstance(op.callee, CustomVJP):
            raise self.source.error(
                f"{op.label} has a custom vjp, which forward mode cannot use; give it a "
                "custom jvp instead (or differentiate in reverse mode)",
                where,
            )
        call = stmt.value
        if op.key is USER_CALL:
            wrt, arguments, structures = differentiated_arguments(
                op, self.source, self.activity, where
            )
            key = (id(op.callee), tuple(wrt), structures)
            make = getattr(op.callee, "srcad_handle", None)
            if key not in self.handles and make is not None:
                label = identifier(op.callee.__name__)
                self.handles[key] = self.namer.bind_global(
                    make("jvp", tuple(wrt)), f"{label}_mixed"
                )
            if key not in self.handles and isinstance(op.callee, CustomJVP):
                handle = CustomJVPCall(op.callee, tuple(wrt))
                label = op.callee.__name__
                self.handles[key] = self.namer.bind_global(handle, f"{identifier(label)}_jvp")
            if key not in self.handles:
                handle = CallJVP(op.callee, tuple(wrt), structures)
                label = getattr(handle.func, "__name__", "f")
                self.handles[key] = self.namer.bind_global(handle, f"{identifier(label)}_jvp")
            func = build.load(self.masked_handle(self.handles[key], arguments))
            args = list(op.args)
        else:
            for kw in call.keywords:
                if operand_names(kw.value) & self.activity.varied:
                    raise self.source.error(
                        f"{op.label}: pass differentiable values to a method positionally",
                        where,
                    )
            positions = tuple(
                k for k, arg in enumerate(call.args) if operand_names(arg) & self.activity.varied
            )
            arguments = [call.args[k] for k in positions]
            method = op.key.name
            handle = MethodJVP(method, positions, where=self.source.location(where))
            func = build.load(
                self.masked_handle(self.namer.bind_global(handle, f"{method}_jvp"), arguments)
            )
            args = [op.args[0], *call.args]
        tangents = build.tuple_([self.tangent_of(a) for a in arguments])
        if len(outputs) == 1 and isinstance(stmt.targets[0], gast.Name):
            pair = [build.store(outputs[0]), build.store(self.tangent(outputs[0]))]
        else:  # ``a, b = f(x)``, ``a, = f(x)``: the value and the tangent unpacked alike
            pair = [
                build.tuple_([build.store(n) for n in outputs], gast.Store()),
                build.tuple_([build.store(self.tangent(n)) for n in outputs], gast.Store()),
            ]
        stmt.targets = [build.tuple_(pair, gast.Store())]
        stmt.value = gast.Call(func=func, args=[tangents, *args], keywords=call.keywords)
        setanno(stmt, "pure", False)
        return [stmt, *self.own_results(outputs)]

    def masked_handle(self, handle: str, arguments: list[gast.expr]) -> str:
        """The variant of a user function's forward-mode handle that treats the tangents
        passed in as masked, when one of them may be."""
        variant = getattr(self.namer.globals[handle], "masked", None)
        if variant is None or not set().union(*map(operand_names, arguments)) & self.masked:
            return handle  # (a derivative written by hand: its own rules apply)
        return self.namer.bind_global(variant(), handle + "_masked")


def _tangent_reads(value: gast.expr) -> list[gast.expr]:
    """The operand expressions whose tangents ``value`` reads (``d[x]``)."""
    return [
        n.slice
        for n in gast.walk(value)
        if isinstance(n, gast.Subscript)
        and isinstance(n.value, gast.Name)
        and n.value.id == ADJOINT
    ]


class _TangentReader(gast.NodeTransformer):
    """``d[x]`` becomes the tangent variable of ``x``, or zeros where ``x`` does not vary."""

    def __init__(self, forward: _Forward) -> None:
        self.forward = forward

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        if isinstance(node.value, gast.Name) and node.value.id == ADJOINT:
            return self.forward.tangent_of(node.slice)
        return self.generic_visit(node)


def _restores(stmt: gast.Expr, source: Source, local: set[str]) -> bool:
    """Whether ``stmt`` is generated code's ``restore(y, i, tape.pop())``."""
    call = stmt.value
    return isinstance(call, gast.Call) and source.resolve(call.func, local) is inplace.restore


def _generated(stmt: gast.stmt, pure: bool = True) -> gast.stmt:
    setanno(stmt, "pure", pure)
    setanno(stmt, "generated", True)
    return stmt


def forward(
    tree: gast.FunctionDef, source: Source, namer: Namer, wrt: list[str], masked: bool = False
) -> gast.FunctionDef:
    """Build the forward-mode function of the normalized ``tree``: it takes the parameters,
    then one tangent per ``wrt`` parameter, and returns ``(value, tangent)``; ``masked``:
    those tangents may be zero where a caller's selection did not choose a value."""
    body = list(tree.body)
    ret = body.pop()
    output = ret.value.id
    returned = getanno(tree, "outputs")
    outputs = returned[1] if returned else [output]
    params = [a.id for a in tree.args.posonlyargs + tree.args.args]
    local = local_names(tree)
    activity = analyse_activity(body, source, local, wrt, outputs)
    annotate_purity(body, source, local)
    xp_name = namer.fresh("xp")
    # arrays updated in place: the user's ``y[i] = v``, or generated code's setitem calls
    updated = set(getanno(tree, "inplace") or ())
    sharing = set().union(*alias_groups(body, updated, source, local).values())
    tapes = tape_names(body, source, local)
    refuse_unfollowed(body, source, local, activity, tapes)
    inputs = [*params, *(a.id for a in tree.args.kwonlyargs)]
    stable = stable_names(body, inputs) - updated
    shapes = analyse_shapes(body, source, local, frozenset(stable))
    ctx = _Forward(source, namer, local, activity, xp_name, updated, sharing, shapes, tapes)
    ctx.masked = masked_tangents(body, source, local, wrt if masked else ())
    ctx.active_tapes = active_tapes(body, tapes, activity)
    for name in wrt:
        ctx.tangent(name)
    # a parameter not differentiated that a loop or branch makes vary starts with no tangent
    starts = [
        _generated(build.assign(ctx.tangent(p), ctx.zeros(build.load(p))))
        for p in params
        if p not in wrt and ctx.active(p)
    ]
    new_body = starts + ctx.block(body)
    tangent_params = [build.param(ctx.tangents[name]) for name in wrt]
    namespace = namer.bind_global(array_namespace, "array_namespace")
    prologue = _generated(
        build.assign(xp_name, build.call(namespace, *map(build.load, params))), False
    )
    leaf_tangents = {o: ctx.tangent_of(build.load(o)) for o in outputs}
    if returned:
        value_expr: gast.expr = copy.deepcopy(returned[0])
        tangent_expr = _ReplaceNames(leaf_tangents).visit(copy.deepcopy(returned[0]))
    else:
        value_expr, tangent_expr = ret.value, leaf_tangents[output]
    aux = getanno(tree, "aux")
    if aux is not None:
        value_expr = build.tuple_([value_expr, build.load(aux)])
    new = copy.copy(tree)
    new.name = namer.fresh("jvp_" + tree.name)
    new.args = copy.copy(tree.args)
    new.args.args = [*tree.args.args, *tangent_params]
    new.args.defaults = []
    new.body = [prologue, *new_body, build.ret(build.tuple_([value_expr, tangent_expr]))]
    setanno(new, "xp_name", xp_name)
    return new


class _ReplaceNames(gast.NodeTransformer):
    def __init__(self, replacements: dict[str, gast.expr]) -> None:
        self.replacements = replacements

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id in self.replacements:
            return copy.deepcopy(self.replacements[node.id])
        return node
