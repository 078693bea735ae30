"""A function from outside passed to a helper of yours (``layer(x, np.tanh)``,
``mlp(params, x, act=relu)``, a partial binding one): the helper is written out where it
is called, its parameter then that function (refused as "no adjoint rule for act: the
function called here is held in a local variable" until stop 32)."""

import functools

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6]])


def layer(v, act):
    return act(v * 2.0)


def relu(v):
    return np.maximum(v, 0.0)


def softplus(v):
    return np.log1p(np.exp(v))


def mlp(w, x, act=np.tanh, out=None):
    h = act(w @ x)
    return h if out is None else out(h)


def block(v, act):
    return layer(v, act) + act(v)  # passed on, and called twice


def by_numpy_function(x):
    return np.sum(layer(x, np.tanh))


def by_your_function(x):
    return np.sum(layer(x, relu) ** 2)


def by_keyword(x):
    return np.sum(mlp(W, x, act=softplus, out=np.sin))


def by_default(x):
    return np.sum(mlp(W, x) ** 2)


def passed_along(x):
    return np.sum(block(x, np.sin))


tanh_layer = functools.partial(layer, act=np.tanh)


def by_partial(x):
    return np.sum(tanh_layer(x) * x)


CASES = [
    by_numpy_function,
    by_your_function,
    by_keyword,
    by_default,
    passed_along,
    by_partial,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_a_function_passed_to_a_helper(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev",), order=2)


def test_the_helper_is_written_out_calling_the_function():
    text = srcad.source(srcad.grad(by_your_function))
    assert "relu" in text and "layer_act" not in text
