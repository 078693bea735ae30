"""Syntax highlighting for ``python -m srcad show`` on a terminal: Pygments when it is
installed, else a small highlighter of our own on top of :mod:`tokenize`."""

from __future__ import annotations

import io
import keyword
import tokenize

_RESET = "\033[0m"
_STYLES = {
    "keyword": "\033[1;34m",  # bold blue
    "builtin": "\033[36m",  # cyan
    "definition": "\033[1;33m",  # bold yellow: the name after def/class
    "string": "\033[32m",  # green
    "number": "\033[35m",  # magenta
    "comment": "\033[2;3m",  # dim italic: the "# grad of:" lines
}
_BUILTINS = frozenset(dir(__import__("builtins")))


def highlight(text: str) -> str:
    """``text`` (Python source) with ANSI colour codes for a terminal."""
    try:
        import pygments
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return highlight_tokens(text)
    return pygments.highlight(text, PythonLexer(), TerminalFormatter())


def highlight_tokens(text: str) -> str:
    """``text`` coloured token by token (without Pygments); unchanged if it does not
    tokenize."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    row, col = 1, 0  # where the text copied so far ends
    previous = ""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    for token in tokens:
        (srow, scol), (erow, ecol) = token.start, token.end
        if token.type == tokenize.ENDMARKER:
            break
        out.append(_between(lines, (row, col), (srow, scol)))
        piece = _between(lines, (srow, scol), (erow, ecol))
        style = _style(token, previous)
        out.append(f"{_STYLES[style]}{piece}{_RESET}" if style and piece else piece)
        row, col = erow, ecol
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = token.string
    out.append(_between(lines, (row, col), (len(lines) + 1, 0)))
    return "".join(out)


def _style(token: tokenize.TokenInfo, previous: str) -> str | None:
    if token.type == tokenize.COMMENT:
        return "comment"
    if token.type == tokenize.STRING:
        return "string"
    if token.type == tokenize.NUMBER:
        return "number"
    if token.type == tokenize.NAME:
        if previous in ("def", "class"):
            return "definition"
        if keyword.iskeyword(token.string):
            return "keyword"
        if token.string in _BUILTINS and previous != ".":
            return "builtin"
    return None


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text from ``start`` to ``end`` (1-based rows, 0-based columns)."""
    (srow, scol), (erow, ecol) = start, end
    if (srow, scol) >= (erow, ecol):
        return ""
    if srow == erow:
        return lines[srow - 1][scol:ecol] if srow <= len(lines) else ""
    parts = [lines[srow - 1][scol:]] if srow <= len(lines) else []
    parts += lines[srow : min(erow - 1, len(lines))]
    if erow <= len(lines):
        parts.append(lines[erow - 1][:ecol])
    return "".join(parts)
