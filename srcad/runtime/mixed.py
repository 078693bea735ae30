"""The handles generated code calls for an ``srcad.elementwise`` function (mixed mode):
one fused pass gives the value and every partial; the reverse pass multiplies the incoming
gradient by the partials (srcad/kernels/function.py makes them)."""

from __future__ import annotations

from typing import Any

from srcad.runtime.accumulate import unbroadcast


class MixedVJP:
    """Reverse-mode calls: ``compiled(*args)`` returns the value and the partials."""

    def __init__(self, compiled: Any, wrt: tuple[int, ...]) -> None:
        self.compiled = compiled
        self.wrt = wrt

    def forward(self, *args: Any) -> tuple[Any, Any]:
        """The value, and the partials kept for the backward pass."""
        value, partials = self.compiled(*args)
        return value, (partials, [args[k] for k in self.wrt])

    def backward(self, residuals: Any, g: Any) -> tuple[Any, ...]:
        """The incoming gradient times each partial, summed to its argument's shape."""
        partials, args = residuals
        return tuple(unbroadcast(g * partials[j], a) for j, a in enumerate(args))


class MixedJVP:
    """Forward-mode calls."""

    def __init__(self, compiled: Any, wrt: tuple[int, ...]) -> None:
        self.compiled = compiled
        self.wrt = wrt

    def __call__(self, tangents: tuple, *args: Any) -> tuple[Any, Any]:
        """The value and the sum of the partials times the tangents."""
        value, partials = self.compiled(*args)
        tangent = sum(partials[j] * t for j, t in enumerate(tangents))
        return value, tangent
