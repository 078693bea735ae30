"""What a function's free names denoted when it was transformed, to detect stale code."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

_ABSENT = object()


class Snapshot:
    """The objects bound to a function's free names (globals, closure cells, builtins)."""

    def __init__(self, func: Callable, free: dict[str, Any]) -> None:
        cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
        self._cells = [(cells[name], obj) for name, obj in free.items() if name in cells]
        self._globals = [(name, obj) for name, obj in free.items() if name not in cells]
        self._namespace = func.__globals__

    def current(self) -> bool:
        """Whether every free name still denotes the same object."""
        namespace = self._namespace
        for name, obj in self._globals:
            found = namespace.get(name, _ABSENT)
            if found is _ABSENT:
                found = getattr(builtins, name, _ABSENT)
            if found is not obj:
                return False
        for cell, obj in self._cells:
            try:
                if cell.cell_contents is not obj:
                    return False
            except ValueError:
                return False
        return True
