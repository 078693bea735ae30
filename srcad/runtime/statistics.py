"""Helpers for the rules of quantiles (median, quantile, percentile) and weighted averages.

A quantile with linear interpolation is, near any input, a fixed weighted sum of the input's
entries: the two order statistics it interpolates between, each split evenly among entries
tied with it (as max and min split ties). ``quantile_grad`` and ``quantile_jvp`` apply those
weights; they are linear in their first argument and each other's adjoints.
"""

from __future__ import annotations

import math
from typing import Any

from srcad.runtime.backend import array_namespace


def _axes(x: Any, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % x.ndim for a in axis)


def _weights(x: Any, q: Any, axis: Any, method: str, percent: bool) -> tuple[Any, Any, tuple]:
    """``(w, q, axes)``: ``w`` of shape ``q.shape + x.shape`` with the quantile of each slice
    along ``axes`` equal to ``sum(w * x)`` over those axes."""
    if method != "linear":
        raise ValueError(
            f"srcad differentiates quantiles with method='linear' only, not {method!r}"
        )
    xp = array_namespace(x)
    q = xp.asarray(q, dtype=x.dtype) * (0.01 if percent else 1)
    axes = _axes(x, axis)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    moved = xp.transpose(x, rest + axes)
    flat = xp.reshape(moved, tuple(x.shape[a] for a in rest) + (-1,))
    n = flat.shape[-1]
    ordered = xp.sort(flat, axis=-1)
    pos = q * (n - 1)
    lo = xp.astype(xp.floor(pos), xp.int64)
    hi = xp.minimum(lo + 1, n - 1)
    frac = pos - lo
    w = xp.zeros(q.shape + flat.shape, dtype=x.dtype)
    for rank, share in ((lo, 1 - frac), (hi, frac)):
        # the value of order statistic ``rank`` of each slice, for each q
        value = xp.take(ordered, xp.reshape(rank, (-1,)), axis=-1)  # rest + (q.size,)
        value = xp.moveaxis(value, -1, 0)
        value = xp.reshape(value, q.shape + value.shape[1:] + (1,))
        hits = xp.astype(flat == value, x.dtype)
        expand = share.reshape(share.shape + (1,) * (flat.ndim)) if q.ndim else share
        w = w + expand * hits / xp.sum(hits, axis=-1, keepdims=True)
    w = xp.reshape(w, q.shape + moved.shape)
    inverse = tuple(sorted(range(x.ndim), key=(rest + axes).__getitem__))
    w = xp.transpose(w, tuple(range(q.ndim)) + tuple(q.ndim + a for a in inverse))
    return w, q, axes


def quantile_grad(
    g: Any, x: Any, q: Any, axis: Any = None, keepdims: bool = False, method: str = "linear",
    percent: bool = False,
) -> Any:  # fmt: skip
    """The gradient of ``quantile(x, q, axis, keepdims=keepdims)`` from that of its result."""
    xp = array_namespace(g, x)
    w, q, axes = _weights(x, q, axis, method, percent)
    g = xp.asarray(g, dtype=x.dtype)
    if not keepdims:
        g = xp.expand_dims(g, tuple(q.ndim + a for a in axes))
    return xp.sum(w * g, axis=tuple(range(q.ndim)))


def quantile_jvp(
    t: Any, x: Any, q: Any, axis: Any = None, keepdims: bool = False, method: str = "linear",
    percent: bool = False,
) -> Any:  # fmt: skip
    """The tangent of ``quantile(x, q, axis, keepdims=keepdims)`` along ``t``."""
    xp = array_namespace(t, x)
    w, q, axes = _weights(x, q, axis, method, percent)
    return xp.sum(w * t, axis=tuple(q.ndim + a for a in axes), keepdims=keepdims)


def spread_weights(weights: Any, a: Any, axis: Any = None) -> Any:
    """``np.average``'s ``weights`` broadcast to ``a``'s shape (ones for ``None``)."""
    xp = array_namespace(a)
    if weights is None:
        return xp.ones_like(a)
    weights = xp.asarray(weights)
    if weights.shape != a.shape:
        if weights.ndim != 1 or not isinstance(axis, int):
            raise ValueError(
                "srcad differentiates np.average with weights shaped like a, or 1-d along an "
                "integer axis"
            )
        shape = [1] * a.ndim
        shape[axis] = -1
        weights = xp.reshape(weights, tuple(shape))
    return xp.broadcast_to(weights, a.shape)


def gather_weights(g: Any, weights: Any, a: Any, axis: Any = None) -> Any:
    """The adjoint of :func:`spread_weights`: a gradient on ``a``'s shape summed back onto
    ``weights``'s."""
    xp = array_namespace(g)
    if weights is None or tuple(xp.asarray(weights).shape) == tuple(a.shape):
        return g
    others = tuple(k for k in range(a.ndim) if k != axis % a.ndim)
    return xp.sum(g, axis=others)


# ---- scipy.stats.multivariate_normal's parameters as SciPy reads them ----


def mvn_dim(x: Any, mean: Any = None, cov: Any = 1) -> int:
    """The dimension SciPy infers: ``mean``'s size, else ``cov``'s order (1 below 2-D)."""
    if mean is not None:
        return int(math.prod(getattr(mean, "shape", ())))
    return int(cov.shape[0]) if getattr(cov, "ndim", 0) >= 2 else 1


def mvn_mean(mean: Any, n: int) -> Any:
    """``mean`` itself, or zeros of length ``n`` when it is None (SciPy's default)."""
    if mean is None:
        return array_namespace().zeros(n)
    return mean


def mvn_cov(cov: Any, n: int) -> Any:
    """The ``(n, n)`` covariance SciPy reads: a scalar times the identity, a 1-d array on
    the diagonal, or a 2-d array's lower triangle (each entry below the diagonal stands for
    both symmetric ones). Linear in ``cov``; :func:`mvn_cov_grad` is its adjoint."""
    xp = array_namespace(cov)
    ndim = getattr(cov, "ndim", 0)
    if ndim == 0:
        return cov * xp.eye(n)
    if ndim == 1:
        return xp.eye(n) * cov
    return xp.tril(cov) + xp.swapaxes(xp.tril(cov, -1), -1, -2)


def mvn_cov_grad(g: Any, cov: Any) -> Any:
    """The gradient of ``cov`` from that of :func:`mvn_cov`'s matrix (the adjoint map)."""
    xp = array_namespace(g)
    ndim = getattr(cov, "ndim", 0)
    if ndim == 0:
        return xp.trace(g)
    if ndim == 1:
        return xp.diagonal(g)
    eye = xp.eye(g.shape[-1], dtype=g.dtype)
    return xp.tril(g + xp.swapaxes(g, -1, -2)) - g * eye
