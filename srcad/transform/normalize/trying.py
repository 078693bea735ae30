"""``try``/``except`` as a branch whose decision is recorded at run time.

::

    try:                                 ok = attempted(LinAlgError)
        y = np.linalg.solve(A, b)        if ok:
    except LinAlgError:          ->          y = np.linalg.solve(A, b)
        y = np.linalg.lstsq(A, b)[0]     else:
                                             y = np.linalg.lstsq(A, b)[0]

Every pass then treats it as the ``if`` it is (the backward pass takes the arm the primal
took), and :func:`restore_try` turns the primal ``if ok:`` of the derivative back into
``try: ... except LinAlgError: ok = False; ...``, so the derivative catches what the
function catches. The backward pass reads ``ok``, the decision.

The arm of the body is differentiated as if it ran whole or not at all: when it fails
halfway, what it did before the failure is discarded. That is exact when the handler
assigns again each name the body assigns and code outside the body reads, and the handler
reads none of them; anything else is refused here, as are ``else:`` clauses (their
exceptions are not the handler's), several handlers and ``except ... as e`` whose ``e`` is
read. A ``finally:`` block runs after either arm.
"""

from __future__ import annotations

import builtins

import gast

from srcad.runtime.attempts import attempted
from srcad.transform import build
from srcad.transform.analyses.aliasing import CONTAINER_STORES
from srcad.transform.analyses.mutators import mutation_of
from srcad.transform.anno import setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import all_statements, own_parts, rewrite_bodies


def lower_try(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """Each ``try`` statement as an ``if`` on a marker (see module doc)."""
    if not any(isinstance(n, gast.Try) for n in gast.walk(tree)):
        return tree
    marker = source.bind(namer, attempted, "attempted")
    setanno(tree, "attempted", marker)

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, block(getattr(stmt, field)))
            if isinstance(stmt, gast.Try):
                for handler in stmt.handlers:
                    handler.body = block(handler.body)
                out.extend(_as_branch(stmt, tree, source, namer, marker))
            else:
                out.append(stmt)
        return out

    tree.body = block(tree.body)
    return tree


def _as_branch(
    stmt: gast.Try, tree: gast.FunctionDef, source: Source, namer: Namer, marker: str
) -> list[gast.stmt]:
    if len(stmt.handlers) != 1:
        raise source.error(
            "a 'try' with several 'except' clauses is not supported; catch a tuple of "
            "exception types in one clause",
            stmt,
        )
    if stmt.orelse:
        raise source.error(
            "the 'else' clause of a 'try' is not supported: its exceptions are not the "
            "handler's; put its statements after the 'try' statement",
            stmt.orelse[0],
        )
    handler = stmt.handlers[0]
    if handler.name is not None and handler.name.id in _read_first(handler.body):
        raise source.error(
            f"a handler reading the exception ('except ... as {handler.name.id}') is not supported",
            handler,
        )
    _check_discarded(stmt, tree, source)
    types = [] if handler.type is None else _exception_types(handler.type, source, namer, tree)
    ok = namer.fresh("attempt_ok")
    decision = build.assign(ok, build.call(marker, *types))
    branch = gast.If(test=build.load(ok), body=stmt.body, orelse=handler.body or [gast.Pass()])
    for node in (decision, branch):
        gast.copy_location(node, stmt)
    return [decision, branch, *stmt.finalbody]


def _exception_types(
    node: gast.expr, source: Source, namer: Namer, tree: gast.FunctionDef
) -> list[gast.expr]:
    """The classes an ``except`` names, each by a global name of its own: the handler
    catches the user's class whatever namespace the derivative computes with
    (``np.linalg.LinAlgError`` is not ``xp.linalg``'s to choose)."""
    local = local_names(tree)
    out = []
    for part in node.elts if isinstance(node, gast.Tuple) else [node]:
        kind = source.resolve(part, local)
        if isinstance(kind, type) and issubclass(kind, BaseException):
            part = build.load(source.bind(namer, kind, kind.__name__))
        out.append(part)
    return out


