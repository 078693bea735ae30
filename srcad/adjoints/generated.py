"""Rules for the helpers that generated derivative code calls, so that a derivative can be
differentiated again (grad of grad, jvp of grad, grad of jvp).

Most helpers are linear in their first argument (a gradient or tangent) and read their
other arguments only for shapes; those others get no derivative (``static=...``).
"""

from srcad.adjoints.registry import adjoint, bilinear, d, linear, nondifferentiable, tangent, xp
from srcad.runtime import accumulate, inplace, tangents
from srcad.runtime.accumulate import (
    filled,
    grad_dot_lhs,
    grad_dot_rhs,
    grad_einsum,
    grad_inner_lhs,
    grad_inner_rhs,
    grad_matmul_lhs,
    grad_matmul_rhs,
    grad_solve_lhs,
    grad_solve_rhs,
    keep_reduced,
    prod_others,
    unbroadcast,
    unconcatenate,
    uncumsum,
    undiag,
    unpad,
    unreduce,
    unrepeat,
    unsort,
    unstack,
    untake,
    untile,
)
from srcad.runtime.backend import array_namespace, math_namespace
from srcad.runtime.einsums import (
    einsum_replaced,
    grad_einsum_general_replacing,
    grad_einsum_replaced,
)
from srcad.runtime.higher import (
    concatenated_part,
    einsum_replacing_two,
    grad_einsum_replacing,
    grouped,
    reconcatenate,
    reduce_like,
    rejoined,
    reshape_like,
    restack,
    resum,
    scattered_gradient,
    spread_like,
    stacked_part,
    ungrouped,
    unreduce_like,
)
from srcad.runtime.inplace import saved, surviving, zeroed
from srcad.runtime.lists import (
    add_gradients,
    drop_gradient,
    dropped_gradient,
    element_gradient,
    gradient_list,
    list_gradient,
    regrown_gradient,
    relisted_gradient,
    residual,
    scatter_element,
    static_list,
    unjoined,
    unsum,
)
from srcad.runtime.tangents import (
    broadcast_like,
    concatenated_piece,
    einsum_replacing,
    stacked_piece,
)

nondifferentiable(
    accumulate.joined_views,
    accumulate.joined_shape,
    accumulate.join_axis,
    array_namespace,
    math_namespace,
    accumulate.zeros_like,
    accumulate.seed_like,
    accumulate.count,
    accumulate.extremum_share,
    accumulate.initial_share,
    tangents.zero_tangent,
    # permutations of axes: integers computed from constants
    accumulate.inverse_axes,
    tangents.transpose_axes,
)

# ---- a safe divisor: the identity away from 0 (where it is used) ----


@adjoint(accumulate.unit_if_zero, shape_preserving=True)
def unit_if_zero_adjoint(r, v):
    d[v] = d[r]


@tangent(accumulate.unit_if_zero)
def unit_if_zero_tangent(r, v):
    d[r] = d[v]


# ---- undoing broadcasting and reductions ----


@linear(unbroadcast, static=("x",))
def unbroadcast_adjoint(y, g, x):
    d[g] = spread_like(d[y], g)


@linear(broadcast_like, static=("y",))
def broadcast_like_adjoint(r, t, y):
    d[t] = unbroadcast(d[r], t)


@linear(unreduce, static=("x", "axis", "keepdims", "where"))
def unreduce_adjoint(y, g, x, axis=None, keepdims=False, where=True):
    d[g] = reduce_like(d[y], g, axis, keepdims, where=where)


@linear(keep_reduced, static=("x", "axis", "keepdims"))
def keep_reduced_adjoint(r, y, x, axis=None, keepdims=False):
    d[y] = reshape_like(d[r], y)


# ---- products: the gradients of a @ b are bilinear in the incoming gradient ----


@bilinear(grad_matmul_lhs, static=("a",))
def grad_matmul_lhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(d[y] @ b, g)
    d[b] = grad_matmul_rhs(g, d[y], b)


@bilinear(grad_matmul_rhs, static=("b",))
def grad_matmul_rhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(a @ d[y], g)
    d[a] = grad_matmul_lhs(g, a, d[y])


