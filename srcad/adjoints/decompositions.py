"""Rules of decompositions (slogdet, eigh, eigvalsh, svd, svdvals, qr) and of the split
family."""

import numpy as np

from srcad.adjoints.registry import adjoint, d, tangent, xp
from srcad.runtime.decompositions import (
    eigh_adjoint,
    eigh_tangents,
    from_triangle,
    qr_factor,
    split_axis,
    svd_adjoint,
    svd_tangents,
    to_triangle,
)

# ---- linear algebra (sign of slogdet: piecewise constant, no derivative) ----


@adjoint(np.linalg.slogdet, outputs=2)
def slogdet(sign, logdet, a):
    d[a] = xp.asarray(d[logdet])[..., None, None] * xp.swapaxes(xp.linalg.inv(a), -1, -2)


@adjoint(np.linalg.eigh, outputs=2)
def eigh(w, v, a, UPLO="L"):
    d[a] = eigh_adjoint(d[w], d[v], w, v, UPLO)


@adjoint(np.linalg.svd, outputs=3)
def svd(u, s, vh, a, full_matrices=True):
    d[a] = svd_adjoint(d[u], d[s], d[vh], u, s, vh, full_matrices)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(y, a, UPLO="L"):
    # eigh's rule with no gradient for the eigenvectors: v diag(g) v^T on the triangle read
    w, v = xp.linalg.eigh(a, UPLO)
    d[a] = to_triangle((v * xp.expand_dims(d[y], -2)) @ xp.swapaxes(v, -1, -2), UPLO)


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


# ---- splits: the pieces' gradients, put back together ----


@adjoint(np.split, np.array_split, outputs="*")
def split(pieces, x, indices_or_sections, axis=0):
    d[x] = xp.concatenate(d[pieces], axis=axis)


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
    dwv = eigh_tangents(d[a], w, v, UPLO)
    d[w] = dwv[0]
    d[v] = dwv[1]


@tangent(np.linalg.svd, outputs=3)
def svd_tangent(u, s, vh, a, full_matrices=True):
    dusv = svd_tangents(d[a], u, s, vh, full_matrices)
    d[u] = dusv[0]
    d[s] = dusv[1]
    d[vh] = dusv[2]


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(y, a, UPLO="L"):
    w, v = xp.linalg.eigh(a, UPLO)
    d[y] = xp.sum(v * (from_triangle(d[a], UPLO) @ v), axis=-2)


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


# ---- the helpers of these rules: linear maps, each other's adjoints (and the identity) ----


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
