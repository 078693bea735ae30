"""Helpers for the rules of ``np.linalg.norm``, ``vector_norm`` and ``matrix_norm`` with an
``ord`` other than the 2-norm / Frobenius norm: the slope (gradient) of each slice's norm,
and its curvature (the Hessian applied to a direction) for second derivatives. The norms
of singular values (``'nuc'``, 2, -2 of a matrix) have a slope of their own,
:func:`singular_slope`, whose rules are written with ``svd`` to differentiate to any
order."""

from __future__ import annotations

from typing import Any

from srcad.runtime.backend import array_namespace


def norm_axes(x: Any, axis: Any = None, kind: str = "norm") -> tuple[int, ...]:
    """The axes of ``x`` a norm reduces, nonnegative: ``kind`` is ``"norm"`` (NumPy's
    ``linalg.norm``), ``"vector"`` (``vector_norm``) or ``"matrix"`` (``matrix_norm``)."""
    ndim = x.ndim
    if kind == "matrix":
        axis = (-2, -1)
    elif axis is None:
        axis = tuple(range(ndim)) if kind == "vector" or ndim != 2 else (0, 1)
    elif isinstance(axis, int):
        axis = (axis,)
    return tuple(a % ndim for a in axis)


#: the matrix norms of singular values: their sum, the largest, the smallest
SINGULAR_ORDS = ("nuc", 2, -2)


