"""Reject what srcad cannot differentiate yet, early, with file, line and a caret."""

from __future__ import annotations

import gast

from srcad.transform.analyses.aliasing import Aliases, carry
from srcad.transform.frontend import Source
from srcad.transform.normalize.walk import own_parts

_REJECTED: dict[type, str] = {
    gast.Try: "'try' statements cannot be differentiated",
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
    gast.Lambda: "lambda expressions are not supported yet",
    gast.SetComp: "set comprehensions are not supported yet",
    gast.DictComp: "dict comprehensions are not supported yet",
    gast.Delete: "'del' statements are not supported",
    gast.Import: "imports inside a differentiated function are not supported; import at "
    "module level",
    gast.ImportFrom: "imports inside a differentiated function are not supported; import at "
    "module level",
    gast.NamedExpr: "assignment expressions (':=') are not supported",
    gast.Starred: "star-arguments ('*args') are not supported yet",
    gast.Match: "'match' statements are not supported",
    gast.Set: "set displays are not supported",
}


def fence(tree: gast.FunctionDef, source: Source) -> gast.FunctionDef:
    """Raise ``UnsupportedConstructError`` at the first unsupported construct in ``tree``."""
    args = tree.args
    if args.vararg or args.kwarg:
        raise source.error("'*args' and '**kwargs' parameters are not supported yet", tree)
    for stmt in tree.body:
        for node in gast.walk(stmt):
            message = _REJECTED.get(type(node))
            if message is not None:
                raise source.error(message, node)
            _check_node(node, source)
    _check_inplace_aliasing(tree.body, source)
    return tree


def _check_node(node: gast.AST, source: Source) -> None:
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
            continue
        for part in gast.walk(target):
            if isinstance(part, gast.Subscript) and isinstance(part.ctx, gast.Store):
                raise source.error("element assignment inside an unpacking is not supported", part)
            if isinstance(part, gast.Attribute) and isinstance(part.ctx, gast.Store):
                raise source.error("assignment to an attribute is not supported", part)
    if isinstance(node, gast.Call):
        for kw in node.keywords:
            if kw.arg is None:
                raise source.error("'**kwargs' in a call is not supported yet", node)
    if isinstance(node, gast.AnnAssign):
        raise source.error("annotated assignments are not supported", node)


def _check_inplace_aliasing(body: list[gast.stmt], source: Source) -> None:
    """``z += 1`` on an array would also change every name sharing its memory; refuse that
    when such a name is read afterwards, since desugaring to ``z = z + 1`` would not."""
    order: list[tuple[gast.stmt, list[gast.stmt]]] = []  # statement, enclosing loops

    def visit(stmts: list[gast.stmt], loops: list[gast.stmt]) -> None:
        for stmt in stmts:
            order.append((stmt, loops))
            inner = loops + [stmt] if isinstance(stmt, (gast.For, gast.While)) else loops
            for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
                if isinstance(stmt, (gast.If, gast.For, gast.While)) and block:
                    visit(block, inner)

    visit(body, [])
    position = {id(stmt): k for k, (stmt, _) in enumerate(order)}

    def shared_later(k: int, loops: list[gast.stmt], name: str, aliases: Aliases) -> list[str]:
        """Other names sharing ``name``'s memory that are read after statement ``k``."""
        later = {n for s, _ in order[k + 1 :] for n in _simple_reads(s)}
        for loop in loops:  # a loop's next turn reads what the whole loop reads
            later |= {
                n.id
                for n in gast.walk(loop)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            }
        return sorted(aliases.others(name) & later)

    def check(stmt: gast.stmt, loops: list[gast.stmt], aliases: Aliases) -> None:
        k = position[id(stmt)]
        changed = _first_target(stmt) if isinstance(stmt, (gast.Assign, gast.AugAssign)) else None
        if isinstance(changed, gast.Subscript):
            changed = changed.value
        if isinstance(changed, gast.Name) and changed.id in aliases.containers:
            return  # xs += [v], d[k] = v change the container, not the arrays it holds
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            name = stmt.target.id
            shared = shared_later(k, loops, name, aliases)
            if shared:
                raise source.error(
                    f"in-place update of '{name}', which may share memory with "
                    f"{', '.join(repr(s) for s in shared)} read later; NumPy would change both. "
                    f"Write '{name} = {name} {_OPERATOR.get(type(stmt.op), 'op')} ...' to make "
                    "a new array, or copy first",
                    stmt,
                )
        elif isinstance(stmt, (gast.Assign, gast.AugAssign)) and isinstance(
            _first_target(stmt), gast.Subscript
        ):
            # y[i] = v changes y's memory: any other name viewing it would change too
            name = _first_target(stmt).value.id
            shared = shared_later(k, loops, name, aliases)
            if shared:
                raise source.error(
                    f"in-place update of '{name}', which shares memory with "
                    f"{', '.join(repr(s) for s in shared)} read later; a view or copy of the "
                    "name that changes under it is not supported yet. Copy first "
                    f"({shared[0]} = {name}.copy())",
                    stmt,
                )

    carry(body, check)


def _first_target(stmt: gast.stmt) -> gast.expr:
    return stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target


def _simple_reads(stmt: gast.stmt) -> set[str]:
    """Names a statement reads itself (a compound statement: its header only)."""
    return {
        n.id
        for part in own_parts(stmt)
        for n in gast.walk(part)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


_OPERATOR = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**"}
