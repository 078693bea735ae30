"""Helpers for the rules of linear algebra: multi_dot's einsum, matrix powers' blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from srcad.runtime.backend import array_namespace


def chain_subscripts(arrays: Sequence[Any]) -> str:
    """The einsum subscripts of ``multi_dot(arrays)``: a chain of matrix products, where a
    1-d first (last) array is a row (column) vector that the result does not keep."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    n = len(arrays)
    if n + 1 > len(letters):
        raise NotImplementedError("srcad differentiates multi_dot of at most 51 arrays")
    specs = [letters[k] + letters[k + 1] for k in range(n)]
    first, last = letters[0], letters[n]
    if getattr(arrays[0], "ndim", 2) == 1:
        specs[0], first = specs[0][1], ""
    if getattr(arrays[-1], "ndim", 2) == 1:
        specs[-1], last = specs[-1][0], ""
    return ",".join(specs) + "->" + first + last


def upper_block(a: Any, e: Any) -> Any:
    """The block matrix ``[[a, e], [0, a]]`` (of stacked square matrices): a function of
    it has the Fréchet derivative of that function at ``a`` along ``e`` as its upper right
    block (Higham, "Functions of Matrices", 3.2)."""
    xp = array_namespace(a, e)
    e = xp.broadcast_to(xp.asarray(e, dtype=a.dtype), a.shape)
    top = xp.concatenate([a, e], axis=-1)
    bottom = xp.concatenate([xp.zeros_like(a), a], axis=-1)
    return xp.concatenate([top, bottom], axis=-2)


def upper_right(m: Any) -> Any:
    """The upper right quarter of stacked square matrices ``m`` (of even size)."""
    k = m.shape[-1] // 2
    return m[..., :k, k:]


def diagonal_blocks(m: Any) -> Any:
    """The sum of the two diagonal quarters of ``m``: the adjoint of :func:`upper_block` in
    its first argument."""
    k = m.shape[-1] // 2
    return m[..., :k, :k] + m[..., k:, k:]
