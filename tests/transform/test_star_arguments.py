"""Star-arguments in calls (``f(*args)``, ``g(**opts)``) and ``**kwargs`` parameters."""

import functools

import numpy as np
import pytest

import srcad
from srcad.errors import TransformError

X = np.array([0.5, 1.0, 2.0])
W = np.array([1.5, -1.0, 0.3])


def _scaled(a, b, c=1.0):
    return a * np.sin(b) * c


def star_of_tuple_name(x, w):
    args = (x, w)
    return np.sum(_scaled(*args))


def star_of_sum_of_tuples(x, w):
    args = (x,)
    return np.sum(_scaled(*(args + (w,)), **{"c": 2.0}))


def star_of_shape(x):
    return np.sum(np.reshape(x, (*x.shape, 1)) ** 2 + np.ones((*x.shape,)))


def star_of_literal_shape(x):
    shape = (3, 1)
    return np.sum(np.reshape(x, shape) * np.ones(*(shape,)))


def star_of_pytree_argument(x, ws):
    return np.sum(_scaled(*ws) * x)


@pytest.mark.parametrize(
    "f, args",
    [
        (star_of_tuple_name, (X, W)),
        (star_of_sum_of_tuples, (X, W)),
        (star_of_shape, (X,)),
        (star_of_literal_shape, (X,)),
        (star_of_pytree_argument, (X, (W, X))),
    ],
)
def test_star_arguments_match_finite_differences(f, args):
    for k in range(len(args)):
        modes = ("rev", "fwd") if isinstance(args[k], np.ndarray) else ("rev",)
        assert srcad.check_grad(f, *args, wrt=k, modes=modes) < 1e-6


def test_a_star_of_a_pytree_argument_gives_each_leaf_its_gradient():
    (a, b) = srcad.grad(star_of_pytree_argument, wrt=1)(X, (W, X))
    np.testing.assert_allclose(a, np.sin(X) * X)
    np.testing.assert_allclose(b, W * np.cos(X) * X)


def star_of_unknown_length(x):
    xs = [x, 2 * x]
    return np.sum(np.add(*xs))


def test_a_star_over_a_value_of_unknown_length_is_refused_by_name():
    with pytest.raises(TransformError, match="star-argument over a value whose length"):
        srcad.grad(star_of_unknown_length)(X)


# ---- **kwargs parameters ----


def with_options(x, **opts):
    s = opts.get("scale", 1.0)
    if "shift" in opts:
        s = s + opts["shift"]
    return np.sum(np.sin(x) * s)


def product_of_keywords(x, **factors):
    out = x
    for _, v in factors.items():
        out = out * v
    return out


def passes_keywords(x, w):
    return np.sum(product_of_keywords(x, a=w, b=np.cos(x)))


def forwards_everything(x, *args, **kw):
    return product_of_keywords(x, *args, **kw)


def forwards_keywords(x, w):
    return np.sum(forwards_everything(x, c=w) ** 2)


@pytest.mark.parametrize(
    "options, factor",
    [({}, 1.0), ({"scale": 2.0}, 2.0), ({"scale": 2.0, "shift": 1.0}, 3.0)],
)
def test_kwargs_of_the_function_differentiated_are_constants(options, factor):
    np.testing.assert_allclose(srcad.grad(with_options)(X, **options), factor * np.cos(X))
    value, grad = srcad.value_and_grad(with_options)(X, **options)
    np.testing.assert_allclose(value, factor * np.sum(np.sin(X)))
    np.testing.assert_allclose(grad, factor * np.cos(X))
    bound = functools.partial(with_options, **options)
    assert srcad.check_grad(bound, X, modes=("rev", "fwd")) < 1e-6


def test_an_array_given_to_kwargs_is_not_differentiated_as_in_jax():
    grad = srcad.grad(with_options)(X, scale=W, shift=X)
    np.testing.assert_allclose(grad, np.cos(X) * (W + X))


@pytest.mark.parametrize("f", [passes_keywords, forwards_keywords])
def test_differentiable_values_passed_to_kwargs_of_a_helper(f):
    for k in (0, 1):
        assert srcad.check_grad(f, X, W, wrt=k, modes=("rev", "fwd")) < 1e-6


def test_kwargs_in_vjp_and_jvp():
    out, pullback = srcad.vjp(functools.partial(with_options, scale=2.0), X)
    np.testing.assert_allclose(pullback(1.0)[0], 2.0 * np.cos(X))
    _, tangent = srcad.jvp(functools.partial(with_options, scale=2.0), (X,), (W,))
    np.testing.assert_allclose(tangent, 2.0 * np.cos(X) @ W)


def test_a_keyword_that_names_a_parameter_goes_to_it():
    def f(x, scale=1.0, **rest):
        return np.sum(x * scale * rest.get("k", 1.0))

    np.testing.assert_allclose(srcad.grad(f)(X, scale=2.0, k=3.0), np.full(3, 6.0))


@pytest.mark.parametrize("f", [passes_keywords, forwards_keywords, star_of_tuple_name])
def test_second_order_through_star_arguments_and_kwargs(f):
    for k in (0, 1):
        assert srcad.check_grad(f, X, W, wrt=k, order=2) < 1e-6


def test_second_order_of_a_function_with_kwargs():
    bound = functools.partial(with_options, scale=2.0, shift=1.0)
    assert srcad.check_grad(bound, X, order=2) < 1e-6
    np.testing.assert_allclose(srcad.hessian(bound)(X), np.diag(-3.0 * np.sin(X)))
