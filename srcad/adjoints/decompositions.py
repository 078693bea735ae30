"""Rules of decompositions (slogdet, eigh, eigvalsh, svd, svdvals, qr, eig and eigvals with
real eigenvalues, lstsq) and of the split family."""

import numpy as np

from srcad.adjoints.registry import adjoint, d, linear, nondifferentiable, tangent, xp
from srcad.runtime.decompositions import (
    from_triangle,
    full_rank,
    qr_factor,
    real_eig,
    reduced_svd,
    residuals_back,
    residuals_like,
    split_axis,
    split_piece,
    to_triangle,
    unsplit_piece,
)

# ---- linear algebra (sign of slogdet: piecewise constant, no derivative) ----


@adjoint(np.linalg.slogdet, outputs=2)
def slogdet(sign, logdet, a):
    d[a] = xp.asarray(d[logdet])[..., None, None] * xp.swapaxes(xp.linalg.inv(a), -1, -2)


@adjoint(np.linalg.eigh, outputs=2)
def eigh(w, v, a, UPLO="L"):
    # v (f * (v^T gv) + diag(gw)) v^T on the triangle read, f[i, j] = 1 / (w[j] - w[i])
    # off the diagonal; in ops that have rules, so that it differentiates again. Equal
    # eigenvalues (tied) leave the eigenvectors' derivative undefined (NaN) unless their
    # gradient's part there is zero, as it is when only w is used: then exactly 0
    eye = xp.eye(w.shape[-1], dtype=w.dtype)
    gaps = xp.expand_dims(w, -2) - xp.expand_dims(w, -1)
    tied = (gaps == 0) & (eye == 0)
    f = (1 - eye) / (gaps + eye + tied)
    p = xp.swapaxes(v, -1, -2) @ d[v]
    inner = xp.where(tied & (p != 0), xp.nan, f * p) + eye * xp.expand_dims(d[w], -2)
    d[a] = to_triangle(v @ inner @ xp.swapaxes(v, -1, -2), UPLO)


@adjoint(np.linalg.svd, outputs=3)
def svd(u, s, vh, a, full_matrices=True):
    # the reduced SVD's (Townsend 2016), in ops that have rules, so that it differentiates
    # again: with f[i, j] = 1 / (s[j]**2 - s[i]**2) off the diagonal, j = u^T gu and
    # k = vh gv; the parts of gu and gv outside u's and v's columns (a tall or wide a)
    # are zero up to rounding where u or v is square. Equal singular values (tied), or
    # zero ones, leave u's and v's derivatives undefined (NaN) unless their gradients'
    # parts there are zero, as they are when only s is used: then exactly 0
    ur = reduced_svd(u, vh, full_matrices)
    v = xp.swapaxes(vh, -1, -2)
    gv = xp.swapaxes(d[vh], -1, -2)
    eye = xp.eye(s.shape[-1], dtype=s.dtype)
    gaps = xp.expand_dims(s * s, -2) - xp.expand_dims(s * s, -1)
    tied = (gaps == 0) & (eye == 0)
    f = (1 - eye) / (gaps + eye + tied)
    j = xp.swapaxes(ur, -1, -2) @ d[u]
    k = vh @ gv
    jj = j - xp.swapaxes(j, -1, -2)
    kk = k - xp.swapaxes(k, -1, -2)
    core = xp.where(tied & (jj != 0), xp.nan, f * jj) * xp.expand_dims(s, -2)
    core = core + xp.expand_dims(s, -1) * xp.where(tied & (kk != 0), xp.nan, f * kk)
    core = core + eye * xp.expand_dims(d[s], -2)
    zero = s == 0
    gu_out = d[u] - ur @ j
    gu_out = xp.where(xp.expand_dims(zero, -2) & (gu_out != 0), xp.nan, gu_out)
    d[a] = ur @ core @ vh + (gu_out / xp.expand_dims(s + zero, -2)) @ vh
    gv_out = xp.swapaxes(gv - v @ k, -1, -2)
    gv_out = xp.where(xp.expand_dims(zero, -1) & (gv_out != 0), xp.nan, gv_out)
    d[a] = ur @ (gv_out / xp.expand_dims(s + zero, -1))


