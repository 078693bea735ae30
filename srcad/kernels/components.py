"""Forward-mode code with one tangent per differentiated input, written out component by
component: every tangent variable ``t`` becomes ``t__0, t__1, ...`` (its derivatives with
respect to each input), the seeds become the constants 1 and 0, and terms that are zero
are dropped. Both the vectorized NumPy form and the CUDA kernel start from this."""

from __future__ import annotations

import ast
import copy

_ZERO = "zero_tangent"
_PASSTHROUGH = ("broadcast_like", "same_tangent")


def _is_const(node: ast.expr, value: float) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and node.value is not True


def _zero() -> ast.Constant:
    return ast.Constant(0.0)


class _Component(ast.NodeTransformer):
    """One component of a tangent expression, simplified where a factor is 0 or 1."""

    def __init__(self, tangents: set[str], k: int, seeds: dict[str, int], zeros: set[str]):
        self.tangents = tangents
        self.k = k
        self.seeds = seeds
        self.zeros = zeros

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.seeds:
            return ast.Constant(1.0 if self.seeds[node.id] == self.k else 0.0)
        if node.id in self.tangents:
            name = f"{node.id}__{self.k}"
            return _zero() if name in self.zeros else ast.Name(name, ast.Load())
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        func = getattr(node.func, "id", None)
        if func == _ZERO:
            return _zero()
        self.generic_visit(node)
        if func in _PASSTHROUGH:
            return node.args[0]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, (ast.USub, ast.UAdd)) and _is_const(node.operand, 0.0):
            return _zero()
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        left, right, op = node.left, node.right, node.op
        if isinstance(op, ast.Mult):
            if _is_const(left, 0.0) or _is_const(right, 0.0):
                return _zero()
            if _is_const(left, 1.0):
                return right
            if _is_const(right, 1.0):
                return left
        if isinstance(op, ast.Div):
            if _is_const(left, 0.0):
                return _zero()
            if _is_const(right, 1.0):
                return left
        if isinstance(op, ast.Add):
            if _is_const(left, 0.0):
                return right
            if _is_const(right, 0.0):
                return left
        if isinstance(op, ast.Sub):
            if _is_const(right, 0.0):
                return left
            if _is_const(left, 0.0):
                return ast.UnaryOp(ast.USub(), right)
        return node


def tangent_names(body: list[ast.stmt], seeds: list[str]) -> set[str]:
    """Names holding tangents: the seeds and whatever is computed from them."""
    tangents = set(seeds)
    changed = True
    while changed:
        changed = False
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
                zero = (
                    isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == _ZERO
                )
                if target not in tangents and (reads & tangents or zero):
                    tangents.add(target)
                    changed = True
    return tangents


class _Expand:
    def __init__(self, tangents: set[str], seeds: dict[str, int], count: int) -> None:
        self.tangents = tangents
        self.seeds = seeds
        self.count = count

    def block(self, stmts: list[ast.stmt], zeros: set[str]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                target = stmt.targets[0].id
                if target not in self.tangents:
                    out.append(stmt)
                    continue
                for k in range(self.count):
                    value = _Component(self.tangents, k, self.seeds, zeros).visit(
                        copy.deepcopy(stmt.value)
                    )
                    name = f"{target}__{k}"
                    if _is_const(value, 0.0):
                        zeros.add(name)
                    else:
                        zeros.discard(name)
                    out.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=value))
            elif isinstance(stmt, ast.If):
                yes, no = set(zeros), set(zeros)
                stmt.body = self.block(stmt.body, yes) or [ast.Pass()]
                stmt.orelse = self.block(stmt.orelse, no)
                zeros.intersection_update(yes & no)
                out.append(stmt)
            elif isinstance(stmt, ast.For):
                assigned = {
                    f"{n.id}__{k}"
                    for n in ast.walk(stmt)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                    for k in range(self.count)
                }
                zeros.difference_update(assigned)  # a later turn may make them nonzero
                stmt.body = self.block(stmt.body, set(zeros))
                zeros.difference_update(assigned)
                out.append(stmt)
            else:
                out.append(stmt)
        return out


def expand(jvp: ast.FunctionDef, count: int) -> ast.FunctionDef:
    """``jvp`` (forward-mode code whose last ``count`` parameters are tangents) as a
    function of the primals returning ``(value, (partial_0, ..., partial_count-1))``."""
    jvp = copy.deepcopy(jvp)
    params = [a.arg for a in jvp.args.args]
    primals, seeds = params[: len(params) - count], params[len(params) - count :]
    # (``s = x; s += y`` checks that x holds a number: here each element is one)
    body = [
        stmt
        for stmt in jvp.body
        if not (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and getattr(stmt.value.func, "id", "") == "number_argument"
        )
    ]
    ret = body.pop()
    value, tangent = ret.value.elts
    for stmt in body:
        # the namespace of the primals and tangents is the primals' namespace
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if getattr(stmt.value.func, "id", "") in ("array_namespace", "math_namespace"):
                stmt.value.args = [a for a in stmt.value.args if getattr(a, "id", "") not in seeds]
    tangents = tangent_names(body, seeds)
    # a seed the code assigns again (the tangent of a parameter assigned in a branch or a
    # loop, ``dy = dy + dx``) is the constant 1 or 0 only until then: a variable from the
    # start, holding them
    stored = {
        n.id
        for n in ast.walk(ast.Module(body, []))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    constant = {s: k for k, s in enumerate(seeds) if s not in stored}
    start = [
        ast.Assign(targets=[ast.Name(f"{s}__{k}", ast.Store())], value=ast.Constant(float(j == k)))
        for j, s in enumerate(seeds)
        if s in stored
        for k in range(count)
    ]
    expander = _Expand(tangents, constant, count)
    zeros: set[str] = set()
    new_body = start + expander.block(body, zeros)
    partials = [
        _Component(tangents, k, expander.seeds, zeros).visit(copy.deepcopy(tangent))
        for k in range(count)
    ]
    jvp.args.args = [a for a in jvp.args.args if a.arg in primals]
    jvp.body = [
        *new_body,
        ast.Return(ast.Tuple([value, ast.Tuple(partials, ast.Load())], ast.Load())),
    ]
    return ast.fix_missing_locations(jvp)
