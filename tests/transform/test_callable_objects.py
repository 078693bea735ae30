"""Callable objects called inside a differentiated function: ``layer(x)``."""

import numpy as np

import srcad

X = np.array([0.5, 1.0, 2.0])


class Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, x):
        return np.tanh(self.W @ x + self.b)


LAYER = Affine(np.array([[1.0, -0.5, 0.2], [0.3, 0.8, -1.0]]), np.array([0.1, -0.2]))


def through_a_layer(x):
    return np.sum(LAYER(x) ** 2)


def closed_form(x):
    h = np.tanh(LAYER.W @ x + LAYER.b)
    return LAYER.W.T @ (2 * h * (1 - h * h))


def test_a_callable_object_is_called_through_its_method():
    np.testing.assert_allclose(srcad.grad(through_a_layer)(X), closed_form(X))
    assert srcad.check_grad(through_a_layer, X, modes=("rev", "fwd")) < 1e-6
    assert "__call__" in srcad.source(srcad.grad(through_a_layer), example_args=(X,))


def test_second_order_through_a_callable_object():
    assert srcad.check_grad(through_a_layer, X, order=2) < 1e-6


def test_srcad_s_own_callables_keep_their_calls():
    square = srcad.custom_vjp(lambda v: v * v)
    square.defvjp(lambda v: (v * v, v), lambda v, g: (2 * v * g,))

    def f(x):
        return np.sum(square(x))

    np.testing.assert_allclose(srcad.grad(f)(X), 2 * X)
