"""Helpers the generated adjoint code calls: undo broadcasting and reductions, scatter.

Each helper is short and works on any array type with NumPy-style methods.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy

from srcad.runtime.backend import array_namespace
from srcad.runtime.lazy import is_lazy


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(getattr(x, "shape", ()))


def _normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(a % ndim if ndim else a for a in axis))


_NUMPY_SCALARS = (float, numpy.ndarray, numpy.generic)


def unbroadcast(g: Any, x: Any) -> Any:
    """Sum ``g`` over the axes along which ``x`` was broadcast, giving ``x``'s shape (and
    only ``g``'s real part for a real ``x`` that met complex values)."""
    if _complex(g) and not _complex(x):
        g = g.real
    shape = _shape(x)
    if isinstance(x, (list, tuple)) and x and hasattr(g, "shape"):
        # an array's gradient for a sequence of arrays (np.array(t) of a tuple of rows):
        # the shape NumPy stacks it to, not a number's (it was summed to one number)
        shape = (len(x), *_shape(x[0]))
        if len(_shape(g)) < len(shape):  # (a smaller gradient: broadcast to the stack)
            xp = array_namespace(g)
            return xp.broadcast_to(xp.asarray(g, dtype=getattr(x[0], "dtype", None)), shape)
        return unbroadcast_to(g, shape)
    if _shape(g) == shape:
        if not shape and isinstance(x, numpy.ndarray) and not isinstance(g, numpy.ndarray):
            return numpy.asarray(g)  # a number for a 0-d array, which updates index
        return g
    if len(_shape(g)) < len(shape):
        xp = array_namespace(g, x)
        return _broadcast_chunked(xp, xp.asarray(g, dtype=x.dtype), x)
    g = unbroadcast_to(g, shape)
    if not shape and not hasattr(x, "shape"):
        return g[()]
    return g


def real_like(g: Any, x: Any) -> Any:
    """``g``, only its real part when ``x`` is real: the gradient of a real parameter that
    met complex values (the transpose of its promotion to complex)."""
    if _complex(g) and not _complex(x):
        return g.real
    return g


def _complex(x: Any) -> bool:
    """Whether ``x`` is complex (a dtype of kind "c", or a Python complex number)."""
    return getattr(getattr(x, "dtype", None), "kind", None) == "c" or type(x) is complex


