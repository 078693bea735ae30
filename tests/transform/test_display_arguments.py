"""Tuple and list displays passed to a helper of the user's, element by element
(srcad/transform/normalize/display_arguments.py), and a helper's several results taken
into one name (normalize/helper_results.py): the recurrent cell written as most NumPy
models write it. Both modes, second order, against central differences."""

import numpy as np
import pytest
from test_third_order_rules import check_reverse_three_times

import srcad

X = np.array([0.3, -0.2, 0.5])
W = np.array([[0.5, -0.2, 0.1], [0.1, 0.3, -0.4], [0.2, 0.0, 0.25]])


def cell(x, state):
    h, c = state
    c2 = np.tanh(W @ x + h) * 0.5 + c * 0.5
    return np.sin(c2) * h, c2


def rnn(x):
    state = (x * 0.1, x * 0.2)
    for _ in range(3):
        state = cell(x, state)
    h, c = state
    return np.sum(h * c)


def rnn_unpacked(x):
    h, c = x * 0.1, x * 0.2
    for _ in range(3):
        h, c = cell(x, (h, c))
    return np.sum(h * c)


def list_display(x):
    h, c = cell(x, [np.cos(x), x])
    return np.sum(h + c**2)


def nested(p):
    (a, b), c = p
    return a * b + np.sin(c)


def nested_display(x):
    return np.sum(nested(((x, x * 2.0), np.cos(x))))


def summed(parts, k):
    total = 0.0
    for p in parts:
        total = total + np.sum(p**k) / len(parts)
    return total


def with_a_constant_and_a_number(x):
    return summed((x, np.sin(x), np.ones(3)), 2) + summed([x * 0.5], 3)


def twice(x):
    # the same helper with a display and with arrays: two derivatives
    return np.sum(cell(x, (x, x))[0]) + np.sum(cell(np.cos(x), (x * 0.5, np.sin(x)))[1])


def fold(x):
    total = 0.0
    for k in range(2):
        total = total + nested(((x[k], x[k + 1]), x[2]))
    return total


CASES = [rnn, rnn_unpacked, list_display, nested_display, with_a_constant_and_a_number, twice, fold]


@pytest.mark.parametrize("f", CASES)
def test_a_display_passed_to_a_helper(f):
    # was: "the gradient (tangent) flows into a list or expression here" in both modes
    srcad.check_grad(f, X, modes=("rev", "fwd"), order=2)


def test_three_times_through_a_display_passed_to_a_helper():
    check_reverse_three_times(rnn, (X,))


def test_the_rnn_gradient_matches_a_hand_written_one():
    def by_hand(x):
        h, c = x * 0.1, x * 0.2
        hs = []
        for _ in range(3):
            a = np.tanh(W @ x + h)
            c2 = a * 0.5 + c * 0.5
            hs.append((h, c, a, c2))
            h, c = np.sin(c2) * h, c2
        dh, dc = c.copy(), h.copy()
        dx = np.zeros_like(x)
        for h0, _c0, a, c2 in reversed(hs):
            dc2 = dc + dh * np.cos(c2) * h0
            dh0 = dh * np.sin(c2)
            da = dc2 * 0.5 * (1 - a * a)
            dx += W.T @ da
            dh, dc = dh0 + da, dc2 * 0.5
        return dx + dh * 0.1 + dc * 0.2

    np.testing.assert_allclose(srcad.grad(rnn)(X), by_hand(X), rtol=1e-12)


def reshaped(x, shape):
    return np.reshape(x, shape)


def indexed(x, where):
    return x[where]


def reduced(x, axes):
    return np.sum(x, axis=axes)


def stacked(parts):
    return np.stack(parts)


def joined(parts):
    return np.concatenate(parts)


def as_array(parts):
    return np.asarray(parts)


def used_whole(x):
    m = np.reshape(x, (1, 3)) * np.ones((2, 1))
    return (
        np.sum(reshaped(x, (3, 1)) ** 2)
        + np.sum(indexed(m, (0, slice(None))) ** 3)
        + np.sum(reduced(m, (0, 1)) ** 2)
    )


def test_a_display_the_helper_uses_whole_stays_a_display():
    # a shape, an index, axes: the helper does not take its parameter apart
    srcad.check_grad(used_whole, X, modes=("rev", "fwd"), order=2)


def summed_up(parts):
    return sum(parts) * len(parts)


def test_a_display_stacked_concatenated_or_summed_by_the_helper():
    def f(x):
        return (
            np.sum(stacked((x, np.sin(x))) ** 2)
            + np.sum(joined([x, x**2]))
            + np.sum(summed_up((np.cos(x), x)))
        )

    srcad.check_grad(f, X, modes=("rev", "fwd"), order=2)


def test_a_display_of_differentiable_values_a_helper_uses_whole_is_refused():
    def f(x):
        return np.sum(as_array((x, np.sin(x))))

    with pytest.raises(srcad.TransformError, match="flows into a list"):
        srcad.grad(f)(X)


def test_a_starred_display_keeps_its_meaning():
    def head(items):
        return items[0]

    def f(x):
        rest = [x, x]
        return np.sum(head((*rest, x)))

    with pytest.raises(srcad.TransformError):
        srcad.grad(f)(X)
