"""A-normal form: every statement performs one operation on names and constants.

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.naming import Namer
>>> tree = gast.parse("def f(W, b, x):\\n    return np.tanh(x @ W + b)").body[0]
>>> print(to_source(anf(tree, Namer.for_tree(tree))), end="")
def f(W, b, x):
    _t1 = x @ W
    _t2 = _t1 + b
    f = np.tanh(_t2)
    return f
"""

from __future__ import annotations

import copy

import gast

from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import merged_names


def local_names(tree: gast.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns."""
    names = {a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
        elif isinstance(node, gast.FunctionDef) and node is not tree:
            names.add(node.name)
    return names


def is_static(expr: gast.expr, local: set[str]) -> bool:
    """An expression of constants and free names only, without calls: kept whole."""
    for node in gast.walk(expr):
        if isinstance(node, gast.Name) and node.id in local:
            return False
        if isinstance(node, (gast.Call, gast.Subscript, gast.Starred, gast.Lambda)):
            return False
        if not isinstance(
            node,
            (
                gast.Name,
                gast.Constant,
                gast.Attribute,
                gast.UnaryOp,
                gast.BinOp,
                gast.Tuple,
                gast.unaryop,
                gast.operator,
                gast.expr_context,
            ),
        ):
            return False
    return True


class _Flattener:
    def __init__(self, namer: Namer, local: set[str]) -> None:
        self.namer = namer
        self.local = local
        self.out: list[gast.stmt] = []
        self.origin: gast.stmt | None = None
        # views read twice in one statement (``x[i] * x[i]``) are computed once
        self.memo: dict[str, str] = {}
        # names assigned in a branch or loop, or updated in place: SSA leaves them alone
        self.merged: set[str] = set()
        #: the names of the in-place update helpers (setitem, scatter)
        self.setitem: tuple[str, ...] = ()

    def emit(self, stmt: gast.stmt, expr: gast.expr | None = None) -> None:
        setanno(stmt, "origin", self.origin)
        setanno(stmt, "expr", expr if expr is not None else getattr(stmt, "value", None))
        gast.copy_location(stmt, expr if expr is not None else self.origin)
        self.out.append(stmt)

    def atom(self, expr: gast.expr) -> gast.expr:
        if isinstance(expr, gast.Starred):  # ``*shape``: the star stays on its operand
            return gast.copy_location(gast.Starred(value=self.atom(expr.value), ctx=expr.ctx), expr)
        if isinstance(expr, (gast.Name, gast.Constant)) or is_static(expr, self.local):
            return expr
        if isinstance(expr, gast.IfExp):
            return build.load(self.conditional(expr))
        if isinstance(expr, gast.BoolOp) and not all(self.is_atom(v) for v in expr.values):
            return build.load(self.short_circuit(expr))
        value = self.op(expr)
        key = gast.dump(value) if isinstance(value, (gast.Subscript, gast.Attribute)) else None
        if key is not None and key in self.memo:
            return build.load(self.memo[key])
        name = self.namer.temp()
        self.emit(build.assign(name, value), expr)
        if key is not None:
            self.memo[key] = name
        return build.load(name)

    def is_atom(self, expr: gast.expr) -> bool:
        return isinstance(expr, (gast.Name, gast.Constant)) or is_static(expr, self.local)

    def nested(self, emit_into: list[gast.stmt], fill) -> None:
        """Run ``fill`` with statements going to ``emit_into`` instead of the current block."""
        saved, memo = self.out, self.memo
        self.out, self.memo = emit_into, dict(memo)
        try:
            fill()
        finally:
            self.out, self.memo = saved, memo

    def conditional(self, expr: gast.IfExp) -> str:
        """``a if c else b`` as an if statement assigning a fresh temporary."""
        test = self.atom(expr.test)
        name = self.namer.temp()
        body: list[gast.stmt] = []
        orelse: list[gast.stmt] = []
        self.nested(body, lambda: self.emit(build.assign(name, self.op(expr.body)), expr.body))
        self.nested(
            orelse, lambda: self.emit(build.assign(name, self.op(expr.orelse)), expr.orelse)
        )
        self.emit(gast.If(test=test, body=body, orelse=orelse), expr)
        return name

    def short_circuit(self, expr: gast.BoolOp) -> str:
        """``a and b`` / ``a or b`` as if statements, so ``b`` runs only when Python would."""
        name = self.namer.temp()
        first, *rest = expr.values
        self.emit(build.assign(name, self.op(first)), first)
        for value in rest:
            branch: list[gast.stmt] = []
            self.nested(branch, lambda v=value: self.emit(build.assign(name, self.op(v)), v))
            if isinstance(expr.op, gast.And):
                self.emit(gast.If(test=build.load(name), body=branch, orelse=[]), value)
            else:
                self.emit(gast.If(test=build.load(name), body=[], orelse=branch), value)
        return name

    def index(self, index: gast.expr) -> gast.expr:
        if isinstance(index, gast.Slice):
            return gast.Slice(
                lower=index.lower and self.atom(index.lower),
                upper=index.upper and self.atom(index.upper),
                step=index.step and self.atom(index.step),
            )
        if isinstance(index, gast.Tuple):
            return build.tuple_([self.index(e) for e in index.elts])
        if isinstance(index, gast.List):
            # ``x[[0, 0, 2]]`` keeps its list: a name for it would be a list the function
            # builds, which code differentiated again may not read as an index
            return self.arg(index)
        return self.atom(index)

    def op(self, expr: gast.expr) -> gast.expr:
        """``expr`` with its operands reduced to atoms (the operation itself stays)."""
        if isinstance(expr, gast.BinOp):
            return gast.copy_location(
                build.binop(self.atom(expr.left), expr.op, self.atom(expr.right)), expr
            )
        if isinstance(expr, gast.UnaryOp):
            if is_static(expr, self.local):
                return expr
            return gast.copy_location(
                gast.UnaryOp(op=expr.op, operand=self.atom(expr.operand)), expr
            )
        if isinstance(expr, gast.Compare):
            left = self.atom(expr.left)
            comparators = [self.atom(c) for c in expr.comparators]
            return gast.copy_location(
                gast.Compare(left=left, ops=expr.ops, comparators=comparators), expr
            )
        if isinstance(expr, gast.BoolOp):
            if not all(self.is_atom(v) for v in expr.values):
                return build.load(self.short_circuit(expr))
            return expr
        if isinstance(expr, gast.IfExp):
            return build.load(self.conditional(expr))
        if isinstance(expr, gast.Call):
            func = expr.func
            if isinstance(func, gast.Attribute) and not is_static(func, self.local):
                func = gast.Attribute(value=self.atom(func.value), attr=func.attr, ctx=func.ctx)
            elif not is_static(func, self.local):
                func = self.atom(func)
            args = [self.arg(a) for a in expr.args]
            keywords = [gast.keyword(arg=k.arg, value=self.arg(k.value)) for k in expr.keywords]
            return gast.copy_location(gast.Call(func=func, args=args, keywords=keywords), expr)
        if isinstance(expr, gast.Attribute):
            if is_static(expr, self.local):
                return expr
            return gast.copy_location(
                gast.Attribute(value=self.atom(expr.value), attr=expr.attr, ctx=expr.ctx), expr
            )
        if isinstance(expr, gast.Subscript):
            value = self.atom(expr.value)
            return gast.copy_location(
                gast.Subscript(value=value, slice=self.index(expr.slice), ctx=expr.ctx), expr
            )
        if isinstance(expr, (gast.Tuple, gast.List)):
            elts = [self.atom(e) for e in expr.elts]
            return gast.copy_location(type(expr)(elts=elts, ctx=gast.Load()), expr)
        return expr

    def arg(self, expr: gast.expr) -> gast.expr:
        if isinstance(expr, (gast.List, gast.Tuple)):
            elts = [self.arg(e) for e in expr.elts]
            return gast.copy_location(type(expr)(elts=elts, ctx=gast.Load()), expr)
        return self.atom(expr)

    def statement(self, stmt: gast.stmt, result_name: str) -> None:
        self.origin = getanno(stmt, "origin", stmt)
        self.memo = {}
        if isinstance(stmt, gast.Assign):
            value = stmt.value
            targets = stmt.targets
            first = targets[0]
            if isinstance(first, gast.Name):
                if isinstance(value, gast.Name) and value.id == first.id:
                    return  # ``x = x`` does nothing
                op = self.op(value)
                reads = {n.id for n in gast.walk(op) if isinstance(n, gast.Name)}
                in_place = (
                    isinstance(op, gast.Call)
                    and isinstance(op.func, gast.Name)
                    and op.func.id in self.setitem
                )
                if (
                    first.id in reads
                    and first.id in self.merged
                    and not isinstance(op, gast.Name)
                    and not in_place
                ):
                    # ``s = s + x`` becomes ``_t = s + x; s = _t``: an op never overwrites its
                    # own operand, so its adjoint can read both the operand and the result
                    temp = self.namer.temp()
                    self.emit(build.assign(temp, op), value)
                    op = build.load(temp)
                self.emit(build.assign(first.id, op), value)
            elif isinstance(first, (gast.Tuple, gast.List)) and isinstance(
                value, (gast.Tuple, gast.List)
            ):
                if len(first.elts) != len(value.elts):
                    raise ValueError("unpack length mismatch")
                temps = []
                for elt in value.elts:
                    temp = self.namer.temp()
                    self.emit(build.assign(temp, self.op(elt)), elt)
                    temps.append(temp)
                for target, temp in zip(first.elts, temps):
                    self.emit(build.assign(target.id, build.load(temp)), value)
            elif (
                isinstance(first, gast.Tuple)
                and isinstance(value, gast.Call)
                and all(isinstance(e, gast.Name) for e in first.elts)
            ):
                # ``a, b = f(x)``: one call with several results, kept together
                if {e.id for e in first.elts} & _reads(value):
                    # ``a, x = f(x)``: into fresh names first, as ``s = s + x`` above
                    temps = [self.namer.temp() for _ in first.elts]
                    targets_ = build.tuple_([build.store(t) for t in temps], gast.Store())
                    self.emit(build.assign(targets_, self.op(value)), value)
                    for target, temp in zip(first.elts, temps):
                        self.emit(build.assign(target.id, build.load(temp)), value)
                else:
                    self.emit(build.assign(first, self.op(value)), value)
            else:
                self.emit(build.assign(first, self.atom(value)), value)
            for other in targets[1:]:
                source = first if isinstance(first, gast.Name) else None
                if source is None:
                    raise ValueError("chained assignment to a tuple")
                self.emit(
                    build.assign(
                        other.id if isinstance(other, gast.Name) else other, build.load(source.id)
                    ),
                    value,
                )
        elif isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else build.const(None)
            if isinstance(value, gast.Name):
                self.emit(build.ret(value), value)
            else:
                self.emit(build.assign(result_name, self.op(value)), value)
                self.emit(build.ret(build.load(result_name)), value)
        elif isinstance(stmt, gast.Expr):
            self.emit(gast.Expr(value=self.op(stmt.value)), stmt.value)
        elif isinstance(stmt, gast.If):
            test = self.test(stmt.test)
            stmt.body = self.block(stmt.body, result_name)
            stmt.orelse = self.block(stmt.orelse, result_name)
            stmt.test = test
            self.emit(stmt, stmt.test)
        elif isinstance(stmt, gast.For):
            it = stmt.iter
            it.args = [self.atom(a) for a in it.args]
            assigned = {
                n.id
                for s in stmt.body
                for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
            }
            if any(isinstance(a, gast.Name) and a.id in assigned for a in it.args):
                # the body changes a bound: keep the range the loop started with
                name = self.namer.temp()
                self.emit(build.assign(name, it), it)
                stmt.iter = build.load(name)
            stmt.body = self.block(stmt.body, result_name)
            self.emit(stmt, it)
        elif isinstance(stmt, gast.While):
            name = self.namer.temp()
            condition = stmt.test
            self.emit(build.assign(name, self.op(condition)), condition)
            body = self.block(stmt.body, result_name)
            again = copy.deepcopy(condition)
            self.nested(body, lambda: self.emit(build.assign(name, self.op(again)), again))
            self.origin = getanno(stmt, "origin", stmt)
            # the same node: its annotations (the flags it stops on) stay with it
            stmt.test, stmt.body, stmt.orelse = build.load(name), body, []
            self.emit(stmt, condition)
        else:
            self.emit(stmt)

    def test(self, expr: gast.expr) -> gast.Name:
        """A branch condition as a fresh name, so the branch cannot change it."""
        atom = self.atom(expr)
        if isinstance(atom, gast.Name) and atom.id in self.namer.generated:
            return atom
        name = self.namer.temp()
        self.emit(build.assign(name, atom), expr)
        return build.load(name)

    def block(self, body: list[gast.stmt], result_name: str) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        saved_origin = self.origin
        self.nested(out, lambda: [self.statement(s, result_name) for s in body])
        self.origin = saved_origin
        return out


def anf(tree: gast.FunctionDef, namer: Namer) -> gast.FunctionDef:
    """Rewrite ``tree``'s body into A-normal form (see module docstring)."""
    local = local_names(tree)
    flat = _Flattener(namer, local)
    flat.merged = merged_names(tree, getanno(tree, "inplace"))
    flat.setitem = getanno(tree, "setitem") or ()
    result_name = namer.fresh(tree.name)
    for stmt in tree.body:
        flat.statement(stmt, result_name)
    tree.body = flat.out
    return tree


def _reads(expr: gast.expr) -> set[str]:
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name)}
