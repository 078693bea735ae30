"""Rules of ops with several results: slogdet, eigh, svd, and the split family."""

import numpy as np

from srcad.adjoints.registry import adjoint, d, tangent, xp
from srcad.runtime.decompositions import (
    eigh_adjoint,
    eigh_tangents,
    split_axis,
    svd_adjoint,
    svd_tangents,
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