def _assigned(stmts: list[gast.stmt]) -> set[str]:
    """Names the statements bind (updates in place are refused in a body, and a handler
    making one reads the name first)."""
    return {
        n.id
        for s in stmts
        for n in gast.walk(s)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }


def _updated_in_place(node: gast.AST, source: Source, local: set[str]) -> gast.expr | None:
    """What ``y[i] = v``, ``xs.append(v)``, or a call that changes an array it is given
    (the mutating-call analysis: ``y.fill(0)``, ``np.sin(x, out=y)``, a helper of the
    user's) changes in place; None for anything else."""
    if isinstance(node, gast.Subscript):
        return node.value if isinstance(node.ctx, gast.Store) else None
    if not isinstance(node, gast.Call):
        return None
    if isinstance(node.func, gast.Attribute) and node.func.attr in CONTAINER_STORES:
        return node.func.value
    found = mutation_of(node, source, local)
    return None if found is None else found.target


#: displays: a new container (whose elements another name may share)
_DISPLAYS = (gast.List, gast.Dict, gast.Set)
#: NumPy's functions whose result is new memory, which no other name can share
_ALLOCATORS = {
    "zeros", "zeros_like", "ones", "ones_like", "empty", "empty_like", "full", "full_like",
    "copy",
}  # fmt: skip


def _fresh(value: gast.expr, source: Source, local: set[str]) -> bool:
    """Whether ``value`` is an array one of NumPy's allocating functions makes, which no
    other name shares (not arithmetic: ``[x] * 2`` is a new list of ``x`` itself)."""
    if not isinstance(value, gast.Call):
        return False
    callee = source.resolve(value.func, local)
    module = (getattr(callee, "__module__", None) or "").split(".")[0]
    return module in ("numpy", "cupy") and getattr(callee, "__name__", None) in _ALLOCATORS


def _made_in_body(
    changed: gast.expr, stmt: gast.Try, source: Source, local: set[str], itself: bool = False
) -> bool:
    """Whether the array an in-place update in the body of ``stmt`` changes was made by the
    body, anew each time it runs (its name is first met in the body as a statement of the
    body's own binding it to new memory, and the body binds it to nothing else): no name
    from outside the body sees the update, so a body failing after it leaves nothing half
    done that the handler or later code reads (the names the body binds are checked
    below). Helpers written out inside a ``try`` (a derivative's code, second order) build
    their arrays so. ``itself``: the update changes the container named (``xs.append``),
    so a display made in the body counts as new memory too."""
    while isinstance(changed, (gast.Subscript, gast.Attribute)):
        changed = changed.value
    if not isinstance(changed, gast.Name):
        return False
    name = changed.id
    body = [n for s in stmt.body for n in gast.walk(s)]
    stores = [
        n
        for n in body
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
    ]
    fresh = [
        n
        for n in body
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and n.targets[0].id == name
        and (_fresh(n.value, source, local) or (itself and isinstance(n.value, _DISPLAYS)))
    ]
    if len(fresh) != len(stores):
        return False  # bound in the body to memory that may be shared
    first = next(s for s in stmt.body if any(n.id == name for n in _names(s)))
    return any(first is n for n in fresh)


#: functions of a value's shape and type alone: what a body that failed halfway left in a
#: name read only by them passes no derivative on, so it is not a read of its value
_SHAPE_FUNCTIONS = {"zeros_like", "ones_like", "empty_like"}
_SHAPE_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}


def _shape_reads(tree: gast.FunctionDef, source: Source, local: set[str]) -> set[int]:
    """The names read only for their shape (``zeros_like(v)``, ``v.shape``), such as the
    zero adjoints the backward arm of a failed body sets up in code differentiated again."""
    found: set[int] = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Attribute) and node.attr in _SHAPE_ATTRIBUTES:
            if isinstance(node.value, gast.Name):
                found.add(id(node.value))
        elif isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords:
            callee = source.resolve(node.func, local)
            module = (getattr(callee, "__module__", None) or "").split(".")[0]
            name = getattr(callee, "__name__", None)
            if module in ("numpy", "cupy", "srcad") and name in _SHAPE_FUNCTIONS:
                if isinstance(node.args[0], gast.Name):
                    found.add(id(node.args[0]))
    return found


