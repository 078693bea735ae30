"""``np.put`` and its relatives (``a.put``, ``np.place``, ``np.fill_diagonal``) as
functional updates, with the gather their adjoint needs."""

from __future__ import annotations

from typing import Any

import numpy

from srcad.runtime.backend import array_namespace
from srcad.runtime.inplace import copied


def put_values(array: Any, indices: Any, values: Any, mode: str = "raise") -> Any:
    """A copy of ``array`` with ``np.put(copy, indices, values, mode)`` done: flat indices,
    values repeated in turn, the last write to a position wins."""
    out = copied(array)
    array_namespace(out).put(out, indices, values, mode=mode)
    return out


def put_gathered(g: Any, indices: Any, values: Any, mode: str = "raise") -> Any:
    """For each element of ``values``, the sum of ``g`` where :func:`put_values` left it
    (the adjoint of ``values``; a write overwritten later leaves nothing)."""
    xp = array_namespace(g)
    positions = flat_positions(indices, g.size, mode)
    # the writer that wins at each position is its last one
    unique, first_from_end = numpy.unique(positions[::-1], return_index=True)
    winners = positions.size - 1 - first_from_end
    n = max(int(numpy.size(values)), 1)
    out = xp.zeros(n, dtype=g.dtype)
    add = xp.add
    add.at(out, xp.asarray(winners % n), xp.reshape(g, (-1,))[xp.asarray(unique)])
    return xp.reshape(out[: numpy.size(values)], numpy.shape(values))


def flat_positions(indices: Any, size: int, mode: str) -> Any:
    """``np.put``'s flat indices as positions in ``range(size)``."""
    positions = numpy.asarray(indices, dtype=numpy.intp).reshape(-1)
    if mode == "wrap":
        return positions % size
    if mode == "clip":
        return numpy.clip(positions, 0, size - 1)
    return numpy.where(positions < 0, positions + size, positions)


def diagonal_positions(shape: tuple[int, ...], wrap: bool = False) -> Any:
    """The flat indices ``np.fill_diagonal`` writes in an array of ``shape``."""
    size = int(numpy.prod(shape))
    if len(shape) == 2:
        step = shape[1] + 1
        end = size if wrap else min(size, shape[1] * shape[1])
    else:
        step = 1 + int(numpy.sum(numpy.cumprod(shape[:-1])))
        end = size
    return numpy.arange(0, end, step)