# ---- copies ----


@linear(zeroed, static=("index",))
def zeroed_adjoint(y, g, index):
    d[g] = zeroed(d[y], index)


# keeping the writes that survive is a mask: its own adjoint
@linear(surviving, static=("index", "like"))
def surviving_adjoint(y, values, index, like):
    d[values] = surviving(d[y], index, like)


@adjoint(inplace.copied)
def copied_adjoint(y, x):
    d[x] = d[y]


@tangent(inplace.copied)
def copied_tangent(y, x):
    d[y] = inplace.copied(d[x])


# ---- the helpers of these rules, for third and higher derivatives ----


@linear(spread_like, static=("like",))
def spread_like_adjoint(y, g, like):
    d[g] = spread_like(d[y], g)


@linear(reshape_like, static=("like",))
def reshape_like_adjoint(y, g, like):
    d[g] = reshape_like(d[y], g)


@linear(reduce_like, static=("like", "axis", "keepdims", "where"))
def reduce_like_adjoint(y, g, like, axis=None, keepdims=False, where=True):
    d[g] = unreduce_like(d[y], g, axis, keepdims, where=where)


@linear(unreduce_like, static=("x", "axis", "keepdims", "where"))
def unreduce_like_adjoint(y, g, x, axis=None, keepdims=False, where=True):
    d[g] = reduce_like(d[y], g, axis, keepdims, where=where)


# a reduction's mask: the entries outside it are a constant


@adjoint(filled, static=("value", "where"), shape_preserving=True)
def filled_adjoint(y, x, value, where=True):
    d[x] = filled(d[y], 0, where=where)


@tangent(filled, static=("value", "where"))
def filled_tangent(y, x, value, where=True):
    d[y] = filled(d[x], 0, where=where)


# ---- more products; each gradient is linear in the incoming gradient and in the other
# operand, so it has one term per argument: <grad_dot_lhs(g, a, b), c> = <g, dot(c, b)> ----


@bilinear(grad_dot_lhs, static=("a",))
def grad_dot_lhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(xp.dot(d[y], b), g)
    d[b] = grad_dot_rhs(g, d[y], b)


@bilinear(grad_dot_rhs, static=("b",))
def grad_dot_rhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(xp.dot(a, d[y]), g)
    d[a] = grad_dot_lhs(g, a, d[y])


@bilinear(grad_inner_lhs, static=("a",))
def grad_inner_lhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(xp.inner(d[y], b), g)
    d[b] = grad_inner_rhs(g, d[y], b)


@bilinear(grad_inner_rhs, static=("b",))
def grad_inner_rhs_adjoint(y, g, a, b):
    d[g] = unbroadcast(xp.inner(a, d[y]), g)
    d[a] = grad_inner_lhs(g, a, d[y])


# einsum: grad_einsum(s, g, ops, i) is linear in g and in every operand but the i-th (read
# for its shape only); einsum_replacing(s, ops, i, t) in t and every operand but the i-th.
# <grad_einsum(s, g, ops, i), c> = <g, einsum_replacing(s, ops, i, c)>.


@adjoint(grad_einsum, static=("subscripts", "i"))
def grad_einsum_adjoint(y, subscripts, g, operands, i):
    d[g] = unbroadcast(einsum_replacing(subscripts, operands, i, d[y]), g)
    for j, x in enumerate(operands):
        d[x] = grad_einsum_replacing(subscripts, g, operands, j, i, d[y])


@tangent(grad_einsum, static=("subscripts", "i"))
def grad_einsum_tangent(y, subscripts, g, operands, i):
    d[y] = grad_einsum(subscripts, d[g], operands, i)
    for j, x in enumerate(operands):
        d[y] = grad_einsum_replacing(subscripts, g, operands, i, j, d[x])


@adjoint(einsum_replacing, static=("subscripts", "i"))
def einsum_replacing_adjoint(y, subscripts, operands, i, t):
    d[t] = grad_einsum(subscripts, d[y], operands, i)
    for j, x in enumerate(operands):
        d[x] = grad_einsum_replacing(subscripts, d[y], operands, j, i, t)


