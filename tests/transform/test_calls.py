"""Calls to user functions: each callee is transformed into its own forward/backward pair."""

import functools

import helpers_elsewhere as elsewhere
import numpy as np
import pytest

import srcad
from srcad.runtime.tape import counting_pushes

RNG = np.random.default_rng(3)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def layer(W, h, scale=1.0):
    return np.tanh(W @ h) * scale


def mlp(W1, W2, x):
    h = layer(W1, x)
    return np.sum(layer(W2, h, scale=2.0) ** 2)


def power(x, n):
    if n == 0:
        return x * 0.0 + 1.0
    return x * power(x, n - 1)


def recursive(x, n):
    return np.sum(power(x, n))


def collatz_depth(x, v):
    """Recursion whose depth depends on data."""
    if v <= 1.0:
        return x
    return collatz_depth(np.sin(x) + x * 0.5, v / 2.0)


def data_dependent_recursion(x, v):
    return np.sum(collatz_depth(x, v))


def make_scaled(c):
    def scaled(v):
        return np.sin(v) * c

    return scaled


SCALED = make_scaled(np.array([3.0, 1.0, -2.0]))  # a closure over an array
HALF = functools.partial(layer, scale=0.5)


def closure_and_partial(x, W):
    return np.sum(SCALED(x) + HALF(W, x))


def shifted(x, shift, scale):
    return np.sin(x) * scale + shift


BOUND = functools.partial(shifted, shift=0.25, scale=2.0)


def keyword_bound_partial(x):
    # the partial's keyword fills a parameter with no default; the call's keyword
    # replaces the partial's (refused at stop 27: "missing a required argument")
    return np.sum(BOUND(x) * BOUND(x, scale=-1.0))


def test_a_keyword_bound_partial_in_both_modes_and_at_second_order():
    srcad.check_grad(keyword_bound_partial, vec(3), modes=("rev", "fwd"), order=2)


def other_module(W, x, b):
    return np.sum(elsewhere.softplus(elsewhere.affine(W, x, b=b)))


class Model:
    def __init__(self, W):
        self.W = W

    def apply(self, x):
        return np.tanh(self.W @ x)


MODEL = Model(RNG.uniform(-1, 1, size=(2, 3)))


def bound_method(x):
    return np.sum(MODEL.apply(x) ** 2)


def helper_in_loop(W, xs):
    h = np.zeros(3)
    for t in range(xs.shape[0]):
        h = layer(W, h + xs[t])
    return np.sum(h)


def helper_in_branch(x):
    if np.sum(x) > 0:
        y = elsewhere.softplus(x)
    else:
        y = layer(np.eye(x.shape[0]), x)
    return np.sum(y)


def nested_helpers(x):
    return np.sum(elsewhere.softplus(layer(np.eye(3), x, 3.0)))


def inactive_argument(x, W):
    # only x is differentiated: the helper's W stays a constant to it
    return np.sum(layer(W, x))


def calls_bad_helper(x):
    return np.sum(elsewhere.bad_helper(x))


