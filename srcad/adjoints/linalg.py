"""Adjoints of products: dot, matmul (also ``@``), outer, inner, einsum."""

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, tangent, xp
from srcad.runtime.accumulate import (
    grad_dot_lhs,
    grad_dot_rhs,
    grad_einsum,
    grad_inner_lhs,
    grad_inner_rhs,
    grad_solve_lhs,
    grad_solve_rhs,
)
from srcad.runtime.tangents import einsum_replacing


@adjoint(np.dot, Method("dot"))
def dot(y, a, b):
    d[a] = grad_dot_lhs(d[y], a, b)
    d[b] = grad_dot_rhs(d[y], a, b)


@adjoint(np.outer)
def outer(y, a, b):
    d[a] = xp.reshape(d[y] @ xp.reshape(b, (-1,)), a.shape)
    d[b] = xp.reshape(xp.reshape(a, (-1,)) @ d[y], b.shape)


@adjoint(np.inner)
def inner(y, a, b):
    d[a] = grad_inner_lhs(d[y], a, b)
    d[b] = grad_inner_rhs(d[y], a, b)


@adjoint(np.einsum)
def einsum(y, subscripts, *operands):
    for i, x in enumerate(operands):
        d[x] = grad_einsum(subscripts, d[y], operands, i)


# ---- matrix functions (square, possibly stacked) ----


@adjoint(np.linalg.inv)
def inv(y, a):
    d[a] = -(xp.swapaxes(y, -1, -2) @ d[y] @ xp.swapaxes(y, -1, -2))


@adjoint(np.linalg.solve)
def solve(y, a, b):
    gb = grad_solve_rhs(d[y], a)
    d[a] = grad_solve_lhs(gb, y)
    d[b] = gb


@adjoint(np.linalg.det)
def det(y, a):
    d[a] = xp.expand_dims(xp.expand_dims(d[y] * y, -1), -1) * xp.swapaxes(xp.linalg.inv(a), -1, -2)


@adjoint(np.linalg.norm)
def norm(y, x):
    d[x] = d[y] * x / y


@adjoint(np.trace)
def trace(y, x):
    d[x] = d[y] * xp.eye(x.shape[0], x.shape[1], dtype=x.dtype)


# ---- tangents ----


@tangent(np.dot, Method("dot"))
def dot_tangent(y, a, b):
    d[y] = xp.dot(d[a], b)
    d[y] = xp.dot(a, d[b])


@tangent(np.outer)
def outer_tangent(y, a, b):
    d[y] = xp.outer(d[a], b)
    d[y] = xp.outer(a, d[b])


@tangent(np.inner)
def inner_tangent(y, a, b):
    d[y] = xp.inner(d[a], b)
    d[y] = xp.inner(a, d[b])


@tangent(np.einsum)
def einsum_tangent(y, subscripts, *operands):
    # product rule: one term per operand, that operand replaced by its tangent
    for i, x in enumerate(operands):
        d[y] = einsum_replacing(subscripts, operands, i, d[x])


@tangent(np.linalg.inv)
def inv_tangent(y, a):
    d[y] = -(y @ d[a] @ y)


@tangent(np.linalg.solve)
def solve_tangent(y, a, b):
    d[y] = xp.linalg.solve(a, d[b])
    d[y] = -xp.linalg.solve(a, d[a] @ y)


@tangent(np.linalg.det)
def det_tangent(y, a):
    # Jacobi's formula: d det(a) = det(a) * trace(inv(a) @ da)
    d[y] = y * xp.sum(xp.swapaxes(xp.linalg.inv(a), -1, -2) * d[a], axis=(-2, -1))


@tangent(np.linalg.norm)
def norm_tangent(y, x):
    d[y] = xp.sum(x * d[x]) / y


@tangent(np.trace)
def trace_tangent(y, x):
    d[y] = xp.trace(d[x])
