"""Helpers for the rules of matrix decompositions (eigh, svd) and of splits.

The formulas are the standard ones for symmetric eigendecompositions and the reduced SVD
(e.g. Giles 2008; Townsend 2016): with ``F[i, j] = 1 / (w[j] - w[i])`` (eigh) or
``1 / (s[j]**2 - s[i]**2)`` (svd) off the diagonal. They need distinct eigenvalues /
singular values (and, for the SVD, nonzero singular values).
"""

from __future__ import annotations

from typing import Any

from srcad.runtime.backend import array_namespace


def _t(x: Any) -> Any:
    return array_namespace(x).swapaxes(x, -1, -2)


def _gaps(values: Any) -> Any:
    """``1 / (values[j] - values[i])`` off the diagonal, 0 on it."""
    xp = array_namespace(values)
    eye = xp.eye(values.shape[-1], dtype=values.dtype)
    gap = values[..., None, :] - values[..., :, None]
    return (1 - eye) / (gap + eye)


def from_triangle(g: Any, uplo: str = "L") -> Any:
    """The symmetric matrix ``eigh`` sees when it reads one triangle of ``g``."""
    xp = array_namespace(g)
    if uplo.upper() == "L":
        return xp.tril(g) + xp.triu(_t(g), 1)
    return xp.triu(g) + xp.tril(_t(g), -1)


def to_triangle(g: Any, uplo: str = "L") -> Any:
    """The adjoint of :func:`from_triangle`: a gradient on the triangle ``eigh`` reads."""
    xp = array_namespace(g)
    if uplo.upper() == "L":
        return xp.tril(g) + xp.tril(_t(g), -1)
    return xp.triu(g) + xp.triu(_t(g), 1)


def eigh_adjoint(gw: Any, gv: Any, w: Any, v: Any, uplo: str = "L") -> Any:
    """The gradient of ``eigh``'s input from those of its eigenvalues and eigenvectors."""
    xp = array_namespace(w, v)
    inner = _gaps(w) * (_t(v) @ gv) + xp.eye(w.shape[-1], dtype=w.dtype) * gw[..., None, :]
    return to_triangle(v @ inner @ _t(v), uplo)


def eigh_tangents(da: Any, w: Any, v: Any, uplo: str = "L") -> tuple[Any, Any]:
    """The tangents of ``eigh``'s eigenvalues and eigenvectors for input tangent ``da``."""
    xp = array_namespace(da, w, v)
    p = _t(v) @ from_triangle(da, uplo) @ v
    return xp.diagonal(p, axis1=-2, axis2=-1), v @ (_gaps(w) * p)


def svd_adjoint(
    gu: Any, gs: Any, gvh: Any, u: Any, s: Any, vh: Any, full_matrices: bool = True
) -> Any:
    """The gradient of a reduced ``svd``'s input from those of ``u``, ``s`` and ``vh``."""
    _reduced(u, vh, full_matrices)
    xp = array_namespace(u, s, vh)
    v, gv = _t(vh), _t(gvh)
    f = _gaps(s * s)
    j, k = _t(u) @ gu, vh @ gv
    eye = xp.eye(s.shape[-1], dtype=s.dtype)
    core = (f * (j - _t(j))) * s[..., None, :] + s[..., :, None] * (f * (k - _t(k)))
    core = core + eye * gs[..., None, :]
    grad = u @ core @ vh
    inv_s = 1 / s
    if u.shape[-2] > s.shape[-1]:  # the part of gu outside u's columns
        grad = grad + (gu - u @ j) * inv_s[..., None, :] @ vh
    if vh.shape[-1] > s.shape[-1]:
        grad = grad + u @ (inv_s[..., :, None] * _t(gv - v @ k))
    return grad


def svd_tangents(
    da: Any, u: Any, s: Any, vh: Any, full_matrices: bool = True
) -> tuple[Any, Any, Any]:
    """The tangents of a reduced ``svd``'s ``u``, ``s`` and ``vh`` for input tangent
    ``da``."""
    _reduced(u, vh, full_matrices)
    xp = array_namespace(da, u, s, vh)
    v = _t(vh)
    f = _gaps(s * s)
    p = _t(u) @ da @ v
    ds = xp.diagonal(p, axis1=-2, axis2=-1)
    du = u @ (f * (p * s[..., None, :] + s[..., :, None] * _t(p)))
    dv = v @ (f * (s[..., :, None] * p + _t(p) * s[..., None, :]))
    inv_s = 1 / s
    if u.shape[-2] > s.shape[-1]:
        du = du + (da @ v - u @ p) * inv_s[..., None, :]
    if v.shape[-2] > s.shape[-1]:
        dv = dv + (_t(da) @ u - v @ _t(p)) * inv_s[..., None, :]
    return du, ds, _t(dv)


def _reduced(u: Any, vh: Any, full_matrices: bool) -> None:
    """Refuse the full SVD of a non-square matrix (its extra columns have no derivative)."""
    if full_matrices and u.shape[-2] != vh.shape[-1]:
        raise ValueError(
            "srcad differentiates the reduced SVD only: pass full_matrices=False for "
            "non-square matrices"
        )


def split_axis(x: Any, kind: str) -> int:
    """The axis ``np.hsplit`` (``"h"``), ``vsplit`` (``"v"``) or ``dsplit`` (``"d"``) uses."""
    if kind == "h":
        return 1 if x.ndim > 1 else 0
    return 0 if kind == "v" else 2


def qr_factor(r: Any, mode: str = "reduced") -> Any:
    """``r`` itself, once it is known to be square: srcad differentiates the reduced QR of a
    square or tall matrix only (a wide one's ``q`` does not determine the extra columns)."""
    if mode not in ("reduced", "complete") or r.ndim < 2 or r.shape[-2] != r.shape[-1]:
        raise ValueError(
            "srcad differentiates np.linalg.qr in mode='reduced' of square or tall matrices "
            f"only (got mode={mode!r} and r of shape {tuple(r.shape)})"
        )
    return r
