"""Helpers for the rules of NumPy's numerical routines (srcad/adjoints/numeric.py): np.interp,
np.convolve/correlate, np.trapezoid, np.gradient, np.cov/corrcoef, and the index plumbing of
np.insert/delete, np.select, np.ediff1d and np.cumulative_sum.

Each differentiable helper is linear in its first argument and has its transpose here too;
the rules pair them, so that derivatives of derivatives work.
"""

from __future__ import annotations

from typing import Any

import numpy

from srcad.runtime.accumulate import add_at
from srcad.runtime.backend import array_namespace

# ---- np.interp: near any x a weighted sum of two entries of fp ----


def _interp_plan(x: Any, xp: Any, left: Any, right: Any, period: Any) -> tuple[Any, ...]:
    """``(j0, j1, w0, w1, q)``, each shaped like ``x``: ``interp(x, xp, fp)`` is
    ``w0 * fp[j0] + w1 * fp[j1]`` (plus ``left``/``right`` where given) and its slope in
    ``x`` is ``q * (fp[j1] - fp[j0])``. At a breakpoint the interval to its right is taken
    (the one to its left at ``xp[-1]``); outside ``xp``'s range the slope is 0."""
    x = numpy.asarray(x, dtype=float)
    xp = numpy.asarray(xp, dtype=float)
    n = xp.shape[0]
    index = numpy.arange(n)
    if period is not None:
        # as NumPy: both wrapped into one period, xp sorted and extended by one point a side
        period = abs(period)
        x = x % period
        order = numpy.argsort(xp % period)
        inside = (xp % period)[order]
        xp = numpy.concatenate([inside[-1:] - period, inside, inside[:1] + period])
        index = numpy.concatenate([order[-1:], order, order[:1]])
        left = right = None
        n += 2
    if n == 1:
        zero = numpy.zeros(x.shape, dtype=int)
        w0 = numpy.where(x < xp[0], left is None, numpy.where(x > xp[0], right is None, 1.0))
        return zero, zero, w0.astype(float), numpy.zeros(x.shape), numpy.zeros(x.shape)
    i = numpy.clip(numpy.searchsorted(xp, x, side="right"), 1, n - 1)
    low, width = xp[i - 1], xp[i] - xp[i - 1]
    flat = width == 0  # repeated last points: x == xp[-1], where NumPy gives fp[-1]
    safe = numpy.where(flat, 1.0, width)
    w1 = numpy.where(flat, 1.0, (x - low) / safe)
    q = numpy.where(flat, 0.0, 1.0 / safe)
    below, above = x < xp[0], x > xp[-1]
    w0 = numpy.where(below, float(left is None), numpy.where(above, 0.0, 1.0 - w1))
    w1 = numpy.where(below, 0.0, numpy.where(above, float(right is None), w1))
    q = numpy.where(below | above, 0.0, q)
    return index[i - 1], index[i], w0, w1, q


