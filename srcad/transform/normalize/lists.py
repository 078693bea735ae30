"""Lists built in the function: appends become assignments, second names are merged.

``xs.append(v)`` becomes ``xs = append(xs, v)`` (the same list, appended in place), so the
reverse pass sees an assignment whose adjoint takes the element's gradient off the list's
gradient. ``xs.extend(vs)`` and ``xs += vs`` append each element (a loop over ``vs`` unless
it is a display). ``ys = xs`` merges the names (an append through either reaches both).
Any other change of a list (``xs[i] = v``, ``insert``, ``pop``, appending to a parameter) is
refused. (Comprehensions were already made loops by ``comprehensions.py``.)

In generated code differentiated again, a list passed to one of srcad's helpers that reads
it for its length and its elements' shapes only (a static operand of the helper's rule:
``scatter_element(items, i, g)``, ``unconcatenate(g, items)``) is passed as
``static_list(items)``, a read of the list that carries no derivative.
"""

from __future__ import annotations

import copy

import gast

from srcad.adjoints.registry import lookup
from srcad.runtime import lists, tangents
from srcad.transform import build
from srcad.transform.analyses.tbr import may_precede, positions
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.helper_results import returns_list
from srcad.transform.normalize.walk import (
    RenameNames,
    all_statements,
    binds_name,
    own_parts,
    rename_until,
    rewrite_bodies,
)

_READS_ALLOWED = {"len", "stack", "concatenate", "sum"}


_METHODS = {"append", "extend"}


class _Lower:
    def __init__(self, source: Source, namer: Namer, built: set[str]) -> None:
        self.source = source
        self.namer = namer
        self.built = built
        self.append = source.bind(namer, lists.append, "append")

    def mark(self, node: gast.stmt, origin: gast.stmt) -> gast.stmt:
        gast.copy_location(node, origin)
        setanno(node, "origin", getanno(origin, "origin", origin))
        return node

    def block(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in body:
            call = _method_call(stmt)
            if call is not None and call.func.attr in _METHODS:
                out.extend(self.method(call, stmt))
                continue
            extended = _augmented_extend(stmt)
            if extended is not None and stmt.targets[0].id in self.built:
                out.extend(self.extend(stmt.targets[0].id, extended, stmt))
                continue
            out.append(stmt)
        return out

    def method(self, call: gast.Call, stmt: gast.stmt) -> list[gast.stmt]:
        items = call.func.value.id
        if len(call.args) != 1 or call.keywords:
            raise self.source.error(f"'{items}.{call.func.attr}' takes one argument", call)
        if call.func.attr == "extend":
            return self.extend(items, call.args[0], stmt)
        value = build.call(self.append, build.load(items), call.args[0])
        return [self.mark(build.assign(items, value), stmt)]

    def extend(self, items: str, values: gast.expr, stmt: gast.stmt) -> list[gast.stmt]:
        """``items.extend(values)`` (or ``items += values``): one append per element."""
        if isinstance(values, (gast.List, gast.Tuple)):
            elements = values.elts
            if any(isinstance(e, gast.Starred) for e in elements):
                raise self.source.error("'*' in a list extending another", values)
            appends = [build.call(self.append, build.load(items), e) for e in elements]
            return [self.mark(build.assign(items, a), stmt) for a in appends]
        element = self.namer.fresh("_element")
        append = build.call(self.append, build.load(items), build.load(element))
        loop = gast.For(
            target=build.store(element),
            iter=values,
            body=[self.mark(build.assign(items, append), stmt)],
            orelse=[],
            type_comment=None,
        )
        return [self.mark(loop, stmt)]


def join_displays(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """``[a] + [b]`` is ``[a, b]`` and ``[a] * 2`` is ``[a, a]``, as Python joins and repeats
    lists (not the arrays NumPy would add or scale: read so, they were silently wrong), and
    tuples likewise (``(a,) * 2`` was refused); any other join of a list written in the
    function (``[a] + [b][:1]``), or repeat of computed values, is refused."""
    builtin_list = source.lookup("list") is list

    class Join(gast.NodeTransformer):
        def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
            self.generic_visit(node)
            left, right = node.left, node.right
            if isinstance(node.op, gast.Add) and _displays(left, right):
                joined = type(left)(elts=[*left.elts, *right.elts], ctx=gast.Load())
                return gast.copy_location(joined, node)
            if isinstance(node.op, gast.Mult):
                display, count = (right, left) if _count(left) else (left, right)
                # (names and numbers only: ``[np.zeros(3)] * 2`` holds one array twice, which
                # writing the call out twice would make two)
                if _displays(display) and _count(count) and all(map(_atom, display.elts)):
                    elts = [copy.deepcopy(e) for _ in range(count.value) for e in display.elts]
                    return gast.copy_location(type(display)(elts=elts, ctx=gast.Load()), node)
                if _displays(display) and not all(map(_constant, display.elts)):
                    # (read as NumPy's scaling of an array: silently wrong until stop 30)
                    raise source.error(
                        "repeating a list or tuple of computed values is supported for names "
                        "and a count written out (xy = x * y; [xy] * 2)",
                        node,
                    )
            if isinstance(node.op, gast.Add) and (
                _list_value(left, builtin_list) or _list_value(right, builtin_list)
            ):
                raise source.error(
                    "joining or repeating lists with an operator is supported for lists "
                    "written out ([a] + [b], [a] * 2); write the list out, or extend one list "
                    "(xs.extend(ys), xs += ys)",
                    node,
                )
            return node

    return Join().visit(tree)


def _list_value(node: gast.expr, builtin_list: bool) -> bool:
    """Whether ``node`` is surely a list: a display or comprehension, ``list(...)``, a slice
    of one, an element of a display of lists."""
    if isinstance(node, (gast.List, gast.ListComp)):
        return True
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
        return builtin_list and node.func.id == "list"
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
        return _list_value(node.value, builtin_list)
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.List):
        return bool(node.value.elts) and all(_list_value(e, builtin_list) for e in node.value.elts)
    return False


def _displays(*nodes: gast.expr) -> bool:
    """Whether ``nodes`` are list displays, or tuple displays, all of one kind, unstarred."""
    kinds = {type(n) for n in nodes}
    return (
        len(kinds) == 1
        and kinds <= {gast.List, gast.Tuple}
        and not any(isinstance(e, gast.Starred) for n in nodes for e in n.elts)
    )


def _atom(node: gast.expr) -> bool:
    return isinstance(node, gast.Name) or _constant(node)


def _constant(node: gast.expr) -> bool:
    """A constant written out (``None``, ``0.0``, ``-1``): a list of them repeated any number
    of times holds no computed value."""
    if isinstance(node, gast.UnaryOp):
        return _constant(node.operand)
    return isinstance(node, gast.Constant)


def _count(node: gast.expr) -> bool:
    """A small non-negative int written out (a repeat count worth writing out)."""
    return isinstance(node, gast.Constant) and type(node.value) is int and 0 <= node.value <= 64


def _method_call(stmt: gast.stmt) -> gast.Call | None:
    """The call of ``stmt`` when it is ``name.method(...)`` for its effect."""
    if (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Attribute)
        and isinstance(stmt.value.func.value, gast.Name)
    ):
        return stmt.value
    return None


