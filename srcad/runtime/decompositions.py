"""Helpers for the rules of matrix decompositions (eigh, svd, eig, lstsq) and of splits:
the checks that refuse what has no derivative (a full SVD's extra columns, complex
eigenvalues, a rank-deficient least-squares problem), each the identity where it passes,
and the triangle maps of eigh. The rules themselves are written out in ops that have rules
(srcad/adjoints/decompositions.py), so that they differentiate again.
"""

from __future__ import annotations

from typing import Any

from srcad.runtime.accumulate import prod_others
from srcad.runtime.backend import array_namespace


def _t(x: Any) -> Any:
    return array_namespace(x).swapaxes(x, -1, -2)


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


def reduced_svd(u: Any, vh: Any, full_matrices: bool = True) -> Any:
    """``u`` itself, once the SVD is known to be reduced (or of a square matrix): the extra
    columns of a full SVD's ``u`` or ``vh`` are any orthonormal completion, without a
    derivative (JAX refuses them too)."""
    if full_matrices and u.shape[-2] != vh.shape[-1]:
        raise ValueError(
            "srcad differentiates the reduced SVD only: pass full_matrices=False for "
            "non-square matrices (the extra columns of the full SVD are not unique)"
        )
    return u


def split_axis(x: Any, kind: str) -> int:
    """The axis ``np.hsplit`` (``"h"``), ``vsplit`` (``"v"``) or ``dsplit`` (``"d"``) uses."""
    if kind == "h":
        return 1 if x.ndim > 1 else 0
    return 0 if kind == "v" else 2


def cofactors(a: Any, det: Any) -> Any:
    """The matrix of cofactors of ``a`` (``det * inv(a)^T`` where ``a`` is invertible), the
    gradient of ``np.linalg.det``: where ``det`` is 0 (``a`` singular), through the SVD,
    ``a = u s vh``: ``det(u) det(vh) u diag(prod of the other s) vh``."""
    xp = array_namespace(a)
    if not xp.any(det == 0):
        return xp.expand_dims(xp.expand_dims(det, -1), -1) * _t(xp.linalg.inv(a))
    u, s, vh = xp.linalg.svd(a)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    others = xp.expand_dims(prod_others(s, -1), -2)
    return xp.expand_dims(xp.expand_dims(sign, -1), -1) * ((u * others) @ vh)


def split_piece(x: Any, k: int, sections: Any, axis: Any = 0, even: bool = True) -> Any:
    """``np.split(x, sections, axis)[k]`` (``np.array_split``'s where not ``even``; ``axis``
    ``"h"``, ``"v"`` or ``"d"`` for ``np.hsplit``'s and the others'): one piece of a split,
    picked by a number known only at run time."""
    return _pieces(x, sections, axis, even)[1][k]


def unsplit_piece(g: Any, x: Any, k: int, sections: Any, axis: Any = 0, even: bool = True) -> Any:
    """The adjoint of :func:`split_piece`: ``g`` where the piece came from, zero elsewhere."""
    xp = array_namespace(g, x)
    axis, pieces = _pieces(xp.zeros_like(x), sections, axis, even)
    pieces[k] = xp.broadcast_to(g, pieces[k].shape)
    return xp.concatenate(pieces, axis=axis)


def _pieces(x: Any, sections: Any, axis: Any, even: bool) -> tuple[int, list[Any]]:
    """The axis :func:`split_piece` splits along, and the pieces."""
    xp = array_namespace(x)
    axis = split_axis(x, axis) if isinstance(axis, str) else axis
    return axis, list((xp.split if even else xp.array_split)(x, sections, axis=axis))


def qr_factor(r: Any, mode: str = "reduced") -> Any:
    """``r`` itself, once it is known to be square: srcad differentiates the reduced QR of a
    square or tall matrix only (a wide one's ``q`` does not determine the extra columns)."""
    if mode not in ("reduced", "complete") or r.ndim < 2 or r.shape[-2] != r.shape[-1]:
        raise ValueError(
            "srcad differentiates np.linalg.qr in mode='reduced' of square or tall matrices "
            f"only (got mode={mode!r} and r of shape {tuple(r.shape)})"
        )
    return r


def full_rank(a: Any, rank: Any) -> Any:
    """``a`` itself, once ``np.linalg.lstsq`` found it of full rank: where it is not, the
    solution jumps with the singular values ``rcond`` cuts, and has no derivative."""
    if int(rank) < min(a.shape[-2:]):
        raise ValueError(
            f"srcad differentiates np.linalg.lstsq of a matrix of full rank only: this one "
            f"of shape {tuple(a.shape)} has rank {int(rank)} (rcond cut its smallest singular "
            "values); remove the dependent columns, or regularize"
        )
    return a


def residuals_like(v: Any, res: Any) -> Any:
    """``v`` (per column of ``b``) as ``lstsq``'s residuals: empty where those are (a
    square or wide ``a``, whose fit leaves none)."""
    return v if res.shape[0] else res * 0


def residuals_back(g: Any, v: Any) -> Any:
    """The adjoint of :func:`residuals_like`: ``g`` where the residuals exist, else zeros
    shaped like ``v``."""
    return g if g.shape[0] else array_namespace(v).zeros_like(v)


def real_eig(v: Any, w: Any, values: Any = None) -> Any:
    """``v`` itself, once ``np.linalg.eig``'s eigenvalues ``w`` are known to be real (and
    the same as ``values``, those ``eigvals`` returned, where given)."""
    xp = array_namespace(v, w)
    if xp.iscomplexobj(w) or xp.iscomplexobj(v):
        raise ValueError(
            "srcad differentiates np.linalg.eig / eigvals of real matrices with real, distinct "
            "eigenvalues only: these eigenvalues are complex (for a symmetric matrix use "
            "np.linalg.eigh)"
        )
    if values is not None and not bool(xp.all(w == values)):
        raise ValueError("np.linalg.eig and eigvals disagree on this matrix's eigenvalues")
    return v
