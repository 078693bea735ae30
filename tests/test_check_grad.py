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