def _augmented_extend(stmt: gast.stmt) -> gast.expr | None:
    """``values`` when ``stmt`` is ``xs = xs + values`` desugared from ``xs += values`` with a
    list display or a name on the right (``+=`` extends a list in place)."""
    if not (
        isinstance(stmt, gast.Assign)
        and isinstance(getanno(stmt, "origin"), gast.AugAssign)
        and isinstance(stmt.targets[0], gast.Name)
        and isinstance(stmt.value, gast.BinOp)
        and isinstance(stmt.value.op, gast.Add)
        and isinstance(stmt.value.left, gast.Name)
        and stmt.value.left.id == stmt.targets[0].id
    ):
        return None
    return stmt.value.right


def lower_lists(tree: gast.FunctionDef, source: Source, namer: Namer) -> set[str]:
    """Rewrite appends and extends of ``tree`` (see module doc); the list names."""
    tree.body = rewrite_bodies(tree.body, lambda body: _list_then_value(body, namer))
    built = _built_lists(tree)
    _check_changes(tree, source, built)
    lower = _Lower(source, namer, built)
    tree.body = rewrite_bodies(tree.body, lower.block)
    _check_operators(tree, source, built, lower.append)
    _merge_aliases(tree, source, built, lower.append)
    _check_contained(tree, source, built, lower.append)
    names = _list_names(tree, lower.append, source)
    _check_built_before_read(tree, source, names, lower.append)
    _static_reads(tree, source, namer, names)
    return names