@tangent(einsum_replacing, static=("subscripts", "i"))
def einsum_replacing_tangent(y, subscripts, operands, i, t):
    d[y] = einsum_replacing(subscripts, operands, i, d[t])
    for j, x in enumerate(operands):
        d[y] = einsum_replacing_two(subscripts, operands, i, t, j, d[x])


# einsum's product-rule terms (srcad/runtime/einsums.py, "to any order"), each linear in
# the incoming gradient and in every array it reads as an operand (the others it reads for
# their shapes). With c the cotangent of y:
# <grad_einsum_replacing(s, g, ops, i, j, t), c> = <g, einsum of ops, j -> t and i -> c>.


@adjoint(grad_einsum_replacing, static=("subscripts", "i", "j"))
def grad_einsum_replacing_adjoint(y, subscripts, g, operands, i, j, t):
    d[g] = unbroadcast(einsum_replacing_two(subscripts, operands, i, d[y], j, t), g)
    d[t] = grad_einsum_replacing(subscripts, g, operands, j, i, d[y])
    for m, x in enumerate(operands):
        d[x] = grad_einsum_replaced(subscripts, g, m, (j, i), *operands, t, d[y])


@tangent(grad_einsum_replacing, static=("subscripts", "i", "j"))
def grad_einsum_replacing_tangent(y, subscripts, g, operands, i, j, t):
    d[y] = grad_einsum_replacing(subscripts, d[g], operands, i, j, t)
    d[y] = grad_einsum_replacing(subscripts, g, operands, i, j, d[t])
    for m, x in enumerate(operands):
        d[y] = grad_einsum_replaced(subscripts, g, i, (j, m), *operands, t, d[x])


# the same for einsum in any form (``...``, a diagonal, operands broadcast)
@adjoint(grad_einsum_general_replacing, static=("subscripts", "i", "j"))
def grad_einsum_general_replacing_adjoint(y, subscripts, g, operands, i, j, t):
    d[g] = unbroadcast(einsum_replacing_two(subscripts, operands, i, d[y], j, t), g)
    d[t] = grad_einsum_general_replacing(subscripts, g, operands, j, i, d[y])
    for m, x in enumerate(operands):
        d[x] = grad_einsum_replaced(subscripts, g, m, (j, i), *operands, t, d[y])


@tangent(grad_einsum_general_replacing, static=("subscripts", "i", "j"))
def grad_einsum_general_replacing_tangent(y, subscripts, g, operands, i, j, t):
    d[y] = grad_einsum_general_replacing(subscripts, d[g], operands, i, j, t)
    d[y] = grad_einsum_general_replacing(subscripts, g, operands, i, j, d[t])
    for m, x in enumerate(operands):
        d[y] = grad_einsum_replaced(subscripts, g, i, (j, m), *operands, t, d[x])


@adjoint(einsum_replacing_two, static=("subscripts", "i", "j"))
def einsum_replacing_two_adjoint(y, subscripts, operands, i, t, j, u):
    d[t] = grad_einsum_general_replacing(subscripts, d[y], operands, i, j, u)
    d[u] = grad_einsum_general_replacing(subscripts, d[y], operands, j, i, t)
    for m, x in enumerate(operands):
        d[x] = grad_einsum_replaced(subscripts, d[y], m, (i, j), *operands, t, u)


@tangent(einsum_replacing_two, static=("subscripts", "i", "j"))
def einsum_replacing_two_tangent(y, subscripts, operands, i, t, j, u):
    d[y] = einsum_replacing_two(subscripts, operands, i, d[t], j, u)
    d[y] = einsum_replacing_two(subscripts, operands, i, t, j, d[u])
    for m, x in enumerate(operands):
        d[y] = einsum_replaced(subscripts, (i, j, m), *operands, t, u, d[x])


# a derivative of these replaces one more operand: ``replaced + (k,)`` and one array more


@adjoint(einsum_replaced, static=("subscripts", "replaced"))
def einsum_replaced_adjoint(y, subscripts, replaced, *arrays):
    for k, x in enumerate(arrays):
        d[x] = grad_einsum_replaced(subscripts, d[y], k, replaced, *arrays)


