"""The generated source of a function's derivative, for ``python -m srcad show``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from srcad import api


def source_of(
    func: Callable,
    wrt: int | str | Sequence[int | str] = 0,
    mode: str = "rev",
    example_args: tuple | None = None,
) -> str:
    """The source srcad generates for ``func``'s derivative with respect to ``wrt``:
    reverse mode (``"rev"``, what ``srcad.grad`` runs) or forward mode (``"fwd"``).

    With ``example_args``, pytree arguments (dicts, lists, ...) are expanded leaf by leaf
    as they would be for a call with those arguments.
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', got {mode!r}")
    if mode == "fwd":
        return api.source(func, wrt=wrt, mode="fwd")
    derivative = api.grad(func, wrt=wrt)
    if example_args is None:
        return api.source(derivative)
    values: list[Any] = list(example_args)
    structures = api._structures(values, derivative._wrt)
    return derivative.generated(structures).source