CASES = [
    (mlp, (vec(4, 3), vec(2, 4), vec(3)), (0, 1, 2)),
    (recursive, (vec(3), 3), (0,)),
    (recursive, (vec(3), 0), (0,)),
    (data_dependent_recursion, (vec(3), 20.0), (0,)),
    (data_dependent_recursion, (vec(3), 0.5), (0,)),
    (closure_and_partial, (vec(3), vec(3, 3)), (0, 1)),
    (other_module, (vec(2, 3), vec(3), vec(2)), (0, 1, 2)),
    (bound_method, (vec(3),), (0,)),
    (helper_in_loop, (vec(3, 3), vec(4, 3)), (0, 1)),
    (helper_in_branch, (np.array([0.5, 0.2, 0.1]),), (0,)),
    (helper_in_branch, (np.array([-0.5, 0.2, 0.1]),), (0,)),
    (nested_helpers, (vec(3),), (0,)),
    (inactive_argument, (vec(3), vec(2, 3)), (0,)),
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_against_finite_differences(fn, args, wrt):
    srcad.check_grad(fn, *args, wrt=wrt)


def test_callee_is_transformed_once_and_shared():
    from srcad.transform import cache

    srcad.grad(mlp, wrt=(0, 1, 2))(vec(4, 3), vec(2, 4), vec(3))
    srcad.value_and_grad(mlp, wrt=(0, 1, 2))(vec(4, 3), vec(2, 4), vec(3))
    before = cache.builds
    srcad.grad(mlp, wrt=(0, 1, 2))(vec(4, 3), vec(2, 4), vec(3))
    srcad.value_and_grad(mlp, wrt=(0, 1, 2))(vec(4, 3), vec(2, 4), vec(3))
    assert cache.builds == before


def test_generated_source_calls_the_callees_pair():
    src = srcad.source(srcad.grad(mlp, wrt=(0, 1, 2)))
    assert "layer_vjp.forward(W1, x)" in src
    assert "layer_vjp.forward(W2, h, scale=2.0)" in src
    assert "layer_vjp.backward(" in src


def test_residuals_of_a_call_in_a_loop_are_pushed_once_per_iteration():
    W, xs = vec(3, 3), vec(5, 3)
    with counting_pushes() as pushed:
        srcad.grad(helper_in_loop)(W, xs)
    # per step: the call's residuals (they hold what the callee's backward needs of h), and
    # h, whose shape reduces the gradient of h + xs[t] (it may change from step to step:
    # test_settle.py, reshaped_in_loop)
    assert len(pushed) == 2 * xs.shape[0]


def test_errors_inside_a_callee_point_into_the_callee():
    with pytest.raises(srcad.TransformError) as info:
        srcad.grad(calls_bad_helper)(np.ones(3))
    assert info.value.filename == elsewhere.__file__
    assert "'with' statements" in str(info.value)


class Net:
    def __init__(self, W, scale):
        self.W = W
        self.scale = scale

    def loss(self, x, target):
        h = np.tanh(self.W @ x) * self.scale
        return np.sum((h - target) ** 2)


def test_gradient_of_a_bound_method_reading_self():
    net = Net(vec(2, 3), 1.5)
    x, target = vec(3), vec(2)
    g = srcad.grad(net.loss)(x, target)
    h = np.tanh(net.W @ x) * 1.5
    expected = net.W.T @ (2 * (h - target) * 1.5 * (1 - np.tanh(net.W @ x) ** 2))
    np.testing.assert_allclose(g, expected)
    gx, gt = srcad.grad(net.loss, wrt=("x", "target"))(x, target)
    np.testing.assert_allclose(gt, -2 * (h - target))
    out, pullback = srcad.vjp(net.loss, x, target)
    assert len(pullback(1.0)) == 2


def through_local_object(model, x):
    h = model.apply(x)
    return np.sum(model.apply(h * 2.0) ** 2)


class Square:
    def apply(self, v):
        return v * v * self.W[0, 0]

    W = np.array([[1.5]])


def test_methods_of_objects_passed_in():
    model = Model(vec(3, 3))
    srcad.check_grad(through_local_object, model, vec(3), wrt=1)
    # another class behind the same call: its own method is transformed
    srcad.check_grad(through_local_object, Square(), vec(3), wrt=1)
    src = srcad.source(srcad.grad(through_local_object, wrt=1))
    assert "apply_vjp.forward(model, x)" in src


def total(*terms):
    return sum(terms) * 0.5


def stacked_mean(scale, *rows):
    return np.mean(np.stack(rows), axis=0) * scale


def star_args(x, y):
    s = total(np.sin(x), y * y, x * y)
    return np.sum(s + stacked_mean(2.0, x, np.cos(y)))


def test_helpers_with_star_args():
    srcad.check_grad(star_args, vec(3), vec(3), wrt=(0, 1))