@tangent(einsum_replaced, static=("subscripts", "replaced"))
def einsum_replaced_tangent(y, subscripts, replaced, *arrays):
    for k, x in enumerate(arrays):
        d[y] = einsum_replaced(subscripts, replaced + (k,), *arrays, d[x])


@adjoint(grad_einsum_replaced, static=("subscripts", "k", "replaced"))
def grad_einsum_replaced_adjoint(y, subscripts, g, k, replaced, *arrays):
    d[g] = unbroadcast(einsum_replaced(subscripts, replaced + (k,), *arrays, d[y]), g)
    for m, x in enumerate(arrays):
        d[x] = grad_einsum_replaced(subscripts, g, m, replaced + (k,), *arrays, d[y])


@tangent(grad_einsum_replaced, static=("subscripts", "k", "replaced"))
def grad_einsum_replaced_tangent(y, subscripts, g, k, replaced, *arrays):
    d[y] = grad_einsum_replaced(subscripts, d[g], k, replaced, *arrays)
    for m, x in enumerate(arrays):
        d[y] = grad_einsum_replaced(subscripts, g, k, replaced + (m,), *arrays, d[x])


# solve: y = grad_solve_rhs(g, a) solves a.T @ y = g, so dy = solve(a.T, dg - da.T @ y);
# grad_solve_lhs(gb, x) = -gb @ x.T is bilinear


@adjoint(grad_solve_rhs)
def grad_solve_rhs_adjoint(y, g, a):
    w = xp.linalg.solve(a, d[y])
    d[g] = w
    d[a] = grad_solve_lhs(y, w)


@tangent(grad_solve_rhs)
def grad_solve_rhs_tangent(y, g, a):
    d[y] = grad_solve_rhs(d[g], a)
    d[y] = -grad_solve_rhs(xp.swapaxes(d[a], -1, -2) @ y, a)


@adjoint(grad_solve_lhs)
def grad_solve_lhs_adjoint(y, gb, x):
    d[gb] = -(d[y] @ x)
    d[x] = -(xp.swapaxes(d[y], -1, -2) @ gb)


@tangent(grad_solve_lhs)
def grad_solve_lhs_tangent(y, gb, x):
    d[y] = grad_solve_lhs(d[gb], x)
    d[y] = grad_solve_lhs(gb, d[x])


# ---- gradients of shape ops: each linear in the gradient, and the adjoint of the op's own
# gradient is the op itself ----


@adjoint(undiag, static=("x",))
def undiag_adjoint(y, g, x, k=0):
    d[g] = xp.diag(d[y], k)


@tangent(undiag, static=("x",))
def undiag_tangent(y, g, x, k=0):
    d[y] = undiag(d[g], x, k)


@adjoint(uncumsum, static=("x", "axis"))
def uncumsum_adjoint(y, g, x, axis=None):
    d[g] = xp.cumsum(d[y], axis=axis)


@tangent(uncumsum, static=("x", "axis"))
def uncumsum_tangent(y, g, x, axis=None):
    d[y] = uncumsum(d[g], x, axis)


@adjoint(unsort, static=("x", "axis"))
def unsort_adjoint(y, g, x, axis=-1):
    d[g] = xp.take_along_axis(d[y], xp.argsort(x, axis=axis), axis=axis)


@tangent(unsort, static=("x", "axis"))
def unsort_tangent(y, g, x, axis=-1):
    d[y] = unsort(d[g], x, axis)


@adjoint(unrepeat, static=("x", "axis"))
def unrepeat_adjoint(y, g, x, repeats, axis=None):
    d[g] = xp.repeat(d[y], repeats, axis=axis)


@tangent(unrepeat, static=("x", "axis"))
def unrepeat_tangent(y, g, x, repeats, axis=None):
    d[y] = unrepeat(d[g], x, repeats, axis)


@adjoint(untile, static=("x",))
def untile_adjoint(y, g, x, reps):
    d[g] = xp.tile(d[y], reps)


@tangent(untile, static=("x",))
def untile_tangent(y, g, x, reps):
    d[y] = untile(d[g], x, reps)