def unbroadcast_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``g`` down to ``shape`` (``g``'s shape is ``shape`` broadcast further)."""
    gshape = _shape(g)
    if gshape == shape:
        return g
    xp = array_namespace(g)
    lead = len(gshape) - len(shape)
    if lead:
        g = xp.sum(g, axis=tuple(range(lead)))
    ones = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if ones:
        g = xp.sum(g, axis=ones, keepdims=True)
    return g


def unreduce(g: Any, x: Any, axis: Any = None, keepdims: bool = False, where: Any = True) -> Any:
    """Broadcast the gradient of a reduction of ``x`` back to ``x``'s shape and dtype (zero
    outside the reduction's mask ``where``)."""
    if where is not True:
        return filled(unreduce(g, x, axis, keepdims), 0, where)
    if not hasattr(x, "shape"):
        return g
    if axis is None and type(x) is numpy.ndarray and isinstance(g, _NUMPY_SCALARS):
        # a whole-array reduction on NumPy, the usual seed: a read-only view of one number
        # (what broadcast_to gives, without its bookkeeping)
        if not isinstance(g, float) and _complex(g) and not _complex(x):
            g = g.real  # a real x that met complex values: the real part
        g = numpy.asarray(g, dtype=x.dtype)
        if not g.ndim:
            view = numpy.ndarray(x.shape, x.dtype, g, 0, (0,) * x.ndim)
            view.flags.writeable = False
            return view
    xp = array_namespace(g, x)
    if _complex(g) and not _complex(x):
        g = xp.real(g)
    g = xp.asarray(g, dtype=x.dtype)
    if axis is not None and not keepdims:
        g = xp.expand_dims(g, _normalize_axes(axis, x.ndim))
    return _broadcast_chunked(xp, g, x)


def _broadcast_chunked(xp: Any, g: Any, x: Any) -> Any:
    """``broadcast_to(g, x.shape)``; for dask arrays in ``x``'s chunks along the axes that
    are broadcast (else one chunk there, and a rechunk when it meets ``x``'s chunks)."""
    if not (is_lazy(g) and is_lazy(x)):
        return xp.broadcast_to(g, x.shape)
    lead = x.ndim - g.ndim
    chunks = tuple(
        c if k < lead or g.shape[k - lead] == 1 else g.chunks[k - lead]
        for k, c in enumerate(x.chunks)
    )
    return xp.broadcast_to(g, x.shape, chunks=chunks)


def keep_reduced(y: Any, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """A reduction's result ``y`` with the reduced axes of ``x`` kept as length 1."""
    if axis is None or keepdims:
        return y
    xp = array_namespace(y, x)
    return xp.expand_dims(y, _normalize_axes(axis, x.ndim))


def count(x: Any, axis: Any = None, keepdims: bool = False, where: Any = True) -> Any:
    """How many elements of ``x`` a reduction over ``axis`` combines (with a mask
    ``where``, how many it keeps in each group: an array of the reduction's shape)."""
    shape = _shape(x)
    if where is not True:
        xp = array_namespace(x)
        return xp.sum(xp.broadcast_to(where, shape), axis=axis, keepdims=keepdims)
    return math.prod(shape[a] for a in _normalize_axes(axis, len(shape)))


def filled(x: Any, value: Any, where: Any = True) -> Any:
    """``x`` with ``value`` outside the mask ``where`` (``x`` itself without one)."""
    if where is True:
        return x
    xp = array_namespace(x)
    x = xp.asarray(x)
    return xp.where(where, x, xp.asarray(value, dtype=x.dtype))


def unit_if_zero(v: Any) -> Any:
    """``v`` with its zeros replaced by ones: a divisor or exponent safe at a kink where the
    factor it goes with is zero (the norm of zeros, ``x ** 0``)."""
    if isinstance(v, numbers.Number):
        return v if v != 0 else 1
    xp = array_namespace(v)
    return xp.where(v == 0, xp.asarray(1, dtype=v.dtype), v)


def extremum_share(
    x: Any,
    y: Any,
    axis: Any = None,
    keepdims: bool = False,
    *,
    initial: Any = None,
    where: Any = True,
) -> Any:
    """Where ``x`` attains the max/min ``y``: 1 / (number of ties), else 0; entries outside
    the mask ``where`` are no candidates, and an ``initial`` value equal to ``y`` is one
    more tie (see :func:`initial_share`)."""
    xp = array_namespace(x)
    x = xp.asarray(x)  # (a Python float: np.max(0.7))
    hits = x == keep_reduced(y, x, axis, keepdims)
    if where is not True:
        hits = hits & where
    hits = xp.astype(hits, x.dtype)
    total = xp.sum(hits, axis=axis, keepdims=True)
    if initial is not None:
        total = total + (keep_reduced(y, x, axis, keepdims) == initial)
    return hits / total


def initial_share(
    x: Any, y: Any, initial: Any, axis: Any = None, keepdims: bool = False, where: Any = True
) -> Any:
    """Where the ``initial`` value of a max/min ``y`` of ``x`` attains it: 1 / (number of
    ties, the initial value among them), else 0; in ``y``'s shape."""
    xp = array_namespace(x, y)
    x = xp.asarray(x)
    hits = x == keep_reduced(y, x, axis, keepdims)
    if where is not True:
        hits = hits & where
    wins = xp.asarray(y == initial)
    total = xp.sum(hits, axis=axis, keepdims=keepdims) + wins
    return xp.astype(wins, x.dtype) / total


def prod_others(x: Any, axis: Any = None, *, where: Any = True) -> Any:
    """For each element of ``x``, the product of the others it was reduced with (those in
    the mask ``where``).

    Exclusive cumulative products from both ends, so zeros in ``x`` are handled exactly.
    """
    xp = array_namespace(x)
    x = filled(xp.asarray(x), 1, where)  # (a Python float: np.prod(0.7))
    axes = _normalize_axes(axis, x.ndim)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    moved = xp.transpose(x, rest + axes)
    flat = xp.reshape(moved, tuple(x.shape[a] for a in rest) + (-1,))
    ones = xp.ones_like(flat[..., :1])
    left = xp.concatenate([ones, xp.cumprod(flat[..., :-1], axis=-1)], axis=-1)
    right = xp.flip(
        xp.concatenate([ones, xp.cumprod(xp.flip(flat[..., 1:], axis=-1), axis=-1)], axis=-1),
        axis=-1,
    )
    others = xp.reshape(left * right, moved.shape)
    inverse = tuple(sorted(range(x.ndim), key=(rest + axes).__getitem__))
    return xp.transpose(others, inverse)


def inverse_axes(axes: Any) -> Any:
    """The permutation that undoes ``transpose(axes)`` (``None`` reverses, its own inverse)."""
    if axes is not None and len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple)):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return None
    n = len(axes)
    return tuple(sorted(range(n), key=lambda i: axes[i] % n))


