"""Derivatives of the functions srcad.jacobian and srcad.hessian return (#17): grad, jvp,
vjp, jacobian, hessian and hvp of them, to third and fourth order, each checked in
float64 against central differences of the next-lower derivative or against closed
forms; what cannot be differentiated again raises an error saying what it is."""

import functools

import numpy as np
import pytest

import srcad

X = np.array([0.4, -1.1, 1.7])
Y = np.array([0.2, 0.3, -0.5])
V = np.array([1.0, -0.5, 2.0])
B = np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]])
EPS = 1e-5


def f(x):
    return np.sum(np.sin(x) ** 3 * np.exp(0.3 * x))


def t_sin_t(t):
    return np.sin(t) * t


# derivatives of t sin t, for the closed forms
def d2(t):
    return 2 * np.cos(t) - t * np.sin(t)


def d3(t):
    return -3 * np.sin(t) - t * np.cos(t)


def d4(t):
    return -4 * np.cos(t) + t * np.sin(t)


def scaled(x, s):
    return np.sum(np.sin(x) * x) * s**2 + s * np.sum(x**3)


def two(x, y):
    return np.sum(np.sin(x) * y**3 + x**2 * y**2)


def mixed(W, x):
    return np.tanh(W @ x)


def _central(g, x, direction, eps=EPS):
    return (g(x + eps * direction) - g(x - eps * direction)) / (2 * eps)


def _jacobian_fd(g, x, eps=EPS):
    x = np.asarray(x, dtype=float)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1.0
        columns.append(_central(g, x, e.reshape(x.shape), eps))
    return np.stack(columns, axis=-1).reshape(np.shape(g(x)) + x.shape)


