"""Lazy arrays (dask.array): keep their gradients lazy, and say when building one computes.

A derivative called with dask arrays among its arguments runs the generated code on them as
on any other arrays: every operation adds to a task graph and nothing is computed. Two
things in a function force a compute: a Python decision on an array value (``if
np.sum(x) > 0:``, ``while``, ``float(x)``, ``int(x)``), and converting a dask array to
NumPy. Both still work (dask computes the value on the current scheduler, a cluster's
included), but they run the whole graph up to that point, once for each use, while the
derivative is being built. :func:`watch` notices those computes and warns with
:class:`ComputeWarning`, naming the line of generated code that asked for the value.

``import srcad`` never imports dask: everything here looks for it in ``sys.modules``.
"""

from __future__ import annotations

import contextlib
import linecache
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any


class ComputeWarning(UserWarning):
    """Building a derivative of dask arrays computed a value (a data-dependent branch or a
    conversion to a Python number or NumPy); turn it into an error with
    ``warnings.simplefilter("error", ComputeWarning)``."""


def is_lazy(x: Any) -> bool:
    """Whether ``x`` is a dask array (False, without importing dask, if dask is not loaded)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(x, module.Array)


def any_lazy(args: tuple, kwargs: dict) -> bool:
    """Whether a dask array is among the arguments (checked cheaply when dask is not loaded)."""
    module = sys.modules.get("dask.array")
    if module is None:
        return False
    kind = module.Array
    for arg in args:  # a plain loop: this runs on every call of a derivative
        if isinstance(arg, kind):
            return True
    return bool(kwargs) and any(isinstance(arg, kind) for arg in kwargs.values())


_state = threading.local()  # .name: the function being differentiated; .get: its scheduler
_lock = threading.Lock()
_watchers = 0  # threads inside watch(): while there are any, dask's scheduler is _noticing
_installed: Any = None  # the dask.config.set that installed it, to undo exactly
_saved: Any = None  # the "scheduler" setting it replaced


def watching() -> bool:
    """Whether this thread is inside :func:`watch` already."""
    return getattr(_state, "name", None) is not None


@contextlib.contextmanager
def watch(name: str, args: tuple, kwargs: dict) -> Iterator[None]:
    """Run the body with dask's scheduler wrapped so that a compute warns (once per line of
    generated code) before it runs on the scheduler dask would have used anyway."""
    import dask

    global _watchers, _installed, _saved
    collections = [a for a in (*args, *kwargs.values()) if is_lazy(a)]
    with _lock:
        if _watchers == 0:
            _saved = dask.config.get("scheduler", None)
            _installed = dask.config.set(scheduler=_noticing)
        _watchers += 1
        _state.get = _unwatched_scheduler(collections)
    _state.name = name
    try:
        yield
    finally:
        _state.name = _state.get = None
        with _lock:
            _watchers -= 1
            if _watchers == 0:
                _installed.__exit__(None, None, None)
                _installed = _saved = None


def _noticing(*args: Any, **kwargs: Any) -> Any:
    """dask's scheduler while a derivative is built: warn, then compute as usual."""
    get = getattr(_state, "get", None)
    if get is None:  # another thread's compute: as dask would have run it
        get = _unwatched_scheduler([])
    else:
        _warn(_state.name)
    return get(*args, **kwargs)


def _unwatched_scheduler(collections: list[Any]) -> Any:
    """The scheduler dask picks with the setting we replaced: that setting, else the
    default distributed Client, else the arrays' own (threads)."""
    import dask.base

    if _saved is not None:
        return dask.base.get_scheduler(scheduler=_saved)
    try:
        from distributed import get_client

        return get_client().get
    except (ImportError, ValueError):
        pass
    if collections:
        return collections[0].__dask_scheduler__
    import dask.threaded

    return dask.threaded.get


def _warn(name: str) -> None:
    frame = sys._getframe(1)
    while frame is not None and not frame.f_code.co_filename.startswith("<srcad"):
        frame = frame.f_back
    if frame is None:  # a compute from a helper of the user's, outside generated code
        warnings.warn(_message(name, ""), ComputeWarning, stacklevel=3)
        return
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    line = linecache.getline(filename, lineno).strip()
    warnings.warn_explicit(
        _message(name, f" (`{line}`, line {lineno} of srcad.source's text)"),
        ComputeWarning,
        filename,
        lineno,
        module=frame.f_globals.get("__name__", "srcad"),
        registry=frame.f_globals.setdefault("__warningregistry__", {}),
    )


def _message(name: str, where: str) -> str:
    return (
        f"srcad: computing a dask value while building the derivative of {name}{where}. "
        "A Python if/while/float()/int() on an array value, or a conversion to NumPy, runs "
        "the graph so far on the scheduler, each time it is used; use np.where for a lazy "
        "choice, or compute the value first and pass it in"
    )
