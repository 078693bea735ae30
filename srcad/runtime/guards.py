"""Checks generated code makes of its arguments before it runs."""

from __future__ import annotations

import numbers
from typing import Any

from srcad.errors import UnsupportedConstructError


def number_argument(
    value: Any, name: str, message: str, filename: str, lineno: int, col: int, line: str
) -> None:
    """Refuse an array for a parameter the function updates in place through another name
    (``z = x; z += y``, the error located there): srcad differentiates that as for a
    number, which the update leaves alone, while NumPy would change the array too."""
    if not isinstance(value, numbers.Number) and (
        hasattr(value, "__array_namespace__") or hasattr(value, "__array__")
    ):
        message += f" ('{name}' holds an array in this call; a Python float there works)"
        raise UnsupportedConstructError(
            message, filename=filename, lineno=lineno, col=col, source_line=line
        )
