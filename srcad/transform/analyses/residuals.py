"""What each statement's backward code reads of the primal, known before it is generated.

A rule's residuals come from its template (by the names its body reads): a parameter read
as a value is read whatever the plan; one read only to undo broadcasting
(``unbroadcast(g, x)``) is read only where shapes do not make the reduction needless and
``x`` still holds its value (else the gradient stays broadcast: a "lazy" unbroadcast, and
the adjoint it adds to is loose); the operands of a product's gradient
(``grad_matmul_lhs(g, a, b)``) are read as the rule's helper needs them unless ranks make
it ``g @ b.T``. Loose adjoints (see reverse.py) are found here as the sweep finds them,
for the whole function at once: a lazy unbroadcast makes its operand's adjoint loose, and
so does a term carrying a loose adjoint outside every reducing helper. A loose adjoint is
reduced where a rule that is not broadcast-transparent reads it and where a second term
adds to it, both reading its variable. Where an adjoint is an array of its own (after
a second term, or a first that is a new array), an element's gradient is added into it in
place, reading nothing of the array; a branch or loop holding a statement whose value
the plan records has backward code (the pop), reading its test or range; the reads of
code the sweep generates on a loop's earlier turn and then replaces count where their
reader is, not as reads of the code that stands. settle.py plans the recording from
these reads before it generates the code once, then checks the plan against the code.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from srcad.runtime import accumulate
from srcad.transform import build
from srcad.transform.adjoint_statements import (
    ARITHMETIC,
    NUMBER_PARTS,
    elementwise_in,
    keeps_shape,
)
from srcad.transform.analyses.activity import targets
from srcad.transform.analyses.masking import is_elementwise, keeps_zeros
from srcad.transform.anno import getanno
from srcad.transform.nodes import clone
from srcad.transform.normalize.jumps import unguarded
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import classify, differentiable_operand_names, operand_names, tape_call
from srcad.transform.templates import TemplateError, bind


@dataclass(frozen=True)
class TemplateReads:
    """The parameters one statement of a rule's adjoint template reads, by how it reads
    them."""

    #: the parameter whose adjoint the statement adds to (``d[x] = ...``), if any: its
    #: reads count only where that operand varies (else the term is never written)
    into: str | None
    #: read as values (the result's parameter among them: ``tanh`` reads ``y``)
    values: frozenset[str]
    #: read only as the shape a gradient is reduced to (``unbroadcast(g, x)``)
    shapes: frozenset[str]
    #: ``(lhs, a, b)`` of each ``grad_matmul_lhs/rhs(g, a, b)`` (``lhs``: the left one's)
    products: tuple[tuple[bool, str, str], ...]
    #: the ``x`` of every ``unbroadcast(g, x)`` (a lazy one leaves the term loose)
    reductions: frozenset[str] = frozenset()
    #: each ``d[r]`` read, with the reducing helpers around it: the ``x`` of an
    #: ``unbroadcast(..., x)``, or None for another helper (``r`` None: a list of results)
    adjoints: tuple[tuple[str | None, tuple[str | None, ...]], ...] = ()
    #: ``(x, options)`` where the statement is ``d[x] = unreduce(d[y], x, ...)`` with the
    #: keywords taking ``options`` (a whole-array reduction, when they are None/False:
    #: ``x``'s adjoint is one number broadcast, a "uniform" one)
    spreads: tuple[str, tuple[str, ...]] | None = None
    #: read with a uniform ``d[y]`` (the broadcasts around it left out, the operands
    #: having ``y``'s shape): "elementwise" in the operands, a "number" made of it alone
    #: (spread to the operand as its own uniform adjoint), else "other"; None: no d[y]
    uniform: str | None = None
    #: whether the statement adds to adjoints its index names otherwise than as one
    #: parameter (a loop over the operands: ``for i, x in enumerate(operands): d[x] = ...``)
    into_any: bool = False
    #: whether the term added is a new array (a sum, or an array the template fills): an
    #: adjoint holding only it may be updated in place (see reverse.Sweep.owned)
    fresh: bool = False
    #: the ``x`` of a term ``unbroadcast(a + b, x)``: a new array where ``x`` has the
    #: result's shape (the unbroadcast left out)
    fresh_if_shaped: str | None = None
    #: whether the term reads nothing but ``d[y]`` and numbers (masking.keeps_zeros)
    keeps_zeros: bool = False
    #: the ``x`` of a term ``unbroadcast(..., x)`` (where a mask made zero-safe goes inside)
    outer_reduction: str | None = None


#: id of a rule -> (the rule, kept alive so that its id stays its own; its reads)
_READS: dict[int, tuple[object, tuple[TemplateReads, ...]]] = {}


def template_reads(rule) -> tuple[TemplateReads, ...]:
    """The reads of each statement of ``rule``'s adjoint template, computed once per rule."""
    found = _READS.get(id(rule))
    if found is None or found[0] is not rule:
        reads = tuple(_statement_reads(rule, s) for s in _unrolled(rule))
        found = _READS[id(rule)] = (rule, reads)
    return found[1]


