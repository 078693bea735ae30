"""The recording of overwritten values (reverse.py's pushes and pops, an update in place's
saved part and its restore), written as control-flow templates: the code they make, and
gradients of loops that record, checked against central finite differences."""

import ast

import gast
import numpy as np

import srcad
from srcad.runtime import inplace
from srcad.transform import build
from srcad.transform import control_templates as shapes
from srcad.transform.naming import Namer
from srcad.transform.templates import fill


def text(nodes) -> str:
    module = gast.gast_to_ast(gast.Module(body=nodes, type_ignores=[]))
    return ast.unparse(ast.fix_missing_locations(module))


def test_the_part_an_update_overwrites_is_saved_and_put_back():
    namer = Namer(set())
    save = fill(shapes.push_saved, namer, tape="_tape", array="u", index=build.load("i"))
    assert text(save) == "_tape.push(saved(u, i))"
    put_back = fill(shapes.restore_popped, namer, tape="_tape", array="u", index=build.load("i"))
    assert text(put_back) == "restore(u, i, _tape.pop())"
    assert namer.globals["saved"] is inplace.saved
    assert namer.globals["restore"] is inplace.restore


def test_the_helpers_are_bound_where_the_user_took_their_names():
    namer = Namer({"saved", "restore"})
    save = fill(shapes.push_saved, namer, tape="t", array="u", index=build.const(0))
    put_back = fill(shapes.restore_popped, namer, tape="t", array="u", index=build.const(0))
    assert text(save + put_back) == "t.push(saved_1(u, 0))\nrestore_1(u, 0, t.pop())"
    assert namer.globals["saved_1"] is inplace.saved
    assert namer.globals["restore_1"] is inplace.restore


def test_an_overwritten_value_is_pushed_and_popped_into_its_name():
    namer = Namer(set())
    pushed = fill(shapes.push, namer, tape="_tape", value="h")
    popped = fill(shapes.pop_into, namer, name="h", tape="_tape")
    assert text(pushed + popped) == "_tape.push(h)\nh = _tape.pop()"
    assert isinstance(popped[0].targets[0].ctx, gast.Store)


# ---- gradients of code that records: the pushes, pops, saves and restores at work


def overwritten_in_a_loop(x, w):
    h = x
    for _ in range(3):
        h = np.tanh(h * w) + 0.5 * h
    return np.sum(h * h)


def updated_in_place_in_a_loop(x, y):
    u = x * y
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(u) * u)
        u[i] = u[i] * 2.0 + y[i]
    return s + np.sum(u * u)


def test_a_loop_overwriting_what_its_backward_reads():
    gradient = srcad.source(srcad.grad(overwritten_in_a_loop, wrt=(0, 1)))
    assert "tape.push(" in gradient and "= tape.pop()" in gradient
    x, w = np.linspace(-0.8, 0.9, 4), np.linspace(0.3, 1.2, 4)
    srcad.check_grad(overwritten_in_a_loop, x, w, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(overwritten_in_a_loop, x, w, wrt=(0, 1), modes=("rev", "fwd"), order=2)


def test_an_update_in_place_in_a_loop_saves_and_restores_its_part():
    gradient = srcad.source(srcad.grad(updated_in_place_in_a_loop, wrt=(0, 1)))
    assert "tape.push(saved(u, i))" in gradient
    assert "restore(u, i, tape.pop())" in gradient
    x, y = np.linspace(-0.8, 0.9, 4), np.linspace(0.3, 1.2, 4)
    srcad.check_grad(updated_in_place_in_a_loop, x, y, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(updated_in_place_in_a_loop, x, y, wrt=(0, 1), modes=("rev", "fwd"), order=2)
