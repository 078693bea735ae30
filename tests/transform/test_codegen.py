"""Code generation details: negative constants, comments, empty bodies."""

import gast

from srcad.transform import build
from srcad.transform.codegen import to_source


def test_negative_constant_base_keeps_its_parentheses():
    # a built BinOp(Constant(-2.0), Pow, y) would print as -2.0 ** y, which is -(2.0 ** y)
    expr = build.binop(build.const(-2.0), gast.Pow(), build.load("y"))
    text = to_source(gast.Module(body=[gast.Expr(value=expr)], type_ignores=[]))
    assert text.strip() == "(-2.0) ** y"
    assert eval(text, {"y": 2.0}) == 4.0


def test_comment_markers_become_comments_and_empty_bodies_pass():
    body = [
        build.comment("grad of: y = f(x)"),
        gast.If(test=build.load("c"), body=[], orelse=[build.assign("z", build.const(1))]),
    ]
    text = to_source(gast.Module(body=body, type_ignores=[]))
    assert text.splitlines()[0] == "# grad of: y = f(x)"
    assert "pass" in text
