"""Second order through a srcad.custom_jvp function of several parameters, called with
keywords or defaults (#17): forward over reverse (hessian) and reverse over reverse
(grad of a function calling srcad.grad), checked against the closed forms, against
central differences of the gradient, and against each other. As in JAX, the rule is
what is differentiated."""

import numpy as np
import pytest
from test_custom_rules_third_order import blend

import srcad

X = np.array([0.4, -1.1, 1.7])
W = np.array([1.0, -2.0, 0.5])
EPS = 1e-6


@srcad.custom_jvp
def sin_times(a, b):
    return a * np.sin(b)


@sin_times.defjvp
def sin_times_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    return sin_times(a, b), da * np.sin(b) + a * np.cos(b) * db


@srcad.custom_jvp
def shifted(x, shift=0.5):
    return np.exp(x - shift)


@shifted.defjvp
def shifted_jvp(primals, tangents):
    x, shift = primals
    dx, dshift = tangents
    y = np.exp(x - shift)
    return y, y * (dx - dshift)


@srcad.custom_jvp
def odd_product(x, s):
    return x * s


@odd_product.defjvp
def odd_product_jvp(primals, tangents):
    x, s = primals
    dx, ds = tangents
    # deliberately not the derivative in s, so the tests can tell the rule is used
    return x * s, dx * s + 2.0 * ds * x


def positional(x):
    return np.sum(sin_times(x, 0.5 * x) * x)


def by_keyword(x):
    return np.sum(sin_times(x, b=0.5 * x) * x)


def all_by_keyword(x):
    return np.sum(sin_times(b=0.5 * x, a=x) * x)


def scalar_second(x):
    # a vector and a number differentiated: cotangents of different shapes
    return np.sum(sin_times(x, 0.3 * np.sum(x)) ** 2)


def with_default(x):
    return np.sum(shifted(x) * x) + np.sum(shifted(x, shift=0.1 * x))


def plain_positional(x):
    return np.sum(x * np.sin(0.5 * x) * x)


def plain_scalar_second(x):
    return np.sum((x * np.sin(0.3 * np.sum(x))) ** 2)


def plain_with_default(x):
    return np.sum(np.exp(x - 0.5) * x) + np.sum(np.exp(x - 0.1 * x))


def _gradient_fd(f, x):
    grad = srcad.grad(f)
    columns = [(grad(x + EPS * e) - grad(x - EPS * e)) / (2 * EPS) for e in np.eye(x.size)]
    return np.stack(columns, axis=-1)


def _along(f):
    def gradient_along_w(y):
        return np.sum(srcad.grad(f)(y) * W)

    return gradient_along_w


CASES = [
    (positional, plain_positional),
    (by_keyword, plain_positional),
    (all_by_keyword, plain_positional),
    (scalar_second, plain_scalar_second),
    (with_default, plain_with_default),
]


@pytest.mark.parametrize("f, plain", CASES, ids=[f.__name__ for f, _ in CASES])
def test_second_order_through_a_custom_jvp_of_several_parameters(f, plain):
    expected = srcad.hessian(plain)(X)
    assert not np.allclose(expected, 0.0)
    hessian = srcad.hessian(f)(X)
    np.testing.assert_allclose(hessian, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hessian, _gradient_fd(f, X), rtol=1e-6, atol=1e-8)
    # reverse over reverse: the gradient of a function calling srcad.grad
    np.testing.assert_allclose(srcad.grad(_along(f))(X), expected @ W, rtol=1e-10)
    np.testing.assert_allclose(srcad.jacobian(srcad.grad(f), mode="rev")(X), expected, rtol=1e-10)
    np.testing.assert_allclose(srcad.hvp(f, (X,), (W,)), expected @ W, rtol=1e-10)


def odd_loss(x, s):
    return np.sum(odd_product(x, s) ** 2)


def odd_gradient_in_s(x, s):
    return srcad.grad(odd_loss, wrt=1)(x, s)


def test_the_rule_is_what_is_differentiated_again():
    # by the rule d(x s) = dx s + 2 ds x: grad_s = sum(2 x s * 2 x) = 4 s sum(x**2), and
    # its derivative in s, through the rule again, sum(2 (2 x) (2 x)) = 8 sum(x**2)
    s = 0.7
    assert odd_gradient_in_s(X, s) == pytest.approx(4 * s * np.sum(X**2), rel=1e-12)
    second = srcad.grad(odd_gradient_in_s, wrt=1)(X, s)  # reverse over reverse
    assert second == pytest.approx(8 * np.sum(X**2), rel=1e-12)
    table = srcad.hessian(odd_loss, wrt=(0, 1))(X, s)  # forward over reverse
    assert table[1][1] == pytest.approx(8 * np.sum(X**2), rel=1e-12)
    # and the mixed block: d/dx of 4 s sum(x**2) through the rule, 2 (s) (2 x) + 2 x s 2
    np.testing.assert_allclose(srcad.grad(odd_gradient_in_s)(X, s), 8 * s * X, rtol=1e-12)
    np.testing.assert_allclose(table[1][0], 8 * s * X, rtol=1e-12)


def blend_whose_value_is_dropped(x, y, w):
    a = x * 1.0
    b = y * x
    c = x + y
    u = np.sin(x) * y
    kink = np.max(np.var(b, -1, None, None, 0, True) * 0.5 - u[..., 1:2] + a)
    a = np.var(b, -1, None, None, 0, True) * 0.5 - u[..., 1:2] + a * (kink * 0.5 + 1.0) ** 2
    if np.max(b) > -0.76:
        a = c * np.mean(np.array([np.sum(blend(a, np.cos(a), 0.75)) * 0.1, 0.5, 1.0]) ** 2)
        a = c * 1.0
    return np.sum((a + b * c + u) * w)


def test_a_custom_jvp_whose_tangents_no_statement_reads_at_second_order():
    # campaign seed 2800244: reverse over reverse, the zero adjoint of the tuple of
    # tangents the rule's forward function returns was 0.0, which its handle spread as a
    # tuple ("Value after * must be an iterable, not float")
    x, y, w = np.array([[0.4, -0.7]]), np.array([0.3, 0.9]), np.array([[1.2, 0.8]])
    srcad.check_grad(blend_whose_value_is_dropped, x, y, w, wrt=(0, 1), order=2, modes=("rev",))
