"""Third derivatives of a recursion whose depth depends on data (#17,
srcad/transform/recursive_calls.py ``RecursionBackward``): functions of one or several
parameters returning one value, called positionally or by keyword, through reverse
over reverse at second order (then reverse, or forward), each checked against central
differences of the second derivative, at points whose depths differ; what stays out of
reach (forward mode at second order, a tuple result, a fourth derivative) refused by
name. More cases: tests/test_recursion_data_depth.py."""

import re

import numpy as np
import pytest
from test_third_order_rules import (
    check_along_varying_directions,
    check_jvp_of_hessian,
    check_reverse_three_times,
)

import srcad

EPS = 1e-5
X = np.array([3.0, 1.2])
SHALLOW = np.array([0.1, 0.05])
U = np.array([-0.4, 0.9])
V = np.array([0.3, -0.7])


def power_sum(x, n):
    # halves x while sum(x) >= 1: how deep it goes depends on the data
    if np.sum(x) < 1.0:
        return np.sum(np.sin(x) * x**n)
    return power_sum(x / 2.0, n) * 1.5 + np.sum(x**3) * 0.01


def uses_power_sum(x):
    return power_sum(np.tanh(x) * 4.0, 2.0) ** 2


def by_keyword(x, n):
    return power_sum(n=n * 1.5, x=np.exp(x) * 2.0) * np.sum(x)


def power_one(x):
    if np.sum(x) < 1.0:
        return np.sum(np.sin(x) * x)
    return power_one(x / 2.0) * 1.5 + np.sum(x**3) * 0.01


def uses_power_one(x):
    return power_one(np.tanh(x) * 4.0) ** 2


def scalar_power_sum(t):
    return power_sum(np.array([t, 0.5 * t]), 2.0)


def _depth(x):
    depth = 0
    while np.sum(x) >= 1.0:
        x, depth = x / 2.0, depth + 1
    return depth


def test_the_points_recurse_to_different_depths():
    # (the checks below run at several depths: a level too many or too few would show)
    assert _depth(np.tanh(X) * 4.0) >= 2
    assert _depth(np.tanh(SHALLOW) * 4.0) == 0
    assert len({_depth(np.array([t, 0.5 * t])) for t in (0.3, 1.3, 3.7)}) == 3


CASES = [
    (uses_power_sum, (X,)),
    (uses_power_sum, (SHALLOW,)),
    (by_keyword, (np.array([0.4, 0.2]), 1.3)),
    (uses_power_one, (X,)),
]
IDS = ["deep", "shallow", "keywords", "one-parameter"]


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_first_and_second_order(f, args, mode):
    wrt = tuple(range(len(args)))
    srcad.check_grad(f, *args, wrt=wrt, modes=(mode,))
    srcad.check_grad(f, *args, wrt=wrt, order=2, modes=(mode,))


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_reverse_three_times(f, args):
    check_reverse_three_times(f, args)


def test_grad_of_grad_of_grad_against_differences_of_the_second_derivative():
    second = srcad.grad(srcad.grad(scalar_power_sum))
    third = srcad.grad(srcad.grad(srcad.grad(scalar_power_sum)))
    for t in (0.3, 1.3, 3.7):  # depths 0, 1 and 3
        expected = (second(t + EPS) - second(t - EPS)) / (2 * EPS)
        np.testing.assert_allclose(third(t), expected, rtol=1e-6, atol=1e-8)
        assert abs(third(t)) > 1e-3  # (not a zero: the check can fail)


def along_v_of_grad(x):
    return np.sum(srcad.grad(uses_power_sum)(x) * V)


@pytest.mark.parametrize("x", [X, SHALLOW], ids=["deep", "shallow"])
def test_forward_over_reverse_over_reverse(x):
    second = srcad.grad(along_v_of_grad)
    _, third = srcad.jvp(second, (x,), (U,))
    expected = (second(x + EPS * U) - second(x - EPS * U)) / (2 * EPS)
    np.testing.assert_allclose(third, expected, rtol=1e-6, atol=1e-8)
    assert np.max(np.abs(third)) > 1e-3


def test_hessian_of_a_function_of_the_gradient():
    h = srcad.hessian(along_v_of_grad)(X)
    second = srcad.grad(along_v_of_grad)
    rows = [(second(X + EPS * e) - second(X - EPS * e)) / (2 * EPS) for e in np.eye(2)]
    np.testing.assert_allclose(h, np.stack(rows), rtol=1e-6, atol=1e-8)


def _refused(name="power_sum"):
    """A refusal naming the recursion and where it is."""
    where = re.escape(f"{__file__}:")
    return pytest.raises(
        srcad.TransformError,
        # (by the recursion's derivative code, or, in forward mode, by its own calls)
        match=rf"(?s)({name} \({where}\d+\) is a recursion|your function {name}, which .*"
        rf"calls itself \({where}\d+: recursion) whose depth depends on data.*second order only",
    )


@pytest.mark.parametrize(
    "check",
    [check_jvp_of_hessian, check_along_varying_directions],
    ids=["jvp-of-hessian", "over-forward"],
)
def test_forward_mode_at_second_order_is_refused_by_name(check):
    srcad.hessian(uses_power_sum)(X)  # (second order: followed)
    with _refused():
        check(uses_power_sum, (X,))


def test_a_fourth_derivative_is_refused_by_name():
    g = srcad.grad
    with _refused():
        g(g(g(g(scalar_power_sum))))(1.3)


def pair(x, n):
    if np.sum(x) < 1.0:
        return np.sin(x) * n, np.sum(x)
    u, s = pair(x * 0.6, n)
    return u + x * 0.1, s * s + np.sum(u)


def uses_pair(x):
    u, s = pair(x, 1.5)
    return np.sum(u * u) * s


def test_a_tuple_result_is_refused_by_name_at_third_order():
    srcad.check_grad(uses_pair, X, order=2, modes=("rev",))  # (second order: followed)
    with _refused("pair"):
        check_reverse_three_times(uses_pair, (X,))


def split(p, t):
    if np.sum(np.abs(p)) > t:
        a, b = split(p * 0.5, t)
        return a + p * 0.1, b * 0.9 + np.sin(p)
    return p * 1.0, np.cos(p)


def split_sum(p, t):
    a, b = split(p, t)
    return a * b


def pair_by_branch(p, q):
    if np.sum(p) > 0.3:
        return np.tanh(p) * q, p * 0.5
    return p - q * 0.25, np.cos(p) * q


def overwritten_after_its_loop(x):
    b, c = x * 0.7, x + 0.2
    for _ in range(2):
        c, b = pair_by_branch(c * 0.5, x)
    for _ in range(2):
        c = split_sum(c, 1.02) * np.mean(b)
    c = np.tanh(b) * x
    return np.sum((x + b * c) * X[0])


def test_a_tuple_result_called_in_a_loop_is_refused_by_name_at_third_order():
    # (campaign seed 3500464: the generated code's call of the recursion's forward handle
    # was looked up as an op, "no adjoint rule for ...recursive_handles.forward")
    srcad.check_grad(overwritten_after_its_loop, X, order=2, modes=("rev",))
    with _refused("split"):
        check_reverse_three_times(overwritten_after_its_loop, (X,))
