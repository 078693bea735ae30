"""Tracebacks that end at the user's code: srcad's own frames hidden, as JAX does.

An exception leaving a public entry point loses the frames of srcad's modules; the user's
frames and those of generated code (``<srcad N: gradient of f (file:line)>``) stay.
``SRCAD_TRACEBACK_FILTERING=off`` keeps every frame.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_COMMENT = "# grad of:"
_NOTE = (
    "srcad removed its internal frames from this traceback; set "
    "SRCAD_TRACEBACK_FILTERING=off to see them"
)


def filtering() -> bool:
    """Whether srcad's frames are hidden (read at each error, so it can be switched live)."""
    value = os.environ.get("SRCAD_TRACEBACK_FILTERING", "on")
    return value.strip().lower() not in ("off", "0", "false", "no")


def is_internal(tb: TracebackType) -> bool:
    """Whether a traceback entry runs one of srcad's own modules."""
    return tb.tb_frame.f_code.co_filename.startswith(_PACKAGE)


def hide_internal_frames(exc: BaseException) -> None:
    """Drop srcad's frames from ``exc``'s traceback (and its cause's and context's).

    Called in an ``except`` block that then re-raises with a bare ``raise``: that keeps the
    traceback set here (the boundary's own frame included, on Python 3.11+)."""
    if sys.version_info < (3, 13):
        _print_generated_lines(exc.__traceback__)
    if not filtering():
        return
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        head = item.__traceback__
        kept = _kept(head)
        if kept is not head:
            item.__traceback__ = kept
        # the first entry is the boundary's own frame: dropped means frames were hidden
        if item is exc and kept is not head and hasattr(exc, "add_note"):
            if _NOTE not in getattr(exc, "__notes__", ()):
                origin = _generated_origin(kept)
                if origin:
                    exc.add_note(origin)
                exc.add_note(_NOTE)
        todo += [item.__cause__, item.__context__]


def _generated_origin(tb: TracebackType | None) -> str:
    """For an error in generated code: the ``# grad of:`` comment its line falls under."""
    last = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<srcad "):
            last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    filename = last.tb_frame.f_code.co_filename
    lines = linecache.getlines(filename)
    for text in reversed(lines[: last.tb_lineno]):
        text = text.strip()
        if text.startswith(_COMMENT):
            return f"line {last.tb_lineno} of {filename} is part of: {text}"
        if text.startswith("def "):
            break
    return ""


def _kept(tb: TracebackType | None) -> TracebackType | None:
    """The chain from ``tb`` without srcad's entries, relinked in place.

    Python 3.10 re-raises the traceback it saved, not the exception's, so the first entry
    (the boundary) stays there; relinking in place removes the rest on every version."""
    first = tb
    while first is not None and is_internal(first):
        first = first.tb_next
    entry = first
    while entry is not None:
        nxt = entry.tb_next
        while nxt is not None and is_internal(nxt):
            nxt = nxt.tb_next
        if nxt is not entry.tb_next:
            entry.tb_next = nxt
        entry = nxt
    if tb is not None and first is not tb and tb.tb_next is not first:
        tb.tb_next = first  # for 3.10 (see above)
    return first


def _print_generated_lines(tb: TracebackType | None) -> None:
    """Before Python 3.13 the interpreter prints uncaught errors itself, skipping the lines of
    ``<...>`` files, where generated code lives: print them with the traceback module
    (which reads linecache), as 3.13 does. On 3.10 that printing also drops the boundary's
    frame (see :func:`_kept`). Only the default hook is replaced."""
    if sys.excepthook is not sys.__excepthook__:
        return  # IPython, Jupyter or the program's own: they read linecache or choose
    generated = sys.version_info < (3, 11)
    while tb is not None and not generated:
        generated = tb.tb_frame.f_code.co_filename.startswith("<srcad ")
        tb = tb.tb_next
    if generated:
        sys.excepthook = _print_with_linecache


def _print_with_linecache(kind: type, value: BaseException, tb: TracebackType | None) -> None:
    try:
        if filtering():
            tb = _kept(tb)
        traceback.print_exception(kind, value, tb)
    except Exception:
        sys.__excepthook__(kind, value, tb)


def boundary(func: F) -> F:
    """``func`` as a public entry point: exceptions leave it without srcad's frames."""

    @functools.wraps(func)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            hide_internal_frames(exc)
            raise

    return entry  # type: ignore[return-value]
