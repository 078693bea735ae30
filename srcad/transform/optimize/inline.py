"""Inline temporaries read exactly once into the statement that reads them.

``_t1 = x @ W; _t2 = _t1 + b; h = np.tanh(_t2)`` becomes ``h = np.tanh(x @ W + b)``.
"""

from __future__ import annotations

from collections import Counter

import gast

from srcad.runtime import inplace, lists
from srcad.transform import build
from srcad.transform.anno import getanno, setanno
from srcad.transform.naming import Namer
from srcad.transform.optimize.usage import Rename, assigned, bodies, counts, mutated, reads


def _try_inline(
    body: list[gast.stmt], j: int, namer: Namer, read: Counter, written: Counter
) -> bool:
    stmt = body[j]
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
        return False
    name = stmt.targets[0].id
    if name not in namer.generated or not getanno(stmt, "pure", False):
        return False
    if read[name] != 1 or written[name] != 1:
        return False
    use = next((i for i in range(j + 1, len(body)) if name in reads(body[i])), None)
    if use is None or isinstance(
        body[use], (gast.FunctionDef, gast.Return, gast.If, gast.For, gast.While)
    ):
        return False
    if name in mutated(body[use]):
        return False
    # keep each source line's adjoint block separate: never inline across a comment
    if any(build.is_comment(s) for s in body[j + 1 : use]):
        return False
    inputs = set(reads(stmt.value))
    for s in body[j + 1 : use]:
        if inputs & (set(assigned(s)) | set(mutated(s))):
            return False
        if inputs and _updates_in_place(s, namer):
            # the value may read a view of the updated array (``_t1 = u[1]``): computed
            # after the update, it would see the new elements
            return False
    Rename(loads={name: stmt.value}).visit(body[use])
    if getanno(stmt, "copies"):
        # the value must stay a new array (``du * 1.0``, not ``du``) where it lands too
        setanno(body[use], "copies", True)
    del body[j]
    read[name] = written[name] = 0
    return True


_IN_PLACE = (
    inplace.setitem,
    inplace.scatter,
    inplace.restore,
    inplace.reset,
    lists.append,
    lists.drop_gradient,
)


def _updates_in_place(stmt: gast.stmt, namer: Namer) -> bool:
    """Whether ``stmt`` changes an array (or list) in place, through a view or not."""
    for node in gast.walk(stmt):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            if any(namer.globals.get(node.func.id) is f for f in _IN_PLACE):
                return True
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            return True
    return False


def inline_single_use(tree: gast.FunctionDef, namer: Namer) -> bool:
    """Inline single-use pure temporaries in ``tree`` in place; whether anything changed."""
    changed = False
    read, written = counts(tree)
    for body in bodies(tree):
        j = 0
        while j < len(body):
            if _try_inline(body, j, namer, read, written):
                changed = True  # the inlined name is gone; every other count is unchanged
            else:
                j += 1
    return changed
