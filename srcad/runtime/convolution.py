"""Gradients of scipy.signal.convolve; imported only by its rules (after user code has
imported scipy.signal)."""

from __future__ import annotations

from typing import Any

import numpy
from scipy import signal


def convolve_as(x: Any, other: Any, mode: str = "full", first: bool = True) -> Any:
    """``convolve(x, other, mode)``, or ``convolve(other, x, mode)`` unless ``first``."""
    return signal.convolve(x, other, mode) if first else signal.convolve(other, x, mode)


def grad_convolve(g: Any, x: Any, other: Any, mode: str = "full", first: bool = True) -> Any:
    """The gradient for ``x`` of ``convolve_as(x, other, mode, first)`` given the result's
    gradient ``g`` (``x`` is read for its shape only)."""
    x_shape, other_shape = numpy.shape(x), numpy.shape(other)
    flipped = numpy.flip(other)
    if mode == "same":
        # the result is the middle of the full one, as large as the first input
        full = tuple(a + b - 1 for a, b in zip(x_shape, other_shape))
        kept = x_shape if first else other_shape
        start = [(f - n) // 2 for f, n in zip(full, kept)]
        padded = numpy.zeros(full, dtype=numpy.result_type(g, flipped))
        padded[tuple(slice(s, s + n) for s, n in zip(start, numpy.shape(g)))] = g
        g, mode = padded, "full"
    if mode == "full":
        return signal.convolve(g, flipped, "valid")
    if all(a >= b for a, b in zip(x_shape, other_shape)):
        return signal.convolve(g, flipped, "full")
    return signal.convolve(flipped, g, "valid")
