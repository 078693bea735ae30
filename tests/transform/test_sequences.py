"""Lists and tuples written inside NumPy calls that convert them to arrays are stacked,
so the derivative flows into their elements (reverse and forward mode, checked against
finite differences)."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -1.2, 2.0])


def array_of_numbers(x):
    a = x[0] * x[1]
    b = np.sin(x[2])
    return np.sum(np.array([a, b, 2.0]) ** 2)


def nested_matrix(x):
    m = np.array([[x[0], x[1]], [-x[1], x[2] ** 2]])
    return np.linalg.det(m)


def sum_of_list(x):
    return np.sum([x * 2.0, np.cos(x)]) + np.max((x[0], x[2]))


def asarray_of_rows(x):
    rows = np.asarray([x, x**2])
    return np.sum(rows[1] * rows[0]) + np.linalg.norm([x[0], 3.0])


def builtin_sum(x):
    return sum([x[0] * x[1], np.sin(x), 1.0]).sum()


def with_dtype(x):
    return np.sum(np.array([x[0], x[1]], dtype=np.float64) * np.array([1.0, 2.0]))


@pytest.mark.parametrize(
    "f", [array_of_numbers, nested_matrix, sum_of_list, asarray_of_rows, builtin_sum, with_dtype]
)
def test_stacked_displays_in_both_modes(f):
    srcad.check_grad(f, X, modes=("rev", "fwd"), order=2)


def test_the_generated_code_stacks():
    text = srcad.source(nested_matrix)
    assert "np.stack([np.stack([" in text or "xp.stack([xp.stack([" in text


def ragged(x):
    return np.sum(np.array([x, x[0]]))


def test_ragged_displays_fail_as_numpy_does():
    with pytest.raises(ValueError):
        ragged(X)
    with pytest.raises(ValueError):
        srcad.grad(ragged)(X)