@adjoint(np.linalg.eigvalsh)
def eigvalsh(y, a, UPLO="L"):
    # eigh's rule with no gradient for the eigenvectors: v diag(g) v^T on the triangle read
    w, v = xp.linalg.eigh(a, UPLO)
    d[a] = to_triangle((v * xp.expand_dims(d[y], -2)) @ xp.swapaxes(v, -1, -2), UPLO)


@adjoint(np.linalg.eig, outputs=2)
def eig(w, v, a):
    # real distinct eigenvalues (else refused): a = v diag(w) v^-1, with NumPy's columns of
    # v of unit norm; with f[i, j] = 1 / (w[j] - w[i]) off the diagonal, the gradient is
    # v^-T (diag(gw) + f * (v^T gn)) v^T, gn the gradient of v less each column's part
    # along itself (the normalization); equal eigenvalues as in eigh's rule
    vr = real_eig(v, w)
    vt = xp.swapaxes(vr, -1, -2)
    eye = xp.eye(w.shape[-1], dtype=w.dtype)
    gaps = xp.expand_dims(w, -2) - xp.expand_dims(w, -1)
    tied = (gaps == 0) & (eye == 0)
    f = (1 - eye) / (gaps + eye + tied)
    gn = d[v] - vr * xp.expand_dims(xp.sum(vr * d[v], axis=-2), -2)
    p = vt @ gn
    inner = eye * xp.expand_dims(d[w], -2) + xp.where(tied & (p != 0), xp.nan, f * p)
    d[a] = xp.swapaxes(xp.linalg.inv(vr), -1, -2) @ inner @ vt


@adjoint(np.linalg.eigvals)
def eigvals(y, a):
    # eig's rule with no gradient for the eigenvectors: v^-T diag(g) v^T
    w, v = xp.linalg.eig(a)
    vr = real_eig(v, w, y)
    vt = xp.swapaxes(vr, -1, -2)
    d[a] = xp.swapaxes(xp.linalg.inv(vr), -1, -2) @ (xp.expand_dims(d[y], -1) * vt)


@adjoint(np.linalg.svdvals)
def svdvals(y, x):
    # svd's rule with no gradient for u and vh: u diag(g) vh
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    d[x] = (u * xp.expand_dims(d[y], -2)) @ vh


@adjoint(np.linalg.qr, outputs=2)
def qr(q, r, a, mode="reduced"):
    # for a square or tall a, with r invertible (Walter & Lehmann 2018; TensorFlow's
    # QrGrad): with M = q^T dq and N = r dr^T, the gradient is
    # q (dr + tril(M - M^T + N - N^T) r^-T) + (dq - q M) r^-T
    rs = qr_factor(r, mode)
    qt = xp.swapaxes(q, -1, -2)
    m = qt @ d[q]
    n = rs @ xp.swapaxes(d[r], -1, -2)
    low = xp.tril(m - xp.swapaxes(m, -1, -2) + n - xp.swapaxes(n, -1, -2))
    right = q @ (d[r] + xp.swapaxes(xp.linalg.solve(rs, xp.swapaxes(low, -1, -2)), -1, -2))
    d[a] = right + xp.swapaxes(xp.linalg.solve(rs, xp.swapaxes(d[q] - q @ m, -1, -2)), -1, -2)