@adjoint(unpad, static=("x", "mode"))
def unpad_adjoint(y, g, x, pad_width, mode="constant"):
    d[g] = xp.pad(d[y], pad_width, mode=mode)


@tangent(unpad, static=("x", "mode"))
def unpad_tangent(y, g, x, pad_width, mode="constant"):
    d[y] = unpad(d[g], x, pad_width, mode=mode)


@adjoint(untake, static=("x", "axis"))
def untake_adjoint(y, g, x, indices, axis=None):
    d[g] = xp.take(d[y], indices, axis=axis)


@tangent(untake, static=("x", "axis"))
def untake_tangent(y, g, x, indices, axis=None):
    d[y] = untake(d[g], x, indices, axis)


# joins: the gradient of a join is a list of pieces; the adjoint of splitting is joining


@adjoint(unconcatenate, static=("xs", "axis"))
def unconcatenate_adjoint(y, g, xs, axis=0):
    d[g] = reconcatenate(d[y], y, axis)


@tangent(unconcatenate, static=("xs", "axis"))
def unconcatenate_tangent(y, g, xs, axis=0):
    d[y] = unconcatenate(d[g], xs, axis)


@adjoint(reconcatenate, static=("pieces", "axis"))
def reconcatenate_adjoint(y, gs, pieces, axis=0):
    d[gs] = unconcatenate(d[y], pieces, axis)


@tangent(reconcatenate, static=("pieces", "axis"))
def reconcatenate_tangent(y, gs, pieces, axis=0):
    d[y] = reconcatenate(d[gs], pieces, axis)


@adjoint(unjoined, static=("xs", "how"))
def unjoined_adjoint(y, g, xs, how):
    d[g] = rejoined(d[y], y, how)


@tangent(unjoined, static=("xs", "how"))
def unjoined_tangent(y, g, xs, how):
    d[y] = unjoined(d[g], xs, how)


@adjoint(rejoined, static=("pieces", "how"))
def rejoined_adjoint(y, gs, pieces, how):
    d[gs] = unjoined(d[y], pieces, how)


@tangent(rejoined, static=("pieces", "how"))
def rejoined_tangent(y, gs, pieces, how):
    d[y] = rejoined(d[gs], pieces, how)


@adjoint(unstack)
def unstack_adjoint(y, g, axis=0):
    d[g] = restack(d[y], y, axis)


@tangent(unstack)
def unstack_tangent(y, g, axis=0):
    d[y] = unstack(d[g], axis)


# (the pieces' gradients may be one array, where generated code made them with zeros_like
# of the list and updated them by index: their gradient is then that array's form too)
@adjoint(restack, static=("pieces", "axis"))
def restack_adjoint(y, gs, pieces, axis=0):
    d[gs] = relisted_gradient(unstack(d[y], axis), gs)


@tangent(restack, static=("pieces", "axis"))
def restack_tangent(y, gs, pieces, axis=0):
    d[y] = restack(d[gs], pieces, axis)


@adjoint(concatenated_piece, static=("y", "arrays", "i", "axis"))
def concatenated_piece_adjoint(r, t, y, arrays, i, axis=0):
    d[t] = concatenated_part(d[r], t, arrays, i, axis)


@tangent(concatenated_piece, static=("y", "arrays", "i", "axis"))
def concatenated_piece_tangent(r, t, y, arrays, i, axis=0):
    d[r] = concatenated_piece(d[t], y, arrays, i, axis)


@adjoint(concatenated_part, static=("t", "arrays", "i", "axis"))
def concatenated_part_adjoint(r, g, t, arrays, i, axis=0):
    d[g] = concatenated_piece(d[r], g, arrays, i, axis)


@tangent(concatenated_part, static=("t", "arrays", "i", "axis"))
def concatenated_part_tangent(r, g, t, arrays, i, axis=0):
    d[r] = concatenated_part(d[g], t, arrays, i, axis)


@adjoint(stacked_piece, static=("y", "i", "axis"))
def stacked_piece_adjoint(r, t, y, i, axis=0):
    d[t] = stacked_part(d[r], t, i, axis)


@tangent(stacked_piece, static=("y", "i", "axis"))
def stacked_piece_tangent(r, t, y, i, axis=0):
    d[r] = stacked_piece(d[t], y, i, axis)