def _list_then_value(body: list[gast.stmt], namer: Namer) -> list[gast.stmt]:
    """A name bound to a list display and, further down the same block, to another value
    (``out = [a, b]; out = np.stack(out)``, often in a loop): the list gets a name of its
    own up to that statement, so that ``out`` names one kind of value (the list's only
    readers are the statements between, straight-line code)."""
    for i, stmt in enumerate(body):
        if not (binds_name(stmt) and isinstance(stmt.value, gast.List)):
            continue
        name = stmt.targets[0].id
        for j in range(i + 1, len(body)):
            later = body[j]
            if not isinstance(later, (gast.Assign, gast.Expr)):
                break  # a branch or loop between: left as it is
            if binds_name(later) and later.targets[0].id == name:
                value = later.value
                if isinstance(value, gast.List) or (
                    isinstance(value, gast.BinOp) and getattr(value.left, "id", None) == name
                ):
                    break  # a list again (``xs += ys`` extends it)
                rename_until(body, i, j, namer.fresh(f"{name}_items"))
                break
            if any(isinstance(t, gast.Name) and t.id == name for t in _targets(later)):
                break  # bound otherwise (unpacked into)
    return body


def _targets(stmt: gast.stmt) -> list[gast.expr]:
    if not isinstance(stmt, gast.Assign):
        return []
    return [n for t in stmt.targets for n in gast.walk(t) if isinstance(n, gast.Name)]


def _static_reads(tree: gast.FunctionDef, source: Source, namer: Namer, names: set[str]) -> None:
    """A list of ``names`` that generated code passes to a helper of srcad's as a static
    operand of its rule becomes ``static_list(name)`` there (see module doc)."""
    local = _stored_names(tree)
    for stmt in all_statements(tree.body):
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if not isinstance(node, gast.Call):
                    continue
                callee = source.resolve(node.func, local)
                module = getattr(callee, "__module__", None) or ""
                rule = lookup(callee) if module.startswith("srcad.runtime") else None
                if rule is None or not rule.static:
                    continue
                operands = [*zip(rule.operands, node.args)]
                operands += [(k.arg, k.value) for k in node.keywords]
                for param, arg in operands:
                    if param in rule.static and isinstance(arg, gast.Name) and arg.id in names:
                        helper = source.bind(namer, lists.static_list, "static_list")
                        wrapped = build.call(helper, build.load(arg.id))
                        _replace(node, arg, wrapped)


def _replace(call: gast.Call, old: gast.expr, new: gast.expr) -> None:
    """Put ``new`` where ``old`` is among ``call``'s arguments."""
    call.args = [new if a is old else a for a in call.args]
    for keyword in call.keywords:
        if keyword.value is old:
            keyword.value = new


def _stored_names(tree: gast.FunctionDef) -> set[str]:
    return {
        node.id
        for node in gast.walk(tree)
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param))
    }


def _built_lists(tree: gast.FunctionDef) -> set[str]:
    """Names bound to a list display, or to another such name (an alias)."""
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for stmt in all_statements(tree.body):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
                continue
            value = stmt.value
            if isinstance(value, gast.List) or (isinstance(value, gast.Name) and value.id in names):
                if stmt.targets[0].id not in names:
                    names.add(stmt.targets[0].id)
                    changed = True
    return names


def _check_changes(tree: gast.FunctionDef, source: Source, built: set[str]) -> None:
    """Refuse changes to lists other than append and extend of a list built here."""
    for stmt in all_statements(tree.body):
        call = _method_call(stmt)
        if call is not None and call.func.attr in _METHODS and call.func.value.id not in built:
            name = call.func.value.id
            raise source.error(
                f"'{name}.{call.func.attr}' changes a list this function did not build (a "
                "parameter or a value from elsewhere), which is not supported; build the "
                "list in this function",
                call,
            )
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if (
                    isinstance(node, gast.Subscript)
                    and isinstance(node.ctx, gast.Store)
                    and isinstance(node.value, gast.Name)
                    and node.value.id in built
                ):
                    raise source.error(
                        f"assigning to an element of the list '{node.value.id}' is not "
                        "supported; build a new list (or use an array and 'y[i] = v')",
                        node,
                    )
                if (
                    isinstance(node, gast.Attribute)
                    and isinstance(node.value, gast.Name)
                    and node.value.id in built
                    and not (node is getattr(call, "func", None) and node.attr in _METHODS)
                ):
                    raise source.error(
                        f"'{node.value.id}.{node.attr}' of a list built in the function is not "
                        "supported (append and extend are, as statements of their own)",
                        node,
                    )


