"""The adjoint of one assignment, from its rule's template, for the sweep of reverse.py.

The template is instantiated with the statement's operands; its ``d[x]`` reads become
adjoint variables and its ``d[x] = ...`` writes contributions to them. Where shapes are
known, broadcasting helpers give way to the reductions they are (or to nothing), a
uniform adjoint (one number broadcast) is read as the number, and the gradient of an
element read goes into an adjoint array this code owns in place.
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from srcad.adjoints.registry import GETITEM, Method, Operator, lookup
from srcad.runtime import accumulate
from srcad.transform import build
from srcad.transform.analyses.masking import is_elementwise, keeps_zeros
from srcad.transform.analyses.shapes import Rank
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import LIST_GRADIENT_HINT
from srcad.transform.hints import DICTS_FOLLOWED
from srcad.transform.nodes import Transformer, clone
from srcad.transform.ops import (
    DYNAMIC_GETITEM,
    classify,
    differentiable_operand_names,
    operand_names,
)
from srcad.transform.reverse_context import Context, generated
from srcad.transform.templates import (
    ADJOINT,
    TemplateError,
    instantiate,
    result_names,
    rule_operands,
    stored_params,
)

#: the ops ``a + b``, ``a - b``, ``a * b``, ``a / b`` (operators and NumPy's functions), by
#: key: what they are, whatever a rule for them is called (a user's rule named ``add`` is
#: none of them)
ARITHMETIC = frozenset(
    {Operator("Add"), Operator("Sub"), Operator("Mult"), Operator("Div")}
    | {np.add, np.subtract, np.multiply, np.divide}
)
#: ``x * x``
_SQUARE = Operator("Square")


class RuleAdjoints:
    """The sweep's backward code for an assignment whose operation has an adjoint rule
    (mixed into reverse.Sweep, whose adjoint state it reads and updates)."""

    def adjoint(self, stmt: gast.Assign) -> list[gast.stmt]:
        """The rule's template instantiated for ``stmt``, contributing to the adjoints."""
        ctx = self.ctx
        source = ctx.source
        target = stmt.targets[0]
        where = getanno(stmt, "expr") or stmt
        op = classify(stmt.value, source, ctx.local)
        if op.nondifferentiable:
            return []
        if not differentiable_operand_names(stmt.value, op) & ctx.activity.varied:
            return []  # e.g. an output that does not depend on what is differentiated
        read = _string_key(op)
        if read is not None and operand_names(op.args[0]) & ctx.method_results:
            raise source.error(
                f"the key {read!r} read from what a method of an object returns, a dict "
                f"srcad does not follow (its class is known only at run time); "
                f"{DICTS_FOLLOWED}",
                where,
            )
        rule = op.rule
        bound = rule_operands(rule, op, source, where)
        if not rule.takes_lists:  # a list built in the function reaches only rules for lists
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
        transparent = rule.shape_preserving or rule.broadcast_transparent
        if self.is_loose(name) and not transparent:
            helper = ctx.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
            exact = build.call(helper, build.load(self.adj(name)), build.load(name))
            out.append(generated(build.assign(self.adj(name), exact)))
        scatter = self.scatter_in_place(rule, op, name, bound)
        if scatter is not None:
            return out + scatter
        reader = _ReadAdjoints(self, build.load(name))
        uniform = self.uniform.get(name)
        if uniform is not None and not self.is_loose(name):
            if keeps_shape(rule, op) or self.operands_keep_shape(rule, op, name):
                reader.uniform = {name: uniform[0]}
        if name in operand_names(stmt.value):
            # the op reads the name it assigns (only after unpacking or in odd user code):
            # take the incoming gradient aside before the operand's adjoint starts afresh
            incoming = ctx.namer.fresh_temp("d" + name + "_out")
            out.append(generated(build.assign(incoming, build.load(self.adj(name)))))
            reader.renamed = {name: incoming}
            self.state.discard(name)
        read_uniform = fell_back = False
        chained = is_elementwise(rule) and not rule.selects and name in ctx.masked
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
                if reader.used_uniform and not elementwise_in(value, operand_names(stmt.value)):
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
                out.append(generated(new))
            else:
                out.append(generated(reader.visit(tstmt), False))
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
        if op.key not in ARITHMETIC:
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
            elif not isinstance(node, NUMBER_PARTS):
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
                out.append(generated(build.assign(self.adj(name), exact)))
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
                out.append(generated(new))
            else:
                out.append(generated(reader.visit(tstmt), False))
        return out

    def scatter_in_place(self, rule, op, name: str, bound: dict) -> list[gast.stmt] | None:
        """``dx[i] += dy`` into an adjoint this code owns, instead of a new zero array."""
        if not rule.scatters:
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
        if op.key == GETITEM:  # constant indices and slices: no element twice
            part = gast.Subscript(value=build.load(dx), slice=index, ctx=gast.Load())
            target = gast.Subscript(value=build.load(dx), slice=clone(index), ctx=gast.Store())
            stmt = gast.Assign(
                targets=[target], value=build.binop(part, gast.Add(), g), type_comment=None
            )
            return [generated(stmt)]
        helper = self.ctx.namer.bind_global(accumulate.add_at, "add_at")
        return [generated(gast.Expr(value=build.call(helper, build.load(dx), index, g)), False)]

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


