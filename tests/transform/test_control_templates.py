"""The control-flow templates (srcad/transform/control_templates.py) and their filling
(srcad/transform/templates.fill): the code they make, and gradients of the loops built
from them checked against central finite differences."""

import ast

import gast
import numpy as np
import pytest

import srcad
from srcad.transform import build
from srcad.transform import control_templates as shapes
from srcad.transform.naming import Namer
from srcad.transform.templates import fill


def text(nodes) -> str:
    nodes = nodes if isinstance(nodes, list) else [gast.Expr(value=nodes)]
    module = gast.gast_to_ast(gast.Module(body=nodes, type_ignores=[]))
    return ast.unparse(ast.fix_missing_locations(module))


def test_a_statement_parameter_is_spliced_and_a_str_is_a_name():
    body = [build.assign("y", build.const(1)), build.assign("z", build.const(2))]
    namer = Namer(set())
    loop = fill(shapes.undone_while, namer, index="_1", trips="_trips", body=body)
    assert text(loop) == "for _1 in range(_trips):\n    y = 1\n    z = 2"
    assert loop[0].body[0] is body[0]  # the statements themselves, not copies
    assert namer.globals["range"] is range


def test_an_empty_else_leaves_no_else():
    namer = Namer(set())
    branch = fill(shapes.same_branch, namer, test="c", body=[gast.Pass()], orelse=[])
    assert branch[0].orelse == []
    assert text(branch) == "if c:\n    pass"


def test_a_node_given_is_placed_once_and_copied_where_it_appears_again():
    start = build.load("a")
    turns = fill(shapes.first_turns_by, Namer(set()), start=start, count="n", step="s")
    assert text(turns) == "range(a, a + n * s, s)"
    first, stop = turns.args[0], turns.args[1]
    assert first is start
    assert stop.left is not start and stop.left.id == "a"


def test_builtins_are_bound_where_the_user_took_their_names():
    namer = Namer({"reversed", "range"})
    loop = fill(shapes.undone_for, namer, target=build.store("i"), turns="r", body=[gast.Pass()])
    assert text(loop) == "for i in reversed_1(r):\n    pass"
    assert namer.globals["reversed_1"] is reversed


def test_filled_code_has_no_locations_of_the_template_file():
    loop = fill(shapes.counting_while, Namer(set()), test="c", body=[gast.Pass()], counter="k")
    assert all(getattr(n, "lineno", None) is None for n in gast.walk(loop[0]))


def test_every_parameter_must_be_bound_and_no_other():
    with pytest.raises(TypeError, match="counter"):
        fill(shapes.counting_while, Namer(set()), test="c", body=[])
    with pytest.raises(TypeError, match="extra"):
        fill(shapes.pop, Namer(set()), tape="t", extra="e")


def test_a_free_name_must_be_known():
    def unknown(x):
        not_a_builtin(x)  # noqa: F821

    with pytest.raises(TypeError, match="not_a_builtin"):
        fill(unknown, Namer(set()), x="a")


def test_a_template_of_one_return_is_its_expression():
    assert text(fill(shapes.popped, Namer(set()), tape="_tape")) == "_tape.pop()"


# ---- gradients of the loops the templates build


def while_with_range_shadowed(x):
    range = 3.0
    while np.sum(x * x) < 10.0:
        x = x * range
    return np.sum(np.sin(x))


def for_with_reversed_shadowed(x):
    reversed = 2.0
    for _ in range(3):
        x = np.sin(x) * reversed
    return np.sum(x)


def break_in_a_stepped_range(x):
    s = x * 1.0
    for i in range(1, 9, 2):
        s = np.sin(s) * i
        if np.sum(s) > 4.0:
            break
    return np.sum(s * s)


def break_in_a_two_argument_range(x):
    s = x * 1.0
    for i in range(2, 7):
        s = np.cos(s) + s * i * 0.25
        if np.sum(s) > 5.0:
            break
    return np.sum(s)


@pytest.mark.parametrize(
    "f, x",
    [
        # a local named range: the backward loop of the while calls the builtin all the same
        # (before the templates, its backward loop called the float: a TypeError)
        (while_with_range_shadowed, np.array([0.3, 0.4])),
        (for_with_reversed_shadowed, np.array([0.3, -0.7])),
        # the backward loops over the turns of the range that ran: range(1, 1 + _trips * 2, 2)
        (break_in_a_stepped_range, np.array([0.1, 0.2])),  # breaks at i = 5
        (break_in_a_stepped_range, np.array([0.01, 0.02])),  # runs to its end
        (break_in_a_two_argument_range, np.array([0.5, 0.9])),  # breaks at i = 6
        (break_in_a_two_argument_range, np.array([-2.0, -3.0])),  # runs to its end
    ],
)
def test_gradients_of_loops_made_from_templates(f, x):
    srcad.check_grad(f, x, modes=("rev", "fwd"))
    srcad.check_grad(f, x, modes=("rev", "fwd"), order=2)
