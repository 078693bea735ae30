"""Rules for the helpers that generated derivative code calls, so that a derivative can be
differentiated again (grad of grad, jvp of grad, grad of jvp).

Most helpers are linear in their first argument (a gradient or tangent) and read their
other arguments only for shapes; those others get no derivative (``static=...``).
"""

from srcad.adjoints.registry import adjoint, d, nondifferentiable, tangent
from srcad.runtime import accumulate, inplace, tangents
from srcad.runtime.accumulate import (
    grad_matmul_lhs,
    grad_matmul_rhs,
    keep_reduced,
    unbroadcast,
    unreduce,
)
from srcad.runtime.backend import array_namespace, math_namespace
from srcad.runtime.higher import reduce_like, reshape_like, spread_like, unreduce_like
from srcad.runtime.inplace import zeroed
from srcad.runtime.tangents import broadcast_like

nondifferentiable(
    array_namespace,
    math_namespace,
    accumulate.zeros_like,
    accumulate.count,
    accumulate.extremum_share,
    tangents.zero_tangent,
)

# ---- undoing broadcasting and reductions ----


@adjoint(unbroadcast, static=("x",))
def unbroadcast_adjoint(y, g, x):
    d[g] = spread_like(d[y], g)


@tangent(unbroadcast, static=("x",))
def unbroadcast_tangent(y, g, x):
    d[y] = unbroadcast(d[g], x)


@adjoint(broadcast_like, static=("y",))
def broadcast_like_adjoint(r, t, y):
    d[t] = unbroadcast(d[r], t)


@tangent(broadcast_like, static=("y",))
def broadcast_like_tangent(r, t, y):
    d[r] = broadcast_like(d[t], y)


@adjoint(unreduce, static=("x",))
def unreduce_adjoint(y, g, x, axis=None, keepdims=False):
    d[g] = reduce_like(d[y], g, axis, keepdims)


@tangent(unreduce, static=("x",))
def unreduce_tangent(y, g, x, axis=None, keepdims=False):
    d[y] = unreduce(d[g], x, axis, keepdims)


@adjoint(keep_reduced, static=("x",))
def keep_reduced_adjoint(r, y, x, axis=None, keepdims=False):
    d[y] = reshape_like(d[r], y)


@tangent(keep_reduced, static=("x",))
def keep_reduced_tangent(r, y, x, axis=None, keepdims=False):
    d[r] = keep_reduced(d[y], x, axis, keepdims)


# ---- products: the gradients of a @ b are bilinear in the incoming gradient ----


@adjoint(grad_matmul_lhs, static=("a",))
def grad_matmul_lhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(d[y] @ b, g)
    d[b] = grad_matmul_rhs(g, d[y], b)


@tangent(grad_matmul_lhs, static=("a",))
def grad_matmul_lhs_tangent(y, g, a, b):
    d[y] = grad_matmul_lhs(d[g], a, b)
    d[y] = grad_matmul_lhs(g, a, d[b])


@adjoint(grad_matmul_rhs, static=("b",))
def grad_matmul_rhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(a @ d[y], g)
    d[a] = grad_matmul_lhs(g, a, d[y])


@tangent(grad_matmul_rhs, static=("b",))
def grad_matmul_rhs_tangent(y, g, a, b):
    d[y] = grad_matmul_rhs(d[g], a, b)
    d[y] = grad_matmul_rhs(g, d[a], b)


# ---- copies ----


@adjoint(zeroed, static=("index",))
def zeroed_adjoint(y, g, index):
    d[g] = zeroed(d[y], index)


@tangent(zeroed, static=("index",))
def zeroed_tangent(y, g, index):
    d[y] = zeroed(d[g], index)


@adjoint(inplace.copied)
def copied_adjoint(y, x):
    d[x] = d[y]


@tangent(inplace.copied)
def copied_tangent(y, x):
    d[y] = inplace.copied(d[x])


# ---- the helpers of these rules, for third and higher derivatives ----


@adjoint(spread_like, static=("like",))
def spread_like_adjoint(y, g, like):
    d[g] = spread_like(d[y], g)


@tangent(spread_like, static=("like",))
def spread_like_tangent(y, g, like):
    d[y] = spread_like(d[g], like)


@adjoint(reshape_like, static=("like",))
def reshape_like_adjoint(y, g, like):
    d[g] = reshape_like(d[y], g)


@tangent(reshape_like, static=("like",))
def reshape_like_tangent(y, g, like):
    d[y] = reshape_like(d[g], like)


@adjoint(reduce_like, static=("like",))
def reduce_like_adjoint(y, g, like, axis=None, keepdims=False):
    d[g] = unreduce_like(d[y], g, axis, keepdims)


@tangent(reduce_like, static=("like",))
def reduce_like_tangent(y, g, like, axis=None, keepdims=False):
    d[y] = reduce_like(d[g], like, axis, keepdims)


@adjoint(unreduce_like, static=("x",))
def unreduce_like_adjoint(y, g, x, axis=None, keepdims=False):
    d[g] = reduce_like(d[y], g, axis, keepdims)


@tangent(unreduce_like, static=("x",))
def unreduce_like_tangent(y, g, x, axis=None, keepdims=False):
    d[y] = unreduce_like(d[g], x, axis, keepdims)