def _check_operators(tree: gast.FunctionDef, source: Source, built: set[str], append: str) -> None:
    """``xs + ys`` and ``xs * n`` make new lists, whose gradients srcad does not split."""
    stores = stored_values(tree)
    for stmt in all_statements(tree.body):
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if not isinstance(node, gast.BinOp):
                    continue
                sides = [s for s in (node.left, node.right) if _is_list_or_slice(s, built)]
                mixed = [
                    s.id
                    for s in sides
                    if isinstance(s, gast.Name)
                    and not all(_list_like(v, built, append) for v in stores.get(s.id, []))
                ]
                if mixed:
                    raise source.error(
                        f"'{mixed[0]}' holds a list built in the function in one place and "
                        "another value in another; srcad follows one kind of value per name: "
                        "give the list a name of its own",
                        node,
                    )
                if sides:
                    raise source.error(
                        "joining or repeating lists built in the function with an operator is "
                        "not supported; extend one list instead (xs.extend(ys), xs += ys)",
                        node,
                    )


def _list_like(value: gast.expr, built: set[str], append: str) -> bool:
    """Whether ``value`` may be a list (a display, an append, a list name, a slice or copy
    of one, a join): what a name holding a list built in the function may also be bound to."""
    if isinstance(value, (gast.List, gast.Subscript)):
        return True
    if isinstance(value, gast.Name):
        return value.id in built
    if isinstance(value, gast.BinOp):
        return _list_like(value.left, built, append)
    return isinstance(value, gast.Call) and getattr(value.func, "id", None) in (
        append,
        "list",
        "tuple",
    )


def _is_list_or_slice(node: gast.expr, built: set[str]) -> bool:
    """``xs`` or ``xs[i:j]`` of a list ``xs`` in ``built`` (a slice is a list too)."""
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
        node = node.value
    return isinstance(node, gast.Name) and node.id in built


def _merge_aliases(tree: gast.FunctionDef, source: Source, built: set[str], append: str) -> None:
    """``ys = xs`` for a list ``xs`` that is appended to afterwards: ``ys`` becomes ``xs``
    everywhere, so that an append through either name reaches the one list both names mean.
    Refused unless ``xs`` is made once, in the alias's block or one enclosing it, before the
    alias, and ``ys`` is assigned only by the alias and used only after it in its block."""
    kept: set[int] = set()  # second names of lists that no longer change: left as they are
    while True:
        places = list(positions(tree.body))
        found = next(
            (
                (stmt, loops, block, path)
                for stmt, loops, _, block, path in places
                if id(stmt) not in kept
                and isinstance(stmt, gast.Assign)
                and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Name)
                and stmt.value.id in built
            ),
            None,
        )
        if found is None:
            return
        alias, loops, block, path = found
        ys, xs = alias.targets[0].id, alias.value.id
        if ys != xs and not _appended_after(places, loops, path, {xs, ys}, append):
            kept.add(id(alias))
            continue
        if ys != xs:
            made = [p for s, _, _, _, p in places if s is not alias and _creates(s, xs, append)]
            ok = (
                len(made) == 1
                and not any(_creates(s, ys, append) for s, *_ in places if s is not alias)
                and _runs_before(made[0], path)
                and all(
                    _runs_before(path, p)
                    for s, _, _, _, p in places
                    if s is not alias and ys in _own_names(s)
                )
            )
            if not ok:
                raise source.error(
                    f"'{ys} = {xs}' gives the list '{xs}' a second name in a way srcad cannot "
                    f"follow (one of them is assigned again, or '{ys}' is used before this "
                    "line); use one name for the list",
                    alias,
                )
            renamer = RenameNames({ys: xs})
            for stmt in tree.body:
                renamer.visit(stmt)
        block.remove(alias)


def _check_contained(tree: gast.FunctionDef, source: Source, built: set[str], append) -> None:
    """A list put inside another list (or a tuple) must not grow afterwards: reads through
    the outer list would see elements srcad does not know of."""
    places = list(positions(tree.body))
    for stmt, loops, _, _, path in places:
        inner: list[gast.expr] = []
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if isinstance(node, (gast.List, gast.Tuple)) and isinstance(node.ctx, gast.Load):
                    inner.extend(node.elts)
                elif isinstance(node, gast.Dict):
                    inner.extend(node.values)
        if (
            isinstance(stmt, gast.Assign)
            and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Name)
            and stmt.value.func.id == append
        ):
            inner.append(stmt.value.args[1])
        for node in inner:
            if (
                isinstance(node, gast.Name)
                and node.id in built
                and _appended_after(places, loops, path, {node.id}, append)
            ):
                raise source.error(
                    f"the list '{node.id}' is put inside another container here and appended "
                    "to afterwards, which srcad cannot follow; finish it first",
                    node,
                )


