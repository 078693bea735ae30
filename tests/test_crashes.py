"""Functions and arguments that crashed srcad or were silently misread (issue #16): functions
returning None, parameters with defaults, deep recursion, and array types whose operations
mean something else than NumPy's (np.matrix, masked arrays, overriding subclasses)."""

from __future__ import annotations

import statistics
import sys
import threading

import numpy as np
import pytest

import srcad

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


def point():
    return np.array([0.3, -0.7, 1.1])


def every_api(f, x):
    """A call of each API with ``f`` at ``x``, by name."""
    t = np.ones_like(x)
    return {
        "grad": lambda: srcad.grad(f)(x),
        "value_and_grad": lambda: srcad.value_and_grad(f)(x),
        "vjp": lambda: srcad.vjp(f, x)[1](1.0),
        "jvp": lambda: srcad.jvp(f, (x,), (t,)),
        "jacobian_fwd": lambda: srcad.jacobian(f, mode="fwd")(x),
        "jacobian_rev": lambda: srcad.jacobian(f, mode="rev")(x),
        "hessian": lambda: srcad.hessian(f)(x),
        "hvp": lambda: srcad.hvp(f, (x,), (t,)),
        "check_grad": lambda: srcad.check_grad(f, x, modes=("fwd", "rev"), order=2),
    }


API_NAMES = list(every_api(None, point()))


# functions that return None -------------------------------------------------------------


def no_return(x):
    y = x * 2  # noqa: F841


def pass_body(x):
    pass


def docstring_only(x):
    """Nothing else."""


def returns_none(x):
    return None


def bare_return_on_a_path(x):
    if x[0] > 0:
        return
    return np.sum(x)


def falls_off_on_a_path(x):
    if x[0] < 0:
        return np.sum(x)


def calls_no_return(x):
    return np.sum(no_return(x))


@pytest.mark.parametrize("api", API_NAMES)
@pytest.mark.parametrize(
    "f, line",
    [
        (no_return, "y = x * 2"),
        (pass_body, "pass"),
        (docstring_only, '"""Nothing else."""'),
        (returns_none, "return None"),
        (calls_no_return, "y = x * 2"),
    ],
    ids=lambda v: getattr(v, "__name__", "line"),
)
def test_a_function_that_never_returns_a_value_is_refused(f, line, api):
    with pytest.raises(srcad.NoOutputError, match="returns None") as info:
        every_api(f, point())[api]()
    assert isinstance(info.value, TypeError)
    assert __file__ in str(info.value) and line in str(info.value)


@pytest.mark.parametrize("api", API_NAMES)
@pytest.mark.parametrize(
    "f, line",
    [(bare_return_on_a_path, "return\n"), (falls_off_on_a_path, "if x[0] < 0:")],
    ids=lambda v: getattr(v, "__name__", "line"),
)
def test_returning_none_on_a_path_that_runs_says_where(f, line, api):
    with pytest.raises(srcad.NoOutputError, match="returns None here") as info:
        every_api(f, point())[api]()
    assert __file__ in str(info.value) and line in str(info.value) + "\n"


def test_returning_none_on_a_path_that_does_not_run_is_fine():
    x = -point()  # x[0] < 0: the paths returning None do not run
    for f in (bare_return_on_a_path, falls_off_on_a_path):
        assert np.allclose(srcad.grad(f)(x), 1.0)
        srcad.check_grad(f, x, modes=("fwd", "rev"))


def test_a_value_that_is_none_at_run_time_is_a_clear_error():
    def none_at_run_time(x):
        y = None
        return y

    x = point()
    for call in every_api(none_at_run_time, x).values():
        with pytest.raises(TypeError, match="returned None|returns None"):
            call()


# defaults and keyword-only parameters ----------------------------------------------------


def with_default(x, scale=2.0):
    return np.sum(np.sin(x) * scale)


def with_keyword_only(x, *, scale=2.0):
    return np.sum(np.sin(x) * scale)


def inner_with_default(x, s=2.0):
    return np.sin(x) * s


def calls_a_default(x):
    return np.sum(inner_with_default(x) * x)


