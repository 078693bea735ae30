"""The tape: a stack of values the backward pass needs and the forward pass overwrites.

Generated code pushes only what the to-be-recorded analysis asks for (loop-carried values,
branch decisions, trip counts inside loops) and pops each value as the backward pass
consumes it, so the tape is empty again when the gradient is returned.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Tape(list):
    """A plain list used as a stack: ``push`` appends, ``pop`` takes the last value."""

    __slots__ = ()
    push = list.append

    def rewind(self, mark: int) -> None:
        """Drop what was pushed since the tape held ``mark`` values (a ``try`` body that
        failed: its arm is not taken back)."""
        del self[mark:]


@contextmanager
def counting_pushes() -> Iterator[list[Any]]:
    """Record every value pushed on any tape while the block runs (for tests and debugging)."""
    pushed: list[Any] = []

    def push(tape: Tape, value: Any) -> None:
        pushed.append(value)
        list.append(tape, value)

    Tape.push = push  # type: ignore[method-assign]
    try:
        yield pushed
    finally:
        Tape.push = list.append  # type: ignore[method-assign]
