"""Adjoints of scipy.linalg: cholesky and solve_triangular, which read one triangle of
``a`` as SciPy does (the upper one unless ``lower``), so the gradient lies in that
triangle; sqrtm and solve_sylvester, whose derivatives are Sylvester equations.

Loaded on first need once the user's code has imported scipy.linalg (see scipy_table).
"""

from scipy import linalg

from srcad.adjoints.registry import adjoint, d, tangent, xp


@adjoint(linalg.cholesky)
def cholesky(y, a, lower=False, overwrite_a=False, check_finite=True):
    # Murray (2016), as for np.linalg.cholesky, on the lower factor low; SciPy's upper
    # factor is low.T, computed from a's upper triangle (the lower one of a.T)
    n = y.shape[-1]
    low = xp.where(lower, y, y.T)
    m = low.T @ xp.where(lower, d[y], d[y].T)
    phi = xp.tril(m) - 0.5 * m * xp.eye(n)
    s = xp.linalg.solve(low.T, xp.linalg.solve(low.T, phi).T).T
    g = xp.tril(s + s.T) - s * xp.eye(n)
    d[a] = xp.where(lower, g, g.T)


@adjoint(linalg.solve_triangular)
def solve_triangular(
    y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True
):
    # the entries of a that SciPy reads (a unit diagonal is taken as ones), transposed for
    # trans 1 or 2 ("T", "C": the same for real a)
    n = a.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones)) * (1 - unit_diagonal * xp.eye(n))
    t = a * keep + unit_diagonal * xp.eye(n)
    flip = (trans == 1) | (trans == 2) | (trans == "T") | (trans == "C")
    op = xp.where(flip, t.T, t)
    gb = xp.linalg.solve(op.T, d[y])
    d[b] = gb
    gop = -(xp.reshape(gb, (n, -1)) @ xp.reshape(y, (n, -1)).T)
    d[a] = xp.where(flip, gop.T, gop) * keep


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
    low = xp.where(lower, y, y.T)
    da = xp.where(lower, d[a], d[a].T)
    sym = xp.tril(da) + xp.tril(da, -1).T
    m = xp.linalg.solve(low, xp.linalg.solve(low, sym).T)
    dl = low @ (xp.tril(m) - 0.5 * m * xp.eye(n))
    d[y] = xp.where(lower, dl, dl.T)


@tangent(linalg.solve_triangular)
def solve_triangular_tangent(
    y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True
):
    n = a.shape[-1]
    ones = xp.ones((n, n))
    keep = xp.where(lower, xp.tril(ones), xp.triu(ones)) * (1 - unit_diagonal * xp.eye(n))
    t = a * keep + unit_diagonal * xp.eye(n)
    flip = (trans == 1) | (trans == 2) | (trans == "T") | (trans == "C")
    op = xp.where(flip, t.T, t)
    d[y] = xp.linalg.solve(op, d[b])
    d[y] = -xp.linalg.solve(op, xp.where(flip, (d[a] * keep).T, d[a] * keep) @ y)


@tangent(linalg.solve_sylvester)
def solve_sylvester_tangent(x, a, b, q):
    d[x] = linalg.solve_sylvester(a, b, d[q])
    d[x] = -linalg.solve_sylvester(a, b, d[a] @ x)
    d[x] = -linalg.solve_sylvester(a, b, x @ d[b])


@tangent(linalg.sqrtm)
def sqrtm_tangent(y, A):
    d[y] = linalg.solve_sylvester(y, y, d[A])
