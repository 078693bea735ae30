"""What the gradient records (srcad/transform/analyses/tbr.py) for the loops jumps.py
leaves (srcad/transform/normalize/jumps.py): each program states the pushes its gradient
makes, counted on the tape, and is checked against central finite differences in both
modes and at second order, at the trip counts that matter (none, one, the full range, a
break at the first and at the last turn)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import srcad
from srcad.runtime.tape import counting_pushes

RNG = np.random.default_rng(19)


def pushes(f, *args, wrt=0):
    """The values the gradient of ``f`` pushes on its tape for ``args``."""
    derivative = srcad.grad(f, wrt=wrt)
    with counting_pushes() as pushed:
        derivative(*args)
    return pushed


def check(f, *args, wrt=0):
    """Gradients against central finite differences: reverse and forward mode, first and
    second order."""
    srcad.check_grad(f, *args, wrt=wrt, modes=("rev", "fwd"))
    srcad.check_grad(f, *args, wrt=wrt, modes=("rev", "fwd"), order=2)


def values(n, crossing=None, at=5.0):
    """``n`` values in [-1, 1], with ``at`` (far from any threshold) at ``crossing``."""
    x = RNG.uniform(-1.0, 1.0, size=n)
    if crossing is not None:
        x[crossing] = at
    return x


# ---- a for with a break: the index kept, nothing pushed per turn ----


def first_crossing(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 3.0:
            break
        s = s + np.sin(x[i]) * x[i]
    return s


BREAKS = [(1, None), (1, 0), (6, None), (6, 0), (6, 3), (6, 5)]


@pytest.mark.parametrize("n, crossing", BREAKS)
def test_a_break_pushes_nothing(n, crossing):
    x = values(n, crossing)
    assert pushes(first_crossing, x) == []
    check(first_crossing, x)


def test_a_break_keeps_its_loop_and_breaks_out():
    src = srcad.source(first_crossing)
    assert "while" not in src and "break" in src
    assert "for i in reversed(range(_trips))" in src
    assert "tape" not in src


def test_a_loop_that_never_runs():
    value, g = srcad.value_and_grad(first_crossing)(np.zeros(0))
    assert value == 0.0 and g.shape == (0,)


def test_the_pullback_of_a_break_can_be_called_twice():
    x = values(6, 3)
    out, pullback = srcad.vjp(first_crossing, x)
    first = pullback(1.0)[0]
    np.testing.assert_allclose(pullback(1.0)[0], first, rtol=0, atol=0)
    np.testing.assert_allclose(first, srcad.grad(first_crossing)(x), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 7), st.data())
def test_any_break_position_pushes_nothing(n, data):
    crossing = data.draw(st.one_of(st.none(), st.integers(0, n - 1)) if n else st.none())
    x = values(n, crossing)
    assert pushes(first_crossing, x) == []
    if n:
        srcad.check_grad(first_crossing, x, modes=("rev", "fwd"))


def two_exits(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 3.0:
            break
        s = s + np.sin(x[i])
        if x[i] < -3.0:
            break
        s = s + np.cos(x[i]) * x[i]
    return s


@pytest.mark.parametrize(
    "n, crossing, at", [(5, None, 5.0), (5, 2, 5.0), (5, 2, -5.0), (5, 4, -5.0)]
)
def test_each_break_has_its_own_flag(n, crossing, at):
    # one flag for both would leave the guard after the first break ambiguous where the
    # second one broke: it would be pushed every turn
    x = values(n, crossing, at)
    assert pushes(two_exits, x) == []
    check(two_exits, x)


# ---- values computed again from popped ones: Newton's a / x ----


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x


def newton_turns(a):
    x, turns = a, 0
    while np.abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
        turns += 1
    return turns


@pytest.mark.parametrize("a", [2.0, 0.3, 40.0])
def test_newton_pushes_one_value_per_turn(a):
    pushed = pushes(newton_sqrt, a)
    # x: a / x is computed again from the x popped back, not pushed beside it
    assert len(pushed) == newton_turns(a)
    check(newton_sqrt, a)


def test_a_recomputed_value_reads_what_the_pop_restored():
    src = srcad.source(newton_sqrt)
    backward = src.split(" in range(_trips):")[1]  # the backward loop
    assert src.count("tape.push(") == 1
    assert backward.index("x = tape.pop()") < backward.index("= a / x")
    assert pushes(newton_sqrt, 1.0) == []  # no turn at all (a kink there: no difference check)


# ---- continue ----


def skip_negatives(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        s = s + np.exp(x[i]) * x[i]
    return s


def skip_once_large(x):
    s = 0.0
    for i in range(x.shape[0]):
        if s > 1.0:
            continue
        s = s + x[i] * x[i]
    return s


def test_a_continue_on_a_recomputed_condition_pushes_nothing():
    for x in (np.array([0.3, -0.5, 0.7, -0.2]), np.array([-0.3]), np.array([0.4])):
        assert pushes(skip_negatives, x) == []
        check(skip_negatives, x)


def test_a_continue_on_data_the_loop_changes_pushes_its_decision_each_turn():
    x = np.array([0.9, 0.5, 0.7, -0.2])
    pushed = pushes(skip_once_large, x)
    # the guard's decision, one per turn (the first push saves the unassigned placeholder)
    assert len(pushed) == x.shape[0]
    assert pushed[0] is None and all(isinstance(p, (bool, np.bool_)) for p in pushed[1:])
    check(skip_once_large, x)


# ---- an early return inside a for ----


def first_large_return(x):
    for i in range(x.shape[0]):
        if x[i] > 2.0:
            return np.cos(x[i]) * x[0]
    return np.sum(np.sin(x))


@pytest.mark.parametrize("n, crossing", [(1, None), (1, 0), (5, None), (5, 0), (5, 2), (5, 4)])
def test_an_early_return_in_a_for_pushes_nothing(n, crossing):
    x = values(n, crossing)
    assert pushes(first_large_return, x) == []
    check(first_large_return, x)


# ---- nested loops, a break in the inner one ----


def inner_break(x, W):
    total = 0.0
    for i in range(x.shape[0]):
        h = x[i] * 1.0
        for _ in range(3):
            if np.sum(h) > 2.0:
                break
            h = np.tanh(W @ h)
        total = total + np.sum(h * h)
    return total


def inner_turns(x, W):
    """The inner turns that ran to their end, for each outer turn."""
    done = []
    for i in range(x.shape[0]):
        h, turns = x[i] * 1.0, 0
        for _ in range(3):
            if np.sum(h) > 2.0:
                break
            h = np.tanh(W @ h)
            turns += 1
        done.append(turns)
    return done


@pytest.mark.parametrize("rows", [[0.0], [2.5], [0.0, 2.5, 0.0, 2.5]])
def test_a_break_in_an_inner_loop_records_its_exit_once_per_outer_turn(rows):
    W = np.array([[0.9, 0.5], [0.4, 1.1]])
    x = RNG.uniform(-0.5, 0.5, size=(len(rows), 2)) + np.array(rows)[:, None] * [1.0, 0.5]
    pushed = pushes(inner_break, x, W, wrt=(0, 1))
    # per outer turn: h before it is overwritten, the inner loop's flag and trip count;
    # per inner turn that ran to its end: h (tanh's adjoint reads its operand's matmul)
    assert len(pushed) == 3 * len(rows) + sum(inner_turns(x, W))
    check(inner_break, x, W, wrt=(0, 1))


# ---- a while with a break ----


def halve_until(x):
    y = x * 4.0
    while np.max(np.abs(y)) > 0.1:
        if np.sum(y) < -3.0:
            break
        y = np.sin(y) * 0.5
    return np.sum(y * y)


def halvings(x):
    y, turns = x * 4.0, 0
    while np.max(np.abs(y)) > 0.1:
        if np.sum(y) < -3.0:
            break
        y = np.sin(y) * 0.5
        turns += 1
    return turns


@pytest.mark.parametrize(
    "x", [np.array([0.3, -0.7, 0.5]), np.array([-1.3, -0.7, -0.5]), np.array([0.01, 0.02])]
)
def test_a_while_with_a_break_pushes_what_its_turns_overwrite(x):
    # y, once per turn that ran to its end; the guard after the break is computed again
    pushed = pushes(halve_until, x)
    assert len(pushed) == halvings(x)
    assert all(isinstance(p, np.ndarray) for p in pushed)
    check(halve_until, x)


# ---- an rnn: one push per step, as before ----


def rnn(W, U, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_an_rnn_pushes_one_state_per_step(steps):
    W, U, xs = RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3, 2)), RNG.normal(size=(steps, 2))
    pushed = pushes(rnn, W, U, xs, wrt=(0, 1, 2))
    assert len(pushed) == steps
    assert all(p.shape == (3,) for p in pushed)
    if steps:
        check(rnn, W, U, xs, wrt=(0, 1, 2))


# ---- where a value is computed again ----


def read_a_turn_later(x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sin(v) * 2.0  # noqa: F821 (v of the turn before)
        v = x[i]  # noqa: F841
    return s


def test_a_value_read_on_the_next_turn_is_not_computed_again():
    # computing v = x[i] again in the backward turn would read x of the wrong turn
    check(read_a_turn_later, np.array([0.3, 0.5, 0.9]))


def overwritten_operand(x):
    s = 0.0
    y = x * 1.0
    for _ in range(3):
        c = np.cos(y)
        y = y * 0.5 + 0.1
        s = s + np.sum(c * y)
    return s


def test_a_value_whose_operand_changes_before_its_reader_is_pushed():
    # c = cos(y) is read after y changes: computing it again there would read the new y
    check(overwritten_operand, RNG.uniform(-1, 1, size=3))


# ---- elementwise functions: the guarded turns, vectorized ----


@srcad.elementwise
def capped(x, a):
    s = 0.0
    for k in range(4):
        if s > a:
            break
        s = s + x * k
    return s


@srcad.elementwise
def capped_or_doubled(x, a):
    s = 0.0
    for k in range(4):
        if s > a:
            break
        if s < -a:
            return s * 2.0
        s = s + x * k
    return s


def capped_sum(x, a):
    return np.sum(capped(x, a)) + np.sum(capped_or_doubled(x, a))


def test_an_elementwise_function_with_a_break():
    # each element's turns after its break do nothing (the kernel cannot break)
    x, a = np.array([0.1, 0.5, 2.0, -1.0]), np.array([0.2, 0.3, 1.0, 0.5])
    for f in (capped, capped_or_doubled):
        expected = [f.fun(xi, ai) for xi, ai in zip(x, a)]
        np.testing.assert_allclose(f(x, a), expected)
    srcad.check_grad(capped_sum, x, a, wrt=(0, 1), modes=("rev", "fwd"))


# ---- else clauses ----


def find_large(x):
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            return x[i] * 2.0
    else:
        return np.sum(x)


def break_in_an_else(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(2):
            s = s + x[i] * j
        else:
            if x[i] > 1.0:
                break  # (the outer loop's)
        s = s * 1.5
    return s


@pytest.mark.parametrize("f", [find_large, break_in_an_else])
@pytest.mark.parametrize("x", [np.array([0.5, 1.5, 0.2]), np.array([0.5, 0.7, 0.2])])
def test_else_clauses(f, x):
    # the else clause of a loop left by a return does not run (it once ran, its return
    # replacing the value); a break in an inner loop's else clause leaves the outer loop
    assert srcad.value_and_grad(f)(x)[0] == pytest.approx(f(x))
    check(f, x)
    assert pushes(f, x) == []


# ---- more shapes of jumps: values, both modes, second order, a pullback called twice ----


def arm_then_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            s = s * np.cos(x[i])
            break
        s = s + np.sin(x[i]) * x[i]
    return s


def break_and_continue(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < -0.5:
            continue
        s = s + x[i] * x[i]
        if s > 1.0:
            break
        s = s * 1.1
    return s


def return_from_two_loops(x, W):
    h = x * 1.0
    for i in range(3):
        for _j in range(2):
            h = np.tanh(W @ h)
            if np.sum(h) > 1.5:
                return np.sum(h * h) * (i + 1)
        h = h * 0.9
    return np.sum(h)


def return_in_while_in_for(x):
    s = 0.0
    for i in range(x.shape[0]):
        k = 0
        y = x[i] * 1.0
        while k < 3:
            y = np.sin(y) + 0.5
            if y > 1.2:
                return s + y
            k = k + 1
        s = s + y * y
    return s


def inner_while_break_outer_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        y = x[i] * 1.0
        while y < 2.0:
            y = y * 1.5 + 0.1
            if y < 0.0:
                break
        s = s + y
        if s > 5.0:
            break
    return s


def nested_continue(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            if x[i] > 0.7:
                continue
            s = s + x[i]
        s = s + np.sin(x[i]) * s
    return s


def two_continues(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < -0.5:
            continue
        t = np.exp(x[i])
        if t > 2.0:
            continue
        s = s + t * x[i]
    return s


def break_inside_branch_of_while(x):
    y = x * 1.0
    k = 0
    while k < 4:
        if np.sum(y) > 0:
            for _j in range(3):
                y = y * 0.8 + 0.05
                if np.max(y) < 0.3:
                    break
        else:
            y = y + 0.3
        k = k + 1
    return np.sum(y * y)


W2 = np.array([[0.9, 0.5], [0.4, 1.1]])
SHAPES = [
    (arm_then_break, (np.array([0.1, -0.3, 0.9, 0.2]),)),
    (arm_then_break, (np.array([0.1, -0.3]),)),
    (break_and_continue, (np.array([0.3, -0.9, 0.8, 0.7, 0.2]),)),
    (break_and_continue, (np.array([0.1, -0.9]),)),
    (return_from_two_loops, (np.array([0.3, 0.4]), W2)),
    (return_from_two_loops, (np.array([-0.3, -0.2]), W2)),
    (return_in_while_in_for, (np.array([0.1, -0.4, 0.3]),)),
    (return_in_while_in_for, (np.array([-1.3, -1.4]),)),
    (inner_while_break_outer_break, (np.array([0.3, 0.5, 0.2, 0.9]),)),
    (inner_while_break_outer_break, (np.array([-0.3, 0.5]),)),
    (nested_continue, (np.array([0.3, 0.9, -0.2, 0.5]),)),
    (two_continues, (np.array([0.3, 0.9, -0.7, 0.5, 0.2]),)),
    (break_inside_branch_of_while, (np.array([0.3, 0.9, 0.5]),)),
    (break_inside_branch_of_while, (np.array([-0.3, -0.9, 0.5]),)),
]


@pytest.mark.parametrize(
    "f, args", SHAPES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(SHAPES)]
)
def test_more_shapes_of_jumps(f, args):
    wrt = tuple(range(len(args)))
    value, grads = srcad.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*args))
    check(f, *args, wrt=wrt)
    _, pullback = srcad.vjp(f, *args)
    for first, again, direct in zip(pullback(1.0), pullback(1.0), grads):
        np.testing.assert_array_equal(first, again)
        np.testing.assert_allclose(first, direct, rtol=1e-10, atol=1e-12)


def test_two_continues_on_recomputed_conditions_push_nothing():
    assert pushes(two_continues, np.array([0.3, 0.9, -0.7, 0.5, 0.2])) == []
    assert pushes(break_and_continue, np.array([0.3, -0.9, 0.8, 0.7, 0.2])) == []
