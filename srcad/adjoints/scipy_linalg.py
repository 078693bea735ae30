"""Adjoints of scipy.linalg: cholesky and solve_triangular, which read one triangle of
``a`` as SciPy does (the upper one unless ``lower``), so the gradient lies in that
triangle; cho_factor, whose pair (c, lower) srcad splits into names (see
srcad/transform/normalize/factors.py): c is cholesky's factor in one triangle and a's own
entries in the other, and cho_solve reads the factor's triangle alone; sqrtm and
solve_sylvester, whose derivatives are Sylvester equations.

Loaded on first need once the user's code has imported scipy.linalg (see scipy_table).
"""

from scipy import linalg

from srcad.adjoints.registry import adjoint, d, tangent, xp
from srcad.runtime.accumulate import grad_solve_lhs, grad_solve_rhs, unbroadcast
from srcad.runtime.factors import cho_factor, cho_solve


@adjoint(linalg.cholesky)
def cholesky(y, a, lower=False, overwrite_a=False, check_finite=True):
    # Murray (2016), as for np.linalg.cholesky, on the lower factor low; SciPy's upper
    # factor is low^T, computed from a's upper triangle (the lower one of a^T); stacked too
    n = y.shape[-1]
    low = xp.where(lower, y, xp.swapaxes(y, -1, -2))
    lt = xp.swapaxes(low, -1, -2)
    m = lt @ xp.where(lower, d[y], xp.swapaxes(d[y], -1, -2))
    phi = xp.tril(m) - 0.5 * m * xp.eye(n)
    s = xp.swapaxes(xp.linalg.solve(lt, xp.swapaxes(xp.linalg.solve(lt, phi), -1, -2)), -1, -2)
    g = xp.tril(s + xp.swapaxes(s, -1, -2)) - s * xp.eye(n)
    d[a] = xp.where(lower, g, xp.swapaxes(g, -1, -2))


@adjoint(linalg.solve_triangular)
def solve_triangular(
    y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True
):
    # the entries of a that SciPy reads (a unit diagonal is taken as ones), transposed for
    # trans 1 or 2 ("T", "C": the same for real a); stacked a and b too, where SciPy
    # broadcasts them as np.linalg.solve does (b of one dimension is a vector)
    n = a.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones)) * (1 - unit_diagonal * xp.eye(n))
    t = a * keep + unit_diagonal * xp.eye(n)
    flip = (trans == 1) | (trans == 2) | (trans == "T") | (trans == "C")
    op = xp.where(flip, xp.swapaxes(t, -1, -2), t)
    gb = grad_solve_rhs(d[y], op)
    d[b] = unbroadcast(gb, b)
    gop = unbroadcast(grad_solve_lhs(gb, y), a)
    d[a] = xp.where(flip, xp.swapaxes(gop, -1, -2), gop) * keep


@adjoint(cho_factor, static=("lower",))
def cho_factor_adjoint(c, a, lower=False, check_finite=True):
    # cholesky's rule on the factor's triangle; the other triangle holds a's entries
    n = c.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones))
    t = c * keep
    lt = xp.swapaxes(xp.where(lower, t, xp.swapaxes(t, -1, -2)), -1, -2)
    gt = d[c] * keep
    m = lt @ xp.where(lower, gt, xp.swapaxes(gt, -1, -2))
    phi = xp.tril(m) - 0.5 * m * xp.eye(n)
    s = xp.swapaxes(xp.linalg.solve(lt, xp.swapaxes(xp.linalg.solve(lt, phi), -1, -2)), -1, -2)
    g = xp.tril(s + xp.swapaxes(s, -1, -2)) - s * xp.eye(n)
    d[a] = xp.where(lower, g, xp.swapaxes(g, -1, -2)) + d[c] * (1 - keep)


@adjoint(cho_solve, static=("lower",))
def cho_solve_adjoint(x, c, lower, b, check_finite=True):
    # x = (l l^T)^-1 b with l the lower factor (c's lower triangle, or its upper one
    # transposed); with gb = (l l^T)^-1 g, gradient -(gb x^T + x gb^T) l for l, on the
    # triangle read: whatever the other triangle holds gets none
    n = c.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones))
    t = c * keep
    low = xp.where(lower, t, t.T)
    gb = cho_solve(c, lower, d[x], check_finite)
    d[b] = gb
    m = xp.reshape(gb, (n, -1)) @ xp.reshape(x, (n, -1)).T
    gl = -((m + m.T) @ low)
    d[c] = xp.where(lower, gl, gl.T) * keep