def calls_a_keyword_only(x):
    return with_keyword_only(x) * np.sum(x)


@pytest.mark.parametrize("api", API_NAMES)
@pytest.mark.parametrize(
    "f", [with_default, with_keyword_only, calls_a_default, calls_a_keyword_only]
)
def test_defaults_work_in_every_api(f, api):
    x = point()
    try:
        every_api(f, x)[api]()
    except srcad.TransformError as exc:
        # differentiating generated code that calls user functions again: a known limit
        assert "cannot be differentiated again" in str(exc)
        assert api in ("hessian", "hvp", "check_grad") and f.__name__.startswith("calls_")
    if api == "jvp":
        _, tangent = srcad.jvp(f, (x,), (np.ones(3),))
        eps = 1e-6
        assert np.isclose(tangent, (f(x + eps) - f(x - eps)) / (2 * eps))


@pytest.mark.parametrize("f", [with_default, with_keyword_only])
def test_hessian_with_defaults(f):
    x = point()
    assert np.allclose(srcad.hessian(f)(x), np.diag(-2.0 * np.sin(x)))
    assert np.allclose(srcad.hvp(f, (x,), (np.ones(3),)), -2.0 * np.sin(x))


def test_defaults_are_read_when_called():
    def late(x, scale=2.0):
        return np.sum(np.sin(x) * scale)

    def late_keyword(x, *, scale=2.0):
        return np.sum(np.sin(x) * scale)

    def late_inner(x, s=2.0):
        return np.sin(x) * s

    def late_caller(x):
        return np.sum(late_inner(x))

    x, t = point(), np.ones(3)
    for f in (late, late_keyword, late_caller):
        srcad.grad(f)(x)  # transformed with the first defaults
        srcad.jvp(f, (x,), (t,))
    late.__defaults__ = (3.0,)
    late_keyword.__kwdefaults__ = {"scale": 3.0}
    late_inner.__defaults__ = (3.0,)
    for f in (late, late_keyword, late_caller):
        assert np.allclose(srcad.grad(f)(x), 3.0 * np.cos(x)), f.__name__
        assert np.allclose(srcad.vjp(f, x)[1](1.0)[0], 3.0 * np.cos(x)), f.__name__
        assert np.isclose(srcad.jvp(f, (x,), (t,))[1], 3.0 * np.sum(np.cos(x))), f.__name__
    for f in (late, late_keyword):
        assert np.allclose(srcad.hvp(f, (x,), (t,)), -3.0 * np.sin(x)), f.__name__


def test_keyword_only_parameters_keep_their_values_in_reverse_mode():
    def branchy(x, *, scale=2.0):
        y = x * 1.0
        if x[0] > 0:
            y = y * scale
        return np.sum(y * y)

    x = point()
    out, pullback = srcad.vjp(branchy, x)
    assert np.allclose(pullback(1.0)[0], srcad.grad(branchy)(x))
    srcad.check_grad(branchy, x, modes=("fwd", "rev"))


# recursion ------------------------------------------------------------------------------


def rec(x, n):
    if n == 0:
        return x
    return rec(x * 1.0, n - 1)


def loss(x, n):
    return np.sum(rec(x, n) ** 2)


def stack_depth():
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


@pytest.fixture
def limit_1000():
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(saved)


def test_a_derivative_recurses_as_deep_as_the_function(limit_1000):
    x, t = point(), np.ones(3)
    n = 1000 - stack_depth() - 30
    assert n > 600
    loss(x, n)  # the function itself runs this deep
    assert np.allclose(srcad.grad(loss)(x, n), 2 * x)
    assert np.allclose(srcad.vjp(loss, x, n)[1](1.0)[0], 2 * x)
    assert np.isclose(srcad.jvp(loss, (x, n), (t, None))[1], np.sum(2 * x))
    assert sys.getrecursionlimit() == 1000


def test_the_example_of_issue_16(limit_1000):
    def deep_loss(x):
        return np.sum(rec(x, 600))

    assert np.allclose(srcad.grad(deep_loss)(point()), 1.0)