@adjoint(np.linalg.lstsq, outputs=4)
def lstsq(x, res, rank, sv, a, b, rcond=None):
    # of a matrix of full rank (else refused): x = pinv(a) b, with pinv's derivative
    # (Golub & Pereyra 1973); the residuals |b - a x|^2 per column move with b and a
    # along r = b - a x alone (a^T r = 0 at the fit); sv are a's singular values
    p = xp.linalg.pinv(full_rank(a, rank))
    b2 = xp.reshape(b, (b.shape[0], -1))
    x2 = xp.reshape(x, (a.shape[-1], -1))
    gx = xp.reshape(d[x], x2.shape)
    r = b2 - a @ x2
    gr = 2 * r * residuals_back(d[res], x2[0])
    d[b] = xp.reshape(xp.swapaxes(p, -1, -2) @ gx + gr, b.shape)
    gp = xp.swapaxes(gx @ xp.swapaxes(b2, -1, -2), -1, -2)
    left = xp.eye(a.shape[-2], dtype=p.dtype) - a @ p
    right = xp.eye(a.shape[-1], dtype=p.dtype) - p @ a
    pt = xp.swapaxes(p, -1, -2)
    d[a] = left @ gp @ p @ pt + pt @ p @ gp @ right - pt @ xp.swapaxes(gp, -1, -2) @ pt
    d[a] = -(gr @ xp.swapaxes(x2, -1, -2))
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    d[a] = (u * xp.expand_dims(d[sv], -2)) @ vh


# ---- splits: the pieces' gradients, put back together ----


@adjoint(np.split, np.array_split, outputs="*")
def split(pieces, x, indices_or_sections, axis=0):
    d[x] = xp.concatenate(d[pieces], axis=axis)


@linear(split_piece, static=("k", "sections", "axis", "even"), changes_shape=True)
def split_piece_adjoint(y, x, k, sections, axis=0, even=True):
    # (np.split(x, n)[k] with k known only at run time, normalize/unpacking.py)
    d[x] = unsplit_piece(d[y], x, k, sections, axis, even)


@linear(unsplit_piece, static=("x", "k", "sections", "axis", "even"), changes_shape=True)
def unsplit_piece_adjoint(r, g, x, k, sections, axis=0, even=True):
    d[g] = split_piece(d[r], k, sections, axis, even)


@adjoint(np.hsplit, outputs="*")
def hsplit(pieces, x, indices_or_sections):
    d[x] = xp.concatenate(d[pieces], axis=split_axis(x, "h"))


@adjoint(np.vsplit, outputs="*")
def vsplit(pieces, x, indices_or_sections):
    d[x] = xp.concatenate(d[pieces], axis=0)


@adjoint(np.dsplit, outputs="*")
def dsplit(pieces, x, indices_or_sections):
    d[x] = xp.concatenate(d[pieces], axis=2)


# ---- tangents ----


@tangent(np.linalg.slogdet, outputs=2)
def slogdet_tangent(sign, logdet, a):
    d[logdet] = xp.einsum("...ij,...ji->...", xp.linalg.inv(a), d[a])


@tangent(np.linalg.eigh, outputs=2)
def eigh_tangent(w, v, a, UPLO="L"):
    # at equal eigenvalues (tied), v's tangent is NaN unless the change keeps them equal
    eye = xp.eye(w.shape[-1], dtype=w.dtype)
    gaps = xp.expand_dims(w, -2) - xp.expand_dims(w, -1)
    tied = (gaps == 0) & (eye == 0)
    f = (1 - eye) / (gaps + eye + tied)
    p = xp.swapaxes(v, -1, -2) @ from_triangle(d[a], UPLO) @ v
    d[w] = xp.diagonal(p, axis1=-2, axis2=-1)
    d[v] = v @ xp.where(tied & (p != 0), xp.nan, f * p)


