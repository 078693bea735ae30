"""A local variable bound once to a function from outside (``act = np.tanh``, ``s, c =
np.sin, np.cos``, ``h = helper``) is called as that function, in both modes and at second
order (it was "no adjoint rule for act" until stop 30); one bound on a branch, or to what
a call returns, is refused saying so."""

import numpy as np
import pytest

import srcad

X3 = np.array([0.5, -1.25, 2.0])


def helper(v):
    return np.exp(-v * v)


def activation_by_name(x):
    act = np.tanh
    return np.sum(act(x) * x)


def two_by_unpacking(x):
    s, c = np.sin, np.cos
    return np.sum(s(x) * c(x))


def user_function_by_name(x):
    h = helper
    total = 0.0
    for k in range(2):
        total = total + np.sum(h(x * (k + 1)))
    return total


def method_of_a_module(x):
    norm = np.linalg.norm
    return norm(x) ** 2 + np.sum(x)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize(
    "f",
    [activation_by_name, two_by_unpacking, user_function_by_name, method_of_a_module],
    ids=lambda f: f.__name__,
)
def test_a_local_bound_once_to_a_function_is_that_function(f, mode):
    srcad.check_grad(f, X3.copy(), modes=(mode,))


def test_second_order_through_a_local_function():
    H = srcad.hessian(activation_by_name)(X3.copy())
    t = np.tanh(X3)
    d1, d2 = 1 - t * t, -2 * t * (1 - t * t)
    np.testing.assert_allclose(H, np.diag(2 * d1 + X3 * d2), rtol=1e-10)


def chosen_on_a_branch(x):
    act = np.tanh if x[0] > 0 else np.sin
    return np.sum(act(x))


def made_by_a_call(x):
    act = getattr(np, "tanh".lower())
    return np.sum(act(x))


@pytest.mark.parametrize("f", [chosen_on_a_branch, made_by_a_call], ids=lambda f: f.__name__)
def test_a_local_function_known_only_at_run_time_is_refused(f):
    with pytest.raises(srcad.TransformError, match="held in a local variable"):
        srcad.grad(f)(X3.copy())
