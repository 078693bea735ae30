"""Cache of transformed functions, keyed by what determines the generated code.

The cache is bounded (least recently used entries go first) and drops the entries of
functions that no longer exist (closures made in a loop), so it cannot grow without end.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from srcad.errors import UnsupportedConstructError
from srcad.transform.calls import BuildInProgress
from srcad.transform.pipeline import Generated, transform

_CACHE: OrderedDict[tuple, tuple[tuple, Generated, Any]] = OrderedDict()
_LOCK = threading.RLock()  # re-entrant: transforming a caller transforms its callees
_BUILDING: set[tuple] = set()
#: keys of entries whose function died (weakref callbacks only append: they may run
#: during any allocation, so the cache itself is changed under the lock, later)
_DEAD: list[tuple] = []
_size = 512

#: How many times the pipeline actually ran (tests read it to check caching).
builds = 0


def _key(func: Callable, *options: Any) -> tuple[tuple, tuple]:
    # cells are unhashable: key on their ids and keep them (and the defaults, which the
    # compiled code copies) to confirm a hit is the same closure
    kept = (*(func.__closure__ or ()), func.__defaults__, func.__kwdefaults__)
    key = (func.__code__, id(func.__globals__), tuple(map(id, kept)), *options)
    return key, kept


def cached(
    func: Callable,
    wrt: tuple[int, ...],
    single: bool,
    mode: str,
    has_aux: bool = False,
    structures: tuple = (),
    facts: tuple | None = None,
    masked: bool = False,
    inline: bool = False,
) -> Generated:
    """The derivative of ``func`` (``mode``: grad, vjp or jvp), transformed again only when
    stale; ``masked``: the variant whose derivatives flowing in may be masked (see
    srcad/transform/analyses/masking.py); ``inline``: with the user's helpers written out
    (code to be differentiated again, srcad/transform/normalize/helpers.py)."""
    global builds
    keyed_mode = f"{mode}/inline" if inline else mode
    key, kept = _key(func, wrt, single, keyed_mode, has_aux, structures, facts, masked)
    found = _CACHE.get(key)
    if found is not None and _valid(found, kept, func):
        try:
            _CACHE.move_to_end(key)
        except KeyError:  # evicted meanwhile by another thread
            pass
        return found[1]
    with _LOCK:
        found = _CACHE.get(key)
        if found is None or not _valid(found, kept, func):
            if key in _BUILDING:
                raise BuildInProgress(func.__qualname__)
            _BUILDING.add(key)
            try:
                generated = transform(
                    func, wrt, single, mode, has_aux, structures, facts, masked, inline
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
            found = (kept, generated, weakref.ref(func, lambda _, key=key: _DEAD.append(key)))
            _CACHE[key] = found
            _trim()
    return found[1]


def _valid(entry: tuple[tuple, Generated, Any], kept: tuple, func: Callable) -> bool:
    """Same closure cells and defaults, and every free name still denotes what it did."""
    return all(a is b for a, b in zip(entry[0], kept)) and entry[1].snapshot.current(func)


def _trim() -> None:
    """Drop the entries of dead functions, then the least recently used beyond the bound."""
    while _DEAD:
        key = _DEAD.pop()
        entry = _CACHE.get(key)
        if entry is not None and entry[2]() is None:
            del _CACHE[key]
    while len(_CACHE) > _size:
        _CACHE.popitem(last=False)


def set_cache_size(size: int) -> int:
    """Keep at most ``size`` transformed functions (512 by default); returns the old bound."""
    global _size
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"the cache size must be an int, got {size!r}")
    if size < 1:
        raise ValueError(f"the cache size must be at least 1, got {size}")
    with _LOCK:
        old, _size = _size, size
        _trim()
    return old


def size() -> int:
    """How many transformed functions the cache holds now (dead ones dropped first)."""
    with _LOCK:
        _trim()
        return len(_CACHE)


def clear() -> None:
    """Forget every transformed function."""
    with _LOCK:
        _CACHE.clear()