@tangent(np.linalg.svd, outputs=3)
def svd_tangent(u, s, vh, a, full_matrices=True):
    # at equal (tied) or zero singular values, u's and v's tangents are NaN unless the
    # change keeps them so
    ur = reduced_svd(u, vh, full_matrices)
    v = xp.swapaxes(vh, -1, -2)
    eye = xp.eye(s.shape[-1], dtype=s.dtype)
    gaps = xp.expand_dims(s * s, -2) - xp.expand_dims(s * s, -1)
    tied = (gaps == 0) & (eye == 0)
    f = (1 - eye) / (gaps + eye + tied)
    p = xp.swapaxes(ur, -1, -2) @ d[a] @ v
    pt = xp.swapaxes(p, -1, -2)
    d[s] = xp.diagonal(p, axis1=-2, axis2=-1)
    pu = p * xp.expand_dims(s, -2) + xp.expand_dims(s, -1) * pt
    d[u] = u @ xp.where(tied & (pu != 0), xp.nan, f * pu)
    zero = xp.expand_dims(s == 0, -2)
    tu = d[a] @ v - u @ p
    d[u] = xp.where(zero & (tu != 0), xp.nan, tu) / (xp.expand_dims(s, -2) + zero)
    pv = xp.expand_dims(s, -1) * p + pt * xp.expand_dims(s, -2)
    d[vh] = xp.swapaxes(v @ xp.where(tied & (pv != 0), xp.nan, f * pv), -1, -2)
    tv = xp.swapaxes(d[a], -1, -2) @ u - v @ pt
    d[vh] = xp.swapaxes(
        xp.where(zero & (tv != 0), xp.nan, tv) / (xp.expand_dims(s, -2) + zero), -1, -2
    )


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(y, a, UPLO="L"):
    w, v = xp.linalg.eigh(a, UPLO)
    d[y] = xp.sum(v * (from_triangle(d[a], UPLO) @ v), axis=-2)


@tangent(np.linalg.eig, outputs=2)
def eig_tangent(w, v, a):
    vr = real_eig(v, w)
    eye = xp.eye(w.shape[-1], dtype=w.dtype)
    gaps = xp.expand_dims(w, -2) - xp.expand_dims(w, -1)
    tied = (gaps == 0) & (eye == 0)
    f = (1 - eye) / (gaps + eye + tied)
    c = xp.linalg.solve(vr, d[a] @ vr)
    dv = vr @ xp.where(tied & (c != 0), xp.nan, f * c)
    d[w] = xp.diagonal(c, axis1=-2, axis2=-1)
    d[v] = dv - vr * xp.expand_dims(xp.sum(vr * dv, axis=-2), -2)


@tangent(np.linalg.eigvals)
def eigvals_tangent(y, a):
    w, v = xp.linalg.eig(a)
    vr = real_eig(v, w, y)
    d[y] = xp.sum(xp.linalg.inv(vr) * xp.swapaxes(d[a] @ vr, -1, -2), axis=-1)


@tangent(np.linalg.svdvals)
def svdvals_tangent(y, x):
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    d[y] = xp.sum(u * (d[x] @ xp.swapaxes(vh, -1, -2)), axis=-2)


@tangent(np.linalg.qr, outputs=2)
def qr_tangent(q, r, a, mode="reduced"):
    # with C = q^T da r^-1 and its skew part W = tril(C, -1) - tril(C, -1)^T:
    # dq = q (W - C) + da r^-1, dr = (C - W) r
    rs = qr_factor(r, mode)
    da_rinv = xp.swapaxes(
        xp.linalg.solve(xp.swapaxes(rs, -1, -2), xp.swapaxes(d[a], -1, -2)), -1, -2
    )
    c = xp.swapaxes(q, -1, -2) @ da_rinv
    w = xp.tril(c, -1) - xp.swapaxes(xp.tril(c, -1), -1, -2)
    d[q] = q @ (w - c) + da_rinv
    d[r] = (c - w) @ rs


@tangent(np.linalg.lstsq, outputs=4)
def lstsq_tangent(x, res, rank, sv, a, b, rcond=None):
    p = xp.linalg.pinv(full_rank(a, rank))
    b2 = xp.reshape(b, (b.shape[0], -1))
    x2 = xp.reshape(x, (a.shape[-1], -1))
    r = b2 - a @ x2
    left = xp.eye(a.shape[-2], dtype=p.dtype) - a @ p
    right = xp.eye(a.shape[-1], dtype=p.dtype) - p @ a
    pt = xp.swapaxes(p, -1, -2)
    dat = xp.swapaxes(d[a], -1, -2)
    d[x] = xp.reshape(p @ xp.reshape(d[b], b2.shape), x.shape)
    d[x] = xp.reshape((p @ pt @ dat @ left + right @ dat @ pt @ p - p @ d[a] @ p) @ b2, x.shape)
    d[res] = residuals_like(2 * xp.sum(r * xp.reshape(d[b], b2.shape), axis=0), res)
    d[res] = residuals_like(-2 * xp.sum(r * (d[a] @ x2), axis=0), res)
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    d[sv] = xp.sum(u * (d[a] @ xp.swapaxes(vh, -1, -2)), axis=-2)


