"""Functions defined inside the differentiated function: inlined at their calls."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(17)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def with_lambda(x, W):
    act = lambda v: np.tanh(v) * 2.0  # noqa: E731
    return np.sum(act(W @ x) + act(x[0]))


def with_def(x, W):
    def layer(h, M):
        z = M @ h
        return np.sin(z) + h[0]

    h = layer(x, W)
    return np.sum(layer(h, W.T @ W) ** 2)


def closure_over_local(x):
    scale = np.sum(x * x)

    def scaled(v):
        return v * scale

    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sum(scaled(x[i]))
    return total


def used_as_value(x):
    f = lambda v: v * 2.0  # noqa: E731
    g = f
    return np.sum(g(x))


def early_return_inside(x):
    def clipped(v):
        if np.sum(v) > 0:
            return v
        return v * 0.0

    return np.sum(clipped(x))


@pytest.mark.parametrize(
    "fn, args, wrt",
    [
        (with_lambda, (vec(3), vec(3, 3)), (0, 1)),
        (with_def, (vec(3), vec(3, 3)), (0, 1)),
        (closure_over_local, (vec(4),), (0,)),
    ],
)
def test_against_finite_differences(fn, args, wrt):
    srcad.check_grad(fn, *args, wrt=wrt)


def test_unsupported_local_functions_are_refused():
    with pytest.raises(srcad.TransformError, match="other than by calling it"):
        srcad.grad(used_as_value)(vec(3))
    with pytest.raises(srcad.TransformError, match="returns early"):
        srcad.grad(early_return_inside)(vec(3))