def _appended_after(places: list, loops: list, path: tuple, names: set[str], append) -> bool:
    """Whether an append to one of ``names`` may run after the statement at ``path``."""
    own = {id(lp) for lp in loops}
    return any(
        any(_appends_to(stmt, n, append) for n in names)
        and (own & {id(lp) for lp in stmt_loops} or may_precede(path, stmt_path))
        for stmt, stmt_loops, _, _, stmt_path in places
    )


def _own_names(stmt: gast.stmt) -> set[str]:
    return {n.id for part in own_parts(stmt) for n in gast.walk(part) if isinstance(n, gast.Name)}


def _creates(stmt: gast.stmt, name: str, append: str) -> bool:
    """Whether ``stmt`` binds ``name`` other than by appending to it."""
    if (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Name)
        and stmt.value.func.id == append
    ):
        return False
    return any(
        isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name
        for part in own_parts(stmt)
        for n in gast.walk(part)
    )


def _runs_before(first: tuple, then: tuple) -> bool:
    """Whether the path ``then`` lies after ``first`` in ``first``'s block (or inside a
    statement there)."""
    block = first[:-1]
    if len(then) <= len(block) or then[: len(block)] != block:
        return False
    (k_first, _), (k_then, _) = first[-1], then[len(block)]
    return k_then > k_first


def _list_names(tree: gast.FunctionDef, append: str, source: Source) -> set[str]:
    """Names holding a list: a display, an append, another such name, a slice or a list
    element of one, ``tuple``/``list`` of one, or the result of a helper of the user's
    returning a list it builds (indexing each reads an element, whatever its shape)."""
    names: set[str] = set()
    local = _stored_names(tree)
    stores = stored_values(tree)
    changed = True
    while changed:
        changed = False
        for stmt in all_statements(tree.body):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
                continue
            value = stmt.value
            is_list = (
                isinstance(value, gast.List)
                or (
                    isinstance(value, gast.Call)
                    and isinstance(value.func, gast.Name)
                    and value.func.id == append
                )
                or holds_list(value, names, stores)
                or _copy_of_list(value, names, source, local)
                or (
                    isinstance(value, gast.Call) and returns_list(source.resolve(value.func, local))
                )
            )
            if is_list and stmt.targets[0].id not in names:
                names.add(stmt.targets[0].id)
                changed = True
    return names


def stored_values(tree: gast.FunctionDef) -> dict[str, list[gast.expr]]:
    """The values each name is assigned (by itself, not unpacked into it)."""
    stores: dict[str, list[gast.expr]] = {}
    for stmt in all_statements(tree.body):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            stores.setdefault(stmt.targets[0].id, []).append(stmt.value)
    return stores


def holds_list(
    value: gast.expr, lists: set[str], stores: dict[str, list[gast.expr]], depth: int = 0
) -> bool:
    """Whether ``value`` is a list: a display, a name in ``lists``, a slice of a list, or
    an element of a list that is a list on every path (``items[0]`` of ``items = [[u, v],
    w]``; ``stores``: the values of each name)."""
    if isinstance(value, gast.List):
        return True
    if isinstance(value, gast.Name):
        return value.id in lists
    if not isinstance(value, gast.Subscript):
        return False
    if isinstance(value.slice, gast.Slice):
        return holds_list(value.value, lists, stores, depth)
    k = value.slice
    if isinstance(k, gast.Constant) and type(k.value) is int:
        return _element_holds_list(value.value, k.value, lists, stores, depth + 1)
    return _element_holds_list(value.value, None, lists, stores, depth + 1)


def _element_holds_list(
    value: gast.expr, k: int | None, lists: set[str], stores: dict, depth: int
) -> bool:
    """Whether element ``k`` of ``value`` (any element, for ``None``: an index known at run
    time, ``for a, b in pairs``) is a list: a display's element, or that of each value a
    name is assigned (an append among them: not known)."""
    if depth > 8:
        return False
    if isinstance(value, (gast.List, gast.Tuple)):
        elts = value.elts
        if any(isinstance(e, gast.Starred) for e in elts) or not elts:
            return False
        if k is None:
            return all(holds_list(e, lists, stores, depth) for e in elts)
        return -len(elts) <= k < len(elts) and holds_list(elts[k], lists, stores, depth)
    if isinstance(value, gast.Name) and stores.get(value.id):
        return all(_element_holds_list(v, k, lists, stores, depth + 1) for v in stores[value.id])
    return False


