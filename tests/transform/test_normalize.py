"""Normalization: augmented assignment, redefinition, tuple unpacking, in-place aliasing."""

import numpy as np
import pytest

import srcad


def augmented(x, y):
    z = x * 2.0
    z += y
    z *= x
    z -= 1.0
    z /= 2.0
    z **= 2
    return np.sum(z)


def redefined(x):
    h = np.sin(x)
    h = h * x
    h = np.tanh(h)
    return np.sum(h)


def param_reassigned(x):
    x = x * 3.0
    x += 1.0
    return np.sum(x * x)


def unpacking(x, y):
    a, b = x * 2.0, y
    a, b = b, a
    n, m = x.shape
    return np.sum(a * b) * n + m


def aliased_update(x):
    y = x * 2.0
    z = y
    z += 1.0
    return np.sum(y * z)


def aliased_view_update(x):
    y = x * 2.0
    row = y[0]
    row += 1.0
    return np.sum(y)


def alias_not_read_later(x):
    y = x * 2.0
    z = y
    z += 1.0
    return np.sum(z * z)


def chained(x):
    a = b = x * 2.0
    return np.sum(a * b)


def with_docstring_and_pass(x):
    """A docstring is not code."""
    pass
    return np.sum(x)


@pytest.mark.parametrize(
    "fn, nargs",
    [(augmented, 2), (redefined, 1), (param_reassigned, 1), (unpacking, 2), (chained, 1),
     (alias_not_read_later, 1), (with_docstring_and_pass, 1)],
)  # fmt: skip
def test_against_finite_differences(fn, nargs):
    rng = np.random.default_rng(1)
    args = [rng.uniform(0.5, 1.5, size=(2, 3)) for _ in range(nargs)]
    srcad.check_grad(fn, *args, wrt=tuple(range(nargs)))


@pytest.mark.parametrize("fn", [aliased_update, aliased_view_update])
def test_inplace_update_of_shared_memory_is_refused(fn):
    with pytest.raises(srcad.TransformError, match="may share memory"):
        srcad.grad(fn)(np.ones((2, 3)))


def test_redefinitions_get_fresh_names():
    src = srcad.source(srcad.grad(redefined))
    assert "h_1 = h * x" in src and "h_2 = xp.tanh(h_1)" in src
