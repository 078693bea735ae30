"""What modules written by ``srcad.export`` run instead of srcad's own runtime.

An exported module carries the source of these two functions: ``array_namespace`` needs
only NumPy (or the arrays' ``__array_namespace__``), never array-api-compat, and
``fit_gradients`` does what ``srcad.grad`` does to the gradients it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy


def array_namespace(*args: Any) -> Any:
    """NumPy, or the namespace ``__array_namespace__()`` gives for the first other array."""
    for arg in args:
        if isinstance(arg, (numpy.ndarray, numpy.generic)):
            continue
        method = getattr(arg, "__array_namespace__", None)
        if method is not None:
            return method()
    return numpy


def fit_gradients(grads: Sequence[Any], like: Sequence[Any], inputs: Sequence[Any]) -> list[Any]:
    """Each gradient with the type, shape and dtype of its argument in ``like``, sharing
    memory with none of ``inputs`` (a caller may update arguments in place)."""
    out: list[Any] = []
    for grad, arg in zip(grads, like):
        if not hasattr(arg, "shape"):
            out.append(float(grad))
            continue
        if tuple(getattr(grad, "shape", ())) != tuple(arg.shape):
            # a gradient the same everywhere comes back as one number
            grad = array_namespace(arg).full(arg.shape, grad, dtype=arg.dtype)
        elif getattr(grad, "dtype", None) != arg.dtype:
            grad = array_namespace(arg).asarray(grad, dtype=arg.dtype)
        if isinstance(arg, numpy.generic):
            grad = arg.dtype.type(grad)
        elif any(grad is other for other in (*inputs, *out)) or not _writeable(grad):
            grad = grad.copy()
        out.append(grad)
    return out


def _writeable(x: Any) -> bool:
    flags = getattr(x, "flags", None)
    return getattr(flags, "writeable", True)