def _string_key(op) -> str | None:
    """The string ``op`` indexes with (``d["m"]``), or None: arrays take no string index."""
    if op.key in (GETITEM, DYNAMIC_GETITEM):
        index = op.args[1]
        for part in index.elts if isinstance(index, gast.Tuple) else [index]:
            if isinstance(part, gast.Constant) and isinstance(part.value, str):
                return part.value
    return None


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

    def __init__(self, sweep: RuleAdjoints, result: gast.Name) -> None:
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
                # whoever reads this adjoint reduce it (a rule's broadcast_transparent)
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
NUMBER_PARTS = (gast.Constant, gast.UnaryOp, gast.BinOp, gast.operator, gast.unaryop, gast.Load)


def multiple_results(stmt: gast.Assign, ctx: Context) -> bool:
    """Whether ``stmt`` unpacks the results of an op whose rule has several."""
    rule = classify(stmt.value, ctx.source, ctx.local).rule
    return rule is not None and bool(rule.results)


def _changes_shape(attr: str) -> bool:
    """Whether a call ``xp.attr(...)`` or ``a.attr(...)`` in an adjoint expression may not
    keep its array argument's shape: its rule, as NumPy function or as method, says so
    (``changes_shape``); a call without such a rule counts as elementwise."""
    rules = (lookup(getattr(np, attr, None)), lookup(Method(attr)))
    return any(rule is not None and rule.changes_shape for rule in rules)


def keeps_shape(rule, op) -> bool:
    """Whether ``name = op(...)`` has its operand's shape exactly: ``x * x``, or a
    one-argument elementwise function."""
    return op.key == _SQUARE or (rule.shape_preserving and len(op.args) == 1)


def elementwise_in(value: gast.expr, operands: set[str]) -> bool:
    """Whether ``value`` is an elementwise expression that reads one of ``operands`` (so it
    has their shape) and nothing that reduces or reshapes."""
    found = False
    for node in gast.walk(value):
        if isinstance(node, gast.Call):
            func = node.func
            if not isinstance(func, gast.Attribute) or _changes_shape(func.attr):
                return False
        elif isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
            if node.value.id in operands:
                return False  # ``x.shape``, ``x.T``: not the elementwise value
        elif isinstance(node, gast.Subscript):
            return False
        elif isinstance(node, gast.Name) and node.id in operands:
            found = True
    return found


def _is_adjoint_store(dest: gast.expr) -> bool:
    return isinstance(dest, gast.Subscript) and getattr(dest.value, "id", None) == ADJOINT