@adjoint(stacked_part, static=("t", "i", "axis"))
def stacked_part_adjoint(r, g, t, i, axis=0):
    d[g] = stacked_piece(d[r], g, i, axis)


@tangent(stacked_part, static=("t", "i", "axis"))
def stacked_part_tangent(r, g, t, i, axis=0):
    d[r] = stacked_part(d[g], t, i, axis)


# ---- the product of the others: prod_others(x)[i] = prod(x[k], k != i) over i's group, so
# its derivative along t is sum(t[j] * prod(x[k], k != i, j), j != i). Row i of ``rows`` is
# the group with x[i] replaced by 1; prod_others of that row is prod(x[k], k != i, j) at
# each j != i. The matrix is symmetric, so the adjoint is the same map. Written with ops
# that have rules (prod_others among them), so it differentiates to any order. ----


# With a mask, the entries outside it are 1 and do not vary.


@tangent(prod_others, static=("axis", "where"))
def prod_others_tangent(y, x, axis=None, *, where=True):
    xg = grouped(filled(x, 1, where=where), axis)
    eye = xp.eye(xg.shape[-1], dtype=xg.dtype)
    rows = prod_others(xp.where(eye > 0, 1.0, xp.expand_dims(xg, -2)), -1)
    d[y] = ungrouped(
        xp.sum(
            rows * (1.0 - eye) * xp.expand_dims(grouped(filled(d[x], 0, where=where), axis), -2),
            axis=-1,
        ),
        x,
        axis,
    )


@adjoint(prod_others, static=("axis", "where"))
def prod_others_adjoint(y, x, axis=None, *, where=True):
    xg = grouped(filled(x, 1, where=where), axis)
    eye = xp.eye(xg.shape[-1], dtype=xg.dtype)
    rows = prod_others(xp.where(eye > 0, 1.0, xp.expand_dims(xg, -2)), -1)
    g = ungrouped(
        xp.sum(rows * (1.0 - eye) * xp.expand_dims(grouped(d[y], axis), -2), axis=-1), x, axis
    )
    d[x] = filled(g, 0, where=where)


@adjoint(grouped)
def grouped_adjoint(y, x, axis=None):
    d[x] = ungrouped(d[y], x, axis)


@tangent(grouped)
def grouped_tangent(y, x, axis=None):
    d[y] = grouped(d[x], axis)


@adjoint(ungrouped, static=("x", "axis"))
def ungrouped_adjoint(y, g, x, axis=None):
    d[g] = grouped(d[y], axis)


@tangent(ungrouped, static=("x", "axis"))
def ungrouped_tangent(y, g, x, axis=None):
    d[y] = ungrouped(d[g], x, axis)


# ---- saved values of in-place updates: a copy of a part, like reading it ----


@adjoint(saved, static=("index",))
def saved_adjoint(y, array, index):
    darray = xp.zeros_like(array)
    darray[index] = d[y]
    d[array] = darray


@tangent(saved, static=("index",))
def saved_tangent(y, array, index):
    d[y] = saved(d[array], index)


# ---- list gradients (a list of the elements' gradients, None where there is none) ----


# (the gradient of a list that generated code reads elements of may be accumulated with +)


@adjoint(element_gradient, static=("index", "like"))
def element_gradient_adjoint(y, grads, index, like):
    d[grads] = scattered_gradient(grads, index, d[y])


@tangent(element_gradient, static=("index", "like"))
def element_gradient_tangent(y, grads, index, like):
    d[y] = element_gradient(d[grads], index, like)


@adjoint(scatter_element, static=("items", "index"))
def scatter_element_adjoint(y, items, index, g):
    d[g] = element_gradient(d[y], index, g)


@tangent(scatter_element, static=("items", "index"))
def scatter_element_tangent(y, items, index, g):
    d[y] = scatter_element(items, index, d[g])


@adjoint(scattered_gradient, static=("items", "index"))
def scattered_gradient_adjoint(y, items, index, g):
    d[g] = element_gradient(d[y], index, g)


