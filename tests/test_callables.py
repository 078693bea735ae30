"""What may be passed as the function: partials, ufuncs and NumPy functions with a rule,
callable objects, caches, forwarding decorators; outputs of one element; and
jacobian(jacobian(f)). Every derivative is checked against finite differences."""

import functools
import math

import numpy as np
import pytest

import srcad

X = np.array([0.3, -1.2, 2.0])
A = np.arange(9.0).reshape(3, 3) / 7 + np.eye(3)
B = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.6]])


def layer(W, x, y, scale=1.0):
    return scale * np.sum(np.tanh(W @ x) * y)


def quadratic(W, x):
    return np.sum(np.sin(W @ x) ** 2)


# functools.partial ----------------------------------------------------------------------


def test_partial_with_positional_arguments_bound():
    bound = functools.partial(layer, A)
    assert np.allclose(srcad.grad(bound)(X, 2 * X), srcad.grad(layer, wrt=1)(A, X, 2 * X))
    assert np.allclose(srcad.grad(bound, wrt=1)(X, 2 * X), np.tanh(A @ X))
    srcad.check_grad(bound, X, 2 * X, wrt=(0, 1), order=2, modes=("rev", "fwd"))


def test_partial_with_keywords_bound_and_overridden():
    bound = functools.partial(layer, y=X**2, scale=3.0)
    expected = srcad.grad(layer, wrt=(0, 1))(A, X, X**2, 3.0)
    got = srcad.grad(bound, wrt=(0, 1))(A, X)
    assert all(np.allclose(g, e) for g, e in zip(got, expected))
    # the caller's keywords win over the bound ones, as in Python
    assert np.allclose(
        srcad.grad(bound, wrt=1)(A, X, scale=0.5), srcad.grad(layer, wrt=1)(A, X, X**2, 0.5)
    )
    srcad.check_grad(bound, A, X, wrt=(0, 1), order=2, modes=("rev", "fwd"))
    # the parameter bound by keyword (and those after it) are no longer positional
    with pytest.raises(ValueError, match="out of range"):
        srcad.grad(bound, wrt=2)


def test_partial_in_vjp_jvp_hessian_and_hvp():
    bound = functools.partial(quadratic, A)
    out, pullback = srcad.vjp(bound, X)
    assert np.isclose(out, quadratic(A, X))
    assert np.allclose(pullback(1.0)[0], srcad.grad(quadratic, wrt=1)(A, X))
    _, tangent = srcad.jvp(bound, (X,), (np.ones(3),))
    assert np.isclose(tangent, srcad.grad(quadratic, wrt=1)(A, X).sum())
    hessian = srcad.hessian(quadratic, wrt=1)(A, X)
    assert np.allclose(srcad.hessian(bound)(X), hessian)
    assert np.allclose(srcad.hvp(bound, (X,), (X,)), hessian @ X)
    keyword = functools.partial(quadratic, x=X)
    assert np.allclose(srcad.hessian(keyword)(A), srcad.hessian(quadratic)(A, X))


# NumPy functions and ufuncs --------------------------------------------------------------


@pytest.mark.parametrize(
    "func, x, expected",
    [
        (np.sin, 0.3, math.cos(0.3)),
        (np.tanh, 0.7, 1 - math.tanh(0.7) ** 2),
        (math.exp, 0.2, math.exp(0.2)),
    ],
)
def test_a_ufunc_or_builtin_with_a_rule(func, x, expected):
    assert srcad.grad(func)(x) == pytest.approx(expected)
    srcad.check_grad(func, x, order=2, modes=("rev", "fwd"))


def test_a_binary_ufunc_and_a_numpy_function():
    assert srcad.grad(np.arctan2, wrt=(0, 1))(0.5, 2.0) == pytest.approx((2 / 4.25, -0.5 / 4.25))
    assert np.allclose(srcad.grad(np.linalg.det)(A), np.linalg.det(A) * np.linalg.inv(A).T)
    srcad.check_grad(np.linalg.det, A, order=2, modes=("rev", "fwd"))
    by_column = functools.partial(np.sum, axis=0)
    out, pullback = srcad.vjp(by_column, B)
    assert np.allclose(pullback(np.array([1.0, 2.0, 3.0]))[0], [[1, 2, 3], [1, 2, 3]])


def test_the_generated_code_calls_the_numpy_function_by_name():
    assert "np.tanh(x)" in srcad.source(srcad.grad(np.tanh), mode="rev") or "tanh" in srcad.source(
        srcad.grad(np.tanh)
    )
    srcad.grad(np.tanh)(0.5)
    assert "np.tanh(x)" in srcad.source(srcad.grad(np.tanh))


def test_a_numpy_function_without_a_rule_is_a_clear_error():
    with pytest.raises(srcad.SourceUnavailableError, match="without a derivative rule"):
        srcad.grad(np.i0)
    with pytest.raises(srcad.SourceUnavailableError, match="without a derivative rule"):
        srcad.jvp(np.frexp, (0.5,), (1.0,))


# callable objects, caches, decorators ----------------------------------------------------


class Layer:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.sum(np.sin(self.W @ x))


