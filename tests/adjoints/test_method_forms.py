"""Array methods with the rules of their NumPy functions: ``.clip``, ``.repeat``,
``.take`` and ``.round`` (refused as "no adjoint rule for method" until stop 32)."""

import numpy as np
import pytest

import srcad

X = np.array([[0.3, -0.7, 1.1], [0.2, 0.9, -0.4]])


def clipped(x):
    return np.sum(x.clip(-0.5, 0.5) ** 2 + x)


def clipped_below(x):
    return np.sum(np.sin(x).clip(0.0) * x)


def repeated(x):
    return np.sum(x.repeat(2, axis=1) ** 2)


def repeated_per_row(x):
    return np.sum(x.repeat([1, 2], axis=0).reshape(-1) * np.arange(9.0))


def taken(x):
    return np.sum(x.take([2, 0], axis=1) ** 3)


def taken_flat(x):
    return np.sum(x.take([5, 1, 1]) ** 2)


def rounded(x):
    return np.sum(x.round(1) * x)


CASES = [clipped, clipped_below, repeated, repeated_per_row, taken, taken_flat, rounded]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_method_forms(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"), order=2)


def test_the_method_is_the_function():
    # the same numbers as the function form, and round's gradient is zero
    g = srcad.grad(clipped)(X.copy())
    assert np.allclose(g, 2 * np.clip(X, -0.5, 0.5) * ((X > -0.5) & (X < 0.5)) + 1.0)
    assert np.allclose(srcad.grad(rounded)(X.copy()), X.round(1))
