"""The recording plan and the adjoints a loop carries settle (srcad/transform/settle.py,
srcad/transform/reverse_control.py), or srcad says it failed: never a gradient from code
generated under assumptions that did not hold."""

import numpy as np
import pytest

import srcad
import srcad.transform.settle as settle
from srcad.runtime.tape import counting_pushes


def rotation(x):
    """Eleven names handed on one place per turn: the adjoint reaches ``x`` only after
    the backward loop body has been generated once per name."""
    a = x * 1.0
    b = x * 2.0
    c = x * 3.0
    d = x * 4.0
    e = x * 5.0
    f = x * 6.0
    g = x * 7.0
    h = x * 8.0
    i = x * 9.0
    j = x * 10.0
    k = x * 11.0
    for _ in range(12):
        z = a * 1.5
        a = b
        b = c
        c = d
        d = e
        e = f
        f = g
        g = h
        h = i
        i = j
        j = k
        k = z
    return np.sum(a)


def broadcast_rotation(x, s):
    """The same with every name broadcast against ``s``: loose adjoints handed on too."""
    a = x * 1.0
    b = x * 2.0
    c = x * 3.0
    d = x * 4.0
    e = x * 5.0
    f = x * 6.0
    g = x * 7.0
    h = x * 8.0
    i = x * 9.0
    j = x * 10.0
    for _ in range(12):
        z = np.sin(a) + s
        a = b + s
        b = c + s
        c = d + s
        d = e + s
        e = f + s
        f = g + s
        g = h + s
        h = i + s
        i = j + s
        j = z
    return np.sum(a)


def while_rotation(x, s):
    a = x * 1.0
    b = x * 2.0
    c = x * 3.0
    d = x * 4.0
    e = x * 5.0
    f = x * 6.0
    g = x * 7.0
    h = x * 8.0
    i = x * 9.0
    j = x * 10.0
    t = 0
    while np.sum(a) < 1e6 and t < 12:
        z = np.sin(a) * s
        a = b * s
        b = c * s
        c = d * s
        d = e * s
        e = f * s
        f = g * s
        g = h * s
        h = i * s
        i = j * s
        j = z
        t = t + 1
    return np.sum(a)


def squash(v, t):
    if t == 0:
        return np.sum(v, keepdims=True)
    return v * 1.0


def reshaped_in_loop(x, c):
    """``h`` has shape (1,) after the first turn and (3,) after the second: the gradient
    of ``h + c`` reduced to ``h``'s shape needs ``h`` as it was on each turn."""
    h = x
    for t in range(2):
        h = squash(h + c, t)
    return np.sum(h * h)


def branch_local(x):
    """``t`` is needed by its own branch's backward code, which runs while ``t`` still
    holds it: nothing is recorded, and the plan settles at once."""
    if np.sum(x) > 0:
        t = x * 2.0
        y = np.sin(t)
    else:
        t = x * 3.0
        y = np.cos(t)
    return np.sum(y * y)


X = np.array([0.3, -0.7])
S = np.array([[0.9], [1.1], [1.05]])


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize(
    "fn, args",
    [(rotation, (X,)), (broadcast_rotation, (X, S)), (while_rotation, (X, S))],
    ids=["rotation", "broadcast_rotation", "while_rotation"],
)
def test_adjoints_handed_round_a_loop_reach_the_input(fn, args, order):
    wrt = tuple(range(len(args)))
    srcad.check_grad(fn, *args, wrt=wrt, order=order, modes=("rev", "fwd"))


def test_rotation_gradient_is_not_zero():
    # (before the loop's backward body was generated until it settled: 0, silently)
    assert np.allclose(srcad.grad(rotation)(X), 3.0)


def test_rotation_pushes_nothing():
    with counting_pushes() as pushed:
        srcad.grad(rotation)(X)
    assert pushed == []


@pytest.mark.parametrize("order", [1, 2])
def test_a_name_whose_shape_changes_in_a_loop_is_recorded(order):
    x, c = np.array([0.3]), np.array([0.5, -0.2, 0.9])
    srcad.check_grad(reshaped_in_loop, x, c, wrt=(0, 1), order=order, modes=("rev", "fwd"))


def test_a_name_whose_shape_changes_in_a_loop_is_pushed_each_turn():
    x, c = np.array([0.3]), np.array([0.5, -0.2, 0.9])
    # (before: 15 instead of 45, from the shape of the last h)
    assert np.allclose(srcad.grad(reshaped_in_loop)(x, c), 45.0)
    with counting_pushes() as pushed:
        srcad.grad(reshaped_in_loop)(x, c)
    # per turn: h (its shape reduces the gradient of h + c) and the call's residuals
    assert len(pushed) == 2 * 2


def test_a_plan_reading_only_what_its_branch_keeps_settles_in_one_round(monkeypatch):
    plans = []

    def counted(*args):
        plans.append(original(*args))
        return plans[-1]

    original = settle.plan_recording
    monkeypatch.setattr(settle, "plan_recording", counted)
    srcad.check_grad(branch_local, X)
    assert len(plans) == 1
    assert not plans[0].pushed and not plans[0].recomputed


def needs_two_rounds(x, c):
    h = x
    for t in range(2):
        h = squash(h + c, t)
    return np.sum(h * h)


def test_a_plan_that_does_not_settle_raises(monkeypatch):
    monkeypatch.setattr(settle, "_ROUNDS", 1)
    with pytest.raises(srcad.errors.InternalError) as info:
        srcad.grad(needs_two_rounds)(np.array([0.3]), np.array([0.5, -0.2, 0.9]))
    message = str(info.value)
    assert "could not settle what to record for needs_two_rounds" in message
    assert "test_settle.py:" in message and "please report it" in message
