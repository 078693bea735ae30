"""Reject what srcad cannot differentiate yet, early, with file, line and a caret."""

from __future__ import annotations

from collections.abc import Callable

import gast

from srcad.errors import TransformError
from srcad.transform.analyses.aliasing import Aliases, carry
from srcad.transform.analyses.mutators import describe
from srcad.transform.analyses.objects import (
    KNOWN_METHODS,
    local_objects_own_arrays,
    method_objects,
    shares_nothing,
)
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.dicts import SPREAD_KEYWORDS

_REJECTED: dict[type, str] = {
    gast.With: "'with' statements cannot be differentiated",
    gast.AsyncWith: "'async with' cannot be differentiated",
    gast.AsyncFor: "'async for' cannot be differentiated",
    gast.Yield: "generators ('yield') cannot be differentiated",
    gast.YieldFrom: "generators ('yield from') cannot be differentiated",
    gast.Await: "'await' cannot be differentiated",
    gast.AsyncFunctionDef: "async functions cannot be differentiated",
    gast.Global: "'global' declarations are not supported (functions must not write globals)",
    gast.Nonlocal: "'nonlocal' declarations are not supported (functions must not write "
    "enclosing variables)",
    gast.ClassDef: "class definitions inside a differentiated function are not supported",
    gast.FunctionDef: "nested function definitions are not supported yet",
    gast.Lambda: "a lambda here is not supported yet; srcad writes out a lambda assigned to "
    "a name and called, or given to map, functools.reduce or a function of yours",
    gast.DictComp: "dict comprehensions are not supported yet",
    gast.Delete: "'del' statements are not supported",
    gast.Import: "imports inside a differentiated function are not supported; import at "
    "module level",
    gast.ImportFrom: "imports inside a differentiated function are not supported; import at "
    "module level",
    gast.NamedExpr: "assignment expressions (':=') are not supported",
    gast.Match: "'match' statements are not supported",
}


