"""Errors srcad raises, each naming the user's file, line and construct."""

from __future__ import annotations

# raised by generated code too: defined in the runtime, which generated code depends on
from srcad.runtime.errors import NoOutputError, TransformError

__all__ = [
    "ExportError",
    "InternalError",
    "NoAdjointError",
    "NoOutputError",
    "SourceUnavailableError",
    "StaleSourceError",
    "TransformError",
    "UnknownStructureError",
    "UnsupportedConstructError",
]


class UnsupportedConstructError(TransformError):
    """A Python construct outside the subset srcad differentiates."""


class NoAdjointError(TransformError):
    """A call to a function that has no adjoint rule and no source to transform."""


class SourceUnavailableError(TransformError):
    """The function's source cannot be found (REPL, exec, builtins, C code)."""


class StaleSourceError(SourceUnavailableError):
    """The function's source file no longer holds the code Python runs (edited after import)."""


class ExportError(TransformError):
    """Something ``srcad.export`` cannot write into a standalone module."""


class UnknownStructureError(UnsupportedConstructError):
    """A differentiated parameter used as a pytree (``params["W"]``) whose structure is not
    known: no arguments or example arguments say what it holds."""


class InternalError(RuntimeError):
    """A failure of srcad itself, not of the code it was given: please report it."""
