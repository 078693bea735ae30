"""Cache of transformed functions, keyed by what determines the generated code."""

from __future__ import annotations

import threading
from typing import Any, Callable

from srcad.transform.pipeline import Generated, reverse_mode

_CACHE: dict[tuple, tuple[tuple, Generated]] = {}
_LOCK = threading.Lock()
#: How many times the pipeline actually ran (tests read it to check caching).
builds = 0


def _key(func: Callable, *options: Any) -> tuple[tuple, tuple]:
    cells = tuple(func.__closure__ or ())
    # cells are unhashable: key on their ids and keep them to confirm a hit is the same closure
    return (func.__code__, id(func.__globals__), tuple(map(id, cells)), *options), cells


def reverse_cached(func: Callable, wrt: tuple[int, ...], single: bool, mode: str) -> Generated:
    """The reverse-mode derivative of ``func``, transformed once per key."""
    global builds
    key, cells = _key(func, wrt, single, mode)
    found = _CACHE.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], cells)):
        return found[1]
    with _LOCK:
        found = _CACHE.get(key)
        if found is None or not all(a is b for a, b in zip(found[0], cells)):
            found = (cells, reverse_mode(func, wrt, single, mode))
            builds += 1
            _CACHE[key] = found
    return found[1]


def clear() -> None:
    """Forget every transformed function."""
    with _LOCK:
        _CACHE.clear()