def _unrolled(rule) -> list[gast.stmt]:
    """The template's statements, a loop over an operand list (unrolled when instantiated:
    templates.instantiate) as its body, the list standing for its item."""
    out: list[gast.stmt] = []
    for stmt in rule.body:
        if isinstance(stmt, gast.For):
            seq, item = stmt.iter.args[0].id, stmt.target.elts[1].id
            out.extend(_Renamed(item, seq).visit(clone(s)) for s in stmt.body)
        else:
            out.append(stmt)
    return out


class _Renamed(gast.NodeTransformer):
    """A name replaced by another."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: gast.Name) -> gast.Name:
        return gast.Name(self.new, node.ctx, None, None) if node.id == self.old else node


def _statement_reads(rule, stmt: gast.stmt) -> TemplateReads:
    params = {rule.result, *rule.results, *rule.operands}
    values: set[str] = set()
    shapes: set[str] = set()
    products: list[tuple[bool, str, str]] = []
    adjoints: list[tuple[str | None, tuple[str | None, ...]]] = []

    def helper(node: gast.AST):
        return rule.globals.get(node.id) if isinstance(node, gast.Name) else None

    def visit(node: gast.AST, around: tuple[str | None, ...]) -> None:
        if isinstance(node, gast.Subscript) and getattr(node.value, "id", None) == "d":
            # d[x]: the adjoint, not the value
            index = node.slice
            adjoints.append((index.id if isinstance(index, gast.Name) else None, around))
            return
        if isinstance(node, gast.Call):
            func, args = helper(node.func), node.args
            if func is accumulate.unbroadcast and len(args) == 2 and not node.keywords:
                last = args[1]
                if isinstance(last, gast.Name) and last.id in params:
                    shapes.add(last.id)
                    visit(args[0], (*around, last.id))
                    return
            if (
                func in (accumulate.grad_matmul_lhs, accumulate.grad_matmul_rhs)
                and len(args) == 3
                and not node.keywords
            ):
                a, b = args[1], args[2]
                if all(isinstance(x, gast.Name) and x.id in params for x in (a, b)):
                    products.append((func is accumulate.grad_matmul_lhs, a.id, b.id))
                    visit(args[0], (*around, None))
                    return
            if getattr(func, "__module__", None) == accumulate.__name__:
                visit(node.func, around)
                for child in (*args, *node.keywords):
                    visit(child, (*around, None))
                return
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in params:
            values.add(node.id)
        for child in gast.iter_child_nodes(node):
            visit(child, around)

    into = None
    dest = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
    if (
        isinstance(dest, gast.Subscript)
        and getattr(dest.value, "id", None) == "d"
        and isinstance(dest.slice, gast.Name)
        and dest.slice.id in params
    ):
        into = dest.slice.id
        visit(stmt.value, ())
    else:
        visit(stmt, ())
    into_any = into is None and any(
        isinstance(node, gast.Assign) and _is_adjoint_of(node.targets[0], None)
        for node in gast.walk(stmt)
    )
    spreads = uniform = None
    fresh, fresh_if_shaped = False, None
    if into is not None:
        spreads = _spreads(rule, stmt.value, into, params)
        uniform = _uniform_kind(rule, stmt.value, params)
        fresh, fresh_if_shaped = _fresh(rule, stmt.value, params)
    outer = _unbroadcast_of(rule, stmt.value) if into is not None else None
    return TemplateReads(
        into, frozenset(values), frozenset(shapes - values), tuple(products),
        frozenset(shapes), tuple(adjoints), spreads, uniform, into_any, fresh, fresh_if_shaped,
        into is not None and keeps_zeros(stmt.value), outer and outer[1],
    )  # fmt: skip


def _unbroadcast_of(rule, value: gast.expr) -> tuple[gast.expr, str] | None:
    """``(g, x)`` where ``value`` is ``unbroadcast(g, x)`` of a name ``x``, else None."""
    func = value.func if isinstance(value, gast.Call) else None
    if (
        isinstance(func, gast.Name)
        and rule.globals.get(func.id) is accumulate.unbroadcast
        and len(value.args) == 2
        and isinstance(value.args[1], gast.Name)
    ):
        return value.args[0], value.args[1].id
    return None


def _fresh(rule, value: gast.expr, params: set[str]) -> tuple[bool, str | None]:
    """Whether the term ``value`` is a new array (a sum, or an array the template made
    with ``zeros_like``), or is one where its ``unbroadcast`` is left out (its ``x``)."""
    if isinstance(value, gast.BinOp):
        return True, None
    if isinstance(value, gast.Name):
        for stmt in rule.body:
            if (
                isinstance(stmt, gast.Assign)
                and getattr(stmt.targets[0], "id", None) == value.id
                and isinstance(stmt.value, gast.Call)
                and getattr(stmt.value.func, "attr", None) == "zeros_like"
            ):
                return True, None
        return False, None
    reduced = _unbroadcast_of(rule, value)
    if reduced is not None and isinstance(reduced[0], gast.BinOp) and reduced[1] in params:
        return False, reduced[1]
    return False, None


def _is_adjoint_of(node: gast.AST, name: str | None) -> bool:
    return (
        isinstance(node, gast.Subscript)
        and getattr(node.value, "id", None) == "d"
        and (name is None or getattr(node.slice, "id", None) == name)
    )


#: unreduce's options after ``(g, x)``, in order, and the values that leave it spreading a
#: whole-array reduction's gradient (a number) over ``x`` as the sweep reads its call
#: (reverse.Sweep.uniform_seed; ``0 in (None, False)``); a mask (``where``) only where the
#: call leaves it out
_WHOLE: dict[str, tuple] = {"axis": (None, False), "keepdims": (None, False), "where": ()}


def _spreads(rule, value: gast.expr, into: str, params: set[str]):
    """``(x, options)`` of ``unreduce(d[y], x, axis=..., keepdims=..., where=...)``, each
    option a parameter with the values that make it whole (see TemplateReads)."""
    if not (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and rule.globals.get(value.func.id) is accumulate.unreduce
        and 2 <= len(value.args) <= 2 + len(_WHOLE)
        and _is_adjoint_of(value.args[0], rule.result)
        and getattr(value.args[1], "id", None) == into
    ):
        return None
    given = [*zip(_WHOLE, value.args[2:]), *((k.arg, k.value) for k in value.keywords)]
    options = []
    for option, node in given:
        if option not in _WHOLE:
            return None
        if isinstance(node, gast.Name) and node.id in params:
            options.append((node.id, _WHOLE[option]))
        elif not (isinstance(node, gast.Constant) and node.value in _WHOLE[option]):
            return None
    return into, tuple(options)


def _whole(node: gast.expr | None, values: tuple) -> bool:
    """Whether an option of unreduce bound to ``node`` leaves it spreading a number: one of
    ``values``, or a keyword left out (the call leaves out the template's too)."""
    if not isinstance(node, gast.Constant):
        return False
    return node.value in values or (not values and bool(getanno(node, "default")))


_SEED = "\x00seed"


def _uniform_kind(rule, value: gast.expr, params: set[str]) -> str | None:
    """How ``value`` reads a uniform ``d[y]`` (see TemplateReads.uniform)."""
    if not any(_is_adjoint_of(n, rule.result) for n in gast.walk(value)):
        return None

    class Seeded(gast.NodeTransformer):
        def visit_Subscript(self, node):
            if _is_adjoint_of(node, None):
                return gast.Name(_SEED, gast.Load(), None, None)
            return self.generic_visit(node)

        def visit_Call(self, node):
            self.generic_visit(node)
            func = rule.globals.get(node.func.id) if isinstance(node.func, gast.Name) else None
            if func is accumulate.unbroadcast and len(node.args) == 2:
                return node.args[0]  # the operands have the result's shape
            return node

    seeded = Seeded().visit(clone(value))
    if elementwise_in(seeded, set(rule.operands)):
        return "elementwise"
    for node in gast.walk(seeded):
        if isinstance(node, gast.Name):
            if node.id != _SEED:
                return "other"
        elif not isinstance(node, NUMBER_PARTS):
            return "other"
    return "number"


@dataclass
class _Bound:
    """One assignment with its rule's template bound to its operands."""

    stmt: gast.Assign
    rule: object
    by_param: dict[str, gast.expr]
    names: list[str]
    #: the result's name (None for an op with several results)
    result: str | None
    #: the names the op reads
    operand_names: set[str]
    #: the op's arguments
    args: list[gast.expr]
    #: the names its result depends on smoothly
    differentiable: frozenset[str] = frozenset()
    #: the op's key (what it is, whatever its rule is called)
    key: object = None

    def into(self, part: TemplateReads) -> frozenset[str]:
        """The names whose adjoints the template statement ``part`` adds to."""
        if part.into is not None:
            return self.of(part.into)
        return self.differentiable if part.into_any else frozenset()

    def __post_init__(self) -> None:
        self._of: dict[str, frozenset[str]] = {}

    def of(self, param: str) -> frozenset[str]:
        """The names bound to ``param`` (the results' for a result)."""
        found = self._of.get(param)
        if found is None:
            node = self.by_param.get(param)
            if node is None:
                found = frozenset(self.names if param in self.rule.results else ())
            elif node is self.stmt.targets[0] or param in self.rule.results:
                found = frozenset(targets(gast.Assign(targets=[node], value=None)))
            else:
                found = frozenset(operand_names(node))
            self._of[param] = found
        return found


class Residuals:
    """What the backward code of a function body reads, and which adjoints are loose, for
    a given set of names that hold their values in the backward pass.

    Which statements have backward code, and where an adjoint holds a term already, are
    followed as the sweep follows them (static adjoint presence: see reverse.py): from
    the outputs back, an assignment whose result has an adjoint adds to its operands'
    and ends its own; branches join, loops are run until what they carry is the same."""

    def __init__(self, body: list[gast.stmt], ctx, outputs: list[str] = ()) -> None:
        self.ctx = ctx
        self.tapes = set(ctx.tapes)
        #: (statement, what its backward code reads whatever the plan): control flow,
        #: user calls, zeros of adjoints not there
        self.fixed: dict[int, tuple[gast.stmt, set[str]]] = {}
        #: every read ``fixed`` held for a statement, on any pass of its loops
        self.fixed_ever: dict[int, set[str]] = {}
        #: what zeros written where a branch or loop needs them read (no statement's)
        self.zeroed: set[str] = set()
        #: the assignments with backward code and a rule, bound
        self.bound: dict[int, _Bound] = {}
        #: user calls' outputs and popped names: reduced when loose (by their statement)
        self.reduced: dict[int, tuple[gast.stmt, set[str]]] = {}
        #: each statement adding to adjoints: (statement, [(name, whether it holds a
        #: term already)])
        self.terms: dict[int, tuple[gast.stmt, list[tuple[str, bool]]]] = {}
        #: uniform adjoints read as their number: (the statement that made it, the name,
        #: the statement reading it, operands it spreads to, names that must not be loose)
        self.uniform: list[tuple[gast.stmt, str, gast.stmt, list[str], frozenset[str]]] = []
        #: adjoints that are arrays of their own (updated in place by a scatter)
        self.owned: set[str] = set()
        #: statements whose element gradient is added in place: the array scattered into
        self.scattered: dict[int, str] = {}
        #: statements of a rule that scatters whose template code is written on some pass
        self.unscattered: set[int] = set()
        #: every branch and loop, with what its backward code reads if it has any
        self.controls: dict[int, tuple[gast.stmt, set[str]]] = {}
        self._now: _Bound | None = None
        self._run(body, set(outputs))

    # ---- adjoint presence, as the sweep follows it

    def _run(self, stmts: list[gast.stmt], state: set[str]) -> tuple[set[str], bool]:
        """The adjoints present before ``stmts``' backward code, given those after it;
        and whether there is any backward code."""
        code = False
        # uniform adjoints made in this block: name -> (the statement making it, the names
        # whose looseness would have kept it from being uniform)
        uniform: dict[str, tuple[gast.stmt, frozenset[str]]] = {}
        for stmt in reversed(stmts):
            self._now = None
            state, made = self._step(stmt, state)
            code |= made
            if not isinstance(stmt, gast.Assign):
                uniform.clear()  # (what a branch or loop knew holds only in it)
                continue
            b = self._now
            if b is not None:
                self._read_uniform(b, uniform)
            terms = self.terms.get(id(stmt), (None, []))[1] if made else []
            for name, there in terms:
                if there:
                    uniform.pop(name, None)  # a second term: no longer one number
            for name in targets(stmt):
                uniform.pop(name, None)
            if b is not None:
                self._make_uniform(b, terms, uniform)
        return state, code

    def _make_uniform(self, b: _Bound, terms, uniform) -> None:
        """The uniform adjoints ``b`` makes: a whole-array reduction's operand's, as its
        first term (see reverse.Sweep.uniform_seed)."""
        first = {name for name, there in terms if not there}
        for part in template_reads(b.rule):
            if part.spreads is None:
                continue
            x, options = part.spreads
            node = b.by_param.get(x)
            if not isinstance(node, gast.Name) or node.id not in first:
                continue
            if all(_whole(b.by_param.get(o), whole) for o, whole in options):
                uniform[node.id] = (b.stmt, frozenset({node.id, b.result}))

    def _read_uniform(self, b: _Bound, uniform) -> None:
        """Where ``b``'s result has a uniform adjoint and its template reads the number
        itself everywhere, the statement that made it is superseded (its read of the
        result's value with it); a term made of the number alone is spread to its
        operand, read for its shape, and uniform in turn."""
        made = uniform.get(b.result) if b.result is not None else None
        if made is None:
            return
        rule = b.rule
        if not (
            keeps_shape(rule, b) or (
                b.key in ARITHMETIC
                and all(isinstance(a, gast.Name) and self._shaped(a.id, b) for a in b.args)
            )
        ):  # fmt: skip
            return
        spread: list[str] = []
        for part in template_reads(rule):
            if part.uniform is None:
                continue
            if part.uniform == "other":
                return
            if part.uniform == "number":
                node = b.by_param.get(part.into) if part.into else None
                if not isinstance(node, gast.Name) or not self._shaped(node.id, b):
                    return
                spread.append(node.id)
        stmt, blockers = made
        self.uniform.append((stmt, b.result, b.stmt, spread, blockers))
        for name in spread:
            uniform[name] = (b.stmt, blockers | {name})

    def _shaped(self, name: str, b: _Bound) -> bool:
        """Whether ``name`` certainly has the shape of ``b``'s result (see
        adjoint_statements.operand_shaped)."""
        if self.ctx.shapes.same(build.load(name), build.load(b.result)):
            return True
        a, y = self.ctx.ranks.get(name), self.ctx.ranks.get(b.result)
        return a is not None and y is not None and a[1] and a[0] == y[0]

    def _fix(self, stmt: gast.stmt, reads: set[str]) -> None:
        """``stmt``'s backward code reads ``reads`` whatever the plan (on this pass of its
        loops; what earlier passes read is kept apart: see ``reads``)."""
        self.fixed[id(stmt)] = (stmt, set(reads))
        self.fixed_ever.setdefault(id(stmt), set()).update(reads)

    def _step(self, stmt: gast.stmt, state: set[str]) -> tuple[set[str], bool]:
        ctx = self.ctx
        if isinstance(stmt, gast.If):
            before_owned = set(self.owned)
            body, made_body = self._run(stmt.body, set(state))
            owned_body, self.owned = self.owned, before_owned
            orelse, made_else = self._run(stmt.orelse, set(state))
            # (an adjoint one arm alone makes starts as zeros, a new array, in the other)
            self.owned = (owned_body | (orelse - body)) & (self.owned | (body - orelse))
            self.zeroed |= body ^ orelse
            self.controls[id(stmt)] = (stmt, operand_names(stmt.test))
            if made_body or made_else or body ^ orelse:
                self._fix(stmt, operand_names(stmt.test))
                return body | orelse, True
            return body | orelse, False
        if isinstance(stmt, (gast.For, gast.While)):
            inner = (unguarded(stmt) or stmt.body) if isinstance(stmt, gast.For) else stmt.body
            entry = set(state)
            entry_owned = set(self.owned)
            mark = len(self.uniform)
            while True:
                del self.uniform[mark:]  # (what an earlier pass found may not hold now)
                self.owned = set(entry_owned)
                exit_, made = self._run(inner, set(entry))
                missing = exit_ - entry
                # (as the sweep: an adjoint updated in place on one turn must still be its
                # own array on the next)
                lost = (entry_owned & entry) - self.owned - (entry - exit_)
                if not missing and not lost:
                    break
                self.zeroed |= missing
                entry |= missing
                entry_owned = (entry_owned | missing) - lost
            self.owned = entry_owned
            self.zeroed |= entry - exit_
            header = _undone_for_reads(stmt, ctx) if isinstance(stmt, gast.For) else _counter(stmt)
            self.controls[id(stmt)] = (stmt, header)
            if made or entry - exit_:
                self._fix(stmt, header)
                return entry, True
            return entry, bool(missing)
        if isinstance(stmt, gast.Expr):
            push = tape_call(stmt, self.tapes, "push")
            if push is not None and push.func.value.id in ctx.active_tapes:
                if id(stmt) not in ctx.activity.unread:  # (else its pop hands on nothing)
                    self._terms(stmt, [operand_names(push.args[0])], state)
                return state, True
            pop = tape_call(stmt, self.tapes, "pop")
            return state, pop is not None and pop.func.value.id in ctx.active_tapes
        if not isinstance(stmt, gast.Assign):
            return state, False
        names = targets(stmt)
        call = getanno(stmt, "user_call")
        pop = tape_call(stmt, self.tapes, "pop")
        if pop is not None:
            if pop.func.value.id not in ctx.active_tapes:
                return state, False
            # (an adjoint not there is handed on as zeros of the value's shape)
            self._fix(stmt, set(names) - state)
            self.reduced[id(stmt)] = (stmt, set(names))
            self.owned -= set(names)
            return state - set(names), True
        if call is not None:
            if not set(call.outputs) & state:
                return state, False
            held = operand_names(gast.Tuple(elts=call.arguments, ctx=gast.Load()))
            zeros = set(call.outputs) - state
            reads = {call.residuals} | (held & ctx.updated_memory) | zeros
            self._fix(stmt, reads)
            self.reduced[id(stmt)] = (stmt, set(call.outputs))
            state = state - set(call.outputs)
            self.owned -= set(call.outputs)
            args = [{node.id} if isinstance(node, gast.Name) else set() for node in call.arguments]
            added = self._terms(stmt, args, state)
            self.owned -= set(names) - added
            return state - (set(names) - added), True
        if not set(names) & state:
            return state, False
        b = self._bind(stmt)
        added: set[str] = set()
        if b is not None:
            self.bound[id(stmt)] = self._now = b
            if b.rule.results:
                # results without an adjoint start as zeros of their shape
                self._fix(stmt, set(names) - state)
                self.owned |= set(names) - state - ctx.source.lists
                state = state | set(names)
            parts = template_reads(b.rule)
            self._scatter(b, state)
            terms = [b.into(part) for part in parts]
            if b.result is not None and b.result in b.operand_names:
                state = state - {b.result}  # its incoming gradient taken aside first
            fresh = [self._fresh_term(b, part) for part in parts]
            added = self._terms(stmt, terms, state, fresh)
        self.owned -= set(names) - added
        return state - (set(names) - added), True

    def _terms(
        self,
        stmt: gast.stmt,
        terms: list[set[str]],
        state: set[str],
        fresh: list[bool] | None = None,
    ) -> set[str]:
        """Record the terms ``stmt`` adds (to the varied names of each of ``terms``), with
        whether each adjoint holds one already; ``state`` takes them. The names added.
        An adjoint is its own array (``owned``) after a second term or a first ``fresh``
        one."""
        found: list[tuple[str, bool]] = []
        added: set[str] = set()
        for k, names in enumerate(terms):
            for name in sorted(names & self.ctx.activity.varied):
                there = name in state
                found.append((name, there))
                state.add(name)
                added.add(name)
                if (there or (fresh is not None and fresh[k])) and (
                    name not in self.ctx.source.lists
                ):
                    self.owned.add(name)
                else:
                    self.owned.discard(name)
        self.terms[id(stmt)] = (stmt, found)
        return added

    def _masked(self, b: _Bound) -> bool:
        """Whether ``b``'s terms are made zero-safe (adjoint_statements.zero_safe)."""
        rule = b.rule
        return is_elementwise(rule) and not rule.selects and b.result in self.ctx.masked

    def _fresh_term(self, b: _Bound, part: TemplateReads) -> bool:
        """Whether the term ``part`` adds is a new array, as the sweep writes it."""
        if self._masked(b) and not part.keeps_zeros:
            return False  # made zero-safe: a where(...)
        if part.fresh:
            return True
        x = b.by_param.get(part.fresh_if_shaped) if part.fresh_if_shaped else None
        return (
            isinstance(x, gast.Name)
            and b.result is not None
            and self.ctx.shapes.same(x, build.load(b.result))
        )

    def _scatter(self, b: _Bound, state: set[str]) -> None:
        """Note where the sweep adds an element's gradient into its array's adjoint in
        place (adjoint_statements.scatter_in_place): its template, and so its reads, are
        not used there (unless that adjoint turns out loose)."""
        if not b.rule.scatters:
            return
        source = b.args[0] if b.args else None
        if (
            isinstance(source, gast.Name)
            and source.id in state
            and source.id in self.owned
            and source.id not in self.ctx.source.lists
            and source.id in self.ctx.activity.varied
        ):
            self.scattered.setdefault(id(b.stmt), source.id)
        else:
            # (a loop's earlier pass wrote the template's code: the sweep's readers keep it)
            self.unscattered.add(id(b.stmt))

    def _bind(self, stmt: gast.Assign) -> _Bound | None:
        """``stmt``'s rule bound to its operands, if it has backward code from a rule."""
        ctx = self.ctx
        op = classify(stmt.value, ctx.source, ctx.local)
        rule = op.rule
        if rule is None or op.nondifferentiable:
            return None
        if not differentiable_operand_names(stmt.value, op) & ctx.activity.varied:
            return None
        try:
            bound = bind(rule, op.args, op.keywords, op.callee)
        except TemplateError:
            return None  # the sweep reports it
        names = targets(stmt)
        target = stmt.targets[0]
        by_param: dict[str, gast.expr] = dict(bound)
        if rule.results:
            results = target.elts if isinstance(target, (gast.Tuple, gast.List)) else [target]
            if not rule.variadic:
                by_param.update(zip(rule.results, results))
            result = None
        else:
            by_param[rule.result] = target
            result = target.id if isinstance(target, gast.Name) else None
        return _Bound(
            stmt, rule, by_param, names, result, operand_names(stmt.value), op.args,
            frozenset(differentiable_operand_names(stmt.value, op)), op.key,
        )  # fmt: skip

    # ---- the adjoints left loose

    def loose(self, available: set[str]) -> set[str]:
        """The adjoints that are loose somewhere in the backward code, when ``available``
        hold their values (the sweep's assumption once settled: loose everywhere)."""
        ctx = self.ctx
        varied = ctx.activity.varied
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for b in self.bound.values():
                rule = b.rule
                result_loose = bool(set(b.names) & found)
                for part in template_reads(rule):
                    into = b.into(part) & varied
                    if not into or into <= found:
                        continue
                    lazy = not rule.results and any(
                        self._lazy(b, x, result_loose, available) for x in part.reductions
                    )
                    if self._masked(b) and not part.keeps_zeros:
                        # the zero-safe ``where(d[y] != 0, term, 0)`` reads d[y] outside
                        # every helper but the term's own unbroadcast
                        outer = part.outer_reduction
                        around = (outer,) if outer else ()
                        lazy |= self._carries(
                            b, rule.result, around, found, result_loose, available
                        )
                    # (a masked adjoint's zero-safe ``where(d[y] != 0, term, 0)`` goes
                    # inside the term's unbroadcast: it carries what the term carries)
                    if lazy or any(
                        self._carries(b, r, around, found, result_loose, available)
                        for r, around in part.adjoints
                    ):
                        found |= into
                        changed = True
        return found

    def _carries(self, b, r, around, found, result_loose, available) -> bool:
        """Whether ``d[r]`` inside the helpers ``around`` reaches the term unreduced,
        holding a loose adjoint."""
        loose = bool((b.of(r) if r is not None else set(b.names)) & found)
        return loose and all(
            x is not None and self._elided(b, x, result_loose, available) for x in around
        )

    def _elided(self, b: _Bound, x: str, result_loose: bool, available: set[str]) -> bool:
        """Whether ``unbroadcast(g, x)`` is left out of the code: shapes or ranks make it
        needless, or ``x`` does not hold its value (lazy)."""
        node = b.by_param.get(x)
        if not isinstance(node, gast.Name):
            return False
        return self._needless(b, node, result_loose) or node.id not in available

    def _lazy(self, b: _Bound, x: str, result_loose: bool, available: set[str]) -> bool:
        node = b.by_param.get(x)
        return (
            isinstance(node, gast.Name)
            and not self._needless(b, node, result_loose)
            and node.id not in available
        )

    def _needless(self, b: _Bound, node: gast.Name, result_loose: bool) -> bool:
        """Whether shapes (or ranks, for an adjoint of the result's shape) make
        ``unbroadcast(g, node)`` the gradient itself or a known sum."""
        if b.result is not None and self.ctx.shapes.same(node, build.load(b.result)):
            return True
        rank, result_rank = self._ranks(b, node.id, result_loose)
        return (
            result_rank is not None and rank is not None and rank[1] and (result_rank[0] >= rank[0])
        )

    def _ranks(self, b: _Bound, name: str, result_loose: bool):
        ranks = self.ctx.ranks
        if b.result is None or result_loose:
            return ranks.get(name), None
        return ranks.get(name), ranks.get(b.result)

    def control_reads(self, pushed: set[int]) -> dict[str, set[int]]:
        """What the branches and loops holding statements ``pushed`` read: their backward
        code pops those statements' values, if nothing else."""
        readers: dict[str, set[int]] = {}
        for stmt, reads in self.controls.values():
            if any(id(s) in pushed for s in all_statements([stmt])):
                for name in reads & self.ctx.local:
                    readers.setdefault(name, set()).add(id(stmt))
        return readers

    # ---- what the backward code reads

    def reads(
        self, available: set[str], loose: set[str]
    ) -> tuple[dict[str, set[int]], set[tuple[int, str]]]:
        """For each primal name, the statements whose backward code reads it; and the
        reads, ``(statement id, name)``, of statements superseded later (a uniform
        adjoint read as its number, code of an earlier pass of a loop): not read in the
        code, though their statement's."""
        local = self.ctx.local
        varied = self.ctx.activity.varied
        ranks = self.ctx.ranks
        readers: dict[str, set[int]] = {}

        def read(stmt: gast.stmt, found: set[str]) -> None:
            for name in found & local:
                readers.setdefault(name, set()).add(id(stmt))

        for stmt, found in self.fixed.values():
            read(stmt, found)
        for stmt, names in self.reduced.values():
            read(stmt, names & loose)
        for b in self.bound.values():
            rule = b.rule
            result_loose = bool(set(b.names) & loose)
            found: set[str] = set()
            if result_loose and not rule.results:
                if not (rule.shape_preserving or rule.broadcast_transparent):
                    found.add(b.result)  # reduced before the template reads it
            elif result_loose:
                found |= set(b.names) & loose
            into = self.scattered.get(id(b.stmt))
            if into is not None and id(b.stmt) not in self.unscattered and into not in loose:
                # (added in place: only the index is read)
                read(b.stmt, found | operand_names(b.by_param["index"]))
                continue
            _, result_rank = self._ranks(b, "", result_loose)
            for part in template_reads(rule):
                if part.into is not None and not b.of(part.into) & varied:
                    continue  # a term for an operand that does not vary: never written
                for param in part.values:
                    found |= b.of(param)
                for param in part.shapes:
                    node = b.by_param.get(param)
                    if not isinstance(node, gast.Name):
                        found |= b.of(param)
                    elif not self._needless(b, node, result_loose) and node.id in available:
                        found.add(node.id)
                for lhs, x, y in part.products:
                    plain = result_rank is not None and all(
                        isinstance(b.by_param.get(p), gast.Name)
                        and ranks.get(b.by_param[p].id, (None,))[0] == 2
                        for p in (x, y)
                    )
                    found |= (b.of(y) if lhs else b.of(x)) if plain else b.of(x) | b.of(y)
            read(b.stmt, found)
        # a loose adjoint and a term added to it are each reduced to the variable's shape
        # (reading it), where the adjoint holds a term already
        for stmt, terms in self.terms.values():
            read(stmt, {name for name, there in terms if there and name in loose})
        superseded: set[tuple[int, str]] = set()
        for stmt, found in self.fixed.values():
            # code the sweep generated on an earlier pass of a loop and then replaced: its
            # reads count where the reader is (the sweep's readers keep every round's),
            # though the code that stands may not read them
            for name in (self.fixed_ever[id(stmt)] - found) & local:
                if id(stmt) not in readers.get(name, ()):
                    readers.setdefault(name, set()).add(id(stmt))
                    superseded.add((id(stmt), name))
        for made, name, reader, spread, blockers in self.uniform:
            if not blockers & loose:
                superseded.add((id(made), name))
                read(reader, set(spread))  # unreduce(c, a): a uniform term for a
        return readers, superseded


def _generated_from(body: list[gast.stmt], loops: tuple):
    """The statements the sweep generates code for, in program order, with the loops
    around them: a ``for`` that stops on flags without its guards
    (normalize/jumps.unguarded)."""
    for stmt in body:
        yield stmt, loops
        if isinstance(stmt, gast.If):
            yield from _generated_from(stmt.body, loops)
            yield from _generated_from(stmt.orelse, loops)
        elif isinstance(stmt, gast.For):
            yield from _generated_from(unguarded(stmt) or stmt.body, (*loops, stmt))
        elif isinstance(stmt, gast.While):
            yield from _generated_from(stmt.body, (*loops, stmt))


def _undone_for_reads(loop: gast.For, ctx) -> set[str]:
    """What the backward loop's header reads: the range, or for a loop that stops on
    flags, its count of turns with the range's start and step."""
    if not unguarded(loop):
        return operand_names(loop.iter)
    counter = _counter(loop)
    iterator = loop.iter
    if (
        isinstance(iterator, gast.Call)
        and not iterator.keywords
        and ctx.source.resolve(iterator.func, ctx.local) is range
    ):
        args = iterator.args
        return counter.union(*(operand_names(a) for a in args[:1] + args[2:] if len(args) > 1))
    return counter | operand_names(iterator)


def _counter(loop: gast.stmt) -> set[str]:
    counter = getanno(loop, "counter")
    return {counter} if counter else set()
