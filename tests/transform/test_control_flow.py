"""Control flow in reverse mode, against central finite differences; the tape, counted."""

import control_flow_functions as cf
import numpy as np
import pytest

import srcad
from srcad.runtime.tape import counting_pushes

RNG = np.random.default_rng(7)


def vec(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape)


CASES = [
    (cf.branch_on_data, (np.array([0.3, 0.5, 0.2]),), (0,)),
    (cf.branch_on_data, (np.array([-0.3, -0.2, 0.1]),), (0,)),
    (cf.branch_on_data, (np.array([-2.0, -0.5, 0.1]),), (0,)),
    (cf.branch_on_static, (vec(3), 3), (0,)),
    (cf.branch_on_static, (vec(3), 0), (0,)),
    (cf.ternary, (np.array([0.3, 0.5]),), (0,)),
    (cf.ternary, (np.array([-0.3, -0.5]),), (0,)),
    (cf.range_loop, (vec(8), 1, 7, 2), (0,)),
    (cf.range_loop, (vec(8), 6, 0, -1), (0,)),
    (cf.shape_bound_loop, (vec(3),), (0,)),
    (cf.rows, (vec(4, 3), vec(3)), (0, 1)),
    (cf.enumerate_rows, (vec(4, 3),), (0,)),
    (cf.zipped, (vec(4, 3), vec(3, 3)), (0, 1)),
    (cf.over_tuple, (vec(3, 3), vec(2, 3), vec(3)), (0, 1, 2)),
    (cf.until_tolerance, (vec(4),), (0,)),
    (cf.with_break, (np.array([0.3, 0.4, -0.1, 0.9]),), (0,)),
    (cf.with_break, (np.array([-0.3, 0.4]),), (0,)),
    (cf.with_continue, (np.array([0.3, -0.4, -0.1, 0.9]),), (0,)),
    (cf.early_returns, (np.array([0.9, 0.8]),), (0,)),
    (cf.early_returns, (np.array([0.1, -0.8, 0.2]),), (0,)),
    (cf.early_returns, (np.array([0.1, -0.2, 0.2]),), (0,)),
    (cf.loop_else, (np.array([0.3, 0.5, 0.7, 0.2]),), (0,)),
    (cf.loop_else, (np.array([0.3, 1.8, 0.7, 0.2]),), (0,)),
    (cf.rnn, (vec(3, 3), vec(3, 2), vec(3), vec(5, 2), vec(3)), (0, 1, 2, 3, 4)),
    (cf.nested, (vec(3, 2), vec(2, 2)), (0, 1)),
    (cf.zero_iterations, (vec(3), 0), (0,)),
    (cf.zero_iterations, (vec(3), 3), (0,)),
    (cf.while_loop_counter, (vec(3), 0), (0,)),
    (cf.while_loop_counter, (vec(3), 4), (0,)),
    (cf.accumulate_in_loop, (vec(3, low=0.5),), (0,)),
    # found by a random-program run: ``b = b`` once doubled the incoming gradient
    (cf.self_copies_in_loop, (vec(3), vec(3)), (0, 1)),
    (cf.scalar_from_loop_times_array, (vec(3), np.array([0.1, 0.2, 0.3]), vec(3)), (0, 1)),
]


@pytest.mark.parametrize(
    "fn, args, wrt", CASES, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)]
)
def test_against_finite_differences(fn, args, wrt):
    srcad.check_grad(fn, *args, wrt=wrt)


@pytest.mark.parametrize(
    "fn, args, wrt", CASES, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CASES)]
)
def test_vjp_agrees_and_can_be_called_twice(fn, args, wrt):
    grads = srcad.grad(fn, wrt=wrt)(*args)
    out, pullback = srcad.vjp(fn, *args)
    assert out == pytest.approx(fn(*args))
    for _ in range(2):
        cotangents = pullback(1.0)
        for k, g in zip(wrt, grads):
            np.testing.assert_allclose(cotangents[k], g, rtol=1e-12, atol=1e-14)


def test_trip_count_differs_between_calls_of_one_gradient():
    d = srcad.grad(cf.until_tolerance)
    for scale in (0.05, 1.0, 50.0):
        x = np.array([0.3, -0.7, 0.5]) * scale
        g = d(x)
        srcad.check_grad(cf.until_tolerance, x)
        assert g.shape == x.shape