def seed_like(y: Any, name: str) -> Any:
    """The cotangent a gradient starts from: ``1.0`` for a number or a 0-d array, ones for
    an array of one element (shape ``(1,)``, ``(1, 1)``); any other output has no gradient."""
    shape = _shape(y)
    if not shape:
        return 1.0
    if all(n == 1 for n in shape):
        return array_namespace(y).ones_like(y)
    raise TypeError(
        f"grad needs a function with a scalar output; {name} returned shape {shape}. "
        "Use srcad.vjp or srcad.jacobian for non-scalar outputs"
    )


def zeros_like(x: Any) -> Any:
    """A zero gradient for ``x``: ``0.0`` for a Python number, ``[None, ...]`` for a list,
    else a zero array."""
    if isinstance(x, list):
        # one that adds element by element: code differentiated again accumulates a list's
        # gradient with ``+``, which would join two plain lists
        from srcad.runtime.higher import GradientList  # (it imports this module)

        return GradientList([None] * len(x))
    if not hasattr(x, "shape"):
        return 0.0
    return array_namespace(x).zeros_like(x)


def add_at(buffer: Any, index: Any, g: Any) -> None:
    """``buffer[index] += g`` with repeated indices accumulated (``np.add.at`` semantics);
    a real buffer takes the real part of a complex ``g``."""
    if _complex(g) and not _complex(buffer):
        g = g.real
    if isinstance(buffer, list):
        # a list's gradient (zeros_like): None is an element's zero gradient
        buffer[index] = g if buffer[index] is None else buffer[index] + g
        return
    if _is_basic(index):
        buffer[index] += g
        return
    xp = array_namespace(buffer)
    add = getattr(xp, "add", None)
    if hasattr(add, "at"):
        add.at(buffer, index, g)
    elif getattr(xp, "__name__", "") == "cupy":
        import cupyx

        cupyx.scatter_add(buffer, index, g)
    elif is_lazy(buffer) and _on_host(index):
        _add_at_lazy(buffer, index, g)
    elif is_lazy(buffer):
        raise NotImplementedError(
            "the gradient of indexing a dask array with a dask index (a boolean mask or "
            "indices computed from dask values: their sizes are unknown until computed) "
            "needs a scatter-add dask lacks; use np.where(mask, x, 0) instead of x[mask], or "
            "compute the index first"
        )
    else:
        raise NotImplementedError(
            f"{getattr(xp, '__name__', xp)} has no scatter-add for repeated or boolean "
            "indices (np.add.at); index with integers and slices on these arrays"
        )


def _on_host(index: Any) -> bool:
    """Whether ``index`` is known without computing: ints, slices, NumPy arrays, lists."""
    items = index if isinstance(index, tuple) else (index,)
    return all(
        item is None or item is Ellipsis or isinstance(item, (int, slice, list, numpy.ndarray))
        for item in items
    )


