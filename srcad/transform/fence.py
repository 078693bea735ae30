"""Reject what srcad cannot differentiate yet, early, with file, line and a caret."""

from __future__ import annotations

import gast

from srcad.transform.analyses.aliasing import Aliases
from srcad.transform.frontend import Source

_CONTROL_FLOW = "control flow is not supported yet; this release differentiates straight-line code"

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
    gast.ListComp: "list comprehensions are not supported yet",
    gast.SetComp: "set comprehensions are not supported yet",
    gast.DictComp: "dict comprehensions are not supported yet",
    gast.GeneratorExp: "generator expressions are not supported yet",
    gast.If: f"'if' statement: {_CONTROL_FLOW}",
    gast.For: f"'for' loop: {_CONTROL_FLOW}",
    gast.While: f"'while' loop: {_CONTROL_FLOW}",
    gast.Break: f"'break': {_CONTROL_FLOW}",
    gast.Continue: f"'continue': {_CONTROL_FLOW}",
    gast.IfExp: f"conditional expression ('a if c else b'): {_CONTROL_FLOW}",
    gast.Raise: "'raise' statements are not supported",
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
    last = len(tree.body) - 1
    for k, stmt in enumerate(tree.body):
        if isinstance(stmt, gast.Return) and k != last:
            raise source.error(f"a 'return' before the end of the function: {_CONTROL_FLOW}", stmt)
    return tree


def _check_node(node: gast.AST, source: Source) -> None:
    if isinstance(node, gast.AugAssign) and not isinstance(node.target, gast.Name):
        raise source.error(
            "augmented assignment to an element or attribute (in-place update) is not "
            "supported yet",
            node,
        )
    if isinstance(node, gast.Assign):
        for target in node.targets:
            for part in gast.walk(target):
                if isinstance(part, gast.Subscript) and isinstance(part.ctx, gast.Store):
                    raise source.error(
                        "assignment to an element (in-place update 'y[i] = v') is not "
                        "supported yet",
                        part,
                    )
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
    aliases = Aliases()
    for k, stmt in enumerate(body):
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            name = stmt.target.id
            later = {
                n.id
                for s in body[k + 1 :]
                for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            }
            shared = sorted(aliases.others(name) & later)
            if shared:
                raise source.error(
                    f"in-place update of '{name}', which may share memory with "
                    f"{', '.join(repr(s) for s in shared)} read later; NumPy would change both. "
                    f"Write '{name} = {name} {_OPERATOR.get(type(stmt.op), 'op')} ...' to make "
                    "a new array, or copy first",
                    stmt,
                )
            aliases.assign(name, gast.Constant(value=None, kind=None))
        elif isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                if isinstance(target, gast.Name):
                    aliases.assign(target.id, stmt.value)


_OPERATOR = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**"}
