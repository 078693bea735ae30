"""check_grad itself must be able to fail: a deliberately wrong rule is caught."""

import numpy as np
import pytest

import srcad
from srcad.adjoints.registry import _RULES, adjoint, d


def cube(x):
    return x * x * x


def uses_cube(x):
    return np.sum(cube(x))


def scalar_square(x):
    return np.sum(x * x)


@pytest.fixture
def wrong_cube_rule():
    @adjoint(cube)
    def cube_adjoint(y, x):
        d[x] = d[y] * 2 * x * x  # wrong on purpose: the derivative is 3 x^2

    yield
    del _RULES[cube]


def test_wrong_rule_is_caught(wrong_cube_rule):
    x = np.array([0.5, 1.0, 2.0])
    with pytest.raises(AssertionError, match="differs from finite differences at index"):
        srcad.check_grad(uses_cube, x)


def test_right_gradient_passes_and_reports_error():
    err = srcad.check_grad(scalar_square, np.array([0.5, -1.0]))
    assert 0.0 <= err < 1e-6


def test_scalar_argument():
    assert srcad.check_grad(scalar_square, 0.7) < 1e-6


def test_finite_differences_of_a_fortran_ordered_array():
    # reshape(-1) of one is a copy: the differences were all zero (check_grad then
    # reported a false mismatch)
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3) + 0.5)
    expected = 2 * a
    np.testing.assert_allclose(
        srcad.testing.numerical_grad(lambda v: np.sum(v * v), [a], 0), expected, rtol=1e-6
    )
    assert srcad.check_grad(lambda v: np.sum(v * v), a) < 1e-6


def updates_its_argument(x, y):
    x[0] = x[0] * 0.5 + 0.25
    return np.sum(x * y + np.sin(x))


def test_finite_differences_of_a_function_updating_its_argument():
    # each evaluation gets copies: the update used to pile up across evaluations, and the
    # differences with respect to y were garbage (fuzz seed 80)
    x, y = np.array([0.3, -0.2, 0.5]), np.array([0.4, 0.1, -0.3])
    assert srcad.check_grad(updates_its_argument, x, y, wrt=(0, 1), modes=("rev", "fwd")) < 1e-6
    np.testing.assert_array_equal(x, [0.3, -0.2, 0.5])