def _close(got, expected, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    assert np.max(np.abs(expected)) > 1e-3  # a zero on both sides would prove nothing


# jvp, vjp and jacobian of a hessian -----------------------------------------------------


def test_jvp_of_hessian_against_differences_of_the_hessian():
    hessian = srcad.hessian(f)
    out, tangent = srcad.jvp(hessian, (X,), (V,))
    np.testing.assert_allclose(out, hessian(X), rtol=1e-14)
    _close(tangent, _central(hessian, X, V))


def test_vjp_of_hessian_is_the_cotangent_against_its_third_derivative():
    hessian = srcad.hessian(f)
    third = _jacobian_fd(hessian, X)
    cotangent = np.arange(9.0).reshape(3, 3) - 4.0
    out, pullback = srcad.vjp(hessian, X)
    np.testing.assert_allclose(out, hessian(X), rtol=1e-14)
    (got,) = pullback(cotangent)
    _close(got, np.tensordot(cotangent, third, axes=2))
    # reverse and forward agree: the transpose of the jvp
    _, along = srcad.jvp(hessian, (X,), (V,))
    assert np.sum(cotangent * along) == pytest.approx(np.dot(got, V), rel=1e-12)


def test_jacobian_of_jacobian_of_jacobian_closed_forms():
    third = srcad.jacobian(srcad.jacobian(srcad.jacobian(np.sin)))(X)
    eye = np.eye(3)
    expected = np.einsum("i,ij,ik,il->ijkl", -np.cos(X), eye, eye, eye)
    _close(third, expected, atol=1e-14)
    # a polynomial to fourth order: the gradient of sum(x**5) is 5 x**4
    fourth = srcad.jacobian(srcad.jacobian(srcad.jacobian(srcad.grad(lambda x: np.sum(x**5)))))(X)
    expected = np.einsum("i,ij,ik,il->ijkl", 120 * X, eye, eye, eye)
    _close(fourth, expected, atol=1e-12)
    # and a function mixing the elements, against differences of its second derivative
    field = lambda x: np.sin(x) * x[0] + x[1] ** 2 * x  # noqa: E731
    second = srcad.jacobian(srcad.jacobian(field))
    _close(srcad.jacobian(second)(X), _jacobian_fd(second, X))


def test_jacobian_of_jacobian_with_several_arguments():
    inner = srcad.jacobian(mixed, (0, 1))
    outer = srcad.jacobian(inner, (0, 1))(B, X)
    for i in range(2):
        _close(outer[i][0], _jacobian_fd(lambda w, i=i: inner(w, X)[i], B))
        _close(outer[i][1], _jacobian_fd(lambda x, i=i: inner(B, x)[i], X))
    assert outer[0][1].shape == (2, 2, 3, 3)  # out, W, then x


def test_jacobian_of_a_hessian_of_several_arguments():
    hessian = srcad.hessian(two, (0, 1))
    third = srcad.jacobian(hessian, (0, 1))(X, Y)
    for i in range(2):
        for j in range(2):
            _close(third[i][j][0], _jacobian_fd(lambda x, i=i, j=j: hessian(x, Y)[i][j], X))
            blocks = _jacobian_fd(lambda y, i=i, j=j: hessian(X, y)[i][j], Y)
            _close(third[i][j][1], blocks)


# grad, value_and_grad, hessian, hvp of a scalar-valued jacobian or hessian ----------------


def test_derivatives_of_the_hessian_of_a_function_of_one_number():
    t = 0.8
    hessian = srcad.hessian(t_sin_t)
    assert hessian(t) == pytest.approx(d2(t), rel=1e-12)
    assert srcad.grad(hessian)(t) == pytest.approx(d3(t), rel=1e-12)
    assert srcad.grad(hessian)(t) == pytest.approx(_central(hessian, t, 1.0), rel=1e-8)
    assert srcad.hessian(hessian)(t) == pytest.approx(d4(t), rel=1e-12)
    assert srcad.grad(srcad.grad(hessian))(t) == pytest.approx(d4(t), rel=1e-12)
    assert srcad.hvp(hessian, (t,), (2.0,)) == pytest.approx(2 * d4(t), rel=1e-12)
    assert srcad.jvp(srcad.grad(hessian), (t,), (1.0,))[1] == pytest.approx(d4(t), rel=1e-12)
    value, slope = srcad.value_and_grad(hessian)(t)
    assert (value, slope) == pytest.approx((d2(t), d3(t)), rel=1e-12)


def test_derivatives_of_a_scalar_jacobian_in_one_argument():
    # jacobian(scaled, 1) = 2 s sum(x sin x) + sum(x**3): closed forms in x
    s = 0.7
    slope = srcad.jacobian(scaled, 1)
    assert slope(X, s) == pytest.approx(2 * s * np.sum(np.sin(X) * X) + np.sum(X**3))
    gradient = 2 * s * (np.sin(X) + X * np.cos(X)) + 3 * X**2
    curvature = 2 * s * d2(X) + 6 * X
    _close(srcad.grad(slope)(X, s), gradient, rtol=1e-12)
    _close(srcad.grad(slope)(X, s), _jacobian_fd(lambda x: slope(x, s), X))
    _close(srcad.hessian(slope)(X, s), np.diag(curvature), rtol=1e-12, atol=1e-14)
    (hv, none) = srcad.hvp(slope, (X, s), (V, None))
    assert none is None
    _close(hv, curvature * V, rtol=1e-12)
    value, (gx, gs) = srcad.value_and_grad(slope, (0, 1))(X, s)
    assert value == pytest.approx(slope(X, s), rel=1e-14)
    _close(gx, gradient, rtol=1e-12)
    assert gs == pytest.approx(2 * np.sum(np.sin(X) * X), rel=1e-12)
    # the gradient of a vector-valued jacobian is refused, not summed
    with pytest.raises(TypeError, match="scalar output"):
        srcad.grad(srcad.jacobian(mixed, 1))(B, X)


def test_a_gradient_of_a_jacobian_is_differentiated_again():
    s = 0.7
    gradient = srcad.grad(srcad.jacobian(scaled, 1))
    second = srcad.jacobian(gradient)(X, s)
    _close(second, _jacobian_fd(lambda x: gradient(x, s), X))
    _, along = srcad.jvp(gradient, (X, s), (V, 1.0))
    _close(along, _central(lambda p: gradient(p[:3], p[3]), np.append(X, s), np.append(V, 1.0)))


def test_vjp_of_jacobian_with_an_integer_argument():
    def power(x, n):
        return x**n * np.sin(x)

    jacobian = srcad.jacobian(power)
    out, pullback = srcad.vjp(jacobian, X, 3)
    cotangent = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 0.5, 1.0]])
    got, none = pullback(cotangent)
    assert none is None
    third = _jacobian_fd(lambda x: jacobian(x, 3), X)
    _close(got, np.tensordot(cotangent, third, axes=2))


# arguments: defaults, keywords, partials, methods --------------------------------------


def with_defaults(x, a=2.0, *, b=3.0):
    return np.sin(x) * a * b