def _names(node: gast.AST) -> list[gast.Name]:
    return [n for n in gast.walk(node) if isinstance(n, gast.Name)]


def _check_discarded(stmt: gast.Try, tree: gast.FunctionDef, source: Source) -> None:
    """Refuse a body whose partial work the handler or later code could read."""
    handler = stmt.handlers[0].body
    local = local_names(tree)
    for node in (n for s in stmt.body for n in gast.walk(s)):
        changed = _updated_in_place(node, source, local)
        # ``xs.append(v)`` changes the list alone (a comprehension lowered in the body
        # fills one): a display made in the body is memory of its own
        itself = isinstance(changed, gast.Name) and isinstance(node, gast.Call)
        if changed is not None and not _made_in_body(changed, stmt, source, local, itself):
            raise source.error(
                "an in-place update inside a 'try' body is not supported: when the body "
                "fails after it, the handler would see it half done; build a new value",
                node,
            )
    body = _assigned(stmt.body)
    inside = {id(n) for s in stmt.body for n in gast.walk(s)}
    inside |= _guarded(tree, handler)
    inside |= _before(tree, stmt)
    inside |= _shape_reads(tree, source, local)
    elsewhere = {
        n.id
        for n in gast.walk(tree)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in inside
    }
    for name in sorted(body):
        if name in _read_first(handler):
            raise source.error(
                f"the handler reads '{name}', which the 'try' body assigns: srcad "
                "differentiates the body as if it ran whole or not at all; compute it "
                "before the 'try'",
                stmt.handlers[0],
            )
        raises = bool(handler) and isinstance(handler[-1], gast.Raise)
        if name in elsewhere and name not in _assigned(handler) and not raises:
            raise source.error(
                f"the 'try' body assigns '{name}', which is read after it, and the handler "
                "does not assign it: srcad differentiates the body as if it ran whole or "
                f"not at all; assign '{name}' in the handler too",
                stmt,
            )


def _before(tree: gast.FunctionDef, stmt: gast.Try) -> set[int]:
    """The nodes of the top-level statements that run only before ``stmt`` (those ahead of
    the one holding it: no loop brings them round again), such as the zero tangents that
    forward-mode code sets up first."""
    for k, top in enumerate(tree.body):
        if any(node is stmt for node in gast.walk(top)):
            return {id(n) for s in tree.body[:k] for n in gast.walk(s)}
    return set()


def _guarded(tree: gast.FunctionDef, handler: list[gast.stmt]) -> set[int]:
    """The nodes only the arm of a completed body runs: under ``if ok:`` where the handler
    sets ``ok = False`` (code srcad generated, differentiated again, reads the body's
    values there)."""
    decisions = {
        s.targets[0].id
        for s in handler
        if isinstance(s, gast.Assign)
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Constant)
        and s.value.value is False
    }
    if not decisions:
        return set()
    copies = [
        s for s in gast.walk(tree) if isinstance(s, gast.Assign) and isinstance(s.value, gast.Name)
    ]
    grown = True
    while grown:  # ``_t1 = ok`` then ``if _t1:``
        new = {
            s.targets[0].id
            for s in copies
            if s.value.id in decisions and isinstance(s.targets[0], gast.Name)
        }
        grown = not new <= decisions
        decisions |= new
    return {
        id(n)
        for branch in gast.walk(tree)
        if isinstance(branch, gast.If)
        and isinstance(branch.test, gast.Name)
        and branch.test.id in decisions
        for s in branch.body
        for n in gast.walk(s)
    }