def test_a_callable_object_is_its_method():
    obj = Layer(A)
    expected = A.T @ np.cos(A @ X)
    assert np.allclose(srcad.grad(obj)(X), expected)
    assert np.isclose(srcad.jvp(obj, (X,), (X,))[1], expected @ X)
    assert np.allclose(srcad.vjp(obj, X)[1](1.0)[0], expected)
    srcad.check_grad(obj, X, order=2, modes=("rev", "fwd"))


@functools.lru_cache(maxsize=64)
def cached_power(x):
    return np.sin(x) * x**3


@functools.cache
def cached_plain(x):
    return math.exp(x) * x


def test_cached_functions_are_the_function_they_cache():
    srcad.check_grad(cached_power, 0.4, order=2, modes=("rev", "fwd"))
    assert srcad.grad(cached_plain)(0.5) == pytest.approx(math.exp(0.5) * 1.5)


def forwarding(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        """Forward the call unchanged."""
        return fn(*args, **kwargs)

    return wrapper


def scaling(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)

    return wrapper


@forwarding
def forwarded(x, W):
    return np.sum(np.tanh(W @ x))


@scaling
def scaled(x):
    return np.sum(x * x)


def test_a_decorator_that_only_forwards_is_seen_through():
    srcad.check_grad(forwarded, X, A, wrt=(0, 1), order=2, modes=("rev", "fwd"))


def test_a_decorator_that_changes_the_value_is_not_skipped():
    # differentiating the wrapped function would silently halve the gradient: the wrapper
    # itself is differentiated (its *args and **kwargs are the call's), with its own
    # signature, not the one functools.wraps copies from the wrapped function
    np.testing.assert_allclose(srcad.grad(scaled)(X), 4.0 * X)
    srcad.check_grad(scaled, X, order=2, modes=("rev", "fwd"))


def calls_decorated_helpers(x, W):
    return forwarded(x, W) + scaled(x) + cached_power(np.sum(x))


def test_decorated_and_cached_helpers_called_inside():
    # a forwarding wrapper and an lru_cache are seen through, a scaling wrapper is
    # differentiated as it is, at first and second order
    srcad.check_grad(calls_decorated_helpers, X, A, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(calls_decorated_helpers, X, A, wrt=(0, 1), order=2, modes=("rev", "fwd"))


# outputs of one element ------------------------------------------------------------------


def first_sine(x):
    return 3.0 * np.sin(x[:1])


def corner(x):
    return np.sin(x[:1, None]) @ np.full((1, 1), 2.0)


@pytest.mark.parametrize("func", [first_sine, corner])
def test_an_output_of_one_element_is_differentiated_like_a_scalar(func):
    value, g = srcad.value_and_grad(func)(X)
    assert value.shape == func(X).shape and np.allclose(value, func(X))
    assert np.allclose(g, srcad.grad(lambda x: np.sum(func(x)))(X))
    assert not np.allclose(g, 0.0)
    srcad.check_grad(func, X, order=2, modes=("rev", "fwd"))


def test_an_output_of_one_element_with_aux():
    g, aux = srcad.grad(lambda x: (first_sine(x), "aux"), has_aux=True)(X)
    assert aux == "aux" and np.allclose(g, [3 * math.cos(0.3), 0.0, 0.0])


def test_an_output_of_several_elements_is_still_refused():
    with pytest.raises(TypeError, match="scalar output"):
        srcad.grad(lambda x: x[:2] * 2.0)(X)


# jacobian of a jacobian ------------------------------------------------------------------


def vector_field(x):
    return np.sin(x) * x[0] + np.tanh(x) ** 2


def mixed(W, x):
    return np.tanh(W @ x)


def _numeric(jac, x, eps=1e-6):
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        columns.append((jac(x + e) - jac(x - e)) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(jac(x).shape + x.shape)


def test_jacobian_of_jacobian_against_finite_differences():
    second = srcad.jacobian(srcad.jacobian(vector_field))(X)
    assert second.shape == (3, 3, 3)
    assert np.allclose(second, _numeric(srcad.jacobian(vector_field), X), atol=1e-7)
    # symmetric in the two input axes, as second derivatives are
    assert np.allclose(second, second.transpose(0, 2, 1))
    inner = srcad.jacobian(mixed, 1)
    outer = srcad.jacobian(inner, 0)(B, X)
    assert outer.shape == (2, 3, 2, 3)
    assert np.allclose(outer, _numeric(lambda W: inner(W, X), B), atol=1e-7)


def test_jacobian_of_jacobian_of_a_scalar_function_is_its_hessian():
    f = lambda x: np.sum(np.sin(x) * x[0])  # noqa: E731
    assert np.allclose(srcad.jacobian(srcad.jacobian(f))(X), srcad.hessian(f)(X))
    assert srcad.jacobian(srcad.jacobian(lambda t: t**3))(2.0) == pytest.approx(12.0)


def test_jacobian_of_jacobian_of_several_arguments():
    inner = srcad.jacobian(mixed, (0, 1))
    outer = srcad.jacobian(inner, (0, 1))(B, X)
    assert outer[1][0].shape == (2, 3, 2, 3)
    assert np.allclose(outer[1][0], _numeric(lambda W: inner(W, X)[1], B), atol=1e-7)
    assert np.allclose(outer[1][1], _numeric(lambda x: inner(B, x)[1], X), atol=1e-7)


# higher order of a function whose output is not a scalar ----------------------------------


def vector(x):
    return np.sin(x) * 2.0


def sum_of_gradient(x):
    return np.sum(srcad.grad(vector)(x))


def test_higher_order_of_a_non_scalar_output_is_refused_not_summed():
    # the gradient code differentiated again used to start from 1.0 whatever the output's
    # shape: the Hessian of sum(f), silently
    with pytest.raises(TypeError, match="scalar output"):
        srcad.hessian(vector)(X)
    with pytest.raises(TypeError, match="scalar output"):
        srcad.hvp(vector, (X,), (X,))
    with pytest.raises(TypeError, match="scalar output"):
        srcad.jvp(srcad.grad(vector), (X,), (X,))
    with pytest.raises(TypeError, match="scalar output"):
        srcad.grad(sum_of_gradient)(X)
    # value_and_grad's code differentiated again too (it once summed silently)
    with pytest.raises(TypeError, match="scalar output"):
        srcad.jvp(srcad.value_and_grad(vector), (X,), (X,))


def one_element_through_an_index(x, w):
    a = x * 1.0
    b = x[-1] + a  # x[-1] is 0-d, b has one element: its adjoint must reduce to 0-d
    return (a + b * np.sin(a)) * w


def test_second_order_of_a_one_element_output_assumes_no_scalar():
    # the gradient's shapes were derived from a scalar output: dx[-1] = db, with db of
    # shape (1,), failed (fuzz seed 1601173)
    x, w = np.array([0.4]), np.array([1.3])
    srcad.check_grad(one_element_through_an_index, x, w, order=2, modes=("rev", "fwd"))


# *args in the function differentiated ----------------------------------------------------


def star(*args):
    return np.sum(args[0] * args[1] ** 2)


def weighted(w, *xs, scale=1.0):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(w * x))
    return total * scale


def calls_star(x, y):
    return star(x, y, 2.0) + weighted(x, y)


def test_star_args_indexed_like_the_call_in_every_api():
    # wrt counts the call's positional arguments, as JAX's argnums do
    np.testing.assert_allclose(srcad.grad(star)(X, X + 1), (X + 1) ** 2)
    dx, dy = srcad.grad(star, wrt=(0, 1))(X, X + 1)
    np.testing.assert_allclose(dy, 2 * X * (X + 1))
    srcad.check_grad(weighted, X, X, 2 * X, wrt=(0, 1, 2), order=2, modes=("rev", "fwd"))
    g = srcad.grad(weighted, wrt=2)(X, X, 2 * X, scale=3.0)
    np.testing.assert_allclose(g, 3.0 * X * (1 - np.tanh(2 * X * X) ** 2))
    _, pullback = srcad.vjp(star, X, X + 1)
    np.testing.assert_allclose(pullback(1.0)[1], dy)
    _, t = srcad.jvp(star, (X, X + 1), (np.ones(3), None))
    assert t == pytest.approx(np.sum((X + 1) ** 2))
    np.testing.assert_allclose(srcad.hessian(star, wrt=1)(X, X + 1), np.diag(2 * X))
    srcad.check_grad(calls_star, X, X + 1, wrt=(0, 1), order=2, modes=("rev", "fwd"))
    with pytest.raises(ValueError, match="out of range"):
        srcad.grad(star, wrt=2)(X, X)


# lambdas written inside a display over several lines: their line starts no statement
# (SourceUnavailableError "cannot parse the source of <lambda>" until stop 33)
LOSSES = {
    "square": (lambda x: np.sum(x**2), "first"),
    "sine": (
        lambda x: np.sum(np.sin(x) * x),
        "second",
    ),
    "no rule": (lambda x: np.sum(np.i0(x)), "third"),  # fmt: skip
}
TABLE = [
    lambda v: np.sum(np.tanh(v)),
    lambda v: np.sum(v * v * v),
]


def test_lambdas_in_displays_over_several_lines():
    x = np.array([0.3, -0.5, 0.9])
    assert np.allclose(srcad.grad(LOSSES["square"][0])(x), 2 * x)
    assert np.allclose(srcad.grad(LOSSES["sine"][0])(x), np.cos(x) * x + np.sin(x))
    assert np.allclose(srcad.grad(TABLE[1])(x), 3 * x * x)
    srcad.check_grad(TABLE[0], x, modes=("rev", "fwd"), order=2)
    assert "# grad of:" in srcad.source(srcad.grad(TABLE[0]))
    with pytest.raises(srcad.TransformError, match="no adjoint rule for np.i0") as info:
        srcad.grad(LOSSES["no rule"][0])(x)
    # the file and line of the lambda, and its source line with the caret
    assert f"{__file__}:{LOSSES['no rule'][0].__code__.co_firstlineno}:" in str(info.value)
    assert '"no rule": (lambda x: np.sum(np.i0(x)),' in str(info.value)