def _add_at_lazy(buffer: Any, index: Any, g: Any) -> None:
    """``add_at`` on a dask array: the positions ``index`` reaches are found with NumPy (on
    the client, one integer per element of ``buffer``), then added in rounds in which no
    position repeats; dask assigns lazily, chunk by chunk."""
    xp = array_namespace(buffer, g)
    positions = numpy.arange(math.prod(buffer.shape)).reshape(buffer.shape)[index]
    pos = positions.reshape(-1)
    values = xp.broadcast_to(xp.asarray(g, dtype=buffer.dtype), positions.shape)
    values = xp.reshape(values, (-1,))
    order = numpy.argsort(pos, kind="stable")
    first = numpy.ones(len(pos), dtype=bool)
    first[1:] = pos[order][1:] != pos[order][:-1]
    starts = numpy.maximum.accumulate(numpy.where(first, numpy.arange(len(pos)), 0))
    rank = numpy.empty(len(pos), dtype=numpy.intp)
    rank[order] = numpy.arange(len(pos)) - starts  # how many times pos came before
    flat = xp.reshape(buffer, (-1,))
    for r in range(int(rank.max()) + 1 if len(pos) else 0):
        chosen = numpy.flatnonzero(rank == r)
        at = pos[chosen]
        flat[at] = flat[at] + values[chosen]
    buffer[...] = xp.reshape(flat, buffer.shape)