def test_value_and_grad_through_returns():
    x = np.array([0.1, -0.8, 0.2])
    value, g = srcad.value_and_grad(cf.early_returns)(x)
    assert value == pytest.approx(cf.early_returns(x))


# ---- the tape, counted ----


def pushes(fn, *args, wrt=0):
    d = srcad.grad(fn, wrt=wrt)
    with counting_pushes() as pushed:
        d(*args)
    return pushed


def test_straight_line_code_has_no_tape_at_all():
    import golden_functions as g

    src = srcad.source(srcad.grad(g.mlp_loss, wrt=(0, 1)))
    assert "tape" not in src and "Tape" not in src


def test_branch_outside_loops_pushes_nothing():
    assert pushes(cf.branch_on_data, np.array([0.3, 0.5])) == []
    assert "Tape" not in srcad.source(srcad.grad(cf.branch_on_data))


def test_static_loop_without_needed_overwrite_pushes_nothing():
    assert pushes(cf.no_needed_overwrite, vec(6)) == []
    assert pushes(cf.range_loop, vec(8), 1, 7, 2) == []
    assert "Tape" not in srcad.source(srcad.grad(cf.no_needed_overwrite))


@pytest.mark.parametrize("steps", [1, 5, 12])
def test_rnn_pushes_one_value_per_iteration(steps):
    W, U, b, h0 = vec(3, 3), vec(3, 2), vec(3), vec(3)
    xs = vec(steps, 2)
    pushed = pushes(cf.rnn, W, U, b, xs, h0, wrt=(0, 1, 2, 3, 4))
    assert len(pushed) == steps
    assert all(isinstance(p, np.ndarray) and p.shape == (3,) for p in pushed)


def test_while_pushes_what_each_iteration_overwrites():
    x = np.array([0.3, -0.7, 0.5])
    trips = 0
    y = x * 4.0
    while np.max(np.abs(y)) > 0.1:
        y = np.sin(y) * 0.5
        trips += 1
    assert len(pushes(cf.shrink_with_sin, x)) == trips
    srcad.check_grad(cf.shrink_with_sin, x)


def test_while_whose_backward_needs_no_old_values_pushes_nothing():
    # y = y * 0.5: the adjoint never reads y, so nothing is recorded, only the trip count
    assert pushes(cf.until_tolerance, np.array([0.3, -0.7, 0.5])) == []


def test_data_dependent_branch_in_loop_computes_its_decision_again():
    x = np.array([0.3, -0.4, -0.1, 0.9])
    # the continue flag is the comparison x[i] < 0, computed again in the backward turn
    # (it was one pushed decision per turn: tests/transform/test_recording.py has one)
    assert pushes(cf.with_continue, x) == []
    assert pushes(cf.with_break, x) == []


def test_tape_is_empty_after_the_gradient():
    from srcad.runtime import tape as tape_module

    tapes = []
    original = tape_module.Tape.__init__

    class Spy(tape_module.Tape):
        def __init__(self, *args):
            super().__init__(*args)
            tapes.append(self)

    d = srcad.grad(cf.rnn, wrt=0)
    args = (vec(3, 3), vec(3, 2), vec(3), vec(4, 2), vec(3))
    gen = d.generated(args=args)  # the code this call runs
    namespace = gen.function.__globals__
    saved = namespace["Tape"]
    namespace["Tape"] = Spy
    try:
        d(*args)
    finally:
        namespace["Tape"] = saved
    assert tapes and all(len(t) == 0 for t in tapes)
    assert original is tape_module.Tape.__init__


def test_loop_source_reads_like_a_loop():
    src = srcad.source(srcad.grad(cf.rnn, wrt=(0, 1, 2, 3, 4)))
    assert "for t in range(" in src
    assert "for t in reversed(range(" in src
    assert src.count("tape.push(") == 1 and src.count("tape.pop()") == 1


def reads_loop_variable_after(x):
    for i in range(3):  # noqa: B007
        x = x * 2.0
    return np.sum(x) * i


