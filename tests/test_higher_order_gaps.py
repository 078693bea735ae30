"""Second order through what #17 left open: ``srcad.jvp(...)[1]`` written inside,
custom_vjp functions with tuple residuals, several differentiated arguments or several
outputs, and pytree arguments through helpers written out; each checked against central
differences of srcad's (separately checked) first derivative, in float64."""

import numpy as np
import pytest

import srcad

X = np.array([0.4, -1.1, 1.7])
Y = np.array([0.7, 0.1, -0.4])
V = np.array([1.0, -0.5, 2.0])
EPS = 1e-5


def _jacobian_fd(g, x):
    cols = [(g(x + EPS * e) - g(x - EPS * e)) / (2 * EPS) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


def f(x):
    return np.sum(np.sin(x) ** 3 * np.exp(0.3 * x))


def tangent_by_index(y):
    return srcad.jvp(f, (y,), (V,))[1] + srcad.jvp(f, (y,), (V,))[0] * 0.5


def tangent_unpacked(y):
    value, tangent = srcad.jvp(f, (y,), (V,))
    return tangent + value * 0.5


def test_jvp_picked_by_index_inside_differentiated_code():
    expected = srcad.grad(tangent_unpacked)(X)
    np.testing.assert_allclose(srcad.grad(tangent_by_index)(X), expected, rtol=1e-12)
    np.testing.assert_allclose(expected, _jacobian_fd(tangent_unpacked, X), rtol=1e-6)
    _, forward = srcad.jvp(tangent_by_index, (X,), (Y,))
    assert forward == pytest.approx(np.dot(expected, Y), rel=1e-10)
    h = srcad.hessian(tangent_by_index)(X)
    np.testing.assert_allclose(h, _jacobian_fd(srcad.grad(tangent_by_index), X), rtol=1e-6)
    assert not np.allclose(h, 0.0)


# --- custom_vjp at second order: tuple residuals, two differentiated arguments, two outputs


@srcad.custom_vjp
def mix(p, q):
    return np.sin(p) * q


def mix_fwd(p, q):
    s, c = np.sin(p), np.cos(p)
    return s * q, (s, c, q)


def mix_bwd(residuals, g):
    s, c, q = residuals
    return (g * c * q, g * s)


mix.defvjp(mix_fwd, mix_bwd)


@srcad.custom_vjp
def both(p):
    return np.tanh(p), p * p


def both_fwd(p):
    t = np.tanh(p)
    return (t, p * p), (t, p)


def both_bwd(residuals, g):
    t, p = residuals
    gt, gs = g
    return (gt * (1 - t * t) + gs * 2 * p,)


both.defvjp(both_fwd, both_bwd)


def two_arguments(x):
    return np.sum(mix(x, x * 0.5 + 1.0) ** 2)


def two_outputs(x):
    a, b = both(x)
    return np.sum(a * b)


def one_output_picked(x):
    return np.sum(both(x)[0] * x)


def true_two_arguments(x):
    return np.sum((np.sin(x) * (x * 0.5 + 1.0)) ** 2)


def true_two_outputs(x):
    return np.sum(np.tanh(x) * x * x)


def true_one_output_picked(x):
    return np.sum(np.tanh(x) * x)


@pytest.mark.parametrize(
    "f, true",
    [
        (two_arguments, true_two_arguments),
        (two_outputs, true_two_outputs),
        (one_output_picked, true_one_output_picked),
    ],
)
def test_custom_vjp_second_order(f, true):
    np.testing.assert_allclose(srcad.grad(f)(X), srcad.grad(true)(X), rtol=1e-12)
    h = srcad.hessian(f)(X)
    np.testing.assert_allclose(h, _jacobian_fd(srcad.grad(f), X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, srcad.hessian(true)(X), rtol=1e-10, atol=1e-12)  # exact rules
    hv = srcad.hvp(f, (X,), (V,))
    np.testing.assert_allclose(hv, h @ V, rtol=1e-10)

    # reverse over reverse: fwd and bwd differentiated again, residuals a tuple (#17)
    def along(y):
        return np.sum(srcad.grad(f)(y) * V)

    np.testing.assert_allclose(srcad.grad(along)(X), h @ V, rtol=1e-10)


# --- pytree arguments through the second-order paths


def make_closure(c):
    def closed(t):
        return np.sin(t) * c

    return closed


closed = make_closure(np.array([1.0, 2.0, 3.0]))


def tree_loss(params):
    a, b = both(params["b"])
    return np.sum(closed(params["w"]) * mix(params["b"], params["w"])) + np.sum(a * b)


def test_hessian_of_a_dict_through_a_closure_and_custom_vjps():
    params = {"w": X, "b": Y}
    h = srcad.hessian(tree_loss)(params)
    grad = srcad.grad(tree_loss)
    for k in "wb":
        for j in "wb":

            def column(v, j=j, k=k):
                return grad({**params, j: v})[k]

            np.testing.assert_allclose(
                h[k][j], _jacobian_fd(column, params[j]), rtol=1e-6, atol=1e-8
            )
    assert not np.allclose(h["w"]["b"], 0.0)
