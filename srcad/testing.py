"""Gradient checking against central finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from srcad.api import Wrt, _normalize_wrt, grad


def numerical_grad(f: Callable, args: Sequence[Any], index: int, eps: float = 1e-6) -> Any:
    """Central finite-difference gradient of scalar ``f(*args)`` with respect to ``args[index]``."""
    args = list(args)
    x = args[index]
    if not hasattr(x, "shape"):
        args[index] = x + eps
        up = f(*args)
        args[index] = x - eps
        down = f(*args)
        return float((up - down) / (2 * eps))
    x = np.array(x, dtype=np.float64)
    out = np.zeros_like(x)
    flat = x.reshape(-1)
    for k in range(flat.size):
        saved = flat[k]
        flat[k] = saved + eps
        args[index] = x.copy()
        up = f(*args)
        flat[k] = saved - eps
        args[index] = x.copy()
        down = f(*args)
        flat[k] = saved
        out.reshape(-1)[k] = (up - down) / (2 * eps)
    return out


def check_grad(
    f: Callable,
    *args: Any,
    wrt: Wrt = 0,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> float:
    """Compare srcad's gradient of ``f`` with central finite differences in float64.

    Raises AssertionError naming the argument, the worst element and both values when they
    differ by more than ``atol + rtol * |finite difference|``; returns the largest error.
    """
    indices, _ = _normalize_wrt(f, wrt)
    args = [
        np.array(a, dtype=np.float64) if k in indices and hasattr(a, "shape") else a
        for k, a in enumerate(args)
    ]
    grads = grad(f, wrt=tuple(indices))(*args)
    worst = 0.0
    for index, analytic in zip(indices, grads):
        numeric = numerical_grad(f, args, index, eps)
        error = np.abs(np.asarray(analytic, dtype=np.float64) - numeric)
        bound = atol + rtol * np.abs(numeric)
        if np.any(~(error <= bound)):
            where = np.unravel_index(np.argmax(error - bound), np.shape(error))
            where_text = f" at index {tuple(int(i) for i in where)}" if np.ndim(error) else ""
            raise AssertionError(
                f"gradient of {f.__name__} with respect to argument {index} differs from "
                f"finite differences{where_text}: srcad {np.asarray(analytic)[where]!r}, "
                f"finite differences {np.asarray(numeric)[where]!r} "
                f"(max abs error {float(np.max(error)):.3g})"
            )
        worst = max(worst, float(np.max(error)) if np.size(error) else 0.0)
    return worst