# ---- the helpers of these rules: linear maps, each other's adjoints (and the identity) ----

nondifferentiable(split_axis)  # an axis number, read when the rule is differentiated again


@adjoint(to_triangle)
def to_triangle_adjoint(r, g, uplo="L"):
    d[g] = from_triangle(d[r], uplo)


@tangent(to_triangle)
def to_triangle_tangent(r, g, uplo="L"):
    d[r] = to_triangle(d[g], uplo)


@adjoint(from_triangle)
def from_triangle_adjoint(r, g, uplo="L"):
    d[g] = to_triangle(d[r], uplo)


@tangent(from_triangle)
def from_triangle_tangent(r, g, uplo="L"):
    d[r] = from_triangle(d[g], uplo)


@adjoint(qr_factor, shape_preserving=True)
def qr_factor_adjoint(y, r, mode="reduced"):
    d[r] = d[y]


@tangent(qr_factor)
def qr_factor_tangent(y, r, mode="reduced"):
    d[y] = d[r]


@adjoint(full_rank, static=("rank",))
def full_rank_adjoint(y, a, rank):
    d[a] = d[y]


@tangent(full_rank, static=("rank",))
def full_rank_tangent(y, a, rank):
    d[y] = d[a]


@adjoint(residuals_like, static=("res",))
def residuals_like_adjoint(y, v, res):
    d[v] = residuals_back(d[y], v)


@tangent(residuals_like, static=("res",))
def residuals_like_tangent(y, v, res):
    d[y] = residuals_like(d[v], res)


@adjoint(residuals_back, static=("v",))
def residuals_back_adjoint(y, g, v):
    d[g] = residuals_like(d[y], g)


@tangent(residuals_back, static=("v",))
def residuals_back_tangent(y, g, v):
    d[y] = residuals_back(d[g], v)


@adjoint(real_eig, static=("w", "values"), shape_preserving=True)
def real_eig_adjoint(y, v, w, values=None):
    d[v] = d[y]


@tangent(real_eig, static=("w", "values"))
def real_eig_tangent(y, v, w, values=None):
    d[y] = d[v]


@adjoint(reduced_svd, static=("vh",), shape_preserving=True)
def reduced_svd_adjoint(y, u, vh, full_matrices=True):
    d[u] = d[y]


@tangent(reduced_svd, static=("vh",))
def reduced_svd_tangent(y, u, vh, full_matrices=True):
    d[y] = d[u]


@tangent(np.split, outputs="*")
def split_tangent(pieces, x, indices_or_sections, axis=0):
    d[pieces] = xp.split(d[x], indices_or_sections, axis=axis)


@tangent(np.array_split, outputs="*")
def array_split_tangent(pieces, x, indices_or_sections, axis=0):
    d[pieces] = xp.array_split(d[x], indices_or_sections, axis=axis)


@tangent(np.hsplit, outputs="*")
def hsplit_tangent(pieces, x, indices_or_sections):
    d[pieces] = xp.hsplit(d[x], indices_or_sections)


@tangent(np.vsplit, outputs="*")
def vsplit_tangent(pieces, x, indices_or_sections):
    d[pieces] = xp.vsplit(d[x], indices_or_sections)


@tangent(np.dsplit, outputs="*")
def dsplit_tangent(pieces, x, indices_or_sections):
    d[pieces] = xp.dsplit(d[x], indices_or_sections)
