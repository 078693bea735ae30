"""Adjoints of products (dot, matmul/``@``, outer, inner, einsum, tensordot, kron, cross) and
matrix functions (inv, solve, det, cholesky, pinv, norm, trace, diagonal)."""

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, tangent, xp
from srcad.runtime.accumulate import (
    grad_dot_lhs,
    grad_dot_rhs,
    grad_einsum,
    grad_inner_lhs,
    grad_inner_rhs,
    grad_kron_lhs,
    grad_kron_rhs,
    grad_solve_lhs,
    grad_solve_rhs,
    grad_tensordot_lhs,
    grad_tensordot_rhs,
    keep_reduced,
    unbroadcast,
    undiagonal,
    unit_if_zero,
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


@adjoint(np.tensordot)
def tensordot(y, a, b, axes=2):
    d[a] = grad_tensordot_lhs(d[y], a, b, axes)
    d[b] = grad_tensordot_rhs(d[y], a, b, axes)


# the gradients of tensordot are bilinear in (g, the other operand): each is the other's
# transpose, so their rules are tensordot and the gradients again


@adjoint(grad_tensordot_lhs, static=("a",))
def grad_tensordot_lhs_adjoint(r, g, a, b, axes=2):
    d[g] = xp.tensordot(d[r], b, axes)
    d[b] = grad_tensordot_rhs(g, d[r], b, axes)


@adjoint(grad_tensordot_rhs, static=("b",))
def grad_tensordot_rhs_adjoint(r, g, a, b, axes=2):
    d[g] = xp.tensordot(a, d[r], axes)
    d[a] = grad_tensordot_lhs(g, a, d[r], axes)


@adjoint(np.kron)
def kron(y, a, b):
    d[a] = grad_kron_lhs(d[y], a, b)
    d[b] = grad_kron_rhs(d[y], a, b)


@adjoint(grad_kron_lhs, static=("a",))
def grad_kron_lhs_adjoint(r, g, a, b):
    d[g] = xp.kron(d[r], b)
    d[b] = grad_kron_rhs(g, d[r], b)


@adjoint(grad_kron_rhs, static=("b",))
def grad_kron_rhs_adjoint(r, g, a, b):
    d[g] = xp.kron(a, d[r])
    d[a] = grad_kron_lhs(g, a, d[r])


@adjoint(np.cross)
def cross(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # g . (a x b) = a . (b x g) = b . (g x a); the vector axes go where each operand had them
    d[a] = unbroadcast(xp.cross(b, d[y], axisb, axisc, axisa, axis), a)
    d[b] = unbroadcast(xp.cross(d[y], a, axisc, axisa, axisb, axis), b)


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
def norm(y, x, *, axis=None, keepdims=False):
    # the 2-norm of vectors or Frobenius norm of matrices along axis; another ord (a
    # positional second argument included) does not fit this signature: a clear error
    # a zero norm has x == 0 along the axis: the subgradient 0 there
    d[x] = keep_reduced(d[y] / unit_if_zero(y), x, axis, keepdims) * x


@adjoint(np.trace)
def trace(y, x):
    d[x] = d[y] * xp.eye(x.shape[0], x.shape[1], dtype=x.dtype)


@adjoint(np.diagonal, Method("diagonal"))
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    d[a] = undiagonal(d[y], a, offset, axis1, axis2)


@adjoint(undiagonal, static=("x",))
def undiagonal_adjoint(r, g, x, offset=0, axis1=0, axis2=1):
    d[g] = xp.diagonal(d[r], offset, axis1, axis2)


@adjoint(np.linalg.cholesky)
def cholesky(y, a):
    # Murray (2016), "Differentiation of the Cholesky decomposition": with
    # phi = tril(L^T dL) with its diagonal halved, the gradient for a symmetric A is
    # sym(L^-T phi L^-1). NumPy reads only A's lower triangle, so each entry below the
    # diagonal stands for both symmetric entries and gets both halves.
    lt = xp.swapaxes(y, -1, -2)
    m = lt @ d[y]
    phi = xp.tril(m) - 0.5 * m * xp.eye(y.shape[-1], dtype=y.dtype)
    s = xp.swapaxes(xp.linalg.solve(lt, xp.swapaxes(xp.linalg.solve(lt, phi), -1, -2)), -1, -2)
    d[a] = xp.tril(s + xp.swapaxes(s, -1, -2)) - s * xp.eye(y.shape[-1], dtype=y.dtype)


@adjoint(np.linalg.pinv)
def pinv(y, a, rcond=None, *, rtol=None):
    # Golub & Pereyra (1973): valid where the rank of a does not change nearby (e.g. full
    # rank); at a rank change the pseudo-inverse is not continuous
    yt = xp.swapaxes(y, -1, -2)
    gt = xp.swapaxes(d[y], -1, -2)
    left = xp.eye(a.shape[-2], dtype=y.dtype) - a @ y
    right = xp.eye(a.shape[-1], dtype=y.dtype) - y @ a
    d[a] = left @ gt @ y @ yt + yt @ y @ gt @ right - yt @ d[y] @ yt


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


@tangent(np.tensordot)
def tensordot_tangent(y, a, b, axes=2):
    d[y] = xp.tensordot(d[a], b, axes)
    d[y] = xp.tensordot(a, d[b], axes)


@tangent(grad_tensordot_lhs, static=("a",))
def grad_tensordot_lhs_tangent(r, g, a, b, axes=2):
    d[r] = grad_tensordot_lhs(d[g], a, b, axes)
    d[r] = grad_tensordot_lhs(g, a, d[b], axes)


@tangent(grad_tensordot_rhs, static=("b",))
def grad_tensordot_rhs_tangent(r, g, a, b, axes=2):
    d[r] = grad_tensordot_rhs(d[g], a, b, axes)
    d[r] = grad_tensordot_rhs(g, d[a], b, axes)


@tangent(np.kron)
def kron_tangent(y, a, b):
    d[y] = xp.kron(d[a], b)
    d[y] = xp.kron(a, d[b])


@tangent(grad_kron_lhs, static=("a",))
def grad_kron_lhs_tangent(r, g, a, b):
    d[r] = grad_kron_lhs(d[g], a, b)
    d[r] = grad_kron_lhs(g, a, d[b])


@tangent(grad_kron_rhs, static=("b",))
def grad_kron_rhs_tangent(r, g, a, b):
    d[r] = grad_kron_rhs(d[g], a, b)
    d[r] = grad_kron_rhs(g, d[a], b)


@tangent(np.cross)
def cross_tangent(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[y] = xp.cross(d[a], b, axisa, axisb, axisc, axis)
    d[y] = xp.cross(a, d[b], axisa, axisb, axisc, axis)


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
def norm_tangent(y, x, *, axis=None, keepdims=False):
    d[y] = xp.sum(x * d[x], axis=axis, keepdims=keepdims) / unit_if_zero(y)


@tangent(np.trace)
def trace_tangent(y, x):
    d[y] = xp.trace(d[x])


@tangent(np.diagonal, Method("diagonal"))
def diagonal_tangent(y, a, offset=0, axis1=0, axis2=1):
    d[y] = xp.diagonal(d[a], offset, axis1, axis2)


@tangent(undiagonal, static=("x",))
def undiagonal_tangent(r, g, x, offset=0, axis1=0, axis2=1):
    d[r] = undiagonal(d[g], x, offset, axis1, axis2)


@tangent(np.linalg.cholesky)
def cholesky_tangent(y, a):
    # dL = L phi(L^-1 dA L^-T), dA symmetric from the lower triangle NumPy reads
    sym = xp.tril(d[a]) + xp.swapaxes(xp.tril(d[a], -1), -1, -2)
    m = xp.linalg.solve(y, xp.swapaxes(xp.linalg.solve(y, sym), -1, -2))
    d[y] = y @ (xp.tril(m) - 0.5 * m * xp.eye(y.shape[-1], dtype=y.dtype))


@tangent(np.linalg.pinv)
def pinv_tangent(y, a, rcond=None, *, rtol=None):
    yt = xp.swapaxes(y, -1, -2)
    left = xp.eye(a.shape[-2], dtype=y.dtype) - a @ y
    right = xp.eye(a.shape[-1], dtype=y.dtype) - y @ a
    d[y] = (
        y @ yt @ xp.swapaxes(d[a], -1, -2) @ left
        + right @ xp.swapaxes(d[a], -1, -2) @ yt @ y
        - y @ d[a] @ y
    )
