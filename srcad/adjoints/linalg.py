"""Adjoints of products (dot, vdot, matmul/``@``, outer, inner, einsum, multi_dot, tensordot,
kron, cross) and matrix functions (inv, solve, det, matrix_power, cholesky, pinv, norm, trace,
diagonal)."""

import numpy as np

from srcad.adjoints.registry import (
    Method,
    adjoint,
    bilinear,
    d,
    linear,
    nondifferentiable,
    tangent,
    xp,
)
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
    real_like,
    unbroadcast,
    undiagonal,
    unit_if_zero,
)
from srcad.runtime.complexes import complex_checked_unless, conj_if_complex, real_part
from srcad.runtime.decompositions import cofactors
from srcad.runtime.einsums import (
    einsum_general_replacing,
    grad_einsum_general,
    grad_einsum_general_replacing,
)
from srcad.runtime.higher import einsum_replacing_two
from srcad.runtime.linalg import chain_subscripts, diagonal_blocks, upper_block, upper_right
from srcad.runtime.norms import (
    SINGULAR_ORDS,
    norm_axes,
    norm_curvature,
    norm_slope,
    norm_third,
    singular_slope,
    singular_weights,
)
from srcad.runtime.tangents import einsum_replacing


@bilinear(np.dot, Method("dot"), broadcast_transparent=True, changes_shape=True)
def dot(y, a, b):
    d[a] = grad_dot_lhs(d[y], a, b)
    d[b] = grad_dot_rhs(d[y], a, b)


@bilinear(np.vdot)
def vdot(y, a, b):
    # vdot(a, b) = sum(conj(a) * b): the transpose conjugates a's term (JAX's convention)
    # (only the real part reaches a real operand: for the derivative of this gradient)
    d[a] = real_like(xp.conj(d[y] * xp.reshape(b, a.shape)), a)
    d[b] = real_like(d[y] * xp.reshape(xp.conj(a), b.shape), b)


@bilinear(np.outer)
def outer(y, a, b):
    d[a] = real_like(xp.reshape(d[y] @ xp.reshape(b, (-1,)), a.shape), a)
    d[b] = real_like(xp.reshape(xp.reshape(a, (-1,)) @ d[y], b.shape), b)


@bilinear(np.inner)
def inner(y, a, b):
    d[a] = grad_inner_lhs(d[y], a, b)
    d[b] = grad_inner_rhs(d[y], a, b)


@adjoint(np.einsum, changes_shape=True)
def einsum(y, subscripts, *operands):
    # any subscripts: '...', an index repeated within an operand, broadcast size-1 axes
    for i, x in enumerate(operands):
        d[x] = real_like(grad_einsum_general(subscripts, d[y], operands, i), x)


@adjoint(np.linalg.multi_dot)
def multi_dot(y, arrays):
    # a chain of products is one einsum; NumPy's choice of order does not change it
    for i, x in enumerate(arrays):
        d[x] = grad_einsum(chain_subscripts(arrays), d[y], arrays, i)


@bilinear(np.tensordot)
def tensordot(y, a, b, axes=2):
    d[a] = grad_tensordot_lhs(d[y], a, b, axes)
    d[b] = grad_tensordot_rhs(d[y], a, b, axes)


# the gradients of tensordot are bilinear in (g, the other operand): each is the other's
# transpose, so their rules are tensordot and the gradients again


@bilinear(grad_tensordot_lhs, static=("a",))
def grad_tensordot_lhs_adjoint(r, g, a, b, axes=2):
    d[g] = xp.tensordot(d[r], b, axes)
    d[b] = grad_tensordot_rhs(g, d[r], b, axes)


@bilinear(grad_tensordot_rhs, static=("b",))
def grad_tensordot_rhs_adjoint(r, g, a, b, axes=2):
    d[g] = xp.tensordot(a, d[r], axes)
    d[a] = grad_tensordot_lhs(g, a, d[r], axes)


@bilinear(np.kron)
def kron(y, a, b):
    d[a] = grad_kron_lhs(d[y], a, b)
    d[b] = grad_kron_rhs(d[y], a, b)


@bilinear(grad_kron_lhs, static=("a",))
def grad_kron_lhs_adjoint(r, g, a, b):
    d[g] = xp.kron(d[r], b)
    d[b] = grad_kron_rhs(g, d[r], b)


