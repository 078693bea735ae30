"""Recursion whose depth depends on data (srcad/transform/recursive_calls.py): a function
returning a tuple, calls passing keywords, at first and second order in both modes, and
third order (reverse over reverse, then reverse; a tuple's refused by name, as is
forward mode at second order); each against central differences of the next-lower
derivative. More third-order checks: tests/test_recursion_third_order.py."""

import re
import sys

import numpy as np
import pytest
from test_third_order_rules import check_jvp_of_hessian, check_reverse_three_times

import srcad

EPS = 1e-6


def halves(x, n):
    if np.sum(x * x) < 1.0:
        return np.sin(x), np.sum(x * x) * n
    a, b = halves(x / 2.0, n)
    return a * x, b * 2.0 + np.sum(a)


def uses_halves(x):
    a, b = halves(x, 1.5)
    return np.sum(a * a) + b**2


def halves_by_int(x):
    a, b = halves(x * 1.5, 2)  # (an int argument: not differentiated, at any order)
    return np.sum(a * b)


def shrink_by_int(x):
    return shrink(np.tanh(x) * 4.0, n=3) ** 2


def halves_of_two(x, y):
    a, b = halves(x * y, 1.5)
    return np.sum(a * y) + b * np.sum(y)


def by_keyword(x, n, scale=1.5):
    if np.sum(x * x) < 1.0:
        return np.sum(np.sin(x)) * n
    return by_keyword(n=n, x=x / 2.0) * scale + np.sum(x**3) * 0.01


def uses_keywords(x):
    return by_keyword(np.tanh(x) * 4.0, n=2.0) ** 2


def pair_by_keyword(x, n):
    if np.sum(x * x) < 1.0:
        return np.cos(x) * n, np.sum(x)
    u, s = pair_by_keyword(n=n, x=x * 0.6)
    return u + x * 0.1, s * s + np.sum(u)


def uses_pair_by_keyword(x, y):
    u, s = pair_by_keyword(x=x, n=y)
    return np.sum(u * u) * s


