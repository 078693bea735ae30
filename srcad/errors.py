"""Errors srcad raises, each naming the user's file, line and construct."""

from __future__ import annotations


class TransformError(Exception):
    """A construct srcad cannot differentiate, located in the user's source."""

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        lineno: int | None = None,
        col: int | None = None,
        source_line: str | None = None,
    ) -> None:
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        if self.filename is None:
            return self.message
        text = f"{self.filename}:{self.lineno}: {self.message}"
        if self.source_line is not None:
            line = self.source_line.rstrip("\n")
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            text += f"\n    {stripped}"
            if self.col is not None and self.col >= indent:
                text += "\n    " + " " * (self.col - indent) + "^"
        return text


class UnsupportedConstructError(TransformError):
    """A Python construct outside the subset srcad differentiates."""


class NoAdjointError(TransformError):
    """A call to a function that has no adjoint rule and no source to transform."""


class NoOutputError(TransformError, TypeError):
    """A function that returns None: there is no output to differentiate."""


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