@bilinear(grad_kron_rhs, static=("b",))
def grad_kron_rhs_adjoint(r, g, a, b):
    d[g] = xp.kron(a, d[r])
    d[a] = grad_kron_lhs(g, a, d[r])


@bilinear(np.cross)
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
    # (a real operand among complex ones gets a real cotangent, as from unbroadcast)
    d[a] = real_like(grad_solve_lhs(gb, y), a)
    d[b] = real_like(gb, b)


@adjoint(np.linalg.det)
def det(y, a):
    # the cofactors: det(a) inv(a)^T, or through the SVD where a is singular
    d[a] = xp.expand_dims(xp.expand_dims(d[y], -1), -1) * cofactors(a, y)


@adjoint(np.linalg.matrix_power)
def matrix_power(y, a, n):
    # the gradient is the Fréchet derivative of X**n at X = a.T along the incoming
    # gradient: the upper right block of [[a.T, g], [0, a.T]]**n (negative n included)
    block = upper_block(xp.swapaxes(a, -1, -2), d[y])
    d[a] = upper_right(xp.linalg.matrix_power(block, n))


@adjoint(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    # the 2-norm of vectors or Frobenius norm of matrices along axis in operations that
    # differentiate again to any order (a zero norm has x == 0 along the axis: the
    # subgradient 0 there); another ord through the slope of each slice's norm
    # (complex x: the 2-norm and Frobenius norm only; the slope of another ord is real's).
    # A vector's 2-norm (ord=2 along one axis) is that of ord None; a vector's p-norm (p
    # not 0, 1 or infinite) has the slope sign(x) (|x| / y)^(p-1), written with ops that
    # have rules so that it too differentiates to any order (0 where x or y is 0, as
    # norm_slope's); a matrix norm of singular values through singular_slope, whose rules
    # are written with svd (any order)
    axes = norm_axes(x, axis)
    two = ord in (None, "fro") or (ord == 2 and len(axes) == 1)
    power = len(axes) == 1 and ord not in (0, 1, 2, float("inf"), float("-inf"))
    singular = len(axes) == 2 and ord in SINGULAR_ORDS
    n = keep_reduced(y, x, axes, keepdims)
    ok = (x != 0) & (n != 0)
    ratio = xp.where(ok, xp.abs(x), 1.0) / unit_if_zero(n)
    d[x] = complex_checked_unless(
        keep_reduced(real_part(d[y]) / unit_if_zero(y), x, axis, keepdims) * xp.conj(x)
        if two
        else keep_reduced(d[y], x, axes, keepdims)
        * (
            xp.where(ok, xp.sign(x) * ratio ** (ord - 1), 0.0)
            if power
            else singular_slope(x, ord, axes)
            if singular
            else norm_slope(x, ord, axis)
        ),
        two,
        "np.linalg.norm with an ord other than None and 'fro'",
        (x,),
    )


@adjoint(np.linalg.vector_norm)
def vector_norm(y, x, axis=None, keepdims=False, ord=2):
    axes = norm_axes(x, axis, "vector")
    n = keep_reduced(y, x, axes, keepdims)
    ok = (x != 0) & (n != 0)
    ratio = xp.where(ok, xp.abs(x), 1.0) / unit_if_zero(n)
    slope = (
        conj_if_complex(x) / unit_if_zero(n)
        if ord == 2
        else xp.where(ok, xp.sign(x) * ratio ** (ord - 1), 0.0)
        if ord not in (0, 1, float("inf"), float("-inf"))
        else norm_slope(x, ord, axis, "vector")
    )
    d[x] = complex_checked_unless(
        keep_reduced(real_part(d[y]), x, axes, keepdims) * slope,
        ord == 2,
        "np.linalg.vector_norm with an ord other than 2",
        (x,),
    )


@adjoint(np.linalg.matrix_norm)
def matrix_norm(y, x, keepdims=False, ord="fro"):
    slope = (
        conj_if_complex(x) / keep_reduced(unit_if_zero(y), x, (-2, -1), keepdims)
        if ord == "fro"
        else singular_slope(x, ord, (x.ndim - 2, x.ndim - 1))
        if ord in SINGULAR_ORDS
        else norm_slope(x, ord, None, "matrix")
    )
    d[x] = complex_checked_unless(
        keep_reduced(real_part(d[y]), x, (-2, -1), keepdims) * slope,
        ord == "fro",
        "np.linalg.matrix_norm with an ord other than 'fro'",
        (x,),
    )


@linear(np.trace, Method("trace"))
def trace(y, x, offset=0, axis1=0, axis2=1):
    ones = xp.ones_like(xp.diagonal(x, offset, axis1, axis2))
    d[x] = undiagonal(xp.expand_dims(d[y], -1) * ones, x, offset, axis1, axis2)


@linear(np.diagonal, Method("diagonal"))
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    d[a] = undiagonal(d[y], a, offset, axis1, axis2)


@linear(undiagonal, static=("x",))
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


@tangent(np.einsum)
def einsum_tangent(y, subscripts, *operands):
    # product rule: one term per operand, that operand replaced by its tangent
    for i, x in enumerate(operands):
        d[y] = einsum_general_replacing(subscripts, operands, i, d[x])


@tangent(np.linalg.multi_dot)
def multi_dot_tangent(y, arrays):
    for i, x in enumerate(arrays):
        d[y] = einsum_replacing(chain_subscripts(arrays), arrays, i, d[x])


@tangent(np.linalg.inv)
def inv_tangent(y, a):
    d[y] = -(y @ d[a] @ y)


@tangent(np.linalg.solve)
def solve_tangent(y, a, b):
    d[y] = xp.linalg.solve(a, d[b])
    d[y] = -xp.linalg.solve(a, d[a] @ y)


@tangent(np.linalg.det)
def det_tangent(y, a):
    # Jacobi's formula: d det(a) = trace(adj(a) @ da), the cofactors' sum against da
    d[y] = xp.sum(cofactors(a, y) * d[a], axis=(-2, -1))


@adjoint(cofactors)
def cofactors_adjoint(r, a, det):
    # r = det inv(a)^T (b = inv(a)^T), differentiated again where a is invertible
    b = xp.swapaxes(xp.linalg.inv(a), -1, -2)
    d[det] = xp.sum(d[r] * b, axis=(-2, -1))
    scale = xp.expand_dims(xp.expand_dims(det, -1), -1)
    d[a] = -scale * (b @ xp.swapaxes(d[r], -1, -2) @ b)


@tangent(cofactors)
def cofactors_tangent(r, a, det):
    b = xp.swapaxes(xp.linalg.inv(a), -1, -2)
    scale = xp.expand_dims(xp.expand_dims(det, -1), -1)
    d[r] = xp.expand_dims(xp.expand_dims(d[det], -1), -1) * b
    d[r] = -scale * (b @ xp.swapaxes(d[a], -1, -2) @ b)


@tangent(np.linalg.matrix_power)
def matrix_power_tangent(y, a, n):
    d[y] = upper_right(xp.linalg.matrix_power(upper_block(a, d[a]), n))


@tangent(np.linalg.norm)
def norm_tangent(y, x, ord=None, axis=None, keepdims=False):
    # (the slopes of the adjoint's)
    axes = norm_axes(x, axis)
    two = ord in (None, "fro") or (ord == 2 and len(axes) == 1)
    power = len(axes) == 1 and ord not in (0, 1, 2, float("inf"), float("-inf"))
    singular = len(axes) == 2 and ord in SINGULAR_ORDS
    n = keep_reduced(y, x, axes, keepdims)
    ok = (x != 0) & (n != 0)
    ratio = xp.where(ok, xp.abs(x), 1.0) / unit_if_zero(n)
    d[y] = complex_checked_unless(
        xp.real(xp.sum(xp.conj(x) * d[x], axis=axis, keepdims=keepdims)) / unit_if_zero(y)
        if two
        else xp.sum(
            d[x]
            * (
                xp.where(ok, xp.sign(x) * ratio ** (ord - 1), 0.0)
                if power
                else singular_slope(x, ord, axes)
                if singular
                else norm_slope(x, ord, axis)
            ),
            axis=axes,
            keepdims=keepdims,
        ),
        two,
        "np.linalg.norm with an ord other than None and 'fro'",
        (x,),
    )


@tangent(np.linalg.vector_norm)
def vector_norm_tangent(y, x, axis=None, keepdims=False, ord=2):
    axes = norm_axes(x, axis, "vector")
    n = keep_reduced(y, x, axes, keepdims)
    ok = (x != 0) & (n != 0)
    ratio = xp.where(ok, xp.abs(x), 1.0) / unit_if_zero(n)
    d[y] = complex_checked_unless(
        xp.real(xp.sum(conj_if_complex(x) * d[x], axis=axes, keepdims=keepdims)) / unit_if_zero(y)
        if ord == 2
        else xp.sum(
            d[x]
            * (
                xp.where(ok, xp.sign(x) * ratio ** (ord - 1), 0.0)
                if ord not in (0, 1, float("inf"), float("-inf"))
                else norm_slope(x, ord, axis, "vector")
            ),
            axis=axes,
            keepdims=keepdims,
        ),
        ord == 2,
        "np.linalg.vector_norm with an ord other than 2",
        (x,),
    )


@tangent(np.linalg.matrix_norm)
def matrix_norm_tangent(y, x, keepdims=False, ord="fro"):
    d[y] = complex_checked_unless(
        xp.real(xp.sum(conj_if_complex(x) * d[x], axis=(-2, -1), keepdims=keepdims))
        / unit_if_zero(y)
        if ord == "fro"
        else xp.sum(
            d[x]
            * (
                singular_slope(x, ord, (x.ndim - 2, x.ndim - 1))
                if ord in SINGULAR_ORDS
                else norm_slope(x, ord, None, "matrix")
            ),
            axis=(-2, -1),
            keepdims=keepdims,
        ),
        ord == "fro",
        "np.linalg.matrix_norm with an ord other than 'fro'",
        (x,),
    )


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


# ---- the helpers of these rules, so that their derivatives differentiate again: the
# blocks of matrix_power are linear maps, each other's adjoints ----

nondifferentiable(chain_subscripts)


@linear(upper_block)
def upper_block_adjoint(m, a, e):
    d[a] = diagonal_blocks(d[m])
    d[e] = unbroadcast(upper_right(d[m]), e)


@linear(upper_right)
def upper_right_adjoint(r, m):
    d[m] = upper_block(0.0 * d[r], d[r])


@linear(diagonal_blocks)
def diagonal_blocks_adjoint(r, m):
    d[m] = upper_block(d[r], 0.0 * d[r])


# ---- norms other than the 2-norm: the slope's derivative is each slice's Hessian
# (symmetric) applied to a direction, linear in it; the Hessian's own derivative (a third
# derivative) is refused when it is reached, and 0 for the piecewise linear norms ----

nondifferentiable(norm_axes, norm_third)


@adjoint(norm_curvature)
def norm_curvature_adjoint(r, t, x, ord=None, axis=None, kind="norm"):
    d[t] = norm_curvature(d[r], x, ord, axis, kind)
    d[x] = norm_third(d[r], t, x, ord, axis, kind)


@tangent(norm_curvature)
def norm_curvature_tangent(r, t, x, ord=None, axis=None, kind="norm"):
    d[r] = norm_curvature(d[t], x, ord, axis, kind)
    d[r] = norm_third(t, d[x], x, ord, axis, kind)


@adjoint(norm_slope)
def norm_slope_adjoint(w, x, ord=None, axis=None, kind="norm"):
    d[x] = norm_curvature(d[w], x, ord, axis, kind)


@tangent(norm_slope)
def norm_slope_tangent(w, x, ord=None, axis=None, kind="norm"):
    d[w] = norm_curvature(d[x], x, ord, axis, kind)


# ---- the slope u diag(m) vh of a norm of singular values, m the weights of those it sums:
# its derivative is the norm's Hessian, symmetric, so both rules apply the same map, written
# with svd and ops that have rules (any order: a third derivative goes through svd's own
# rules, which need distinct singular values; this one needs them where m differs).
# With p = u^T g v, the part in u's and v's columns is u (a * p + b * p^T) vh, where for
# both i and j summed a = -b = 1 / (s_i + s_j), for one of them (svd's f = 1 / (s_j^2 -
# s_i^2)) a = f (m_j s_j - m_i s_i), b = f (m_j s_i - m_i s_j), else 0; the rest of g,
# outside those columns, is divided by s where m is 1 ----

nondifferentiable(singular_weights)


@adjoint(singular_slope, static=("ord", "axes"))
def singular_slope_adjoint(w, x, ord, axes):
    g = xp.moveaxis(d[w], axes, (-2, -1))
    u, s, vh = xp.linalg.svd(xp.moveaxis(x, axes, (-2, -1)), full_matrices=False)
    v = xp.swapaxes(vh, -1, -2)
    ut = xp.swapaxes(u, -1, -2)
    m = singular_weights(s, ord)
    mi = xp.expand_dims(m, -1)
    mj = xp.expand_dims(m, -2)
    si = xp.expand_dims(s, -1)
    sj = xp.expand_dims(s, -2)
    both = (1 - xp.eye(s.shape[-1], dtype=s.dtype)) * mi * mj
    one = (mi - mj) ** 2
    f = one / (sj * sj - si * si + 1 - one)
    sum_both = both / (si + sj + 1 - both)
    p = ut @ g @ v
    inner = (sum_both + f * (mj * sj - mi * si)) * p
    inner = inner + (f * (mj * si - mi * sj) - sum_both) * xp.swapaxes(p, -1, -2)
    e = m / (s + 1 - m)
    out = u @ inner @ vh + ((g @ v - u @ p) * xp.expand_dims(e, -2)) @ vh
    out = out + u @ (xp.expand_dims(e, -1) * (ut @ g - p @ vh))
    d[x] = xp.moveaxis(out, (-2, -1), axes)


@tangent(singular_slope, static=("ord", "axes"))
def singular_slope_tangent(w, x, ord, axes):
    g = xp.moveaxis(d[x], axes, (-2, -1))
    u, s, vh = xp.linalg.svd(xp.moveaxis(x, axes, (-2, -1)), full_matrices=False)
    v = xp.swapaxes(vh, -1, -2)
    ut = xp.swapaxes(u, -1, -2)
    m = singular_weights(s, ord)
    mi = xp.expand_dims(m, -1)
    mj = xp.expand_dims(m, -2)
    si = xp.expand_dims(s, -1)
    sj = xp.expand_dims(s, -2)
    both = (1 - xp.eye(s.shape[-1], dtype=s.dtype)) * mi * mj
    one = (mi - mj) ** 2
    f = one / (sj * sj - si * si + 1 - one)
    sum_both = both / (si + sj + 1 - both)
    p = ut @ g @ v
    inner = (sum_both + f * (mj * sj - mi * si)) * p
    inner = inner + (f * (mj * si - mi * sj) - sum_both) * xp.swapaxes(p, -1, -2)
    e = m / (s + 1 - m)
    out = u @ inner @ vh + ((g @ v - u @ p) * xp.expand_dims(e, -2)) @ vh
    out = out + u @ (xp.expand_dims(e, -1) * (ut @ g - p @ vh))
    d[w] = xp.moveaxis(out, (-2, -1), axes)


# ---- einsum's gradient in any form, and its product-rule terms: linear in g (in t) and in
# every operand but the i-th, each other's transposes (as grad_einsum's rules) ----


@adjoint(grad_einsum_general, static=("subscripts", "i"))
def grad_einsum_general_adjoint(y, subscripts, g, operands, i):
    d[g] = unbroadcast(einsum_general_replacing(subscripts, operands, i, d[y]), g)
    for j, x in enumerate(operands):
        d[x] = grad_einsum_general_replacing(subscripts, g, operands, j, i, d[y])


@tangent(grad_einsum_general, static=("subscripts", "i"))
def grad_einsum_general_tangent(y, subscripts, g, operands, i):
    d[y] = grad_einsum_general(subscripts, d[g], operands, i)
    for j, x in enumerate(operands):
        d[y] = grad_einsum_general_replacing(subscripts, g, operands, i, j, d[x])


@adjoint(einsum_general_replacing, static=("subscripts", "i"))
def einsum_general_replacing_adjoint(y, subscripts, operands, i, t):
    d[t] = grad_einsum_general(subscripts, d[y], operands, i)
    for j, x in enumerate(operands):
        d[x] = grad_einsum_general_replacing(subscripts, d[y], operands, j, i, t)


@tangent(einsum_general_replacing, static=("subscripts", "i"))
def einsum_general_replacing_tangent(y, subscripts, operands, i, t):
    d[y] = einsum_general_replacing(subscripts, operands, i, d[t])
    for j, x in enumerate(operands):
        d[y] = einsum_replacing_two(subscripts, operands, i, t, j, d[x])