def shrink(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(np.sin(x) * x) * n
    return shrink(x / 2.0, n) * 1.5 + np.sum(x**3) * 0.01


def calls_shrink(x):
    return shrink(np.tanh(x) * 4.0, 2.0) ** 2


def ping(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(np.cos(x))
    return pong(x * 0.6, n) * n


def pong(x, n):
    return ping(x - 0.1, n) + np.sum(x * x) * 0.1


X = np.array([3.0, 1.2])
SECOND = [
    (uses_halves, (X,)),
    (halves_of_two, (X, np.array([1.1, 0.9]))),
    (halves_by_int, (X,)),
    (shrink_by_int, (X,)),
    (uses_keywords, (np.array([3.0, -1.2]),)),
    (uses_pair_by_keyword, (X, 1.3)),
]


@pytest.mark.parametrize("f, args", SECOND, ids=[f.__name__ for f, _ in SECOND])
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_first_and_second_order(f, args, mode):
    wrt = tuple(range(len(args)))
    srcad.check_grad(f, *args, wrt=wrt, modes=(mode,))
    srcad.check_grad(f, *args, wrt=wrt, order=2, modes=(mode,))


def test_hessian_of_a_tuple_recursion_against_differences_of_the_gradient():
    h = srcad.hessian(uses_halves)(X)
    gradient = srcad.grad(uses_halves)
    rows = [(gradient(X + EPS * e) - gradient(X - EPS * e)) / (2 * EPS) for e in np.eye(2)]
    np.testing.assert_allclose(h, np.stack(rows), rtol=1e-6, atol=1e-8)
    assert np.max(np.abs(h)) > 0.1  # (not a linear case: the check can fail)


THIRD = [
    (calls_shrink, (X,), "shrink"),
    (lambda x: ping(x, 1.5), (X,), "ping"),
    (uses_halves, (X,), "halves"),
    (uses_keywords, (np.array([3.0, -1.2]),), "by_keyword"),
]
THIRD_IDS = ["shrink", "ping-pong", "tuple", "keywords"]


def _refused(name):
    """The refusal of a third derivative, naming the recursion and where it is."""
    where = re.escape(f"{__file__}:")
    return pytest.raises(
        srcad.TransformError,
        # (by the recursion's derivative code, or, in forward mode, by its own calls)
        match=rf"(?s)({name} \({where}\d+\) is a recursion|your function {name}, which .*"
        rf"calls itself \({where}\d+: recursion) whose depth depends on data.*second order only",
    )


@pytest.mark.parametrize("f, args, name", THIRD, ids=THIRD_IDS)
def test_jvp_of_hessian_is_refused_by_name(f, args, name):
    srcad.hessian(f)(*args)  # (second order: followed)
    with _refused(name):
        check_jvp_of_hessian(f, args)


def shrink_of_two(x, y):
    return shrink(x * y, np.sum(y)) ** 2  # (both parameters differentiated)


REVERSE_THREE_TIMES = [
    *[(f, args) for f, args, name in THIRD if name != "halves"],
    (shrink_by_int, (X,)),
    (shrink_of_two, (X, np.array([1.1, 0.9]))),
]


@pytest.mark.parametrize(
    "f, args",
    REVERSE_THREE_TIMES,
    ids=[*(i for i in THIRD_IDS if i != "tuple"), "int-argument", "two-arguments"],
)
def test_reverse_three_times(f, args):
    check_reverse_three_times(f, args)


def test_reverse_three_times_of_a_tuple_recursion_is_refused_by_name():
    with _refused("halves"):
        check_reverse_three_times(uses_halves, (X,))


def scalar_shrink(t):
    return shrink(np.array([t, 0.5 * t]), 2.0)


def test_grad_of_grad_of_grad():
    first = srcad.grad(scalar_shrink)
    second = srcad.grad(srcad.grad(scalar_shrink))
    third = srcad.grad(srcad.grad(srcad.grad(scalar_shrink)))
    for t in (1.3, 4.1):
        expected = (first(t + EPS) - first(t - EPS)) / (2 * EPS)
        np.testing.assert_allclose(second(t), expected, rtol=1e-6, atol=1e-8)
        expected = (second(t + EPS) - second(t - EPS)) / (2 * EPS)
        np.testing.assert_allclose(third(t), expected, rtol=1e-6, atol=1e-8)
        assert abs(third(t)) > 1e-2  # (not a zero: the check can fail)


def test_a_fourth_derivative_is_refused_by_name():
    g = srcad.grad
    with _refused("shrink"):
        g(g(g(g(scalar_shrink))))(1.3)


V = np.array([0.3, -0.7])


def along_v_of_grad(x):
    return np.sum(srcad.grad(calls_shrink)(x) * V)


def test_jvp_of_grad_of_grad():
    # forward over reverse over reverse: the third derivative along V, then U
    u = np.array([-0.4, 0.9])
    second = srcad.grad(along_v_of_grad)
    _, third = srcad.jvp(second, (X,), (u,))
    expected = (second(X + EPS * u) - second(X - EPS * u)) / (2 * EPS)
    np.testing.assert_allclose(third, expected, rtol=1e-6, atol=1e-8)
    assert np.max(np.abs(third)) > 1e-2


def countdown(x, t):
    if t < 0.5:
        return np.sin(x), np.sum(x * x)
    a, b = countdown(x * 0.99, t - 1.0)
    return a + x * 0.01, b * 0.95 + np.sum(a)


def uses_countdown(x, t):
    a, b = countdown(x, t)
    return np.sum(a * a) + b


def test_a_deep_recursion_at_second_order():
    # 200 levels (the depth an argument, not a constant): each level of the second
    # derivative runs through a few more frames than the function's one
    srcad.check_grad(uses_countdown, X, 200.0, wrt=0, order=2, modes=("fwd", "rev"))


def _stack_depth():
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def test_second_derivatives_recurse_as_deep_as_the_function():
    # forward over reverse runs each level through 6 frames (srcad/runtime/recursion.py)
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(400)
    try:
        depth = 400 - _stack_depth() - 30
        assert depth > 250
        uses_countdown(X, float(depth))  # the function itself runs this deep
        _, hv = srcad.jvp(srcad.grad(uses_countdown, wrt=0), (X, float(depth)), (X, 0.0))
        g = srcad.grad(uses_countdown, wrt=0)
        up, down = g(X + EPS * X, float(depth)), g(X - EPS * X, float(depth))
        np.testing.assert_allclose(hv, (up - down) / (2 * EPS), rtol=1e-5, atol=1e-7)
        assert sys.getrecursionlimit() == 400
    finally:
        sys.setrecursionlimit(saved)


FACTOR = 1.5


def by_factor(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(np.sin(x)) * n * FACTOR
    return by_factor(x / 2.0, n) * FACTOR + np.sum(x**3) * 0.01


def uses_factor(x):
    return by_factor(np.tanh(x) * 4.0, 2.0) ** 2


def test_a_changed_global_of_the_recursion_is_seen_at_second_order():
    global FACTOR
    x = np.array([3.0, -1.2])
    srcad.hessian(uses_factor)(x)
    saved = FACTOR
    FACTOR = 2.5
    try:
        h = srcad.hessian(uses_factor)(x)
        g = srcad.grad(uses_factor)
        rows = [(g(x + EPS * e) - g(x - EPS * e)) / (2 * EPS) for e in np.eye(2)]
        np.testing.assert_allclose(h, np.stack(rows), rtol=1e-5, atol=1e-7)
        srcad.check_grad(uses_factor, x, order=2, modes=("fwd", "rev"))
    finally:
        FACTOR = saved


def by_star(x, *rest):
    if np.sum(x * x) < 1.0:
        return np.sum(np.sin(x)) * rest[0]
    return by_star(x / 2.0, *rest) * 1.5


def uses_star(x):
    return by_star(np.tanh(x) * 4.0, 2.0) ** 2


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_recursion_with_star_parameters_is_refused_at_second_order_by_name(mode):
    x = np.array([3.0, -1.2])
    srcad.check_grad(uses_star, x, modes=(mode,))
    where = re.escape(f"{__file__}:")
    with pytest.raises(
        srcad.TransformError,
        match=rf"(?s)by_star.*calls itself \({where}\d+: recursion whose depth depends on data"
        r".*'\*args'",
    ):
        srcad.check_grad(uses_star, x, order=2, modes=(mode,))