def restore_try(function: gast.FunctionDef, marker: str | None, namer: Namer) -> gast.FunctionDef:
    """The primal ``if ok:`` after each ``ok = attempted(E)`` as ``try``/``except E``; the
    handler first takes back what the failed arm pushed on a tape."""
    if marker is None:
        return function

    def is_marker(node: gast.AST) -> bool:
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id == marker
        )

    def restored(call: gast.Call, ok: str | None, branch: gast.If) -> list[gast.stmt]:
        # a tape the arm makes (a helper's, written out) goes with it when it fails
        tapes = sorted(_pushed_tapes(branch.body) - _assigned(branch.body))
        marks = {tape: namer.fresh(f"{tape}_mark") for tape in tapes}
        length = namer.bind_global(builtins.len, "len") if marks else "len"
        kind = None
        if call.args:
            kind = call.args[0] if len(call.args) == 1 else build.tuple_(call.args)
        undo: list[gast.stmt] = [
            gast.Expr(value=build.call(build.attr(build.load(tape), "rewind"), build.load(mark)))
            for tape, mark in marks.items()
        ]
        # what the failed arm bound, as it was before it ran: the handler's code may read
        # it (a tape push of the value it overwrites)
        kept = sorted(_assigned(branch.body) & _read_first(branch.orelse))
        saved = {name: namer.fresh(f"{name}_before") for name in kept}
        undo += [build.assign(name, build.load(copy)) for name, copy in saved.items()]
        failed = [build.assign(ok, build.const(False))] if ok in decisions else []
        handler = gast.ExceptHandler(
            type=kind, name=None, body=undo + failed + branch.orelse or [gast.Pass()]
        )
        body = [s for s in branch.body if not isinstance(s, gast.Pass)] or [gast.Pass()]
        attempt = gast.Try(body=body, handlers=[handler], orelse=[], finalbody=[])
        counts = [
            # (``len`` bound as srcad's own: the function may have a variable of that name)
            build.assign(mark, build.call(length, build.load(tape)))
            for tape, mark in marks.items()
        ]
        saves = [build.assign(copy, build.load(name)) for name, copy in saved.items()]
        return [*counts, *saves, attempt]

    # a decision only the primal ``if`` reads (forward mode) is dropped
    tests = {id(n.test) for n in gast.walk(function) if isinstance(n, gast.If)}
    loads = [
        n for n in gast.walk(function) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    ]
    names = [n.id for n in loads]
    decisions = {n.id for n in loads if names.count(n.id) > 1 or id(n) not in tests}

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        pending: dict[str, gast.Call] = {}
        for stmt in stmts:
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            if isinstance(target, gast.Name) and is_marker(stmt.value):
                pending[target.id] = stmt.value
                stmt.value = build.const(True)
                if target.id not in decisions:
                    continue
            elif (
                isinstance(target, gast.Name)
                and isinstance(stmt.value, gast.Name)
                and stmt.value.id in pending
            ):
                pending[target.id] = pending[stmt.value.id]  # the decision copied
            elif isinstance(stmt, gast.If) and is_marker(stmt.test):
                out.extend(restored(stmt.test, None, stmt))
                continue
            elif (
                isinstance(stmt, gast.If)
                and isinstance(stmt.test, gast.Name)
                and stmt.test.id in pending
            ):
                out.extend(restored(pending.pop(stmt.test.id), stmt.test.id, stmt))
                continue
            out.append(stmt)
        return out

    function.body = rewrite_bodies(function.body, block)
    return function


def _read_first(body: list[gast.stmt]) -> set[str]:
    """Names the statements may read before they bind them."""
    bound: set[str] = set()
    first: set[str] = set()
    for stmt in all_statements(body):
        for part in own_parts(stmt):
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in bound:
                    first.add(n.id)
        if isinstance(stmt, gast.Assign):
            bound |= {n.id for t in stmt.targets for n in gast.walk(t) if isinstance(n, gast.Name)}
    return first


def _pushed_tapes(body: list[gast.stmt]) -> set[str]:
    """The tapes the statements push on (``tape.push(v)``)."""
    return {
        n.func.value.id
        for s in body
        for n in gast.walk(s)
        if isinstance(n, gast.Call)
        and isinstance(n.func, gast.Attribute)
        and n.func.attr == "push"
        and isinstance(n.func.value, gast.Name)
    }
