"""Small constructors for gast nodes, so passes read as what they build."""

from __future__ import annotations

from typing import Any

import gast


def load(name: str) -> gast.Name:
    """A Name read."""
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def store(name: str) -> gast.Name:
    """A Name write."""
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def param(name: str) -> gast.Name:
    """A function parameter."""
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def const(value: Any) -> gast.expr:
    """A constant; negative numbers become unary minus so unparse keeps precedence."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-value, kind=None))
    return gast.Constant(value=value, kind=None)


def assign(target: str | gast.expr, value: gast.expr) -> gast.Assign:
    """``target = value``."""
    if isinstance(target, str):
        target = store(target)
    return gast.Assign(targets=[target], value=value, type_comment=None)


def attr(value: gast.expr, name: str) -> gast.Attribute:
    """``value.name``."""
    return gast.Attribute(value=value, attr=name, ctx=gast.Load())


def call(func: gast.expr | str, *args: gast.expr, **kwargs: gast.expr) -> gast.Call:
    """``func(*args, **kwargs)``."""
    if isinstance(func, str):
        func = load(func)
    keywords = [gast.keyword(arg=k, value=v) for k, v in kwargs.items()]
    return gast.Call(func=func, args=list(args), keywords=keywords)


def binop(left: gast.expr, op: gast.operator, right: gast.expr) -> gast.BinOp:
    """``left op right``."""
    return gast.BinOp(left=left, op=op, right=right)


def tuple_(elts: list[gast.expr], ctx: gast.expr_context | None = None) -> gast.Tuple:
    """``(a, b, ...)``."""
    return gast.Tuple(elts=list(elts), ctx=ctx or gast.Load())


def ret(value: gast.expr) -> gast.Return:
    """``return value``."""
    return gast.Return(value=value)


def comment(text: str) -> gast.Expr:
    """A marker statement that codegen prints as ``# text``."""
    return gast.Expr(value=call(COMMENT_MARKER, gast.Constant(value=text, kind=None)))


#: Callee name of comment markers; no user identifier can contain NUL.
COMMENT_MARKER = "\x00comment"


def is_comment(stmt: gast.stmt) -> bool:
    """Whether ``stmt`` is a comment marker."""
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Name)
        and stmt.value.func.id == COMMENT_MARKER
    )