def _copy_of_list(value: gast.expr, names: set[str], source: Source, local: set[str]) -> bool:
    """Whether ``value`` is ``tuple(xs)`` or ``list(xs)`` of a list ``xs``."""
    return (
        isinstance(value, gast.Call)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], gast.Name)
        and value.args[0].id in names
        and source.resolve(value.func, local) in (tuple, list)
    )


def _check_built_before_read(
    tree: gast.FunctionDef, source: Source, names: set[str], append: str
) -> None:
    """An element read of a list that may later grow is refused: its gradient would be
    placed by the final list's length, not the length at the time of the read. A list made
    afresh in each turn of the loops it shares with its appends may be read after them."""
    places = list(positions(tree.body))
    local = _stored_names(tree)
    for name in names:
        appends = [
            (stmt, loops, path)
            for stmt, loops, _, _, path in places
            if _appends_to(stmt, name, append)
        ]
        made = [
            loops
            for stmt, loops, _, block, _ in places
            if _makes_afresh(stmt, block, name, source, local)
        ]
        fresh_in = {id(lp) for lp in made[0]} if len(made) == 1 else set()
        for stmt, loops, _, _, path in places:
            reads = [
                n
                for part in own_parts(stmt)
                for n in gast.walk(part)
                if isinstance(n, gast.Subscript)
                and isinstance(n.value, gast.Name)
                and n.value.id == name
            ]
            if (
                isinstance(stmt, gast.For)
                and isinstance(stmt.iter, gast.Name)
                and stmt.iter.id == name
            ):
                reads.append(stmt.iter)
            unpacked = _unpacked_list(stmt, source, local)
            if unpacked is not None and unpacked.id == name:
                # ``a, *rest, z = xs`` reads ``xs[1:-1]`` and ``xs[-1]`` (unpacking.py): by
                # the final length, were ``xs`` appended to afterwards
                reads.append(unpacked)
            if not reads:
                continue
            for _, append_loops, append_path in appends:
                shared = {id(lp) for lp in loops} & {id(lp) for lp in append_loops}
                later = may_precede(path, append_path)
                if shared <= fresh_in and not later:
                    continue
                if shared or later:
                    raise source.error(
                        f"reading an element of the list '{name}' while it is still being "
                        "appended to is not supported yet; build the list first, then read it",
                        reads[0],
                    )


def _unpacked_list(stmt: gast.stmt, source: Source, local: set[str]) -> gast.Name | None:
    """The name ``xs`` that ``a, *rest = xs`` (or ``= tuple(xs)``, ``= list(xs)``) unpacks
    with a star."""
    if not (
        isinstance(stmt, gast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], (gast.Tuple, gast.List))
        and any(isinstance(e, gast.Starred) for e in stmt.targets[0].elts)
    ):
        return None
    value = stmt.value
    if (
        isinstance(value, gast.Call)
        and len(value.args) == 1
        and not value.keywords
        and source.resolve(value.func, local) in (tuple, list)
    ):
        value = value.args[0]
    return value if isinstance(value, gast.Name) else None


def _makes_afresh(
    stmt: gast.stmt, block: list[gast.stmt], name: str, source: Source, local: set[str]
) -> bool:
    """Whether ``stmt`` binds ``name`` to a new list: a display, or (in forward-mode code
    differentiated again) the zero tangent of the list the statement before it displays.
    (A zero tangent of a placeholder ``None`` is no list, and no other statement is.)"""
    if not (
        isinstance(stmt, gast.Assign)
        and any(isinstance(t, gast.Name) and t.id == name for t in stmt.targets)
    ):
        return False
    value = stmt.value
    if isinstance(value, gast.List):
        return True
    if not (
        isinstance(value, gast.Call)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], gast.Name)
        and source.resolve(value.func, local) is tangents.zero_tangent
    ):
        return False
    k = next(i for i, s in enumerate(block) if s is stmt)
    before = block[k - 1] if k else None
    return (
        isinstance(before, gast.Assign)
        and isinstance(before.value, gast.List)
        and any(isinstance(t, gast.Name) and t.id == value.args[0].id for t in before.targets)
    )


def _appends_to(stmt: gast.stmt, name: str, append: str) -> bool:
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Name)
        and stmt.value.func.id == append
        and isinstance(stmt.value.args[0], gast.Name)
        and stmt.value.args[0].id == name
    )
