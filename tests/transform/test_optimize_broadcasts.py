"""The optimize pass dropping redundant unbroadcasts: before/after code, and gradients."""

import textwrap

import gast
import numpy as np
import pytest

import srcad
import srcad.transform.optimize as optimize
from srcad.runtime.accumulate import unbroadcast
from srcad.transform import pipeline
from srcad.transform.codegen import to_source
from srcad.transform.naming import Namer
from srcad.transform.optimize.broadcasts import drop_redundant_unbroadcasts


def simplified(code: str, helper=unbroadcast) -> tuple[str, bool]:
    tree = gast.parse(textwrap.dedent(code)).body[0]
    namer = Namer.for_tree(tree)
    namer.globals["unbroadcast"] = helper
    changed = drop_redundant_unbroadcasts(tree, namer)
    return to_source(tree).strip(), changed


def body(code: str) -> str:
    return to_source(gast.parse(textwrap.dedent(code)).body[0]).strip()


CASES = {
    "nested, in a sum": (
        """
        def g(dc, d, a, c):
            dc = unbroadcast(dc, c) + unbroadcast(unbroadcast(d * a, c), c)
            return dc
        """,
        """
        def g(dc, d, a, c):
            dc = unbroadcast(dc, c) + unbroadcast(d * a, c)
            return dc
        """,
    ),
    "nested twice, negated": (
        """
        def g(d, c):
            return -unbroadcast(unbroadcast(unbroadcast(d, c), c), c)
        """,
        """
        def g(d, c):
            return -unbroadcast(d, c)
        """,
    ),
    "a name bound once to an unbroadcast": (
        """
        def g(dx, d, x):
            t = unbroadcast(d * 2.0, x)
            dx = dx + unbroadcast(t, x)
            return dx
        """,
        """
        def g(dx, d, x):
            t = unbroadcast(d * 2.0, x)
            dx = dx + t
            return dx
        """,
    ),
}

UNCHANGED = {
    # the outer call's result is not an operand of arithmetic: for a 0-d array ``a`` the
    # second unbroadcast turns a number into a 0-d array
    "not in arithmetic": """
        def g(d, c):
            dc = unbroadcast(unbroadcast(d, c), c)
            return dc
        """,
    "to another shape": """
        def g(dc, d, a, c):
            dc = dc + unbroadcast(unbroadcast(d, a), c)
            return dc
        """,
    "the shape's name bound twice": """
        def g(dx, d, x):
            t = unbroadcast(d, x)
            x = x[0]
            dx = dx + unbroadcast(t, x)
            return dx
        """,
    "the name bound twice": """
        def g(dx, d, e, x):
            t = unbroadcast(d, x)
            t = e * 1.0
            dx = dx + unbroadcast(t, x)
            return dx
        """,
    "the shape's name bound in a loop": """
        def g(dx, d, xs):
            for i in range(2):
                x = xs[i]
                t = unbroadcast(d, x)
            dx = dx + unbroadcast(t, x)
            return dx
        """,
}


@pytest.mark.parametrize("case", CASES)
def test_before_after(case):
    before, after = CASES[case]
    code, changed = simplified(before)
    assert changed
    assert code == body(after)


@pytest.mark.parametrize("case", UNCHANGED)
def test_left_alone(case):
    code, changed = simplified(UNCHANGED[case])
    assert not changed
    assert code == body(UNCHANGED[case])


def test_only_srcads_unbroadcast():
    code, changed = simplified(CASES["nested, in a sum"][0], helper=lambda g, x: g)
    assert not changed


@pytest.mark.parametrize(
    "g_shape, x",
    [((3, 4), np.ones(4)), ((3, 4), np.ones((1, 4))), ((4,), np.array(2.0)), ((3,), 2.0),
     ((), np.array(2.0)), ((2, 3), np.ones((2, 3)))],
)  # fmt: skip
def test_unbroadcast_twice_is_once_in_arithmetic(g_shape, x):
    """What the pass relies on: in arithmetic, unbroadcasting twice to ``x`` is once."""
    g = np.arange(1.0, 1.0 + np.prod(g_shape)).reshape(g_shape)
    once, twice = 1.5 * unbroadcast(g, x), 1.5 * unbroadcast(unbroadcast(g, x), x)
    assert type(once) is type(twice)
    np.testing.assert_array_equal(once, twice)
    assert np.shape(once) == np.shape(x)


def early_where(x, y, w):
    b = y * x
    if np.max(x) > -5.0:
        return np.sum(np.where(b > 0.05, np.log(np.abs(b) + 1.0), b) * w)
    return np.sum(b * w)


def early_two(x, y, w):
    b = y * x
    c = x + y
    if np.max(x) > -5.0:
        return np.sum(np.where(b > 0.05, b * b, b) * w)
    return np.sum((b * c) * w)


def _arguments(y_kind):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    w = rng.uniform(0.5, 1.5, (3, 4))
    y = {"row": rng.uniform(0.5, 1.5, 4), "0d": np.array(0.7), "float": 0.7}[y_kind]
    return x, y, w


@pytest.mark.parametrize("f", [early_where, early_two])
@pytest.mark.parametrize("y_kind", ["row", "0d", "float"])
def test_gradients_with_the_pass(f, y_kind, monkeypatch):
    """The generated code loses its nested unbroadcasts and keeps its values and types,
    checked against finite differences at first order in both modes and second order."""
    args = _arguments(y_kind)
    on = pipeline.transform(f, (0, 1), False, "grad")
    monkeypatch.setattr(
        optimize, "drop_redundant_unbroadcasts", lambda tree, namer, with_shapes=True: False
    )
    off = pipeline.transform(f, (0, 1), False, "grad")
    monkeypatch.undo()
    assert "unbroadcast(unbroadcast(" in off.source
    assert "unbroadcast(unbroadcast(" not in on.source
    value_on, grads_on = on.function(*args)
    value_off, grads_off = off.function(*args)
    assert value_on == value_off
    for a, b in zip(grads_on, grads_off):
        assert type(a) is type(b)
        np.testing.assert_array_equal(a, b)
    srcad.check_grad(f, *args, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(f, *args, wrt=(0, 1), modes=("rev", "fwd"), order=2)