def _plan(x: Any, ord: Any, axis: Any, kind: str) -> tuple[Any, tuple[int, ...], bool]:
    """``(ord, axes, matrix)``: ``matrix`` when the norm is a matrix norm over two axes."""
    axes = norm_axes(x, axis, kind)
    matrix = kind == "matrix" or (kind == "norm" and len(axes) == 2)
    if matrix and ord in SINGULAR_ORDS:
        # the rules call singular_slope for these: a slope here would have no third derivative
        raise ValueError(f"the matrix norm with ord={ord!r} has its slope in singular_slope")
    if kind == "norm" and axis is None and x.ndim > 2 and ord is not None:
        raise ValueError("np.linalg.norm with an ord needs a 1-d or 2-d array or an axis")
    if matrix and ord not in (None, "fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        raise ValueError(f"srcad cannot differentiate the matrix norm with ord={ord!r}")
    if not matrix and isinstance(ord, str):
        raise ValueError(f"srcad cannot differentiate the vector norm with ord={ord!r}")
    return ord, axes, matrix


def _kept(v: Any, axes: tuple[int, ...]) -> Any:
    """A reduction over ``axes`` with them kept as length 1."""
    return array_namespace(v).expand_dims(v, axes)


def _share(values: Any, axes: tuple[int, ...], largest: bool) -> Any:
    """Where ``values`` attains its max (min) over ``axes``: 1 / (number of ties), else 0."""
    xp = array_namespace(values)
    best = (xp.max if largest else xp.min)(values, axis=axes, keepdims=True)
    hits = xp.astype(values == best, values.dtype)
    return hits / xp.sum(hits, axis=axes, keepdims=True)


def _to_end(x: Any, axes: tuple[int, ...]) -> Any:
    return array_namespace(x).moveaxis(x, axes, (-2, -1))


def _from_end(x: Any, axes: tuple[int, ...]) -> Any:
    return array_namespace(x).moveaxis(x, (-2, -1), axes)


def singular_weights(s: Any, ord: Any) -> Any:
    """1 for each singular value in ``s`` (descending, last axis) that the norm with ``ord``
    sums (all of them for ``'nuc'``, the largest for 2, the smallest for -2), else 0."""
    xp = array_namespace(s)
    if ord not in SINGULAR_ORDS:
        raise ValueError(f"the matrix norm with ord={ord!r} is not a norm of singular values")
    if ord == "nuc":
        return xp.ones_like(s)
    k = s.shape[-1]
    picked = xp.arange(k) == (0 if ord == 2 else k - 1)
    return xp.zeros_like(s) + xp.astype(picked, s.dtype)


def singular_slope(x: Any, ord: Any, axes: tuple[int, ...]) -> Any:
    """The gradient of the norm of singular values with ``ord`` of each matrix of ``x`` over
    ``axes``: ``u diag(m) vh`` of the reduced SVD, ``m`` the :func:`singular_weights` (at
    tied or zero singular values where they matter, one subgradient)."""
    xp = array_namespace(x)
    u, s, vh = xp.linalg.svd(_to_end(x, axes), full_matrices=False)
    m = singular_weights(s, ord)
    return _from_end((u * xp.expand_dims(m, -2)) @ vh, axes)


def _two(x: Any, axes: tuple[int, ...]) -> Any:
    """The 2-norm (Frobenius norm) over ``axes``, kept, with zeros replaced by ones: its
    slope ``x / norm`` is then 0 at 0, the project's subgradient."""
    xp = array_namespace(x)
    y = xp.sqrt(xp.sum(x * x, axis=axes, keepdims=True))
    return xp.where(y == 0, xp.asarray(1, dtype=y.dtype), y)


def _p(x: Any, ord: Any, axes: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """``(|x| / norm, ok, norm)`` for the p-norm, ``ok`` where the slope is finite."""
    xp = array_namespace(x)
    ax = xp.abs(x)
    y = xp.sum(ax**ord, axis=axes, keepdims=True) ** (1.0 / ord)
    ok = (ax != 0) & (y != 0)
    return xp.where(ok, ax, 1) / xp.where(y == 0, 1, y), ok, y


def norm_slope(x: Any, ord: Any = None, axis: Any = None, kind: str = "norm") -> Any:
    """The gradient of the norm of each slice of ``x`` (shaped like ``x``), with the
    project's conventions at kinks: ties of a max/min split evenly, 0 where a slice or an
    entry is 0 and the norm has no derivative there."""
    ord, axes, matrix = _plan(x, ord, axis, kind)
    xp = array_namespace(x)
    inf = float("inf")
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        return x / _two(x, axes)
    if matrix:
        # 1 / -1: the max / min column sum of |x|; inf / -inf: the row sum
        along = axes[0] if ord in (1, -1) else axes[1]
        sums = xp.sum(xp.abs(x), axis=along, keepdims=True)
        return xp.sign(x) * _share(sums, axes, ord in (1, inf))
    if ord == 0:
        return xp.zeros_like(x)
    if ord == 1:
        return xp.sign(x)
    if ord in (inf, -inf):
        return xp.sign(x) * _share(xp.abs(x), axes, ord == inf)
    ratio, ok, _ = _p(x, ord, axes)
    return xp.where(ok, xp.sign(x) * ratio ** (ord - 1), 0)


def norm_curvature(t: Any, x: Any, ord: Any = None, axis: Any = None, kind: str = "norm") -> Any:
    """The derivative of :func:`norm_slope` along ``t``: each slice's Hessian applied to
    ``t`` (0 for the piecewise linear norms)."""
    ord, axes, matrix = _plan(x, ord, axis, kind)
    xp = array_namespace(x, t)
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        y = _two(x, axes)
        w = x / y
        return (t - w * xp.sum(w * t, axis=axes, keepdims=True)) / y
    if matrix or ord in (0, 1, float("inf"), float("-inf")):
        return xp.zeros_like(x * t)
    # d(sign(x) (|x|/y)^(p-1)) = (p-1)/y ((|x|/y)^(p-2) t - w sum(w t)), w the slope
    ratio, ok, y = _p(x, ord, axes)
    w = xp.where(ok, xp.sign(x) * ratio ** (ord - 1), 0)
    dy = xp.sum(w * t, axis=axes, keepdims=True)
    curve = (ord - 1) / xp.where(y == 0, 1, y) * (ratio ** (ord - 2) * t - w * dy)
    return xp.where(ok, curve, 0)


def norm_third(
    r: Any, t: Any, x: Any, ord: Any = None, axis: Any = None, kind: str = "norm"
) -> Any:
    """The derivative of :func:`norm_curvature` in ``x``: 0 for the piecewise linear norms,
    refused for the others (not reached: the rules write those norms' slopes with ops
    that have rules of their own)."""
    ord, axes, matrix = _plan(x, ord, axis, kind)
    if (matrix and ord in (1, -1, float("inf"), float("-inf"))) or (
        not matrix and ord in (0, 1, float("inf"), float("-inf"))
    ):
        return array_namespace(x).zeros_like(x * r * t)
    raise NotImplementedError(
        f"srcad differentiates the norm with ord={ord!r} twice at most (a third derivative "
        "was asked for)"
    )
