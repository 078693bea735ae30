"""``xp = array_namespace(x)`` then ``xp.tanh(h)`` reads as ``np.tanh(h)``.

Generated derivative code (and array-API-generic user code) calls NumPy functions through
the namespace of its arguments. Reading ``xp.f`` as ``numpy.f`` lets the rules for NumPy
functions apply when such code is differentiated again; rebinding puts ``xp`` back.
"""

from __future__ import annotations

import math

import gast
import numpy

from srcad.runtime.backend import array_namespace, math_namespace
from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import RenameNames

_MODULES = ((array_namespace, numpy, "np"), (math_namespace, math, "math"))


def unbind_namespaces(source: Source) -> bool:
    """Rewrite ``source.tree`` in place (see module docstring); whether anything changed."""
    tree = source.tree
    taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    renames: dict[str, str] = {}
    kept = []
    for stmt in tree.body:
        module = _namespace_of(stmt, source)
        if module is None:
            kept.append(stmt)
            continue
        obj, preferred = module
        name = preferred
        k = 0
        while name in taken or source.namespace.get(name, obj) is not obj:
            k += 1
            name = f"{preferred}_{k}"
        source.namespace[name] = obj
        renames[stmt.targets[0].id] = name
    if not renames:
        return False
    tree.body = kept
    RenameNames(renames).visit(tree)
    return True


def _namespace_of(stmt: gast.stmt, source: Source) -> tuple[object, str] | None:
    """``(module, preferred name)`` if ``stmt`` is ``name = array_namespace(...)``-like."""
    if not (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Call)
    ):
        return None
    func = source.resolve(stmt.value.func, set())
    for helper, module, preferred in _MODULES:
        if func is helper:
            return module, preferred
    return None