def test_reading_the_loop_variable_after_the_loop_is_refused():
    with pytest.raises(srcad.TransformError, match="read after its loop"):
        srcad.grad(reads_loop_variable_after)(np.ones(2))


def throwaway_loop_variable(x):
    y = x * 1.0
    for _ in range(3):
        y = np.sin(y) * 0.9 + x
    _ = np.cos(x)  # the same throwaway name, assigned outside the loop
    return np.sum(y * y)


def loop_variable_reused(x):
    i = 0
    y = x
    for i in range(2):
        y = y * x[i]
    for i in range(3):  # noqa: B007
        y = np.tanh(y)
    return np.sum(y)


@pytest.mark.parametrize("f", [throwaway_loop_variable, loop_variable_reused])
def test_a_loop_variable_also_assigned_outside_its_loops_but_never_read_there(f):
    # each loop gets a variable of its own (refused until stop 29)
    assert srcad.check_grad(f, np.array([0.3, -0.5, 0.9]), modes=("rev", "fwd"), order=2) < 1e-6


def reads_a_reused_loop_variable(x):
    i = 2
    for i in range(1):  # noqa: B007
        x = x * 2.0
    return np.sum(x) * i


def test_a_loop_variable_assigned_outside_and_read_after_is_refused():
    with pytest.raises(srcad.TransformError, match="also assigned outside the loop header"):
        srcad.grad(reads_a_reused_loop_variable)(np.ones(2))


def test_unsupported_iterables_are_refused():
    with pytest.raises(srcad.TransformError, match="loops over"):
        srcad.grad(cf.over_reversed)(np.ones(3))
    with pytest.raises(srcad.TransformError, match="loops over"):
        srcad.grad(cf.over_dict_values)(np.ones(3), {"a": 1.0})


def test_raise_in_a_branch():
    np.testing.assert_allclose(srcad.grad(cf.checked)(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(ValueError, match="negative"):
        srcad.grad(cf.checked)(np.array([-1.0, 2.0]))


@pytest.mark.parametrize(
    "fn, args",
    [
        (cf.loop_over_list_argument, (np.array([0.5, 1.5]), [0.5, 2.0, 1.5])),
        (cf.range_bound_reassigned, (np.array([0.5, 1.5]), 4)),
        (cf.while_inside_for, (np.array([0.3, 2.5, 9.0]),)),
        (cf.branch_uses_value_from_before, (np.array([0.3, -2.5]),)),
    ],
)
def test_more_shapes_of_loops(fn, args):
    srcad.check_grad(fn, *args)


def test_indexing_adjoint_in_a_loop_updates_one_buffer_in_place():
    src = srcad.source(srcad.grad(cf.rnn, wrt=3))
    assert src.count("zeros_like(xs)") == 1  # made once, before the backward loop
    assert "add_at(dxs, t, " in src
    body = src.split("for t in reversed(")[1]
    assert "xp.zeros_like(" not in body


def two_reads_then_sum(x):
    y = x[0] + x[1]  # both reads share the incoming gradient object
    z = x[1] * y
    return np.sum(z * z) + np.sum(y)


def test_shared_gradient_objects_are_never_updated_in_place():
    srcad.check_grad(two_reads_then_sum, vec(3, 2))


def summed_and_reused(x):
    y = x * x
    z = y * x  # y's adjoint: the sum's ones, then a second term
    return np.sum(z) + np.sum(y)


def test_a_summed_value_read_again_has_no_uniform_adjoint():
    # the adjoint of y is no longer the sum's ones once z adds to it
    x = np.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose(srcad.grad(summed_and_reused)(x), 3 * x**2 + 2 * x)
    srcad.check_grad(summed_and_reused, vec(4))


def sum_of_elementwise(x, y):
    return np.sum(np.sin(x) * y + x * x - y / x)


def test_a_sum_of_same_shaped_terms_seeds_each_with_the_number():
    x, y = vec(4, low=0.5), vec(4)
    srcad.check_grad(sum_of_elementwise, x, y)
    srcad.check_grad(sum_of_elementwise, x.reshape(1, 4), y)  # broadcast: the general way
    g = srcad.grad(sum_of_elementwise, wrt=(0, 1))
    specialized = srcad.source(g, example_args=(x, y))
    assert "unreduce" not in specialized  # no array of ones
