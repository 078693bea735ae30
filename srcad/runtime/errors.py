"""The errors generated code raises when it runs (srcad/errors.py re-exports them with
the others): generated code depends on the runtime alone."""

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


class NoOutputError(TransformError, TypeError):
    """A function that returns None: there is no output to differentiate."""
