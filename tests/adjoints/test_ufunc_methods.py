"""ufunc methods (srcad/adjoints/ufunc_methods.py): ``outer``, ``reduce`` and ``accumulate``
of the common binary ufuncs, in both modes and at second order, against finite
differences; ties of the running and reduced max/min split evenly."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes
from opcheck import check

import srcad

RNG = np.random.default_rng(7)
A = RNG.uniform(0.5, 1.5, size=3)
B = RNG.uniform(0.5, 1.5, size=(2, 2))
X = RNG.uniform(0.5, 1.5, size=(3, 4))

# ---- outer ----


def add_outer(a, b):
    return np.sum(np.sin(np.add.outer(a, b)) ** 2)


def subtract_outer(a, b):
    return np.sum(np.subtract.outer(a, b) ** 3)


def multiply_outer(a, b):
    return np.sum(np.sin(np.multiply.outer(a, b)))


def divide_outer(a, b):
    return np.sum(np.divide.outer(a, b) ** 2)


def power_outer(a, b):
    return np.sum(np.power.outer(a, b) * np.cos(np.add.outer(a, b)))


def maximum_outer(a, b):
    return np.sum(np.maximum.outer(a, b) ** 2)


def minimum_outer(a, b):
    return np.sum(np.minimum.outer(a * a, b) ** 3)


def logaddexp_outer(a, b):
    return np.sum(np.logaddexp.outer(a, b) ** 2)


OUTERS = [add_outer, subtract_outer, multiply_outer, divide_outer, power_outer,
          maximum_outer, minimum_outer, logaddexp_outer]  # fmt: skip


@pytest.mark.parametrize("f", OUTERS, ids=lambda f: f.__name__)
def test_outer(f):
    srcad.check_grad(f, A.copy(), B.copy(), wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(f, A.copy(), B.copy(), wrt=(0, 1), modes=("rev", "fwd"), order=2)


def scalar_outer(a, b):
    return np.sum(np.multiply.outer(a, b) ** 2 + np.add.outer(b, a))


def test_outer_of_a_number():
    srcad.check_grad(scalar_outer, 0.7, A.copy(), wrt=(0, 1), modes=("rev", "fwd"), order=2)


def squared_sum_outer(x, y):
    return np.sum(np.add.outer(x, y) ** 2)


def test_closed_form_add_outer():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25])
    dx, dy = srcad.grad(squared_sum_outer, wrt=(0, 1))(x, y)
    # d/dx_i sum_j (x_i + y_j)^2 = 2 (n_y x_i + sum y), and the same the other way
    np.testing.assert_allclose(dx, 2 * (len(y) * x + y.sum()))
    np.testing.assert_allclose(dy, 2 * (len(x) * y + x.sum()))


def test_the_forward_line_is_the_call_written():
    assert "xp.add.outer(x, y)" in srcad.source(srcad.grad(squared_sum_outer))


def test_maximum_outer_ties_split_evenly():
    a, b = np.array([1.0, 2.0]), np.array([1.0, 3.0])
    da, db = srcad.grad(lambda a, b: np.sum(np.maximum.outer(a, b)), wrt=(0, 1))(a, b)
    # a[0] == b[0] ties (half each); a[0] and a[1] lose to b[1]; a[1] beats b[0]
    np.testing.assert_allclose(da, [0.5, 1.0])
    np.testing.assert_allclose(db, [0.5, 2.0])


# ---- reduce ----


def add_reduce(x):
    return np.sum(np.add.reduce(np.sin(x)) ** 2)


def add_reduce_axes(x):
    return np.sum(np.add.reduce(x * x, axis=(0, 1), keepdims=True) ** 2)


def add_reduce_everything(x):
    return np.add.reduce(np.sin(x), axis=None) ** 2


def add_reduce_masked(x):
    return np.sum(np.add.reduce(x**3, axis=1, where=x > 1.0) ** 2)


def multiply_reduce(x):
    return np.sum(np.multiply.reduce(x, axis=1) ** 2)


def multiply_reduce_masked(x):
    return np.sum(np.multiply.reduce(x, where=x < 1.2, keepdims=True))


def maximum_reduce(x):
    return np.sum(np.maximum.reduce(x) ** 2)


def minimum_reduce(x):
    return np.sum(np.minimum.reduce(np.sin(x), axis=-1, keepdims=True) ** 3)


def maximum_reduce_initial(x):
    return np.sum(np.maximum.reduce(x, axis=1, initial=1.1, where=x > 0.8) ** 2)


def logaddexp_reduce(x):
    return np.sum(np.logaddexp.reduce(x * x, axis=1) ** 2)


def logaddexp_reduce_everything(x):
    return np.logaddexp.reduce(np.sin(x), axis=None)


REDUCES = [add_reduce, add_reduce_axes, add_reduce_everything, add_reduce_masked,
           multiply_reduce, multiply_reduce_masked, maximum_reduce, minimum_reduce,
           maximum_reduce_initial, logaddexp_reduce, logaddexp_reduce_everything]  # fmt: skip


@pytest.mark.parametrize("f", REDUCES, ids=lambda f: f.__name__)
def test_reduce(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"), order=2)


def maximum_reduce_from(x, v):
    return np.sum(np.maximum.reduce(x, axis=0, initial=v) ** 2)


def test_reduce_initial_takes_the_gradient_where_it_wins():
    x = np.array([[0.2, 0.9], [0.4, 1.5]])
    for v in (0.7, 1.0):
        srcad.check_grad(maximum_reduce_from, x, v, wrt=(0, 1), modes=("rev", "fwd"), order=2)
    dx, dv = srcad.grad(maximum_reduce_from, wrt=(0, 1))(x, 0.7)
    # column 0: 0.7 wins (2 * 0.7 to it); column 1: 1.5 wins
    np.testing.assert_allclose(dx, [[0.0, 0.0], [0.0, 3.0]])
    assert dv == pytest.approx(1.4)


W = np.arange(1.0, 5.0)


def methods_along_axis_0(x):
    return np.sum((np.add.reduce(x) + np.multiply.reduce(x) + np.maximum.reduce(x)) * W)


def functions_along_axis_0(x):
    return np.sum((np.sum(x, axis=0) + np.prod(x, axis=0) + np.max(x, axis=0)) * W)


def test_reduce_is_the_numpy_function_along_axis_0():
    # ufunc.reduce defaults to axis 0 where np.sum reduces everything
    expected = srcad.grad(functions_along_axis_0)(X)
    np.testing.assert_allclose(srcad.grad(methods_along_axis_0)(X), expected)


def test_closed_form_logaddexp_reduce_is_softmax():
    x = np.array([[0.3, -1.0, 2.0], [1.0, 1.0, 0.0]])
    g = srcad.grad(lambda x: np.sum(np.logaddexp.reduce(x, axis=1)))(x)
    np.testing.assert_allclose(g, np.exp(x) / np.exp(x).sum(axis=1, keepdims=True))


def test_maximum_reduce_ties_split_evenly():
    x = np.array([[1.0, 2.0], [1.0, 0.0], [0.5, 2.0]])
    g = srcad.grad(lambda x: np.sum(np.maximum.reduce(x) * np.array([2.0, 4.0])))(x)
    np.testing.assert_allclose(g, [[1.0, 2.0], [1.0, 0.0], [0.0, 2.0]])
    _, t = srcad.jvp(lambda x: np.maximum.reduce(x), (x,), (np.arange(6.0).reshape(3, 2),))
    np.testing.assert_allclose(t, [(0.0 + 2.0) / 2, (1.0 + 5.0) / 2])


# ---- accumulate ----


def add_accumulate(x):
    return np.sum(np.add.accumulate(np.sin(x)) ** 2)


def add_accumulate_columns(x):
    return np.sum(np.add.accumulate(x * x, axis=1) ** 2)


def multiply_accumulate(x):
    return np.sum(np.multiply.accumulate(x) ** 2)


def multiply_accumulate_columns(x):
    return np.sum(np.sin(np.multiply.accumulate(x, 1)))


def maximum_accumulate(x):
    return np.sum(np.maximum.accumulate(x) ** 2)


def minimum_accumulate(x):
    return np.sum(np.sin(np.minimum.accumulate(x * x, axis=1)) ** 2)


ACCUMULATES = [add_accumulate, add_accumulate_columns, multiply_accumulate,
               multiply_accumulate_columns, maximum_accumulate, minimum_accumulate]  # fmt: skip


@pytest.mark.parametrize("f", ACCUMULATES, ids=lambda f: f.__name__)
def test_accumulate(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"), order=2)


def test_multiply_accumulate_through_zeros():
    x = np.array([[0.5, 2.0, 0.0], [0.0, 0.0, 1.5], [1.2, -0.7, 0.0]])
    srcad.check_grad(multiply_accumulate, x, modes=("rev", "fwd"), order=2)
    srcad.check_grad(multiply_accumulate_columns, x, modes=("rev", "fwd"), order=2)


def weighted_running_max(x):
    return np.sum(np.maximum.accumulate(x) * np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]))


def test_running_maximum_ties_split_evenly():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 5.0])
    # y = [1, 3, 3, 3, 3, 5]: y[1] is x[1]'s; y[2], y[3] are x[1]'s and x[2]'s (half
    # each); y[4] is x[1]'s, x[2]'s and x[4]'s (a third each); y[5] is x[5]'s
    expected = [1.0, 2 + 4 / 2 + 8 / 2 + 16 / 3, 4 / 2 + 8 / 2 + 16 / 3, 0.0, 16 / 3, 32.0]
    np.testing.assert_allclose(srcad.grad(weighted_running_max)(x), expected)
    # forward mode moves each step with the same shares
    u = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0])
    _, t = srcad.jvp(lambda x: np.maximum.accumulate(x), (x,), (u,))
    np.testing.assert_allclose(t, [1.0, 10.0, 55.0, 55.0, 10110 / 3, 100000.0])


def test_running_minimum_ties_along_an_axis():
    x = np.array([[2.0, 1.0], [1.0, 1.0], [2.0, 0.5]])
    g = srcad.grad(lambda x: np.sum(np.minimum.accumulate(x, axis=0)))(x)
    # column 0: y = [2, 1, 1] (x[1] alone after the first); column 1: y = [1, 1, 0.5]
    np.testing.assert_allclose(g, [[1.0, 1.5], [2.0, 0.5], [0.0, 1.0]])


# ---- random shapes and axes ----


@settings(max_examples=15)
@given(
    method=st.sampled_from(
        [
            "np.add.reduce",
            "np.multiply.reduce",
            "np.maximum.reduce",
            "np.minimum.reduce",
            "np.logaddexp.reduce",
        ]
    ),  # fmt: skip
    shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3),
    keepdims=st.booleans(),
    data=st.data(),
)
def test_reduce_over_random_axes(method, shape, keepdims, data):
    axes = data.draw(
        st.none()
        | st.integers(-len(shape), len(shape) - 1)
        | st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(tuple)
    )
    x = np.random.default_rng(data.draw(st.integers(0, 2**16))).uniform(0.5, 1.5, shape)
    check(f"{method}(np.sin(x) + 2.0, axis={axes!r}, keepdims={keepdims})", x)


@settings(max_examples=15)
@given(
    method=st.sampled_from(
        [
            "np.add.accumulate",
            "np.multiply.accumulate",
            "np.maximum.accumulate",
            "np.minimum.accumulate",
        ]
    ),  # fmt: skip
    shape=array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    data=st.data(),
)
def test_accumulate_along_random_axes(method, shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(data.draw(st.integers(0, 2**16))).uniform(0.5, 1.5, shape)
    check(f"{method}(x * x, axis={axis})", x)


@settings(max_examples=15)
@given(
    method=st.sampled_from(
        ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "logaddexp"]
    ),  # fmt: skip
    first=array_shapes(min_dims=0, max_dims=2, max_side=3),
    second=array_shapes(min_dims=0, max_dims=2, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_outer_of_random_shapes(method, first, second, seed):
    rng = np.random.default_rng(seed)
    check(f"np.{method}.outer(x, y)", rng.uniform(0.5, 1.5, first), rng.uniform(0.5, 1.5, second))


# ---- what stays refused ----


def hypot_outer(a, b):
    return np.sum(np.hypot.outer(a, b))


def add_reduceat(x):
    return np.sum(np.add.reduceat(x, [0, 2]))


@pytest.mark.parametrize(
    "f, label", [(hypot_outer, "np.hypot.outer"), (add_reduceat, "np.add.reduceat")]
)
def test_other_methods_are_refused_by_name(f, label):
    with pytest.raises(srcad.TransformError, match=f"no adjoint rule for {label}"):
        srcad.grad(f)(A.copy(), A.copy()) if f is hypot_outer else srcad.grad(f)(A.copy())


# ---- in a loop: the recording plan predicted from the templates holds (strict) ----

LOOP_MASK = np.array([[True, False, True], [True, True, False]])


def reductions_in_a_loop(x, y):
    s = 0.0
    t = 0.0
    u = 0.0
    for _ in range(3):
        s = s + np.add.reduce(x * y, axis=None)
        t = t + np.add.reduce(x)
        u = u + np.sum(x * y, where=LOOP_MASK) + np.max(x, initial=0.0, where=LOOP_MASK)
    return s * np.sum(t * y) + u


def test_reductions_in_a_loop():
    x = np.linspace(0.2, 1.4, 6).reshape(2, 3)
    y = np.linspace(-1.0, 0.8, 6).reshape(2, 3)
    srcad.check_grad(reductions_in_a_loop, x, y, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(reductions_in_a_loop, x, y, wrt=(0, 1), modes=("rev", "fwd"), order=2)
