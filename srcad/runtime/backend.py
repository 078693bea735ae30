"""The array namespace of a call's arguments: NumPy unless an argument says otherwise."""

from __future__ import annotations

from typing import Any

import numpy

_PLAIN = (float, int, bool, complex, numpy.ndarray, numpy.generic, type(None), str)


def array_namespace(*args: Any) -> Any:
    """The module whose functions operate on ``args`` (numpy for numpy arrays and scalars)."""
    for arg in args:
        if isinstance(arg, _PLAIN):
            continue
        module = type(arg).__module__.partition(".")[0]
        if module == "cupy":
            import cupy

            return cupy
    return numpy


def is_array(x: Any) -> bool:
    """Whether ``x`` is an array (has a shape), as opposed to a Python number."""
    return hasattr(x, "shape") and hasattr(x, "dtype")
