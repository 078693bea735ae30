"""Rules users write: adjoint templates, custom_vjp, stop_gradient, nondifferentiable."""

import math

import numpy as np
import pytest

import srcad
from srcad.adjoints.registry import _NONDIFF, _RULES, d


def uses_erf(x):
    return math.erf(x) * x


@pytest.fixture
def erf_rule():
    @srcad.adjoint(math.erf)
    def erf_adjoint(y, x):
        d[x] = d[y] * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)

    yield
    del _RULES[math.erf]


def test_user_adjoint_template(erf_rule):
    assert srcad.check_grad(uses_erf, 0.4) < 1e-6


@srcad.custom_vjp
def clipped_identity(x, limit):
    return np.clip(x, -limit, limit)


def clipped_fwd(x, limit):
    return np.clip(x, -limit, limit), (x, limit)


def clipped_bwd(residuals, g):
    x, limit = residuals
    return (g * (np.abs(x) < limit) + 0.1 * g, None)  # a made-up "leaky" gradient


clipped_identity.defvjp(clipped_fwd, clipped_bwd)


def uses_custom(x):
    return np.sum(clipped_identity(x * 2.0, 1.0) ** 2)


def test_custom_vjp_uses_the_hand_written_backward():
    x = np.array([0.2, 0.8, -0.1])
    y = np.clip(x * 2.0, -1.0, 1.0)
    g = 2 * y
    expected = (g * (np.abs(x * 2.0) < 1.0) + 0.1 * g) * 2.0
    np.testing.assert_allclose(srcad.grad(uses_custom)(x), expected)
    assert "clipped_identity_vjp.forward(" in srcad.source(srcad.grad(uses_custom))


def with_stop(x):
    return np.sum(x * srcad.stop_gradient(x))


def test_stop_gradient():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(srcad.grad(with_stop)(x), x)  # d/dx of x * const(x)


def noisy(x):
    return x * 3.0


def uses_noisy(x):
    return np.sum(noisy(x) + x)


def test_nondifferentiable_marks_a_function_without_gradient():
    srcad.nondifferentiable(noisy)
    try:
        np.testing.assert_allclose(srcad.grad(uses_noisy)(np.ones(2)), [1.0, 1.0])
    finally:
        _NONDIFF.discard(noisy)
