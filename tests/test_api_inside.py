"""srcad.jacobian, srcad.hessian, srcad.hvp and srcad.vjp called inside a differentiated
function (#17): written out in terms of srcad.jvp and srcad.grad, differentiated at first
and second order in both modes, and checked against central differences."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 0.5])
Y = np.array([1.1, 0.4])
W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])


def vector(x):
    return np.sin(x) * x[0] + x**2


def two_inputs(x, y):
    return np.tanh(W @ x) * y + np.sum(x * x) * y[0]


def scalar(x):
    return np.sum(np.sin(x) ** 2) * x[1] + np.prod(x)


def scalar2(x, y):
    return np.sum(np.cos(W @ x) * y**3)


# ---- functions calling them -------------------------------------------------------------


def uses_jacobian(x):
    J = srcad.jacobian(vector)(x)
    return np.sum(J * J * W[0])


def uses_jacobian_of_two(x, y):
    Jx, Jy = srcad.jacobian(two_inputs, wrt=(0, 1))(x, y)
    return np.sum(Jx**2) + np.sum(np.sin(Jy))


def uses_jacobian_wrt_second(x, y):
    return np.sum(srcad.jacobian(two_inputs, wrt=1, mode="rev")(x, y) ** 2)


def uses_hessian(x):
    H = srcad.hessian(scalar)(x)
    return np.sum(np.tanh(H) * W[1])


def uses_hessian_wrt_second(x, y):
    return np.sum(srcad.hessian(scalar2, wrt=1)(x, y) ** 2)


def uses_hvp(x):
    return np.sum(srcad.hvp(scalar, (x,), (np.cos(x),)) ** 2)


def uses_hvp_of_two(x, y):
    hx, hy = srcad.hvp(scalar2, (x, y), (x, y))
    return np.sum(hx * x) + np.sum(hy**2)


def uses_hvp_one_tangent(x, y):
    none, hy = srcad.hvp(scalar2, (x, y), (None, y))
    return np.sum(hy * y)


def uses_vjp(x):
    out, pullback = srcad.vjp(vector, x)
    (g,) = pullback(np.cos(x))
    return np.sum(g * out)


def uses_vjp_of_two(x, y):
    out, pullback = srcad.vjp(two_inputs, x, y)
    gx, gy = pullback(out)
    ax, _ = pullback(np.ones_like(out))  # (several cotangents: unpacked into names)
    return np.sum(gx**2) + np.sum(gy * y) + np.sum(ax)


def uses_jacobian_of_jacobian(x):
    return np.sum(srcad.jacobian(srcad.jacobian(vector))(x) * W[0])


def uses_a_constant_jacobian(x):
    # no derivative flows through it: the call stays a call
    return np.sum(srcad.jacobian(vector)(X) @ x)


def holds_derivatives_in_names(x):
    # as JAX code writes it: the derivative made once, then called (the call was refused
    # as "no adjoint rule for g" until stop 29)
    g = srcad.grad(scalar)
    J = srcad.jacobian(g)
    H = srcad.hessian(scalar)
    value_and_gradient = srcad.value_and_grad(scalar)
    v, d = value_and_gradient(x)
    return np.sum(J(x) @ np.sin(x)) + np.sum(g(x) * x) + np.sum(H(x) * W[0]) + v * np.sum(d)


ONE = [
    uses_jacobian,
    uses_hessian,
    uses_hvp,
    uses_vjp,
    uses_jacobian_of_jacobian,
    uses_a_constant_jacobian,
    holds_derivatives_in_names,
]
TWO = [
    uses_jacobian_of_two,
    uses_jacobian_wrt_second,
    uses_hessian_wrt_second,
    uses_hvp_of_two,
    uses_hvp_one_tangent,
    uses_vjp_of_two,
]


def central_gradient(f, args, k, h=1e-6):
    args = [np.array(a, dtype=float) for a in args]
    out = np.zeros_like(args[k])
    for i in np.ndindex(args[k].shape):
        up = [a.copy() for a in args]
        down = [a.copy() for a in args]
        up[k][i] += h
        down[k][i] -= h
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


@pytest.mark.parametrize("f", ONE + TWO, ids=lambda f: f.__name__)
def test_first_order_in_both_modes_against_differences(f):
    args = (X,) if f in ONE else (X, Y)
    for k in range(len(args)):
        expected = central_gradient(f, args, k)
        value, gradient = srcad.value_and_grad(f, wrt=k)(*args)
        assert value == pytest.approx(f(*args), rel=1e-12)  # (the plain call: srcad's API)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)
        tangents = tuple(np.ones_like(a) if j == k else None for j, a in enumerate(args))
        _, along = srcad.jvp(f, args, tangents)
        assert along == pytest.approx(np.sum(expected), rel=1e-6, abs=1e-7)
    assert np.any(np.abs(srcad.grad(f)(*args)) > 1e-3)  # (a gradient that is not zero)


@pytest.mark.parametrize("f", ONE + TWO, ids=lambda f: f.__name__)
def test_second_order_in_both_modes_against_differences(f):
    args = (X,) if f in ONE else (X, Y)
    for k in range(len(args)):
        srcad.check_grad(f, *args, wrt=k, order=2, modes=("rev", "fwd"))
    gradient = srcad.grad(f)
    hessian = srcad.hessian(f)(*args)
    expected = np.stack(
        [central_gradient(lambda *a, i=i: gradient(*a)[i], args, 0) for i in range(X.size)]
    )
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


# ---- what is refused, by name -----------------------------------------------------------


def hessian_of_a_tuple(x, y):
    return np.sum(srcad.hessian(scalar2, wrt=(0, 1))(x, y)[0][0])


def holomorphic_jacobian(x):
    return np.sum(srcad.jacobian(vector, holomorphic=True)(x))


def pullback_passed_on(x):
    out, pullback = srcad.vjp(vector, x)
    return np.sum(apply(pullback, out)[0])


def apply(pullback, g):
    return pullback(g)


def primal_assigned_again(x):
    y = x * 2.0
    out, pullback = srcad.vjp(vector, y)
    y = y + 1.0
    return np.sum(pullback(out)[0] * y)


def vjp_subscripted(x):
    return np.sum(srcad.vjp(vector, x)[1](x)[0])


JACOBIAN_OF_VECTOR = srcad.jacobian(vector)


def jacobian_made_outside(x):
    return np.sum(srcad.jacobian(JACOBIAN_OF_VECTOR)(x))


@pytest.mark.parametrize(
    "f, words",
    [
        (hessian_of_a_tuple, "srcad.hessian with a tuple wrt"),
        (holomorphic_jacobian, "holomorphic=True"),
        (pullback_passed_on, "can only be called"),
        (primal_assigned_again, "y is assigned"),
        (vjp_subscripted, "out, pullback = srcad.vjp"),
        (jacobian_made_outside, "made by srcad.jacobian"),
    ],
    ids=lambda v: getattr(v, "__name__", "words"),
)
def test_forms_not_written_out_are_refused_by_name(f, words):
    args = (X, Y) if f is hessian_of_a_tuple else (X,)
    for derivative in (srcad.grad(f), lambda *a: srcad.jvp(f, a, (X, *([Y] * (len(a) - 1))))):
        with pytest.raises(srcad.TransformError, match=words):
            derivative(*args)


def sine(v):
    return np.sin(v)


def cosine(v):
    return np.cos(v)


def calls_a_function_chosen_on_a_branch(x):
    g = sine if np.sum(x) > 0 else cosine
    return np.sum(g(x))


def test_a_function_held_in_a_local_bound_on_a_branch_is_refused_by_name():
    with pytest.raises(srcad.TransformError, match="held in a local variable"):
        srcad.grad(calls_a_function_chosen_on_a_branch)(X)
