"""srcad.custom_jvp: a hand-written forward-mode derivative, used by jvp and (transposed)
by grad."""

import numpy as np
import pytest

import srcad


@srcad.custom_jvp
def safe_log1pexp(x):
    return np.log1p(np.exp(x))


@safe_log1pexp.defjvp
def safe_log1pexp_jvp(primals, tangents):
    (x,) = primals
    (dx,) = tangents
    return safe_log1pexp(x), dx / (1 + np.exp(-x))


@srcad.custom_jvp
def scaled(x, s):
    return x * s


@scaled.defjvp
def scaled_jvp(primals, tangents):
    x, s = primals
    dx, ds = tangents
    # deliberately not the true derivative in s, so the tests can tell it is used
    return x * s, dx * s + 2.0 * ds * x


def loss(x):
    return np.sum(safe_log1pexp(x) ** 2)


def uses_scaled(x, s):
    return np.sum(np.sin(scaled(x, s)))


def test_jvp_and_grad_use_the_custom_rule():
    x = np.array([-30.0, 0.5, 40.0])  # exp(-x) overflows nowhere in the rule
    v = np.array([1.0, -2.0, 0.5])
    sigmoid = 1 / (1 + np.exp(-x))
    expected = 2 * safe_log1pexp(x) * sigmoid
    _, tangent = srcad.jvp(loss, (x,), (v,))
    np.testing.assert_allclose(tangent, np.sum(expected * v), rtol=1e-12)
    np.testing.assert_allclose(srcad.grad(loss)(x), expected, rtol=1e-12)


def test_reverse_mode_is_the_transpose_of_the_custom_jvp():
    x, s = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    c = np.cos(x * s)
    dx, ds = srcad.grad(uses_scaled, wrt=(0, 1))(x, s)
    np.testing.assert_allclose(dx, c * s)
    np.testing.assert_allclose(ds, c * 2.0 * x)  # the rule's (deliberately odd) ds term
    _, t = srcad.jvp(uses_scaled, (x, s), (np.ones(2), np.ones(2)))
    np.testing.assert_allclose(t, np.sum(c * (s + 2.0 * x)))


def test_a_custom_jvp_without_a_rule_says_so():
    @srcad.custom_jvp
    def bare(x):
        return x * 2.0

    def uses(x):
        return np.sum(bare(x))

    with pytest.raises(TypeError, match="defjvp"):
        srcad.grad(uses)(np.ones(2))


def test_custom_functions_are_differentiated_directly_too():
    x = np.array([-3.0, 0.5, 4.0])
    sigmoid = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(srcad.grad(lambda x: np.sum(safe_log1pexp(x)))(x), sigmoid)
    _, t = srcad.jvp(safe_log1pexp, (x,), (np.ones(3),))
    np.testing.assert_allclose(t, sigmoid)
    out, pullback = srcad.vjp(safe_log1pexp, x)
    np.testing.assert_allclose(pullback(np.ones(3))[0], sigmoid)
    np.testing.assert_allclose(srcad.jacobian(safe_log1pexp)(x), np.diag(sigmoid), atol=1e-15)
