"""Third order and derivatives of derivatives (#17): jacobian(hessian(f)),
grad(grad(grad(f))), jvp of jvp of jvp, hessian(grad(f)), and srcad.grad / srcad.jvp
written inside a function differentiated once or twice more. Each is checked against
central differences of the next-lower derivative, in float64; what is not supported
raises a srcad error naming it."""

import numpy as np
import pytest

import srcad

X = np.array([0.4, -1.1, 1.7])
V = np.array([1.0, -0.5, 2.0])
EPS = 1e-5


def f(x):
    return np.sum(np.sin(x) ** 3 * np.exp(0.3 * x))


def scalar(t):
    return np.sin(t) ** 3 + t * np.exp(0.5 * t)


def _central(g, x, direction, eps=EPS):
    return (g(x + eps * direction) - g(x - eps * direction)) / (2 * eps)


def _jacobian_fd(g, x):
    cols = [_central(g, x, np.eye(x.size)[k]) for k in range(x.size)]
    return np.stack(cols, axis=-1)


def test_jacobian_of_hessian_against_differences_of_the_hessian():
    third = srcad.jacobian(srcad.hessian(f))(X)
    assert third.shape == (3, 3, 3)
    np.testing.assert_allclose(third, _jacobian_fd(srcad.hessian(f), X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(third, third.transpose(1, 0, 2), atol=1e-12)  # symmetric
    np.testing.assert_allclose(third, third.transpose(0, 2, 1), atol=1e-12)


@pytest.mark.parametrize("t", [0.7, -1.3])
def test_grad_of_grad_of_grad_and_hessian_of_grad(t):
    second = srcad.grad(srcad.grad(scalar))
    third = srcad.grad(second)(t)
    assert third == pytest.approx(_central(second, t, 1.0), rel=1e-7)
    assert srcad.hessian(srcad.grad(scalar))(t) == pytest.approx(third, rel=1e-12)


def first_along_v(z):
    _, tangent = srcad.jvp(f, (z,), (V,))
    return tangent


def second_along_v(y):
    _, tangent = srcad.jvp(first_along_v, (y,), (V,))
    return tangent


def test_jvp_of_jvp_of_jvp():
    _, third = srcad.jvp(second_along_v, (X,), (V,))
    assert third == pytest.approx(_central(second_along_v, X, V), rel=1e-7)
    # forward over forward over reverse: the same number from the gradient
    hv = srcad.jvp(lambda y: srcad.jvp(srcad.grad(f), (y,), (V,))[1], (X,), (V,))[1]
    assert third == pytest.approx(np.dot(hv, V), rel=1e-10)
    # and a fourth derivative, against differences of the third
    _, fourth = srcad.jvp(lambda w: srcad.jvp(second_along_v, (w,), (V,))[1], (X,), (V,))
    third_at = lambda w: srcad.jvp(second_along_v, (w,), (V,))[1]  # noqa: E731
    assert fourth == pytest.approx(_central(third_at, X, V, 1e-4), rel=1e-5)


def hessian_vector_inside(y):
    _, hv = srcad.jvp(srcad.grad(f), (y,), (V,))
    return np.sum(hv * V)


def gradient_inside(y):
    return np.sum(srcad.grad(f)(y) * V)


@pytest.mark.parametrize("inner", [first_along_v, hessian_vector_inside, gradient_inside])
def test_derivatives_written_inside_differentiated_twice(inner):
    grad = srcad.grad(inner)
    np.testing.assert_allclose(grad(X), _jacobian_fd(inner, X), rtol=1e-6, atol=1e-8)
    h = srcad.hessian(inner)(X)
    np.testing.assert_allclose(h, _jacobian_fd(grad, X), rtol=1e-6, atol=1e-8)
    assert not np.allclose(h, 0.0)


@pytest.mark.parametrize(
    "call",
    [lambda y: np.sum(srcad.vjp(f, y)[1](1.0)[0])],
    ids=["vjp"],
)
def test_other_apis_inside_differentiated_code_are_refused_by_name(call):
    # (hvp, hessian, jacobian and vjp written out inside: tests/test_api_inside.py; a
    # vjp's pullback must be bound to a name)
    with pytest.raises(srcad.UnsupportedConstructError, match="inside a differentiated"):
        srcad.grad(call)(X)


def test_hessian_results_differentiated_by_other_apis():
    # (tests/test_derivative_compositions.py has the rest of these compositions)
    hessian = srcad.hessian(f)
    _, tangent = srcad.jvp(hessian, (X,), (V,))
    np.testing.assert_allclose(tangent, _central(hessian, X, V), rtol=1e-6, atol=1e-8)
    with pytest.raises(srcad.UnsupportedConstructError, match="made by srcad.hessian inside"):
        srcad.grad(lambda y: np.sum(hessian(y)))(X)


def test_jacobian_of_jacobian_of_jacobian():
    second = srcad.jacobian(srcad.jacobian(f))
    third = srcad.jacobian(second)(X)
    np.testing.assert_allclose(third, _jacobian_fd(second, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(third, srcad.jacobian(srcad.hessian(f))(X), rtol=1e-12)