def test_defaults_and_keywords_of_a_jacobian_differentiated_again():
    eye = np.eye(3)
    second = srcad.jacobian(srcad.jacobian(with_defaults))
    expected = np.einsum("i,ij,ik->ijk", -6 * np.sin(X), eye, eye)
    _close(second(X), expected, atol=1e-14)
    _close(second(X, b=1.0), expected / 3, atol=1e-14)
    _close(second(X, 1.0), expected / 2, atol=1e-14)


def test_a_partial_of_a_hessian_is_differentiated_again():
    s = 0.7
    hessian = functools.partial(srcad.hessian(scaled), s=s)
    partial = lambda x: srcad.hessian(scaled)(x, s)  # noqa: E731
    _, tangent = srcad.jvp(hessian, (X,), (V,))
    _close(tangent, _central(partial, X, V))
    bound = functools.partial(srcad.hessian(two, 1), X)
    _close(srcad.jacobian(bound)(Y), _jacobian_fd(bound, Y))


class Model:
    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum(np.cos(self.w * x) * x)


def test_hessian_of_a_method_differentiated_again():
    model = Model(np.array([1.0, 0.5, -2.0]))
    hessian = srcad.hessian(model.energy)
    _close(srcad.jacobian(hessian)(X), _jacobian_fd(hessian, X))
    _, tangent = srcad.jvp(hessian, (X,), (V,))
    _close(tangent, _central(hessian, X, V))


# what is refused ----------------------------------------------------------------------------


def test_options_without_meaning_for_a_derivative_are_refused_by_name():
    hessian = srcad.hessian(f)
    with pytest.raises(TypeError, match="has_aux"):
        srcad.grad(hessian, has_aux=True)
    with pytest.raises(TypeError, match="has_aux"):
        srcad.jvp(hessian, (X,), (V,), has_aux=True)
    with pytest.raises(TypeError, match="holomorphic"):
        srcad.jacobian(hessian, holomorphic=True)


def test_arguments_a_derivative_of_a_derivative_cannot_take_are_refused():
    jacobian = srcad.jacobian(lambda z: z * z)
    with pytest.raises(TypeError, match="complex argument"):
        srcad.jacobian(jacobian)(np.array([1.0 + 1.0j, 2.0]))
    with pytest.raises(TypeError, match="pytree"):
        srcad.jacobian(srcad.jacobian(lambda p: p["a"] * 2.0))({"a": X})
    with pytest.raises(TypeError, match="dtype"):
        srcad.jacobian(jacobian)(np.array([1, 2]))
    holomorphic = srcad.jacobian(lambda z: z * z, holomorphic=True)
    with pytest.raises(TypeError, match="holomorphic=True cannot be differentiated again"):
        srcad.jacobian(holomorphic)(np.array([1.0 + 1.0j]))


hessian_of_f = srcad.hessian(f)


def calls_a_hessian(y):
    return np.sum(hessian_of_f(y))


def test_a_hessian_called_inside_a_differentiated_function_is_refused_by_name():
    with pytest.raises(srcad.UnsupportedConstructError, match="made by srcad.hessian inside"):
        srcad.grad(calls_a_hessian)(X)
    with pytest.raises(srcad.UnsupportedConstructError, match="made by srcad.hessian inside"):
        srcad.jvp(calls_a_hessian, (X,), (V,))
    # what to write instead: the derivative of the hessian itself
    _, along = srcad.jvp(hessian_of_f, (X,), (V,))
    _close(np.sum(along), _central(calls_a_hessian, X, V))


def test_check_grad_of_a_hessian_and_of_a_jacobian():
    # first and second order in both modes, against srcad's own finite differences
    for order in (1, 2):
        worst = srcad.check_grad(srcad.hessian(t_sin_t), 0.8, order=order, modes=("rev", "fwd"))
        assert worst < 1e-6
        slope = srcad.jacobian(scaled, 1)
        worst = srcad.check_grad(slope, X, 0.7, wrt=(0, 1), order=order, modes=("rev", "fwd"))
        assert worst < 1e-6


def test_export_and_source_of_such_a_function_are_refused_by_name(tmp_path):
    with pytest.raises(srcad.ExportError, match="made by srcad.hessian cannot be exported"):
        srcad.export(srcad.hessian(f), tmp_path / "h.py")
    with pytest.raises(TypeError, match="made by srcad.jacobian"):
        srcad.source(srcad.jacobian(srcad.jacobian(f)))
