"""Cache of transformed functions, keyed by what determines the generated code."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from srcad.errors import UnsupportedConstructError
from srcad.transform.calls import BuildInProgress
from srcad.transform.pipeline import Generated, transform

_CACHE: dict[tuple, tuple[tuple, Generated]] = {}
_LOCK = threading.RLock()  # re-entrant: transforming a caller transforms its callees
_BUILDING: set[tuple] = set()

#: How many times the pipeline actually ran (tests read it to check caching).
builds = 0


def _key(func: Callable, *options: Any) -> tuple[tuple, tuple]:
    cells = tuple(func.__closure__ or ())
    # cells are unhashable: key on their ids and keep them to confirm a hit is the same closure
    return (func.__code__, id(func.__globals__), tuple(map(id, cells)), *options), cells


def cached(
    func: Callable,
    wrt: tuple[int, ...],
    single: bool,
    mode: str,
    has_aux: bool = False,
    structures: tuple = (),
    facts: tuple | None = None,
    masked: bool = False,
) -> Generated:
    """The derivative of ``func`` (``mode``: grad, vjp or jvp), transformed again only when
    stale; ``masked``: the variant whose derivatives flowing in may be masked (see
    srcad/transform/analyses/masking.py)."""
    global builds
    key, cells = _key(func, wrt, single, mode, has_aux, structures, facts, masked)
    found = _CACHE.get(key)
    if found is not None and _valid(found, cells):
        return found[1]
    with _LOCK:
        found = _CACHE.get(key)
        if found is None or not _valid(found, cells):
            if key in _BUILDING:
                raise BuildInProgress(func.__qualname__)
            _BUILDING.add(key)
            try:
                found = (
                    cells,
                    transform(func, wrt, single, mode, has_aux, structures, facts, masked),
                )
            except RecursionError:
                code = func.__code__
                raise UnsupportedConstructError(
                    f"{func.__qualname__} nests expressions or blocks too deeply for srcad "
                    f"(Python's recursion limit, {sys.getrecursionlimit()}, was reached while "
                    "transforming it); split it with intermediate names or helper functions",
                    filename=code.co_filename,
                    lineno=code.co_firstlineno,
                ) from None
            finally:
                _BUILDING.discard(key)
            builds += 1
            _CACHE[key] = found
    return found[1]


def _valid(entry: tuple[tuple, Generated], cells: tuple) -> bool:
    """Same closure cells, and every free name still denotes what it did."""
    return all(a is b for a, b in zip(entry[0], cells)) and entry[1].snapshot.current()


def clear() -> None:
    """Forget every transformed function."""
    with _LOCK:
        _CACHE.clear()