def fence(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """Raise ``UnsupportedConstructError`` at the first unsupported construct in ``tree``."""
    args = tree.args
    if args.vararg:  # (called with a count, it is a tuple parameter by now)
        raise source.error("a '*args' parameter is not supported here", tree)
    unpacked = _assigned_stars(tree)  # ``a, *rest = xs``: normalize/unpacking.py's
    local = local_names(tree)
    pytrees = set(getanno(tree, "leaves", None) or {})  # (one parameter per leaf by now)
    params = {a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    for stmt in tree.body:
        for node in gast.walk(stmt):
            message = _REJECTED.get(type(node))
            if isinstance(node, gast.Lambda) and getanno(node, "local_function", None):
                name = getanno(node, "local_function")[0]
                message = (
                    f"the local function '{name}' is given to a call; srcad writes out a "
                    "local function given to a function of yours, map or functools.reduce"
                )
            if (
                isinstance(node, gast.Starred)
                and isinstance(node.ctx, gast.Store)
                and id(node) not in unpacked
            ):
                message = (
                    "starred unpacking ('a, *rest = x') is not supported; index and slice "
                    "instead ('a = x[0]; rest = x[1:]')"
                )
            if message is not None:
                raise source.error(message, node)
            _check_node(node, source, local, pytrees, params)
    setanno(tree, "number_params", _check_inplace_aliasing(tree.body, source, params, local))
    return tree


def _assigned_stars(tree: gast.FunctionDef) -> set[int]:
    """The ``*rest`` of assignments' targets (at any depth of nested tuples), by ``id``."""
    found: set[int] = set()

    def visit(target: gast.expr) -> None:
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                if isinstance(elt, gast.Starred) and isinstance(elt.value, gast.Name):
                    found.add(id(elt))
                else:
                    visit(elt)

    for node in gast.walk(tree):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            visit(node.targets[0])
    return found


def _check_node(
    node: gast.AST, source: Source, local: set[str], pytrees: set[str], params: set[str]
) -> None:
    if isinstance(node, gast.AugAssign) and not isinstance(
        node.target, (gast.Name, gast.Subscript)
    ):
        raise source.error("augmented assignment to an attribute is not supported", node)
    targets = (
        node.targets
        if isinstance(node, gast.Assign)
        else ([node.target] if isinstance(node, gast.AugAssign) else [])
    )
    for target in targets:
        if isinstance(target, gast.Subscript):
            if not isinstance(target.value, gast.Name) or len(targets) > 1:
                raise source.error(
                    "in-place updates are supported on a name ('y[i] = v'), one at a time",
                    target,
                )
            if target.value.id in pytrees:
                raise source.error(
                    f"'{target.value.id}' is an argument holding a dict, list or tuple of "
                    "arrays, which the function may read but not change: bind the new value "
                    "to a name of its own ('W = p[\"W\"] + ...')",
                    target,
                )
            if target.value.id not in local:
                # (the generated code would make it a local name: an UnboundLocalError)
                raise source.error(
                    f"'{target.value.id}' is changed here but not made in the function (a "
                    "global or a closure's variable); a differentiated function may not "
                    "write outside itself: build the array or dict in the function",
                    target,
                )
            continue
        for part in gast.walk(target):
            if isinstance(part, gast.Subscript) and isinstance(part.ctx, gast.Store):
                raise source.error("element assignment inside an unpacking is not supported", part)
            if isinstance(part, gast.Attribute) and isinstance(part.ctx, gast.Store):
                raise source.error("assignment to an attribute is not supported", part)
    if isinstance(node, gast.Call):
        for kw in node.keywords:
            # (``f(**d)`` of a dict built in the function: its keys written out, dicts.py)
            # (a parameter not differentiated: its dict passed as it is, at run time)
            if kw.arg is None and not (
                isinstance(kw.value, gast.Name) and kw.value.id in local | params
            ):
                raise source.error(SPREAD_KEYWORDS, node)
    if isinstance(node, gast.AnnAssign):
        raise source.error("annotated assignments are not supported", node)


def _check_inplace_aliasing(
    body: list[gast.stmt], source: Source, params: set[str], local: set[str]
) -> dict[str, TransformError]:
    """``z += 1`` on an array would also change every name sharing its memory; refuse that
    when such a name is read afterwards, since desugaring to ``z = z + 1`` would not.
    When the only such names are parameters (``z = x; z += y`` with ``x`` a Python float,
    which srcad cannot tell from a 0-d array before the call), they are returned instead,
    with the error: the derivative then checks at its call that they hold numbers, which
    no update changes, and raises it for an array."""
    places = _places(body)
    numbers: dict[str, TransformError] = {}
    # (``w = holder.weights()`` may be the array ``holder`` holds: objects.py)
    objects = method_objects(body, source, local)
    methods: dict[str, str] = {}  # object -> a method of it whose result may be part of it

    def returned(call: gast.Call) -> set[str]:
        found = objects(call)
        for name in found:
            methods.setdefault(name, describe(call.func))
        return found

    def advice(name: str, shared: list[str], copy: str) -> str:
        method = next((methods[s] for s in shared if s in methods), None)
        if method is None:
            return copy
        return (
            f"('{method}()' may hand back an array its object holds). Copy the result "
            f"({method}(...).copy())"
        )

    from_outside = _outside_holders(body, source, local)

    def refuse_outside(stmt: gast.stmt, name: str, aliases: Aliases) -> None:
        """``w = TABLE; w[0] = v``: the array is a global's, a module's or an object's,
        whose other readers (a function reading the global) srcad cannot see; refused
        whether or not the function reads it again (the update was lost on them, silently,
        until stop 33)."""
        outside = sorted(n for n in aliases.others(name) if from_outside(n, aliases))
        if outside:
            holder = outside[0]
            raise source.error(
                f"in-place update of '{name}', which may share memory with an array from "
                f"outside the function ('{holder}': "
                f"{'an object' if holder in local else 'a global or a module'}, whose "
                "array other code may read); srcad cannot see those readers. Copy it where "
                f"'{name}' is bound ({name} = ....copy()) to change an array of your own",
                stmt,
            )

    def shared_later(stmt: gast.stmt, name: str, aliases: Aliases) -> list[str]:
        """Other names sharing ``name``'s memory that may be read after ``stmt`` before
        they are bound anew (a helper's inlined parameter, bound again on the next turn of
        a loop, does not count)."""
        return sorted(n for n in aliases.others(name) if _live_after(stmt, n, places))

    def check(stmt: gast.stmt, loops: list[gast.stmt], aliases: Aliases) -> None:
        changed = _first_target(stmt) if isinstance(stmt, (gast.Assign, gast.AugAssign)) else None
        if isinstance(changed, gast.Subscript):
            changed = changed.value
        if isinstance(changed, gast.Name) and changed.id in aliases.containers:
            # xs += [v], d[k] = v change the container, not the arrays it holds; d[k] += v
            # changes the array d[k] holds in place (NumPy's ``__iadd__``)
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
                shared = shared_later(stmt, changed.id, aliases)
                if shared:
                    element = describe(stmt.target)
                    raise source.error(
                        f"in-place update of {element}, which may share memory with "
                        f"{', '.join(repr(s) for s in shared)} read later; NumPy would change "
                        f"both. Write '{element} = {element} "
                        f"{_OPERATOR.get(type(stmt.op), 'op')} ...' to make a new array",
                        stmt,
                    )
            return
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            name = stmt.target.id
            if not aliases.is_number(name):
                refuse_outside(stmt, name, aliases)
            shared = shared_later(stmt, name, aliases)
            if shared:
                error = source.error(
                    f"in-place update of '{name}', which may share memory with "
                    f"{', '.join(repr(s) for s in shared)} read later; NumPy would change both. "
                    + advice(
                        name,
                        shared,
                        f"Write '{name} = {name} {_OPERATOR.get(type(stmt.op), 'op')} ...' to "
                        "make a new array, or copy first",
                    ),
                    stmt,
                )
                if not set(shared) <= params or set(shared) & methods.keys():
                    raise error  # (an object a method was called on holds no number)
                # parameters alone: refused when the call gives one an array
                numbers.update((n, error) for n in shared)
        elif isinstance(stmt, (gast.Assign, gast.AugAssign)) and isinstance(
            _first_target(stmt), gast.Subscript
        ):
            # y[i] = v changes y's memory: any other name viewing it would change too
            name = _first_target(stmt).value.id
            refuse_outside(stmt, name, aliases)
            shared = shared_later(stmt, name, aliases)
            if shared:
                raise source.error(
                    f"in-place update of '{name}', which shares memory with "
                    f"{', '.join(repr(s) for s in shared)} read later; a view or copy of the "
                    "name that changes under it is not supported yet. "
                    + advice(name, shared, f"Copy first ({shared[0]} = {name}.copy())"),
                    stmt,
                )

    carry(body, check, Aliases(shares_nothing(source, local)), returned)
    return numbers


def _outside_holders(
    body: list[gast.stmt], source: Source, local: set[str]
) -> Callable[[str, Aliases], bool]:
    """Whether a name holds memory from outside the function: a global or a module (not a
    local), or an object, local or argument, whose fields or methods are read (``h.table``,
    ``h.rows()``, ``getattr(h, "W")``: ``h`` holds the arrays its fields hold), unless the
    function makes it of a class of yours whose arrays are its own (objects.py)."""
    objects = set()
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
                if node.attr not in KNOWN_METHODS:
                    objects.add(node.value.id)
            elif (
                isinstance(node, gast.Call)
                and isinstance(node.func, gast.Name)
                and node.func.id in ("getattr", "vars")
                and node.args
                and isinstance(node.args[0], gast.Name)
            ):
                objects.add(node.args[0].id)

    owns = local_objects_own_arrays(body, source, local)

    def holds(name: str, aliases: Aliases) -> bool:
        if name not in local:
            return True
        return name in objects and not aliases.is_number(name) and not owns(name)

    return holds


_READ, _BOUND, _UNDECIDED = "read", "bound", "undecided"
Places = dict[int, tuple[list[gast.stmt], int, gast.stmt | None]]


def _places(body: list[gast.stmt]) -> Places:
    """For each statement (by ``id``): its block, its index there, and the compound
    statement the block belongs to (None at the top)."""
    places: Places = {}

    def visit(block: list[gast.stmt], parent: gast.stmt | None) -> None:
        for k, stmt in enumerate(block):
            places[id(stmt)] = (block, k, parent)
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                visit(stmt.body, stmt)
                visit(stmt.orelse, stmt)

    visit(body, None)
    return places


def _live_after(stmt: gast.stmt, name: str, places: Places) -> bool:
    """Whether ``name`` may be read after ``stmt`` runs, before it is bound again, on some
    path: the rest of its block, a loop's next turn, what follows the loop or branch."""
    node = stmt
    while True:
        block, k, parent = places[id(node)]
        found = _first_use(block[k + 1 :], name)
        if found != _UNDECIDED:
            return found == _READ
        if parent is None:
            return False
        if isinstance(parent, (gast.For, gast.While)) and any(s is node for s in parent.body):
            # the next turn: the header, then the body from its start
            if isinstance(parent, gast.While) and name in _names_read(parent.test):
                return True
            rebinds = isinstance(parent, gast.For) and name in _names_bound(parent.target)
            if not rebinds and _first_use(parent.body, name) == _READ:
                return True
        if isinstance(parent, (gast.For, gast.While)) and _first_use(parent.orelse, name) == _READ:
            return True
        node = parent


def _first_use(stmts: list[gast.stmt], name: str) -> str:
    """Whether running ``stmts`` surely reads ``name`` first on some path (_READ), surely
    binds it again before any read (_BOUND), or neither (_UNDECIDED)."""
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            if name in _names_read(stmt.test):
                return _READ
            then, other = _first_use(stmt.body, name), _first_use(stmt.orelse, name)
            if _READ in (then, other):
                return _READ
            if then == other == _BOUND:
                return _BOUND
        elif isinstance(stmt, (gast.For, gast.While)):
            header = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            if name in _names_read(header):
                return _READ
            rebinds = isinstance(stmt, gast.For) and name in _names_bound(stmt.target)
            # a loop may make no turn: what its body binds is not sure to be bound after it
            if not rebinds and _first_use(stmt.body, name) == _READ:
                return _READ
            if _first_use(stmt.orelse, name) == _READ:
                return _READ
        elif isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            if name in _names_read(stmt):
                return _READ  # a closure may read it whenever it is called
        else:
            if name in _names_read(stmt):
                return _READ
            if isinstance(stmt, gast.Return):
                return _BOUND  # the path ends here without reading it
            if isinstance(stmt, gast.Assign) and any(name in _names_bound(t) for t in stmt.targets):
                return _BOUND
    return _UNDECIDED


def _names_read(node: gast.AST) -> set[str]:
    return {
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def _names_bound(target: gast.expr) -> set[str]:
    """Names a plain binding of ``target`` rebinds (``a``, ``a, b``; not ``a[i]``)."""
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, (gast.Tuple, gast.List)):
        return {n for elt in target.elts for n in _names_bound(elt)}
    if isinstance(target, gast.Starred):
        return _names_bound(target.value)
    return set()


def _first_target(stmt: gast.stmt) -> gast.expr:
    return stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target


_OPERATOR = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**"}
