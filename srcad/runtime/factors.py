"""scipy.linalg.cho_factor and cho_solve as ops of arrays, for code where srcad has split
the pair ``(c, lower)`` that ``cho_factor`` returns (srcad/transform/normalize/factors.py).

Imported only once the user's code has imported scipy.linalg.
"""

from __future__ import annotations

from typing import Any

from scipy import linalg


def cho_factor(a: Any, lower: Any = False, check_finite: bool = True) -> Any:
    """The ``c`` of ``scipy.linalg.cho_factor(a, lower)``: the factor in one triangle and,
    in the other, what SciPy leaves there (``a``'s own entries, as LAPACK's potrf does)."""
    return linalg.cho_factor(a, lower=lower, check_finite=check_finite)[0]


def cho_solve(c: Any, lower: Any, b: Any, check_finite: bool = True) -> Any:
    """``scipy.linalg.cho_solve((c, lower), b)``: reads only the triangle of ``c`` that
    holds the factor (the other may hold anything)."""
    if getattr(c, "ndim", 2) != 2 or getattr(b, "ndim", 1) > 2:
        # SciPy solves stacks too, but the rules are written for one system
        raise NotImplementedError(
            "srcad differentiates scipy.linalg.cho_solve of one factor (n, n) and b of shape "
            f"(n,) or (n, k), not stacks of them (c {getattr(c, 'shape', '?')}, b "
            f"{getattr(b, 'shape', '?')})"
        )
    return linalg.cho_solve((c, lower), b, check_finite=check_finite)