def test_too_deep_a_recursion_is_a_clear_error(limit_1000):
    with pytest.raises(RecursionError, match="derivative of rec"):
        srcad.grad(loss)(point(), 20000)
    assert sys.getrecursionlimit() == 1000
    assert np.allclose(srcad.grad(loss)(point(), 10), 2 * point())


def test_recursion_in_threads(limit_1000):
    results, errors = [], []

    def work():
        try:
            results.append(srcad.grad(loss)(point(), 500))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(results) == 4
    assert all(np.allclose(r, 2 * point()) for r in results)
    assert sys.getrecursionlimit() == 1000


# array types ----------------------------------------------------------------------------


class AddsForTimes(np.ndarray):
    def __mul__(self, other):
        return np.asarray(self) + np.asarray(other)


class OwnUfuncs(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = [np.asarray(i) for i in inputs]
        return getattr(ufunc, method)(*inputs, **kwargs) * 2.0


class OwnFunctions(np.ndarray):
    def __array_function__(self, func, types, args, kwargs):
        return 0.0


class OwnSum(np.ndarray):
    def sum(self, *args, **kwargs):
        return 0.0


class OnlyANewMethod(np.ndarray):
    def describe(self):
        return "an ndarray with a method of its own"


def square_sum(x):
    return np.sum(x * x)


REFUSED = {
    "matrix": (lambda: np.matrix([[1.0, 2.0]]), "np.matrix"),
    "masked": (lambda: np.ma.array([1.0, 2.0], mask=[0, 1]), "masked array"),
    "operator": (lambda: np.array([1.0, 2.0]).view(AddsForTimes), "__mul__"),
    "ufunc": (lambda: np.array([1.0, 2.0]).view(OwnUfuncs), "__array_ufunc__"),
    "function": (lambda: np.array([1.0, 2.0]).view(OwnFunctions), "__array_function__"),
    "method": (lambda: np.array([1.0, 2.0]).view(OwnSum), "overrides sum"),
}


@pytest.mark.parametrize("api", API_NAMES)
@pytest.mark.parametrize("kind", list(REFUSED))
def test_arrays_with_other_operations_are_refused(kind, api):
    make, words = REFUSED[kind]
    with pytest.raises(TypeError, match=words):
        every_api(square_sum, make())[api]()


@pytest.mark.parametrize("kind", list(REFUSED))
def test_refused_anywhere_they_are_passed(kind):
    make, words = REFUSED[kind]
    x = np.array([1.0, 2.0])

    def weighted(p, data):
        return np.sum(p["w"] * data)

    calls = [
        lambda: srcad.grad(weighted)({"w": make()}, x),  # inside a differentiated pytree
        lambda: srcad.grad(weighted)({"w": x}, make()),  # data, not differentiated
        lambda: srcad.grad(weighted)({"w": x}, data=make()),
        lambda: srcad.jvp(square_sum, (x,), (make(),)),  # a tangent
        lambda: srcad.vjp(lambda v: v * 2.0, x)[1](make()),  # a cotangent
        lambda: srcad.vjp(weighted, {"w": x}, [make()][0]),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=words):
            call()


def masked_inside(x):
    return np.sum(np.sqrt(np.ma.masked_less(x, 0.0)))


def matrix_inside(x):
    m = np.asmatrix(x)
    return np.sum(np.asarray(m * m.T))


def stdlib_inside(x):
    return statistics.fmean([x[0], x[1]])


@pytest.mark.parametrize(
    "f, words",
    [
        (masked_inside, "numpy.ma.core.masked_less"),
        (matrix_inside, "np.asmatrix"),
        (stdlib_inside, "statistics.fmean"),
    ],
)
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_numpy_functions_without_rules_are_refused_at_the_users_line(f, words, mode):
    # NumPy's own Python source (np.ma, np.matrixlib) and the standard library's are never
    # transformed: the error names the call at the user's line, not a line inside them
    x = np.array([0.5, 2.0])
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(srcad.NoAdjointError, match=f"test_crashes.py:{line}: .*{words}"):
        if mode == "rev":
            srcad.grad(f)(x)
        else:
            srcad.jvp(f, (x,), (x,))


def test_a_subclass_that_overrides_nothing_is_an_ndarray():
    x = np.array([1.0, 2.0]).view(OnlyANewMethod)
    assert np.allclose(srcad.grad(square_sum)(x), [2.0, 4.0])
    assert np.isclose(srcad.jvp(square_sum, (x,), (np.ones(2),))[1], 6.0)
    srcad.check_grad(square_sum, x, modes=("fwd", "rev"), order=2)


def test_plain_arrays_still_take_the_fast_path():
    derivative = srcad.grad(square_sum)
    x = np.array([1.0, 2.0])
    assert np.allclose(derivative(x), [2.0, 4.0])
    assert derivative._plans  # the cached plan of plain ndarrays: no type checks there


# ---- grad of a non-scalar output whose backward reads the output's shape ---------------
# (the backward pass starts from one number; concatenate's rule failed before the check)


def concatenated(x):
    return np.concatenate([x, x * 2.0])


def joined_by_r(x):
    return np.r_[x, x]


def stacked(x):
    return np.stack([x, x])


def column(x):
    return np.concatenate([x, x]).reshape(4, 1)[::2]


@pytest.mark.parametrize("f", [concatenated, joined_by_r, stacked, column])
def test_grad_of_a_non_scalar_output_says_so(f):
    with pytest.raises(TypeError, match="grad needs a function with a scalar output"):
        srcad.grad(f)(np.array([1.0, 2.0]))


# ---- jvp: a tangent has its output's dtype ------------------------------------------------


def selects_a_python_float(x, y):
    return np.where(x > 0, y, x)


def scales_by_a_python_float(x, y):
    return x * y + y


@pytest.mark.parametrize("f", [selects_a_python_float, scales_by_a_python_float])
def test_jvp_tangent_has_the_dtype_of_the_output(f):
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    value, tangent = srcad.jvp(f, (x, 0.5), (np.ones(3, np.float32), 1.0))
    assert value.dtype == np.float32 and tangent.dtype == np.float32
    expected = (f(x + 1e-3, 0.5 + 1e-3) - f(x - 1e-3, 0.5 - 1e-3)) / 2e-3
    np.testing.assert_allclose(tangent, expected, rtol=1e-2, atol=1e-3)


# ---- x op= v keeps x's dtype, as NumPy computes it into x (fuzz seed 401127) -------------


def adds_a_float64_into_float32(x, y):
    u = x * 1.0
    u += np.tanh(y)  # np.tanh of a Python float is a float64 scalar
    u *= np.float64(2.0)
    return u


def test_an_augmented_assignment_keeps_the_dtype_of_its_target():
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    expected = adds_a_float64_into_float32(x, 0.5)
    assert expected.dtype == np.float32
    out, pullback = srcad.vjp(adds_a_float64_into_float32, x, 0.5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    dx, dy = pullback(np.ones(3, np.float32))
    assert dx.dtype == np.float32
    np.testing.assert_allclose(dx, 2.0, rtol=1e-6)
    np.testing.assert_allclose(dy, 3 * 2.0 * (1 - np.tanh(0.5) ** 2), rtol=1e-5)
    value, tangent = srcad.jvp(adds_a_float64_into_float32, (x, 0.5), (np.ones(3, np.float32), 1.0))
    assert value.dtype == np.float32 and tangent.dtype == np.float32
    np.testing.assert_allclose(tangent, 2.0 + 2.0 * (1 - np.tanh(0.5) ** 2), rtol=1e-5)


def power_of_e(x):
    return np.power(x, np.e) + np.pi * x


def test_numpy_constants_in_a_vjps_backward_pass():
    # np.e in an operand became xp.e in the backward function, which had no xp (NameError)
    x = np.array([0.3, 1.2, 2.0])
    _, pullback = srcad.vjp(power_of_e, x)
    (dx,) = pullback(np.ones(3))
    np.testing.assert_allclose(dx, np.e * x ** (np.e - 1) + np.pi)
    srcad.check_grad(summed_power_of_e, x, order=2, modes=("rev", "fwd"))


def summed_power_of_e(x):
    return np.sum(np.power(x, np.e) * np.e)
