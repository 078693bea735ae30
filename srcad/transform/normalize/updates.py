"""In-place updates of generated code made functional when it is differentiated again, so
that each is an ordinary op with rules of its own:

- ``add_at(b, i, g)`` (accumulating into an adjoint it owns) becomes
  ``b = added_at(b, i, g)``, which returns a new array;
- ``restore(u, i, v)`` (the backward pass putting back what an update overwrote) becomes
  ``u = scattered(u, i, v)``, a new array with the old elements put back (where ``i`` may
  select an element twice: the last write counts). An update in place would be one under
  a second name once a written-out helper's code is split into ``_t = scatter(u, ...)``
  and ``u = _t`` (reverse mode three times then pushed ``u`` after the update: silently
  wrong third derivatives). A view of ``u`` kept in a
  name (``t = u[0]``, a row) is made a copy, ``t = copied(u[0])``: generated code reads it
  only while it holds what it held when it was taken (the restore puts that back), and a
  copy keeps it so for the derivatives too (forward mode updates the tangent of ``u`` in
  place, and would leave out the tangent of a restore whose result nothing reads). So is
  a second name for ``u``'s memory (``p = u``: a written-out helper's parameter, which its
  backward code reads after the restore) and an argument of a derivative handle's
  ``forward`` (``h.forward(copied(u))``: its residuals keep the array): the restore, a
  new array now, would not reach them (silently wrong Hessians of a function calling a
  helper on ``u`` and then updating ``u`` in place);
- ``t = setitem(u, i, v)`` (forward-mode code updating ``u`` in place under a second
  name) becomes ``u = setitem(u, i, v)`` then ``t = u``, so that the update is seen as one
  of ``u``'s (and the tangent of a copy of ``u`` made before it is a copy too);
- ``drop_gradient(gs)`` (taking an element's gradient off a list gradient, in place)
  becomes ``dropped_gradient(gs)``, which leaves ``gs`` as it was for the reverse pass to
  read again.
"""

from __future__ import annotations

import gast

from srcad.runtime.accumulate import add_at
from srcad.runtime.inplace import copied, restore, scatter, scattered, setitem
from srcad.runtime.lists import drop_gradient, dropped_gradient
from srcad.runtime.updates import added_at
from srcad.transform import build
from srcad.transform.analyses.aliasing import viewed_names
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.walk import all_statements, rewrite_bodies

#: the call made for its effect -> the function its assignment calls, and that one's name
_ASSIGNED = {add_at: (added_at, "added_at"), restore: (scattered, "scattered")}


def functional_updates(tree: gast.FunctionDef, source: Source, namer: Namer) -> bool:
    """Rewrite the in-place updates of generated code in ``tree`` (see module doc)."""
    changed = False
    restored: set[str] = set()

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        nonlocal changed
        out: list[gast.stmt] = []
        for stmt in stmts:
            call = stmt.value if isinstance(stmt, gast.Expr) else None
            found = (
                _ASSIGNED.get(source.resolve(call.func, set()))
                if isinstance(call, gast.Call) and len(call.args) == 3 and not call.keywords
                else None
            )
            if found is not None and isinstance(call.args[0], gast.Name):
                if found[0] is scattered:
                    restored.add(call.args[0].id)
                helper = source.bind(namer, *found)
                new = build.assign(call.args[0].id, build.call(helper, *call.args))
                out.append(gast.copy_location(new, stmt))
                changed = True
            elif _updates_under_another_name(stmt, source):
                name = stmt.value.args[0].id
                out.append(gast.copy_location(build.assign(name, stmt.value), stmt))
                out.append(
                    gast.copy_location(build.assign(stmt.targets[0].id, build.load(name)), stmt)
                )
                changed = True
            else:
                out.append(stmt)
        return out

    tree.body = rewrite_bodies(tree.body, block)
    if restored:
        _copy_views(tree, restored, source, namer)
    drops = _Drops(source, namer)
    drops.visit(tree)
    return changed or drops.changed


def _copy_views(tree: gast.FunctionDef, restored: set[str], source: Source, namer: Namer) -> None:
    """Each view of a ``restored`` array, each second name for its memory (``p = u``, a
    written-out helper's parameter) and each argument of a derivative handle's
    ``forward`` (whose residuals keep it) made a copy (see module doc)."""
    sharing = set(restored)
    views: list[gast.Assign] = []
    grew = True
    while grew:
        grew = False
        for stmt in all_statements(tree.body):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
                continue
            target, value = stmt.targets[0].id, stmt.value
            if isinstance(value, gast.Name) and (target in sharing) != (value.id in sharing):
                sharing |= {target, value.id}  # the same memory under another name
                grew = True
            if stmt in views:
                continue
            if viewed_names(value) & sharing or (
                isinstance(value, gast.Name) and {target, value.id} <= sharing
            ):
                views.append(stmt)
    helper = source.bind(namer, copied, "copied")
    for stmt in views:
        if stmt.targets[0].id not in restored or not isinstance(stmt.value, gast.Name):
            stmt.value = build.call(helper, stmt.value)
    for node in gast.walk(tree):
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and node.func.attr == "forward"
        ):
            node.args = [
                build.call(helper, a) if isinstance(a, gast.Name) and a.id in sharing else a
                for a in node.args
            ]


def _updates_under_another_name(stmt: gast.stmt, source: Source) -> bool:
    """Whether ``stmt`` is ``t = setitem(u, i, v)`` (or ``scatter``) with ``t`` not ``u``."""
    if not (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.Call)
        and stmt.value.args
        and isinstance(stmt.value.args[0], gast.Name)
        and stmt.value.args[0].id != stmt.targets[0].id
    ):
        return False
    return source.resolve(stmt.value.func, set()) in (setitem, scatter)


class _Drops(Transformer):
    """Calls of ``drop_gradient`` made calls of ``dropped_gradient``."""

    def __init__(self, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer
        self.changed = False

    def visit_Call(self, node: gast.Call) -> gast.Call:
        self.generic_visit(node)
        if self.source.resolve(node.func, set()) is drop_gradient:
            node.func = build.load(
                self.source.bind(self.namer, dropped_gradient, "dropped_gradient")
            )
            self.changed = True
        return node
