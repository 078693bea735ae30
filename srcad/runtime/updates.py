"""Functional forms of the in-place updates generated code makes, for differentiating it
again."""

from __future__ import annotations

from typing import Any

from srcad.runtime.accumulate import add_at, unbroadcast
from srcad.runtime.inplace import copied


def added_at(buffer: Any, index: Any, g: Any) -> Any:
    """A copy of ``buffer`` with ``g`` added at ``index`` (repeated indices accumulate)."""
    out = copied(buffer)
    add_at(out, index, g)
    return out


def gathered(g: Any, index: Any, like: Any) -> Any:
    """``g[index]`` summed to the shape of ``like`` (the adjoint of adding ``like`` at
    ``index``)."""
    return unbroadcast(g[index], like)
