"""What a transformed function's free names, defaults and the attributes it reaches
(``helpers.loss``, ``np.sin``) denoted, to detect stale code on every call."""

from __future__ import annotations

import builtins
import math
import weakref
from collections.abc import Callable, Iterable
from types import CellType, ModuleType
from typing import Any

import numpy

#: what a namespace holds for a name it lacks, in snapshot entries
ABSENT = object()

#: NumPy's and math's functions as srcad found them on import: rule templates and
#: generated code call them by name (``xp.cos`` in the adjoint of ``np.sin``)
_GENUINE = {m: dict(vars(m)) for m in (numpy, numpy.linalg, numpy.fft, math)}


def stored(base: Any, attr: str) -> list[tuple[Any, str, Any]]:
    """Where ``base.attr`` is stored: ``(namespace, key, raw value)`` entries whose
    identities decide what it denotes (none when a property or ``__getattr__`` computes it)."""
    if isinstance(base, ModuleType):
        namespace = vars(base)
        return [(namespace, attr, namespace.get(attr, ABSENT))]
    entries = []
    own = getattr(base, "__dict__", None)
    if not isinstance(base, type) and isinstance(own, dict):
        if attr in own:
            return [(own, attr, own[attr])]
        entries.append((own, attr, ABSENT))  # an instance attribute set later shadows it
    for klass in base.__mro__ if isinstance(base, type) else type(base).__mro__:
        namespace = vars(klass)
        if attr in namespace:
            return [*entries, (namespace, attr, namespace[attr])]
    return []


def replaced(module: Any, attr: str) -> Any:
    """What now stands in ``module.attr`` for NumPy's or math's own function, or None."""
    genuine = _GENUINE.get(module)
    if genuine is None or attr not in genuine:
        return None  # (what NumPy adds later, e.g. a lazily imported submodule, is its own)
    now = vars(module).get(attr, ABSENT)
    return None if now is genuine.get(attr, ABSENT) else now


class Snapshot:
    """The objects a function's free names (globals, closure cells, builtins), its
    defaults and the attributes it reaches were bound to when it was transformed (and the
    code and defaults of the helpers written out in it; ``reads`` may name a closure cell,
    or the snapshot of a derivative's code written out, which must still be current).

    ``current()`` says whether they all still are: one compiled expression of identity
    tests, cheap enough for every call. The function itself is held weakly, so that a
    cache entry does not keep a dead closure alive; callers that hold it pass it.
    """

    def __init__(
        self,
        func: Callable,
        free: dict[str, Any],
        reads: Iterable[tuple[Any, str, Any]] = (),
        functions: Iterable[Callable] = (),
    ) -> None:
        values: dict[str, Any] = {}

        def bind(obj: Any) -> str:
            name = f"_{len(values)}"
            values[name] = obj
            return name

        ref = bind(weakref.ref(func))
        terms = [
            f"f.__code__ is {bind(func.__code__)}",
            f"f.__defaults__ is {bind(func.__defaults__)}",
        ]
        if func.__code__.co_kwonlyargcount:  # (without keyword-only parameters, unused)
            terms.append(f"f.__kwdefaults__ is {bind(func.__kwdefaults__)}")
        cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
        namespace = func.__globals__
        scope, builtin = bind(namespace), bind(vars(builtins))
        for name, obj in free.items():
            if name in cells:
                terms.append(f"{bind(cells[name])}.cell_contents is {bind(obj)}")
            elif name in namespace:
                terms.append(f"{scope}[{name!r}] is {bind(obj)}")
            else:
                terms.append(f"{name!r} not in {scope}")
                terms.append(f"{builtin}[{name!r}] is {bind(obj)}")
        for helper in functions:  # helpers written out in the code: their code, defaults
            h = bind(helper)
            terms.append(f"{h}.__code__ is {bind(helper.__code__)}")
            terms.append(f"{h}.__defaults__ is {bind(helper.__defaults__)}")
            terms.append(f"{h}.__kwdefaults__ is {bind(helper.__kwdefaults__)}")
        seen = set()
        for where, key, obj in reads:
            if (id(where), key) not in seen:
                seen.add((id(where), key))
                if isinstance(where, Snapshot):  # code written out: its own snapshot
                    terms.append(f"{bind(where)}.current()")
                elif isinstance(where, CellType):  # a closure's variable, written out
                    terms.append(f"{bind(where)}.cell_contents is {bind(obj)}")
                elif obj is ABSENT:
                    terms.append(f"{key!r} not in {bind(where)}")
                else:
                    terms.append(f"{bind(where)}[{key!r}] is {bind(obj)}")
        text = (
            f"def current(f=None, {', '.join(f'{k}={k}' for k in values)}):\n"
            "    if f is None:\n"
            f"        f = {ref}()\n"
            "        if f is None:\n"
            "            return False\n"
            "    try:\n"
            f"        return {' and '.join(terms)}\n"
            "    except (KeyError, ValueError):  # a name deleted, an empty closure cell\n"
            "        return False\n"
        )
        exec(compile(text, "<srcad snapshot>", "exec"), values)
        #: ``current(f=None)``: whether everything still denotes what it did, for ``f`` (a
        #: function with the same code, globals and cells; the one transformed by default)
        self.current: Callable[..., bool] = values["current"]