# ---- Sylvester equations: x solves a x + x b = q; a matrix square root s solves
# s ds + ds s = da ----


@adjoint(linalg.solve_sylvester)
def solve_sylvester(x, a, b, q):
    gq = linalg.solve_sylvester(a.T, b.T, d[x])
    d[q] = gq
    d[a] = -gq @ x.T
    d[b] = -x.T @ gq


@adjoint(linalg.sqrtm)
def sqrtm(y, A):
    d[A] = linalg.solve_sylvester(y.T, y.T, d[y])


# ---- tangents ----


@tangent(linalg.cholesky)
def cholesky_tangent(y, a, lower=False, overwrite_a=False, check_finite=True):
    # dl = low phi(low^-1 da low^-T), da symmetric from the triangle SciPy reads
    n = y.shape[-1]
    low = xp.where(lower, y, xp.swapaxes(y, -1, -2))
    da = xp.where(lower, d[a], xp.swapaxes(d[a], -1, -2))
    sym = xp.tril(da) + xp.swapaxes(xp.tril(da, -1), -1, -2)
    m = xp.linalg.solve(low, xp.swapaxes(xp.linalg.solve(low, sym), -1, -2))
    dl = low @ (xp.tril(m) - 0.5 * m * xp.eye(n))
    d[y] = xp.where(lower, dl, xp.swapaxes(dl, -1, -2))


@tangent(linalg.solve_triangular)
def solve_triangular_tangent(
    y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True
):
    n = a.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones)) * (1 - unit_diagonal * xp.eye(n))
    t = a * keep + unit_diagonal * xp.eye(n)
    flip = (trans == 1) | (trans == 2) | (trans == "T") | (trans == "C")
    op = xp.where(flip, xp.swapaxes(t, -1, -2), t)
    d[y] = xp.linalg.solve(op, d[b])
    d[y] = -xp.linalg.solve(op, xp.where(flip, xp.swapaxes(d[a] * keep, -1, -2), d[a] * keep) @ y)


@tangent(cho_factor, static=("lower",))
def cho_factor_tangent(c, a, lower=False, check_finite=True):
    n = c.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones))
    t = c * keep
    low = xp.where(lower, t, xp.swapaxes(t, -1, -2))
    da = xp.where(lower, d[a], xp.swapaxes(d[a], -1, -2))
    sym = xp.tril(da) + xp.swapaxes(xp.tril(da, -1), -1, -2)
    m = xp.linalg.solve(low, xp.swapaxes(xp.linalg.solve(low, sym), -1, -2))
    dl = low @ (xp.tril(m) - 0.5 * m * xp.eye(n))
    d[c] = xp.where(lower, dl, xp.swapaxes(dl, -1, -2)) + d[a] * (1 - keep)


@tangent(cho_solve, static=("lower",))
def cho_solve_tangent(x, c, lower, b, check_finite=True):
    # dx = (l l^T)^-1 (db - (dl l^T + l dl^T) x), dl from the triangle read of dc
    n = c.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones))
    t = c * keep
    low = xp.where(lower, t, t.T)
    dt = d[c] * keep
    dl = xp.where(lower, dt, dt.T)
    d[x] = cho_solve(c, lower, d[b], check_finite)
    d[x] = -cho_solve(c, lower, (dl @ low.T + low @ dl.T) @ x, check_finite)


@tangent(linalg.solve_sylvester)
def solve_sylvester_tangent(x, a, b, q):
    d[x] = linalg.solve_sylvester(a, b, d[q])
    d[x] = -linalg.solve_sylvester(a, b, d[a] @ x)
    d[x] = -linalg.solve_sylvester(a, b, x @ d[b])


@tangent(linalg.sqrtm)
def sqrtm_tangent(y, A):
    d[y] = linalg.solve_sylvester(y, y, d[A])
