"""A tuple grown in a loop (normalize/grown_tuples.py): ``acc = ()`` then ``acc = acc +
(h,)`` or ``acc += (h,)`` on each turn becomes a list built by appends, where nothing reads
it differently (index, ``len``, ``sum``, NumPy, a loop over it, ``return``). Checked against
finite differences in both modes and at second order."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.5, 0.9])
W = np.array([[0.4, -0.2, 0.1], [0.3, 0.5, -0.4], [-0.1, 0.2, 0.3]])


def hidden_states(x, W):
    # the form of recurrent code that keeps every state (all_hidden + (h,))
    h = x
    states = ()
    for _ in range(3):
        h = np.tanh(W @ h)
        states = states + (h,)
    return np.sum(np.stack(states) ** 2) + np.sum(states[-1] * states[0]) * len(states)


def augmented(x, W):
    acc = (x,)
    for k in range(2):
        acc += (np.sin(W @ x) * (k + 1.0), x * k)
    total = 0.0
    for v in acc:
        total = total + np.sum(v * v)
    return total + np.sum(sum(acc))


def until_small(x, W):
    # how many elements depends on the data: the list's length goes on a tape
    acc = ()
    v = x
    while np.sum(v**2) > 0.05:
        v = 0.5 * np.tanh(W @ v)
        acc = acc + (v,)
    return np.sum(np.concatenate(acc)) if len(acc) > 0 else np.sum(x)


def grown_in_a_branch(x, W):
    acc = ()
    for k in range(4):
        if k % 2 == 0:
            acc = acc + (np.cos(W @ x) * k,)
    return np.sum(acc[0] + acc[1])


@pytest.mark.parametrize("f", [hidden_states, augmented, until_small, grown_in_a_branch])
def test_a_tuple_grown_in_a_loop(f):
    srcad.check_grad(f, X, W, wrt=(0, 1), modes=("rev", "fwd"), order=2)


def states_returned(x, W):
    h = x
    out = ()
    for _ in range(2):
        h = np.tanh(W @ h)
        out = out + (h,)
    return out


def test_a_grown_tuple_returned_is_a_tuple():
    out, pullback = srcad.vjp(states_returned, X, W)
    assert type(out) is tuple and len(out) == 2
    np.testing.assert_allclose(out[1], states_returned(X, W)[1])
    dx, dW = pullback((np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(dx, srcad.grad(first_state)(X, W))


def first_state(x, W):
    return np.sum(states_returned(x, W)[0])


def passed_to_a_helper(x):
    acc = ()
    for k in range(2):
        acc = acc + (x * k,)
    return np.sum(first_of(acc))


def first_of(t):
    return t[0] + t[1]


def grown_while_iterated(x):
    acc = (x, x * 2)
    for v in acc:
        acc = acc + (v,)
        if len(acc) > 3:
            break
    return np.sum(acc[-1])


@pytest.mark.parametrize("f", [passed_to_a_helper, grown_while_iterated])
def test_other_grown_tuples_stay_tuples(f):
    # a helper may tell a list from a tuple, and a list grown while iterated goes on:
    # left as tuples, refused as before (a container of differentiable values)
    with pytest.raises(srcad.TransformError, match="container"):
        srcad.grad(f)(X)


def read_while_grown(x, W):
    acc = (x,)
    for _ in range(2):
        acc = acc + (np.sin(W @ acc[-1]),)
    return np.sum(acc[-1])


def test_a_grown_tuple_read_in_its_loop_is_refused_by_name():
    # as a list built in the function is (docs/supported.md)
    for mode in ("rev", "fwd"):
        with pytest.raises(srcad.TransformError, match="while it is still being appended to"):
            srcad.check_grad(read_while_grown, X, W, wrt=(0, 1), modes=(mode,))


def test_the_generated_code_appends():
    text = srcad.source(srcad.grad(hidden_states, wrt=(0, 1)), example_args=(X, W))
    assert "append(states, h)" in text
