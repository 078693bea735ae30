"""A call of a function returning a tuple of one value, unpacked (``a, = f(x)``)."""

import numpy as np
import pytest

import srcad

X = np.array([0.5, 1.0, 2.0])
V = np.array([1.0, -2.0, 0.5])


def one(x):
    return (np.sin(x),)


def unpacks_one(x):
    (a,) = one(x)
    return a * 2  # a tuple here would repeat itself, not double


def unpacks_one_in_a_sum(x):
    (a,) = one(x)
    return np.sum(a * x)


class Layer:
    def __call__(self, x):
        return self.apply(x)

    def apply(self, x):
        return (np.tanh(x),)


LAYER = Layer()


def unpacks_a_method(x):
    (a,) = LAYER.apply(x)
    return a * 3


@pytest.mark.parametrize("f", [unpacks_one, unpacks_a_method])
def test_jvp_and_vjp_see_the_value_not_the_tuple(f):
    value, tangent = srcad.jvp(f, (X,), (V,))
    np.testing.assert_allclose(value, f(X))
    expected = srcad.jacobian(f, mode="rev")(X) @ V
    np.testing.assert_allclose(tangent, expected)
    out, pullback = srcad.vjp(f, X)
    np.testing.assert_allclose(out, f(X))
    np.testing.assert_allclose(pullback(V)[0], srcad.jacobian(f, mode="fwd")(X).T @ V)


def test_one_tuple_results_at_first_and_second_order():
    assert srcad.check_grad(unpacks_one_in_a_sum, X, modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(unpacks_one_in_a_sum, X, order=2) < 1e-6
    expected = np.diag(2 * np.cos(X) - X * np.sin(X))
    np.testing.assert_allclose(srcad.hessian(unpacks_one_in_a_sum)(X), expected, atol=1e-12)