def interp_slope(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """The derivative of ``np.interp(x, xp, fp, ...)`` in ``x`` (linear in ``fp``)."""
    j0, j1, _, _, q = _interp_plan(x, xp, left, right, period)
    fp = array_namespace(fp).asarray(fp)
    return q * (fp[j1] - fp[j0])


def interp_slope_grad(
    g: Any, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """The transpose of :func:`interp_slope` in ``fp``: ``g`` (shaped like ``x``) back onto
    ``fp``'s shape."""
    j0, j1, _, _, q = _interp_plan(x, xp, left, right, period)
    return _onto(fp, (j1, g * q), (j0, -g * q))


def interp_fp_jvp(
    t: Any, x: Any, xp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """The derivative of ``np.interp(x, xp, fp, ...)`` in ``fp`` along ``t``."""
    j0, j1, w0, w1, _ = _interp_plan(x, xp, left, right, period)
    t = array_namespace(t).asarray(t)
    return w0 * t[j0] + w1 * t[j1]


def interp_fp_grad(
    g: Any, x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Any:
    """The transpose of :func:`interp_fp_jvp`: ``g`` (shaped like ``x``) onto ``fp``."""
    j0, j1, w0, w1, _ = _interp_plan(x, xp, left, right, period)
    return _onto(fp, (j0, g * w0), (j1, g * w1))


def _onto(like: Any, *terms: tuple[Any, Any]) -> Any:
    """Zeros shaped like ``like`` with each ``(index, value)`` added at its index."""
    xp = array_namespace(*(v for _, v in terms))
    out = xp.zeros(numpy.shape(like))
    for index, value in terms:
        add_at(out, index, xp.broadcast_to(value, numpy.shape(index)))
    return out


# ---- np.convolve and np.correlate: the gradient of any mode is that of mode 'full' of
# the gradient padded with zeros where the mode cut the full result ----

_MODES = {0: "valid", 1: "same", 2: "full"}  # NumPy's mode numbers


def full_padding(a: Any, v: Any, mode: Any = "full", correlate: bool = False) -> Any:
    """The pad widths that make the result of ``np.convolve(a, v, mode)`` (or of
    ``np.correlate``) its 'full' result, the parts the mode cut off as zeros."""
    m, n = numpy.size(a), numpy.size(v)
    mode = _MODES.get(mode, mode) if isinstance(mode, int) else mode
    if mode == "full":
        return ((0, 0),)
    if mode == "valid":
        start, kept = min(m, n) - 1, abs(m - n) + 1
    elif correlate and n > m:  # NumPy correlates the other way round and reverses
        start, kept = m // 2, n
    else:
        start, kept = (min(m, n) - 1) // 2, max(m, n)
    return ((start, m + n - 1 - start - kept),)


# ---- np.trapezoid: sum over the axis of diff(X) * (y[1:] + y[:-1]) / 2, X the points ----


def _ramp(xp: Any, shape: tuple[int, ...], axis: int) -> Any:
    """0, 1, 2, ... along ``axis``, shaped to broadcast against ``shape``."""
    spread = [1] * len(shape)
    spread[axis] = shape[axis]
    return xp.reshape(xp.arange(shape[axis], dtype=float), tuple(spread))


def sample_points_piece(t: Any, x: Any, y: Any, axis: int = -1, which: int = 0) -> Any:
    """Points along ``axis``, shaped like ``y``, from the ``x`` (``which`` 0) or the ``dx``
    (``which`` 1) of ``np.trapezoid(y, x, dx, axis)`` given as ``t``: ``t`` itself spread
    over ``y`` (zeros where ``x`` is None), or ``t * (0, 1, 2, ...)`` (zeros where ``x`` is
    given, as NumPy then ignores ``dx``). Linear in ``t``."""
    xp = array_namespace(t, y)
    shape = numpy.shape(y)
    ndim = len(shape)
    axis = axis % ndim
    n = shape[axis]
    if (x is None) != (which == 1):
        return xp.zeros(shape)
    if which == 1:
        if numpy.ndim(t) != 0:
            raise ValueError("srcad differentiates np.trapezoid with a number for dx")
        return xp.zeros(shape) + t * _ramp(xp, shape, axis)
    t = xp.asarray(t, dtype=float)
    if numpy.ndim(x) == 1 and numpy.shape(x)[0] == n:
        return xp.zeros(shape) + xp.reshape(t, _ramp(numpy, shape, axis).shape)
    padded = (1,) * (ndim - numpy.ndim(x)) + numpy.shape(x)
    if numpy.broadcast_shapes(padded, shape) != shape or padded[axis] != n:
        raise ValueError(
            "srcad differentiates np.trapezoid with x 1-D along the axis or broadcasting to "
            f"y's shape, not x of shape {numpy.shape(x)} for y of shape {shape}"
        )
    return xp.zeros(shape) + t


def sample_points(x: Any, dx: Any, y: Any, axis: int = -1) -> Any:
    """The points ``np.trapezoid(y, x, dx, axis)`` takes ``y``'s samples at, shaped like
    ``y``."""
    return sample_points_piece(x, x, y, axis, 0) + sample_points_piece(dx, x, y, axis, 1)


def sample_points_grad(g: Any, x: Any, y: Any, axis: int = -1, which: int = 0) -> Any:
    """The transpose of :func:`sample_points_piece`: ``g`` (shaped like ``y``) onto the
    shape of ``x`` (``which`` 0) or of a number ``dx`` (1)."""
    xp = array_namespace(g)
    shape = numpy.shape(y)
    axis = axis % len(shape)
    if (x is None) != (which == 1):
        return xp.zeros(() if x is None else numpy.shape(x))
    if which == 1:
        return xp.sum(g * _ramp(xp, shape, axis))
    if numpy.ndim(x) == 1:
        return xp.sum(g, axis=tuple(k for k in range(len(shape)) if k != axis))
    lead = len(shape) - numpy.ndim(x)
    kept = tuple(k for k, n in enumerate(numpy.shape(x)) if n == 1)
    summed = xp.sum(g, axis=tuple(range(lead))) if lead else g
    return xp.sum(summed, axis=kept, keepdims=True) if kept else summed


def pair_sum(v: Any, axis: int = -1) -> Any:
    """``v[1:] + v[:-1]`` along ``axis``."""
    axis = axis % v.ndim
    before = (slice(None),) * axis
    return v[before + (slice(1, None),)] + v[before + (slice(None, -1),)]


def unpair_sum(s: Any, axis: int = -1) -> Any:
    """The transpose of :func:`pair_sum`: each pair's value back onto both its entries."""
    xp = array_namespace(s)
    axis = axis % s.ndim
    low = [(0, 0)] * s.ndim
    high = [(0, 0)] * s.ndim
    low[axis], high[axis] = (1, 0), (0, 1)
    return xp.pad(s, low) + xp.pad(s, high)


# ---- np.gradient along one axis: a linear map with a stencil of three entries ----


def _gradient_axis(f: Any, axis: Any) -> int:
    ndim = numpy.ndim(f)
    if isinstance(axis, (tuple, list)) and len(axis) == 1:
        axis = axis[0]
    if axis is None and ndim == 1:
        axis = 0
    if not isinstance(axis, (int, numpy.integer)):
        raise ValueError(
            "srcad differentiates np.gradient along one axis (a 1-d array, or axis=k), "
            "not a list of derivatives"
        )
    return int(axis) % ndim


def gradient_along(t: Any, spacing: tuple = (), axis: Any = None, edge_order: int = 1) -> Any:
    """``np.gradient(t, *spacing, axis=axis, edge_order=edge_order)`` along one axis."""
    axis = _gradient_axis(t, axis)
    return array_namespace(t).gradient(t, *spacing, axis=axis, edge_order=edge_order)


def gradient_transposed(g: Any, spacing: tuple = (), axis: Any = None, edge_order: int = 1) -> Any:
    """The transpose of :func:`gradient_along` (``g`` shaped like its result)."""
    xp = array_namespace(g)
    axis = _gradient_axis(g, axis)
    n = g.shape[axis]
    # each result i reads entries s(i), s(i) + 1, s(i) + 2 at most, with distinct remainders
    # mod 3: NumPy's own coefficients come out of three probes, one per remainder
    spots = numpy.arange(n)
    start = numpy.clip(spots - 1, 0, max(n - 3, 0))
    moved = xp.moveaxis(g, axis, -1)
    out = xp.zeros(moved.shape, dtype=moved.dtype)
    for r in range(3):
        probe = (spots % 3 == r).astype(float)
        coefficient = numpy.gradient(probe, *spacing, edge_order=edge_order)
        source = start + (r - start) % 3
        kept = source < n
        add_at(out, (..., source[kept]), moved[..., kept] * xp.asarray(coefficient[kept]))
    return xp.moveaxis(out, -1, axis)


# ---- np.cov and np.corrcoef: the variables as rows of one matrix ----


def _rows(v: Any, rowvar: bool) -> Any:
    """``v`` as NumPy's cov takes it: one variable a row."""
    xp = array_namespace(v)
    v = xp.asarray(v, dtype=float)
    if v.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    rows = xp.reshape(v, (1, -1)) if v.ndim < 2 else v
    return rows.T if not rowvar and rows.shape[0] != 1 else rows


def cov_rows(m: Any, y: Any = None, rowvar: bool = True) -> Any:
    """The matrix ``np.cov(m, y, rowvar)`` takes the covariances of the rows of."""
    xp = array_namespace(m, y)
    rows = _rows(m, rowvar)
    return rows if y is None else xp.concatenate([rows, _rows(y, rowvar)], axis=0)


def _rows_shape(v: Any, rowvar: bool) -> tuple[int, ...]:
    return _rows(numpy.zeros(numpy.shape(v)), rowvar).shape


def cov_rows_part(g: Any, m: Any, y: Any = None, rowvar: bool = True, which: int = 0) -> Any:
    """The transpose of :func:`cov_rows_piece`: the rows of ``g`` that came from ``m``
    (``which`` 0) or ``y`` (1), in that argument's shape."""
    xp = array_namespace(g)
    like = m if which == 0 else y
    if like is None:
        return xp.zeros(())
    k = _rows_shape(m, rowvar)[0]
    part = g[:k] if which == 0 else g[k:]
    # undo _rows: a transpose where rowvar is False and like has several rows
    if not rowvar and numpy.ndim(like) == 2 and numpy.shape(like)[0] != 1:
        part = part.T
    return xp.reshape(part, numpy.shape(like))


def cov_rows_piece(t: Any, m: Any, y: Any = None, rowvar: bool = True, which: int = 0) -> Any:
    """Zeros shaped like ``cov_rows(m, y, rowvar)`` with ``t`` in the rows of ``m``
    (``which`` 0) or ``y`` (1)."""
    xp = array_namespace(t)
    k, n = _rows_shape(m, rowvar)
    out = xp.zeros((k + (0 if y is None else _rows_shape(y, rowvar)[0]), n))
    if which == 1 and y is None:
        return out
    out[(slice(None, k) if which == 0 else slice(k, None),)] = _rows(t, rowvar)
    return out


def cov_scale(rows: Any, bias: bool = False, ddof: Any = None) -> Any:
    """What ``np.cov`` divides the sums of products by."""
    if ddof is None:
        ddof = 0 if bias else 1
    return rows.shape[1] - ddof


def symmetric(a: Any) -> Any:
    """``a + a.T``: its own transpose."""
    return a + a.T


# ---- np.select ----


def chosen(condlist: Any, i: int) -> Any:
    """Where ``np.select(condlist, choicelist, default)`` takes ``choicelist[i]`` (the
    first condition that holds is ``condlist[i]``); for ``i = -1``, the default."""
    xp = array_namespace(*condlist)
    taken = xp.zeros((), dtype=bool)
    for k, condition in enumerate(condlist):
        condition = xp.asarray(condition, dtype=bool)
        if k == i:
            return condition & ~taken
        taken = taken | condition
    return ~taken


# ---- np.insert and np.delete: where each element of the result came from ----


def insert_sources(arr: Any, obj: Any, values: Any, axis: Any = None, which: int = 0) -> Any:
    """For each element of ``np.insert(arr, obj, values, axis)``: the flat index in ``arr``
    (``which`` 0) or in ``values`` (1) it came from, or -1 where it came from the other."""
    own = numpy.arange(numpy.size(arr)).reshape(numpy.shape(arr))
    inserted = numpy.arange(numpy.size(values)).reshape(numpy.shape(values))
    if which == 0:
        return numpy.insert(own, obj, numpy.full(numpy.shape(values), -1), axis)
    return numpy.insert(numpy.full(numpy.shape(arr), -1), obj, inserted, axis)


def delete_sources(arr: Any, obj: Any, axis: Any = None) -> Any:
    """For each element of ``np.delete(arr, obj, axis)``: its flat index in ``arr``."""
    own = numpy.arange(numpy.size(arr)).reshape(numpy.shape(arr))
    return numpy.delete(own, obj, axis)


def gather_sources(g: Any, sources: Any, like: Any) -> Any:
    """``g`` summed onto ``like``'s shape: each element at the flat index ``sources``
    names (none where it is -1)."""
    xp = array_namespace(g)
    out = xp.zeros(numpy.size(like))
    kept = sources >= 0
    add_at(out, sources[kept], xp.broadcast_to(g, sources.shape)[kept])
    return xp.reshape(out, numpy.shape(like))


def spread_sources(t: Any, sources: Any) -> Any:
    """The transpose of :func:`gather_sources`: ``t``'s element each source names."""
    xp = array_namespace(t)
    flat = xp.reshape(xp.asarray(t, dtype=float), (-1,))
    if not flat.size:  # nothing to take: every source is -1
        return xp.zeros(sources.shape)
    return xp.where(sources >= 0, flat[numpy.maximum(sources, 0)], 0.0)


# ---- shape stand-ins ----


def ediff1d_parts(ary: Any, to_end: Any = None, to_begin: Any = None) -> list[Any]:
    """Stand-ins shaped like the three parts ``np.ediff1d`` joins: ``to_begin``, the
    differences, ``to_end``."""
    sizes = (numpy.size(to_begin), max(numpy.size(ary) - 1, 0), numpy.size(to_end))
    sizes = tuple(0 if p is None else n for p, n in zip((to_begin, 0, to_end), sizes))
    return [numpy.broadcast_to(numpy.zeros(()), (n,)) for n in sizes]


def initial_parts(x: Any, axis: Any = None, include_initial: bool = False) -> list[Any]:
    """Stand-ins shaped like the parts of ``np.cumulative_sum(x, axis=axis,
    include_initial=...)``: the initial zeros (none without them) and the sums."""
    shape = list(numpy.shape(x))
    if axis is not None:
        shape[axis] = int(include_initial)
        initial = tuple(shape)
    else:
        initial = (int(include_initial),)
    return [numpy.broadcast_to(numpy.zeros(()), initial), numpy.zeros(numpy.shape(x))]


def poly_powers(p: Any) -> Any:
    """The power of ``x`` each coefficient of ``np.polyval(p, x)`` multiplies."""
    if numpy.ndim(p) != 1:
        raise ValueError("srcad differentiates np.polyval with 1-d coefficients")
    return numpy.arange(numpy.shape(p)[0] - 1, -1, -1)


def vander_powers(x: Any, N: Any = None, increasing: bool = False) -> Any:
    """The power of ``x`` in each column of ``np.vander(x, N, increasing)``."""
    n = numpy.shape(x)[0] if N is None else N
    return numpy.arange(n) if increasing else numpy.arange(n - 1, -1, -1)
