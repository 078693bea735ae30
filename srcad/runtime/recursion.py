"""Room on the stack for derivatives of recursive functions.

A derivative runs each level of the user's recursion through a few frames (the call
handle, then the generated function; a second derivative, through those of the first
derivative's functions as well), where the function itself needs one. While
generated code calls user functions, the recursion limit is raised in proportion to the
one the caller set, so a derivative recurses as deep as the function does; past that, a
RecursionError says so instead of pointing into srcad.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

#: frames a derivative needs per level of the user's recursion, at most: a first
#: derivative 3, a second one of a recursion whose depth depends on data up to 6 (forward
#: over reverse; reverse over reverse 4: measured, transform/recursive_calls.py)
FRAMES_PER_LEVEL = 7
#: no higher than this: generated code's calls also use the C stack (a segfault, past it)
MOST = 8000

_lock = threading.Lock()
_users = 0  # threads running generated code under the raised limit
_base = 0  # the limit the first of them found, restored by the last
_raised = 0  # the limit while they run
_thread = threading.local()


def _limit(base: int) -> int:
    """The limit while generated code runs: ``base`` in proportion, within what the C stack
    holds; never lower than ``base`` (other threads run under the same limit)."""
    return max(base, min(base * FRAMES_PER_LEVEL, MOST))


def inside() -> bool:
    """Whether this thread runs under :func:`deep_call` already."""
    return getattr(_thread, "inside", False)


def deep_call(name: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)`` with the recursion limit raised; the outermost call of
    generated code into a user function goes through here, the calls it makes do not."""
    global _users, _base, _raised
    with _lock:
        if _users == 0:
            _base = sys.getrecursionlimit()
            _raised = _limit(_base)
            sys.setrecursionlimit(_raised)
        _users += 1
        base, raised = _base, _raised
    _thread.inside = True
    try:
        return call(*args, **kwargs)
    except RecursionError as exc:
        if getattr(exc, "srcad_explained", False):
            raise
        error = RecursionError(
            f"the derivative of {name} recursed deeper than srcad can follow: it uses up "
            f"to {FRAMES_PER_LEVEL} frames per call where the function uses one, and the "
            f"limit went from {base} to {raised} frames (the C stack bounds it); recurse "
            "less deeply, or write the recursion as a loop"
        )
        error.srcad_explained = True  # type: ignore[attr-defined]
        raise error from None
    finally:
        _thread.inside = False
        with _lock:
            _users -= 1
            if _users == 0:
                sys.setrecursionlimit(_base)
