"""Python values written as source: constants the exported code reads, and imports."""

from __future__ import annotations

import math
import types
from typing import Any

import numpy

#: The largest NumPy array written into a module as a literal.
MAX_ARRAY_SIZE = 10_000


class NotWritable(Exception):
    """A value that has no faithful literal form."""


def literal(value: Any) -> tuple[str, bool]:
    """Source that rebuilds ``value``, and whether it needs ``numpy`` imported.

    Raises :class:`NotWritable` for anything but numbers, strings, bytes, ``None``,
    containers of those and small NumPy arrays and scalars.
    """
    if value is None or isinstance(value, (bool, str, bytes)):
        return repr(value), False
    if isinstance(value, numpy.generic):
        inner, _ = literal(value.item())
        kind = "bool_" if value.dtype.kind == "b" else value.dtype.name  # bool_: NumPy 1 and 2
        return f"numpy.{kind}({inner})", True
    if isinstance(value, int):
        return repr(int(value)), False
    if isinstance(value, float):
        return _float(value), False
    if isinstance(value, complex):
        return f"complex({_float(value.real)}, {_float(value.imag)})", False
    if isinstance(value, numpy.ndarray):
        return _array(value), True
    if type(value) in (tuple, list):
        parts = [literal(item) for item in value]
        body = ", ".join(text for text, _ in parts)
        if type(value) is tuple:
            body = f"({body}{',' if len(value) == 1 else ''})"
        else:
            body = f"[{body}]"
        return body, any(needs for _, needs in parts)
    if type(value) is dict:
        items = [(literal(k), literal(v)) for k, v in value.items()]
        body = ", ".join(f"{k}: {v}" for (k, _), (v, _) in items)
        return "{" + body + "}", any(a or b for (_, a), (_, b) in items)
    if isinstance(value, slice):
        parts = [literal(p) for p in (value.start, value.stop, value.step)]
        return f"slice({', '.join(t for t, _ in parts)})", any(n for _, n in parts)
    if value is Ellipsis:
        return "...", False
    raise NotWritable(type(value).__name__)


def _float(x: float) -> str:
    if math.isfinite(x):
        return repr(x)
    return f"float({str(x)!r})"  # inf, -inf, nan have no literal


def _array(value: numpy.ndarray) -> str:
    if value.dtype.kind not in "biufc" or value.size > MAX_ARRAY_SIZE:
        raise NotWritable(f"ndarray of {value.dtype} with {value.size} elements")
    if value.size == 0:
        return f"numpy.zeros({value.shape!r}, dtype={value.dtype.name!r})"
    items, _ = literal(value.tolist())
    return f"numpy.array({items}, dtype={value.dtype.name!r})"


def import_line(name: str, module: types.ModuleType) -> str:
    """``import x`` / ``import x as name`` binding ``name`` to ``module``."""
    full = module.__name__
    if full == name:
        return f"import {full}"
    return f"import {full} as {name}"


def from_import_line(name: str, module: str, attribute: str) -> str:
    """``from module import attribute`` (``as name`` where the names differ)."""
    if attribute == name:
        return f"from {module} import {attribute}"
    return f"from {module} import {attribute} as {name}"
