"""Lists and tuples written inside NumPy calls that convert them to arrays are stacked,
so the derivative flows into their elements (reverse and forward mode, checked against
finite differences)."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

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


def mixture_log_likelihood(x):
    # the usual mixture model's line: logsumexp of a list of per-component log densities
    first = norm.logpdf(x, loc=0.5, scale=1.2) + np.log(0.3)
    second = norm.logpdf(x, loc=[x[0], -1.0, 0.2], scale=[2.0, x[1] ** 2 + 0.5, 1.0])
    return np.sum(logsumexp([first, second + np.log(0.7)], axis=0))


def operands_of_any_op(x):
    m = np.maximum([x, np.cos(x)], 0.1)
    w = np.where(x > 0, [x, x**2], 0.5)
    v = np.dot(np.array([[1.0, 2.0], [0.5, -1.0]]), [x[0], x[2] * x[1]])
    c = np.clip((x, -x), -1.5, 1.5)
    return np.sum(m * w) + np.sum(v**2) + np.sum(c[1]) + np.polyval([x[0], 1.0, x[1]], 0.7)


@pytest.mark.parametrize(
    "f",
    [
        array_of_numbers, nested_matrix, sum_of_list, asarray_of_rows, builtin_sum, with_dtype,
        mixture_log_likelihood, operands_of_any_op,
    ],
)  # fmt: skip
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


def sequences_and_shapes(x):
    # a sequence of arrays stays one (np.concatenate's rule takes it); a shape written with
    # local names is not stacked (np.reshape's newshape, np.sum's axis)
    n, m = 1, x.size
    joined = np.concatenate([x, x**2])
    return np.sum(np.reshape(joined, (n * 2, m)), axis=(n - 1,)) @ np.ones(m)


def test_sequences_and_shapes_are_left_as_written():
    srcad.check_grad(sequences_and_shapes, X, modes=("rev", "fwd"), order=2)
    text = srcad.source(sequences_and_shapes)
    assert "stack" not in text


def test_the_display_an_op_converts_is_stacked_in_the_generated_code():
    text = srcad.source(mixture_log_likelihood)
    assert "stack([first, second + xp.log(0.7)])" in text


def list_names(x):
    # a list the function builds, passed where NumPy converts it (refused until stop 27:
    # "np.sum receives the list 'xs'; turn it into an array first")
    xs = [x, np.sin(x)]
    lps = []
    for k in range(3):
        lps.append(np.log(0.2 + 0.3 * k) - (x - k) ** 2)
    rows = np.array(xs)
    return np.sum(xs) + np.sum(logsumexp(lps, axis=0)) + np.sum(np.mean(lps, axis=0) * rows[1])


def comprehension_summed(x):
    return np.sum([v * 2.0 + np.sin(v) for v in x]) + np.max([np.sum(x**2), 1.0])


@pytest.mark.parametrize("f", [list_names, comprehension_summed])
def test_lists_passed_to_numpy_and_scipy_ops_are_stacked(f):
    srcad.check_grad(f, X, modes=("rev", "fwd"), order=2)