@tangent(scattered_gradient, static=("items", "index"))
def scattered_gradient_tangent(y, items, index, g):
    d[y] = scattered_gradient(items, index, d[g])


# (a list gradient handed on is made one that adds element by element: the reverse pass
# adds a second contribution with ``+``, which would join two plain lists)
@adjoint(add_gradients)
def add_gradients_adjoint(y, a, b):
    d[a] = gradient_list(d[y])
    d[b] = gradient_list(d[y])


@tangent(add_gradients)
def add_gradients_tangent(y, a, b):
    d[y] = add_gradients(d[a], d[b])


@adjoint(unsum, static=("items",))
def unsum_adjoint(y, g, items):
    d[g] = resum(d[y], g)


@tangent(unsum, static=("items",))
def unsum_tangent(y, g, items):
    d[y] = unsum(d[g], items)


@adjoint(resum, static=("g",))
def resum_adjoint(y, gs, g):
    d[gs] = unsum(d[y], gs)


@tangent(resum, static=("g",))
def resum_tangent(y, gs, g):
    d[y] = resum(d[gs], g)


# drop_gradient takes the last element off the list it is given; the tangent list is
# dropped alongside. Code differentiated again calls dropped_gradient instead, which leaves
# the list as it was (the reverse pass reads it again); its adjoint gives the element
# dropped no gradient.


@tangent(drop_gradient)
def drop_gradient_tangent(y, grads):
    d[y] = drop_gradient(d[grads])


@adjoint(dropped_gradient)
def dropped_gradient_adjoint(y, grads):
    d[grads] = regrown_gradient(d[y])


@tangent(dropped_gradient)
def dropped_gradient_tangent(y, grads):
    d[y] = dropped_gradient(d[grads])


@adjoint(regrown_gradient)
def regrown_gradient_adjoint(y, g):
    d[g] = dropped_gradient(d[y])


@tangent(regrown_gradient)
def regrown_gradient_tangent(y, g):
    d[y] = regrown_gradient(d[g])


@adjoint(gradient_list)
def gradient_list_adjoint(y, g):
    d[g] = gradient_list(d[y])


@tangent(gradient_list)
def gradient_list_tangent(y, g):
    d[y] = gradient_list(d[g])


# the gradient of tuple(items) (an array stacked along its first axis, or a list) as the
# list of the elements' gradients, and back


@adjoint(list_gradient, static=("items",))
def list_gradient_adjoint(y, g, items):
    d[g] = relisted_gradient(d[y], g)


@tangent(list_gradient, static=("items",))
def list_gradient_tangent(y, g, items):
    d[y] = list_gradient(d[g], items)


@adjoint(relisted_gradient, static=("g",))
def relisted_gradient_adjoint(y, gs, g):
    d[gs] = gradient_list(list_gradient(d[y], gs))


@tangent(relisted_gradient, static=("g",))
def relisted_gradient_tangent(y, gs, g):
    d[y] = relisted_gradient(d[gs], g)


@adjoint(residual, static=("index",))
def residual_adjoint(y, residuals, index):
    d[residuals] = scattered_gradient(residuals, index, d[y])


@tangent(residual, static=("index",))
def residual_tangent(y, residuals, index):
    d[y] = element_gradient(d[residuals], index, y)


# a list read by a helper for its length and shapes only (normalize/lists.py)
nondifferentiable(static_list)


@adjoint(accumulate.cast_gradient, static=("like", "other"))
def cast_gradient_adjoint(y, g, like, other):
    d[g] = accumulate.cast_gradient(d[y], g, other)


@tangent(accumulate.cast_gradient, static=("like", "other"))
def cast_gradient_tangent(y, g, like, other):
    d[y] = accumulate.cast_gradient(d[g], like, other)


@adjoint(accumulate.piece_of, static=("xs", "i", "axis"))
def piece_of_adjoint(y, g, xs, i, axis=0):
    d[g] = concatenated_piece(d[y], g, xs, i, axis)


@tangent(accumulate.piece_of, static=("xs", "i", "axis"))
def piece_of_tangent(y, g, xs, i, axis=0):
    d[y] = accumulate.piece_of(d[g], xs, i, axis)
