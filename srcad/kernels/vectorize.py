"""The vectorized NumPy form of a scalar function's forward-mode code: every element runs
the same straight-line code, and a branch on data runs only on the elements that take it
(the positions taking each side are found with ``nonzero``, the values those elements need
are gathered, and the results are merged back), computing the value and every partial
derivative in one pass."""

from __future__ import annotations

import ast
import copy
import itertools

from srcad.errors import UnsupportedConstructError

#: helpers of srcad/runtime/masks.py (and tangents.py) the vectorized code calls
HELPERS = (
    "flat_broadcast", "split", "count", "take", "merge", "finish", "finish_partials", "negated",
    "smaller", "larger", "elementwise_math",
)  # fmt: skip


class _Elementwise(ast.NodeTransformer):
    """``not x`` on one element becomes ``negated(x)`` on all of them, Python's ``min`` and
    ``max`` of two numbers ``smaller``/``larger``, and ``float(x)`` ``x`` (the arrays hold
    floats)."""

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("negated", node.operand), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        # ``a < x < b`` on one element: each pair, all of them holding (``&``)
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        operands = [node.left, *node.comparators]
        pairs = [
            ast.Compare(left=a, ops=[op], comparators=[b])
            for a, op, b in zip(operands, node.ops, operands[1:])
        ]
        chained = pairs[0]
        for pair in pairs[1:]:
            chained = ast.BinOp(left=chained, op=ast.BitAnd(), right=pair)
        return ast.copy_location(chained, node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        name = getattr(node.func, "id", None)
        if name == "float" and len(node.args) == 1 and not node.keywords:
            return node.args[0]
        if name in ("min", "max") and len(node.args) == 2 and not node.keywords:
            helper = "smaller" if name == "min" else "larger"
            return ast.copy_location(_call(helper, *node.args), node)
        return node


class _Names:
    """Fresh names that no name of the function uses."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.counter = itertools.count(1)

    def fresh(self, base: str) -> str:
        while True:
            name = f"{base}_{next(self.counter)}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def _names(stmts: list[ast.stmt], ctx: type) -> list[str]:
    """Names the statements store (``ast.Store``) or read (``ast.Load``), first use first."""
    names: list[str] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ctx) and node.id not in names:
                names.append(node.id)
    return names


def _stored(stmts: list[ast.stmt]) -> list[str]:
    return _names(stmts, ast.Store)


def _loaded(stmts: list[ast.stmt]) -> list[str]:
    return _names(stmts, ast.Load)


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            return ast.copy_location(ast.Name(self.names[node.id], node.ctx), node)
        return node


def _assign(target: str | ast.expr, value: ast.expr) -> ast.Assign:
    node = ast.Name(target, ast.Store()) if isinstance(target, str) else target
    return ast.Assign(targets=[node], value=value)


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(func, ast.Load()), args=list(args), keywords=[])


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


class _Vectorize:
    def __init__(self, names: _Names, filename: str) -> None:
        self.names = names
        self.filename = filename

    def block(
        self, stmts: list[ast.stmt], size: str, defined: set[str], live: set[str]
    ) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for k, stmt in enumerate(stmts):
            after = live | set(_loaded(stmts[k + 1 :]))
            if isinstance(stmt, ast.If):
                out.extend(self.branch(stmt, size, defined, after))
            elif isinstance(stmt, ast.For):
                # a loop's body may read what a later turn of it assigned
                stmt.body = self.block(stmt.body, size, defined, after | set(_loaded([stmt])))
                defined.update(_stored([stmt]))
                out.append(stmt)
            elif isinstance(stmt, ast.While):
                raise UnsupportedConstructError(
                    "an elementwise function cannot loop on data (while): each element "
                    "would need its own trip count",
                    filename=self.filename,
                )
            else:
                out.append(stmt)
                defined.update(_stored([stmt]))
        return out

    def branch(self, stmt: ast.If, size: str, defined: set[str], live: set[str]) -> list[ast.stmt]:
        yes, no = self.names.fresh("taken"), self.names.fresh("others")
        test = stmt.test
        out: list[ast.stmt] = [
            _assign(
                ast.Tuple([ast.Name(yes, ast.Store()), ast.Name(no, ast.Store())], ast.Store()),
                _call("split", test, _load(size)),
            )
        ]
        arms = [(yes, stmt.body), (no, stmt.orelse)]
        results: list[tuple[str, dict[str, str]]] = []
        for positions, body in arms:
            if not body or all(isinstance(s, ast.Pass) for s in body):
                results.append((positions, {}))
                continue
            count = self.names.fresh("count")
            out.append(_assign(count, _call("count", _load(positions))))
            assigned = _stored(body)
            loaded = [n for n in _loaded(body) if n in defined]
            # a name the arm may assign that had a value before: a branch nested in the arm
            # keeps that value where it does not assign (gathers nothing reads are dropped)
            nested = set(_stored([s for s in body if isinstance(s, (ast.If, ast.For))]))
            carried = [n for n in assigned if n in defined and n in nested]
            local = {n: self.names.fresh(n) for n in assigned}
            for name in dict.fromkeys(loaded + carried):
                if name not in local:
                    local[name] = self.names.fresh(name)
                out.append(_assign(local[name], _call("take", _load(name), _load(positions))))
            renamed = [_Rename(local).visit(s) for s in body]
            inner_defined = {local.get(n, n) for n in defined}
            inner_live = {local.get(n, n) for n in live}
            out.extend(self.block(renamed, count, inner_defined, inner_live))
            results.append((positions, {n: local[n] for n in assigned}))
        merged: list[str] = []
        for _, assigned in results:
            merged.extend(n for n in assigned if n not in merged)
        for name in merged:
            if name not in live:
                continue
            parts: list[ast.expr] = []
            for positions, assigned in results:
                if name in assigned:
                    parts += [_load(positions), _load(assigned[name])]
                elif name in defined:
                    parts += [_load(positions), _call("take", _load(name), _load(positions))]
            out.append(_assign(name, _call("merge", _load(size), *parts)))
            defined.add(name)
        return out


def vectorize(expanded: ast.FunctionDef, name: str, filename: str) -> ast.FunctionDef:
    """The vectorized form of ``expanded`` (forward-mode code written out component by
    component, see components.py): it takes the arguments (arrays, broadcast together)
    and returns ``(value, partials)``, the partials stacked on a leading axis."""
    primals = [a.arg for a in expanded.args.args]
    names = _Names({n.id for n in ast.walk(expanded) if isinstance(n, ast.Name)} | set(primals))
    shape, size = names.fresh("shape"), names.fresh("size")
    flat = ast.Tuple([ast.Name(p, ast.Store()) for p in primals], ast.Store())
    prologue: list[ast.stmt] = [
        _assign(
            ast.Tuple([ast.Name(shape, ast.Store()), flat], ast.Store()),
            _call("flat_broadcast", *map(_load, primals)),
        ),
        _assign(
            size,
            ast.Subscript(
                value=ast.Attribute(_load(primals[0]), "shape", ast.Load()),
                slice=ast.Constant(0),
                ctx=ast.Load(),
            ),
        ),
    ]
    body = list(copy.deepcopy(expanded.body))
    ret = body.pop()
    value, partials = ret.value.elts
    for stmt in body:
        # math.f on one element becomes the arrays' f on all of them
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if getattr(stmt.value.func, "id", None) == "math_namespace":
                stmt.value.func = ast.Name("elementwise_math", ast.Load())
    body = [_Elementwise().visit(s) for s in body]
    returned = set(_loaded([ast.Expr(ret.value)]))
    new_body = _Vectorize(names, filename).block(body, size, set(primals), returned)
    result = ast.Tuple(
        [
            _call("finish", value, _load(shape)),
            _call("finish_partials", _load(shape), *partials.elts),
        ],
        ast.Load(),
    )
    fdef = ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p) for p in primals],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=[*prologue, *new_body, ast.Return(result)],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    composed: dict[tuple[str, str], str] = {}
    _flatten_takes(fdef, names, composed)
    _flatten_merges(fdef, names, composed)
    _drop_dead(fdef)
    return ast.fix_missing_locations(fdef)


def _is_merge(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and getattr(stmt.value.func, "id", None) == "merge"
    )


def _counts(fdef: ast.FunctionDef) -> tuple[dict[str, int], dict[str, int]]:
    """How often each name is read, and how often bound."""
    reads: dict[str, int] = {}
    stores: dict[str, int] = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name):
            counts = reads if isinstance(node.ctx, ast.Load) else stores
            counts[node.id] = counts.get(node.id, 0) + 1
    return reads, stores


def _is_take(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "take"


def _flatten_takes(
    fdef: ast.FunctionDef, names: _Names, composed: dict[tuple[str, str], str]
) -> None:
    """``b = take(a, p); c = take(b, q)`` with ``b`` read by nothing but takes, and bound
    nowhere else, becomes ``c = take(a, take(p, q))``: a value is gathered once, straight
    from where it is. (``b`` bound again, a parameter merged back after a branch changed it,
    is no longer ``a``'s gather: composing through it read the old values, silently wrong
    until stop 31.)"""
    gathered: dict[str, tuple[str, str]] = {}  # b -> (a, p) for b = take(a, p)
    reads, stores = _counts(fdef)
    in_takes: dict[str, int] = {}
    for node in ast.walk(fdef):
        if _is_take(node) and isinstance(node.args[0], ast.Name):
            in_takes[node.args[0].id] = in_takes.get(node.args[0].id, 0) + 1

    def rewrite(stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(stmt, field, rewrite(inner))
            if (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.targets[0], ast.Name)
                and _is_take(stmt.value)
                and all(isinstance(a, ast.Name) for a in stmt.value.args)
            ):
                source, where = (a.id for a in stmt.value.args)
                if source in gathered and reads.get(source) == in_takes.get(source):
                    origin, first = gathered[source]
                    key = (first, where)
                    if key not in composed:
                        composed[key] = names.fresh("positions")
                        out.append(
                            _assign(composed[key], _call("take", _load(first), _load(where)))
                        )
                    stmt.value = _call("take", _load(origin), _load(composed[key]))
                    source, where = origin, composed[key]
                if stores.get(stmt.targets[0].id) == 1:
                    gathered[stmt.targets[0].id] = (source, where)
            out.append(stmt)
        return out

    fdef.body = rewrite(fdef.body)


def _flatten_merges(
    fdef: ast.FunctionDef, names: _Names, composed: dict[tuple[str, str], str]
) -> None:
    """A merge whose result only feeds the next merge out writes into it directly: its
    positions are composed with the outer ones (``take(outer, inner)``), so the value is
    scattered once instead of once per level."""
    body = fdef.body
    dead: set[int] = set()  # the merges folded into an outer one (not other `x = None`)
    while True:
        uses, stores = _counts(fdef)
        # (a name bound once: one bound again is not that merge's value everywhere)
        merges = {s.targets[0].id: s for s in body if _is_merge(s)}
        merges = {n: m for n, m in merges.items() if stores.get(n) == 1}
        changed = False
        out: list[ast.stmt] = []
        for stmt in body:
            if not _is_merge(stmt):
                out.append(stmt)
                continue
            args = stmt.value.args
            parts = [args[0]]
            for where, value in zip(args[1::2], args[2::2]):
                inner = merges.get(getattr(value, "id", None))
                if inner is None or uses.get(value.id) != 1 or not isinstance(where, ast.Name):
                    parts += [where, value]
                    continue
                inner_args = inner.value.args
                for inner_where, inner_value in zip(inner_args[1::2], inner_args[2::2]):
                    key = (where.id, inner_where.id)
                    if key not in composed:
                        composed[key] = names.fresh("positions")
                        out.append(_assign(composed[key], _call("take", where, inner_where)))
                    parts += [_load(composed[key]), inner_value]
                dead.add(id(inner))
                changed = True
            stmt.value.args = parts
            out.append(stmt)
        # (a `_result = None` the early return starts from is read by a merge: it stays)
        body[:] = [s for s in out if id(s) not in dead]
        if not changed:
            return


def _drop_dead(fdef: ast.FunctionDef) -> None:
    """Remove assignments of constants, names, sizes and gathers that nothing reads."""
    while True:
        loaded = set(_loaded(fdef.body))
        removed = False

        def keep(stmt: ast.stmt, loaded: set[str] = loaded) -> bool:
            nonlocal removed
            if (
                isinstance(stmt, ast.Assign)
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id not in loaded
                and (
                    isinstance(stmt.value, (ast.Constant, ast.Name, ast.Subscript))
                    or _is_take(stmt.value)
                    or (
                        isinstance(stmt.value, ast.Call)
                        and _loaded([ast.Expr(stmt.value.func)]) == ["count"]
                    )
                )
            ):
                removed = True
                return False
            return True

        for node in ast.walk(fdef):
            for field in ("body", "orelse"):
                stmts = getattr(node, field, None)
                if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                    setattr(node, field, [s for s in stmts if keep(s)] or [ast.Pass()])
        if not removed:
            return