def _is_basic(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(
        item is None or item is Ellipsis or isinstance(item, (int, slice)) and item is not True
        for item in items
    )


def unconcatenate(g: Any, xs: Sequence[Any], axis: int = 0) -> list[Any]:
    """Split the gradient of ``concatenate(xs, axis)`` into one piece per input."""
    xp = array_namespace(g)
    bounds = []
    total = 0
    for x in xs[:-1]:
        total += _shape(x)[axis]
        bounds.append(total)
    return list(xp.split(g, bounds, axis=axis))


def unstack(g: Any, axis: int = 0) -> list[Any]:
    """Split the gradient of ``stack(xs, axis)`` into one piece per input."""
    xp = array_namespace(g)
    moved = xp.moveaxis(g, axis, 0)
    return [moved[i, ...] for i in range(moved.shape[0])]


def _matmul_shape(a: Any, b: Any) -> tuple[int, ...]:
    sa, sb = _shape(a), _shape(b)
    if len(sa) == 1 and len(sb) == 1:
        return ()
    if len(sa) == 1:
        return sb[:-2] + sb[-1:]
    if len(sb) == 1:
        return sa[:-1]
    batch = tuple(numpy.broadcast_shapes(sa[:-2], sb[:-2]))
    return batch + (sa[-2], sb[-1])


def grad_matmul_lhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``a @ b`` with respect to ``a``."""
    if a.ndim == 2 and b.ndim == 2 and _shape(g) == (a.shape[0], b.shape[1]):
        return g @ b.T  # the common case, without the general shape bookkeeping
    g = unbroadcast_to(g, _matmul_shape(a, b))
    if a.ndim == 2 and b.ndim == 2:
        return g @ b.T
    xp = array_namespace(g, a, b)
    if b.ndim == 1:
        return g * b if a.ndim == 1 else unbroadcast(xp.expand_dims(g, -1) * b, a)
    if a.ndim == 1:
        return unbroadcast((b @ xp.expand_dims(g, -1))[..., 0], a)
    return unbroadcast(g @ xp.swapaxes(b, -1, -2), a)


def grad_matmul_rhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``a @ b`` with respect to ``b``."""
    if a.ndim == 2 and b.ndim == 2 and _shape(g) == (a.shape[0], b.shape[1]):
        return a.T @ g
    g = unbroadcast_to(g, _matmul_shape(a, b))
    if a.ndim == 2 and b.ndim == 2:
        return a.T @ g
    xp = array_namespace(g, a, b)
    if a.ndim == 1:
        if b.ndim == 1:
            return g * a
        return unbroadcast(xp.expand_dims(a, -1) * xp.expand_dims(g, -2), b)
    if b.ndim == 1:
        return unbroadcast((xp.swapaxes(a, -1, -2) @ xp.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(xp.swapaxes(a, -1, -2) @ g, b)


def _check_dot(a: Any, b: Any) -> None:
    if _ndim(a) > 2 or _ndim(b) > 2:
        raise NotImplementedError(
            "the gradient of np.dot is implemented for arrays of at most 2 dimensions; "
            "use np.matmul or np.einsum for stacked arrays"
        )


def _dot_shape(a: Any, b: Any) -> tuple[int, ...]:
    if _ndim(a) == 0 or _ndim(b) == 0:
        return tuple(numpy.broadcast_shapes(_shape(a), _shape(b)))
    return _matmul_shape(a, b)


def _ndim(x: Any) -> int:
    return len(_shape(x))


def grad_dot_lhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``np.dot(a, b)`` with respect to ``a`` (real where ``a`` is)."""
    return real_like(_grad_dot(g, a, b, lhs=True), a)


def grad_dot_rhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``np.dot(a, b)`` with respect to ``b`` (real where ``b`` is)."""
    return real_like(_grad_dot(g, a, b, lhs=False), b)


def _grad_dot(g: Any, a: Any, b: Any, lhs: bool) -> Any:
    _check_dot(a, b)
    g = unbroadcast_to(g, _dot_shape(a, b))
    if _ndim(a) == 0 or _ndim(b) == 0:
        return unbroadcast(g * b, a) if lhs else unbroadcast(g * a, b)
    return grad_matmul_lhs(g, a, b) if lhs else grad_matmul_rhs(g, a, b)


def grad_inner_lhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``np.inner(a, b)`` (contracting last axes) with respect to ``a``."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        return unbroadcast(g * b, a)
    xp = array_namespace(g, a, b)
    lead = _ndim(a) - 1
    axes = (tuple(range(lead, lead + _ndim(b) - 1)), tuple(range(_ndim(b) - 1)))
    return real_like(xp.tensordot(g, b, axes=axes), a)


def grad_inner_rhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``np.inner(a, b)`` (contracting last axes) with respect to ``b``."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        return unbroadcast(g * a, b)
    xp = array_namespace(g, a, b)
    lead = _ndim(a) - 1
    return real_like(xp.tensordot(g, a, axes=(tuple(range(lead)), tuple(range(lead)))), b)


def grad_einsum(subscripts: str, g: Any, operands: Sequence[Any], i: int) -> Any:
    """Gradient of ``einsum(subscripts, *operands)`` with respect to operand ``i``."""
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        raise NotImplementedError("the gradient of einsum with '...' is not supported yet")
    inputs, _, output = spec.partition("->")
    specs = inputs.split(",")
    if "->" not in spec:
        letters = "".join(specs)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    target = specs[i]
    if len(set(target)) != len(target):
        raise NotImplementedError(
            f"the gradient of einsum for operand {target!r} with a repeated index "
            "(a diagonal) is not supported yet"
        )
    others = [s for j, s in enumerate(specs) if j != i]
    other_ops = [op for j, op in enumerate(operands) if j != i]
    available = set(output).union(*others)
    kept = "".join(c for c in target if c in available)
    xp = array_namespace(g, *operands)
    result = xp.einsum(",".join([output, *others]) + "->" + kept, g, *other_ops)
    x = operands[i]
    result = real_like(result, x)
    if kept == target:
        return result
    missing = tuple(k for k, c in enumerate(target) if c not in available)
    return xp.broadcast_to(xp.expand_dims(result, missing), x.shape)


def grad_solve_rhs(g: Any, a: Any) -> Any:
    """Gradient of ``solve(a, b)`` with respect to ``b``: ``solve(a.T, g)``."""
    xp = array_namespace(g, a)
    return xp.linalg.solve(xp.swapaxes(a, -1, -2), g)


def grad_solve_lhs(gb: Any, x: Any) -> Any:
    """Gradient of ``x = solve(a, b)`` with respect to ``a``, from ``gb`` (that of ``b``)."""
    xp = array_namespace(gb, x)
    if x.ndim == 1:
        return -xp.expand_dims(gb, -1) * xp.expand_dims(x, -2)
    return -(gb @ xp.swapaxes(x, -1, -2))


def undiag(g: Any, x: Any, k: int = 0) -> Any:
    """Gradient of ``np.diag(x, k)``: a diagonal taken or made, the other way round."""
    xp = array_namespace(g, x)
    if x.ndim == 1:
        return xp.diag(g, k)
    out = xp.zeros_like(x)
    n = g.shape[0]
    rows = numpy.arange(n) + max(-k, 0)
    cols = numpy.arange(n) + max(k, 0)
    out[rows, cols] = g
    return out


def uncumsum(g: Any, x: Any, axis: Any = None) -> Any:
    """Gradient of ``np.cumsum(x, axis)``: a cumulative sum from the other end."""
    xp = array_namespace(g, x)
    if axis is None:
        return xp.reshape(xp.flip(xp.cumsum(xp.flip(g))), x.shape)
    return xp.flip(xp.cumsum(xp.flip(g, axis=axis), axis=axis), axis=axis)


def unsort(g: Any, x: Any, axis: int = -1) -> Any:
    """Gradient of ``np.sort(x, axis)``: each element's gradient goes back to where it was."""
    xp = array_namespace(g, x)
    order = xp.argsort(x, axis=axis)
    out = xp.zeros_like(x)
    xp.put_along_axis(out, order, g, axis=axis)
    return out


def unrepeat(g: Any, x: Any, repeats: Any, axis: Any = None) -> Any:
    """Gradient of ``np.repeat(x, repeats, axis)``: each element's copies' gradients summed."""
    xp = array_namespace(g, x)
    if isinstance(repeats, (list, tuple)) or _ndim(repeats) > 0:
        # a count per element (or one count in a list): the copies' sources, gathered back
        count = math.prod(x.shape) if axis is None else x.shape[axis]
        return untake(g, x, xp.repeat(xp.arange(count), repeats), axis)
    repeats = int(repeats)
    if axis is None:
        return xp.reshape(xp.sum(xp.reshape(g, (-1, repeats)), axis=1), x.shape)
    axis = axis % x.ndim
    shape = x.shape[:axis] + (x.shape[axis], repeats) + x.shape[axis + 1 :]
    return xp.sum(xp.reshape(g, shape), axis=axis + 1)


def untile(g: Any, x: Any, reps: Any) -> Any:
    """Gradient of ``np.tile(x, reps)``: the copies' gradients summed."""
    xp = array_namespace(g, x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = max(len(reps), x.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    base = (1,) * (ndim - x.ndim) + tuple(x.shape)
    split = tuple(n for pair in zip(reps, base) for n in pair)
    summed = xp.sum(xp.reshape(g, split), axis=tuple(range(0, 2 * ndim, 2)))
    return xp.reshape(summed, x.shape)


#: np.pad's modes that copy entries of the array (or a constant) into the padding
PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def unpad(g: Any, x: Any, pad_width: Any, mode: str = "constant") -> Any:
    """Gradient of ``np.pad(x, pad_width, mode=mode)``: the inner part, plus (for the modes
    that copy entries of ``x`` into the padding) each copy's gradient added to its source."""
    if mode == "constant":
        widths = numpy.broadcast_to(numpy.asarray(pad_width), (x.ndim, 2))
        index = tuple(slice(int(lo), g.shape[k] - int(hi)) for k, (lo, hi) in enumerate(widths))
        return g[index]
    if mode not in PAD_MODES:
        raise NotImplementedError(f"the gradient of np.pad with mode={mode!r} is not supported")
    # where each entry of the padded array was copied from, found by padding positions
    sources = numpy.pad(numpy.arange(math.prod(x.shape)).reshape(x.shape), pad_width, mode=mode)
    xp = array_namespace(g, x)
    flat = xp.zeros(math.prod(x.shape), dtype=g.dtype)
    add_at(flat, xp.asarray(sources.reshape(-1)), xp.reshape(g, (-1,)))
    return real_like(xp.reshape(flat, x.shape), x)


def untake(g: Any, x: Any, indices: Any, axis: Any = None) -> Any:
    """Gradient of ``np.take(x, indices, axis)``, repeated indices accumulated."""
    xp = array_namespace(g, x)
    out = xp.zeros_like(x)
    if axis is None:
        flat = xp.reshape(out, (-1,))
        add_at(flat, indices, g)
        return xp.reshape(flat, x.shape)
    index = (slice(None),) * (axis % x.ndim) + (indices,)
    add_at(out, index, g)
    return out


def _tensordot_axes(a: Any, b: Any, axes: Any) -> tuple[list[int], list[int]]:
    """The axes of ``a`` and of ``b`` that ``tensordot(a, b, axes)`` contracts, paired."""
    na, nb = _ndim(a), _ndim(b)
    if isinstance(axes, int):
        return list(range(na - axes, na)), list(range(axes))
    xa, xb = axes
    xa = [xa] if isinstance(xa, int) else list(xa)
    xb = [xb] if isinstance(xb, int) else list(xb)
    return [k % na for k in xa], [k % nb for k in xb]


def _inverse_order(order: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def grad_tensordot_lhs(g: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    """Gradient of ``tensordot(a, b, axes)`` with respect to ``a``."""
    xp = array_namespace(g, a, b)
    xa, xb = _tensordot_axes(a, b, axes)
    free_b = [k for k in range(_ndim(b)) if k not in xb]
    lead = _ndim(a) - len(xa)
    # g's trailing axes are b's free ones; what is left is a's free axes, then b's
    # contracted axes in b's order, each standing for its partner axis of a
    out = xp.tensordot(g, b, (list(range(lead, lead + len(free_b))), free_b))
    order = [k for k in range(_ndim(a)) if k not in xa] + [xa[xb.index(j)] for j in sorted(xb)]
    return real_like(xp.transpose(out, _inverse_order(order)), a)


def grad_tensordot_rhs(g: Any, a: Any, b: Any, axes: Any = 2) -> Any:
    """Gradient of ``tensordot(a, b, axes)`` with respect to ``b``."""
    xp = array_namespace(g, a, b)
    xa, xb = _tensordot_axes(a, b, axes)
    free_a = [k for k in range(_ndim(a)) if k not in xa]
    out = xp.tensordot(a, g, (free_a, list(range(len(free_a)))))
    order = [xb[xa.index(i)] for i in sorted(xa)] + [k for k in range(_ndim(b)) if k not in xb]
    return real_like(xp.transpose(out, _inverse_order(order)), b)


def _kron_shapes(a: Any, b: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``a``'s and ``b``'s shapes padded with leading 1s to the same length, as kron does."""
    sa, sb = _shape(a), _shape(b)
    nd = max(len(sa), len(sb))
    return (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb


def _interleave(first: Sequence[int], second: Sequence[int]) -> tuple[int, ...]:
    return tuple(n for pair in zip(first, second) for n in pair)


def grad_kron_lhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``kron(a, b)`` with respect to ``a``."""
    xp = array_namespace(g, a, b)
    sa, sb = _kron_shapes(a, b)
    # kron(a, b)[i*n + k] = a[i] * b[k] on every axis: split each axis of g into (i, k)
    split = xp.reshape(g, _interleave(sa, sb))
    spread = xp.reshape(b, _interleave((1,) * len(sb), sb))
    summed = xp.sum(split * spread, axis=tuple(range(1, 2 * len(sa), 2)))
    return real_like(xp.reshape(summed, _shape(a)), a)


def grad_kron_rhs(g: Any, a: Any, b: Any) -> Any:
    """Gradient of ``kron(a, b)`` with respect to ``b``."""
    xp = array_namespace(g, a, b)
    sa, sb = _kron_shapes(a, b)
    split = xp.reshape(g, _interleave(sa, sb))
    spread = xp.reshape(a, _interleave(sa, (1,) * len(sa)))
    summed = xp.sum(split * spread, axis=tuple(range(0, 2 * len(sa), 2)))
    return real_like(xp.reshape(summed, _shape(b)), b)


def undiagonal(g: Any, x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Gradient of ``np.diagonal(x, offset, axis1, axis2)``: zeros with ``g`` on that diagonal."""
    xp = array_namespace(g, x)
    out = xp.zeros_like(x)
    n = g.shape[-1]
    rows = numpy.arange(n) + max(-offset, 0)
    cols = numpy.arange(n) + max(offset, 0)
    # a view with the two axes last: writing into it writes into out
    xp.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, cols] = g
    return out


def along_axis_index(x: Any, indices: Any, axis: int | None = -1) -> tuple[Any, ...]:
    """The index ``i`` with ``x[i] == take_along_axis(x, indices, axis)``: ``indices`` on
    ``axis``, broadcast position grids on the other axes."""
    if axis is None:
        return tuple(numpy.unravel_index(numpy.asarray(indices) % x.size, x.shape))
    ndim = x.ndim
    axis = axis % ndim
    grids = [
        numpy.arange(n).reshape((1,) * k + (n,) + (1,) * (ndim - k - 1))
        for k, n in enumerate(x.shape)
    ]
    grids[axis] = indices
    return tuple(grids)


def undiff(g: Any, x: Any, n: int = 1, axis: int = -1) -> Any:
    """Gradient of ``np.diff(x, n, axis)``: each difference's gradient goes, with its sign,
    to the two entries it subtracted."""
    xp = array_namespace(g, x)
    axis = axis % x.ndim
    low = [(0, 0)] * x.ndim
    high = [(0, 0)] * x.ndim
    low[axis], high[axis] = (1, 0), (0, 1)
    for _ in range(n):
        g = xp.pad(g, low) - xp.pad(g, high)
    return g


def rolled_position(x: Any, axis: int, start: int = 0) -> int:
    """Where ``np.rollaxis(x, axis, start)`` puts ``axis``."""
    ndim = x.ndim
    axis, start = axis % ndim, start + ndim if start < 0 else start
    return start - 1 if axis < start else start


def cast_gradient(g: Any, like: Any, other: Any) -> Any:
    """``g`` in ``like``'s dtype across a cast between ``like`` and ``other``; zero when
    either side is an integer or boolean array (a cast to integers is flat almost
    everywhere: no derivative flows through it)."""
    xp = array_namespace(g, like)
    kinds = [getattr(getattr(x, "dtype", None), "kind", "f") for x in (like, other)]
    if any(kind in "biu" for kind in kinds):
        return xp.zeros(tuple(like.shape), dtype=like.dtype if kinds[0] == "f" else float)
    if not hasattr(like, "dtype"):
        return g  # a Python number: kept_dtype left it as it was
    g = xp.asarray(g)
    if _complex(g) and not _complex(like):
        g = xp.real(g)  # the transpose of a cast from real to complex
    return xp.astype(g, like.dtype) if g.dtype != like.dtype else g


def joined_shape(x: Any, kind: str) -> tuple[int, ...]:
    """The shape ``x`` takes inside ``np.hstack`` (``"h"``), ``vstack`` (``"v"``),
    ``dstack`` (``"d"``), ``column_stack`` (``"c"``, also ``np.c_``) or ``np.r_`` (``"r"``)
    before they concatenate."""
    shape = _shape(x)
    if kind == "v":
        return shape if len(shape) >= 2 else (1, *shape) if shape else (1, 1)
    if kind == "d":
        if len(shape) >= 3:
            return shape
        return (1, *shape, 1) if len(shape) == 1 else (*shape, 1) if shape else (1, 1, 1)
    if kind == "c" and len(shape) < 2:
        return (shape[0] if shape else 1, 1)
    return shape if shape else (1,)


def join_axis(arrays: Sequence[Any], kind: str) -> int:
    """The axis those functions concatenate along."""
    if kind == "h":
        return 1 if len(_shape(arrays[0])) > 1 else 0
    return {"v": 0, "d": 2, "c": 1, "r": 0}[kind]


def joined_views(arrays: Sequence[Any], kind: str) -> list[Any]:
    """Stand-ins (only their shapes are read) for the arrays as they are concatenated."""
    return [numpy.broadcast_to(numpy.zeros(()), joined_shape(x, kind)) for x in arrays]


def linspace_weights(y: Any, num: int, endpoint: bool = True, axis: int = 0) -> Any:
    """How far along from start to stop each sample of ``y = linspace(...)`` lies (0 to 1),
    shaped to broadcast against ``y``."""
    steps = max(num - 1 if endpoint else num, 1)
    shape = [1] * len(_shape(y))
    shape[axis] = num
    weights = numpy.arange(num, dtype=getattr(y, "dtype", float)) / steps
    return array_namespace(y).asarray(weights.reshape(shape))


def piece_of(g: Any, xs: Sequence[Any], i: int, axis: int | None = 0) -> Any:
    """The part of ``g`` (the gradient of ``concatenate(xs, axis)``) where ``xs[i]`` went."""
    if axis is None:
        sizes = [math.prod(_shape(x)) for x in xs]
        start = sum(sizes[:i])
        return array_namespace(g).reshape(g[start : start + sizes[i]], _shape(xs[i]))
    axis = axis % len(_shape(g))
    start = sum(_shape(x)[axis] for x in xs[:i])
    return g[(slice(None),) * axis + (slice(start, start + _shape(xs[i])[axis]),)]


def weighted(p: Any, b: Any) -> Any:
    """``p * b``, or ``p`` where there are no weights (``b`` is None)."""
    return p if b is None else p * b
