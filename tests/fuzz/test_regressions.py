"""Every failure the program fuzzer found, as the minimized program it shrank to.

Fixed bugs are plain tests; bugs still open are ``xfail(strict=True)`` with the reason, so
that a fix makes them pass loudly (and they must then become plain tests).
"""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(12)
X2 = RNG.uniform(-1, 1, (3, 2))  # 2-D: x[1] is a view, not a number
X1 = RNG.uniform(-1, 1, 3)
Y = RNG.uniform(-1, 1, 2)


def pair(p, q):
    return np.sin(p) * q, p - q * 0.25


def helper(p, q):
    return np.tanh(p) * q + p * 0.5


# fuzz seed 2: an append outside any loop, then np.stack of the list ------------------------
def append_outside_loop(x):
    outs = [x]
    outs.append(np.tanh(x) * x)
    return np.sum(np.stack(outs) * x)


def test_append_outside_a_loop():
    # was: UnsupportedConstructError "np.stack: 'arrays' must be a list or tuple written out
    # in the call" (the renamed list, outs_1, was no longer known to be a list)
    srcad.check_grad(append_outside_loop, X1, modes=("fwd", "rev"))


# fuzz seed 200394 (campaign): a copy of an array that is then updated in place ----------
def copy_then_update(x):
    u = np.sin(x)
    for i in range(2):
        a = u * 1.0
        u[i] += x[i]
    return np.sum(a)


def test_a_copy_keeps_its_tangent_when_the_original_is_updated():
    # was: a silently wrong jvp (11.58 instead of 8.58 along ones): the tangent of
    # a = u * 1.0 was folded to da = du, which the update of u then changed in place
    x = RNG.uniform(-1, 1, (2, 3))
    srcad.check_grad(copy_then_update, x, modes=("fwd", "rev"))
    assert "da = du\n" not in srcad.source(copy_then_update, mode="fwd")


# fuzz seed 201264 (campaign, second order): an adjoint updated in place, then rebound ----
def rebound_after_update(x, y):
    b = y
    c = b
    c = np.maximum(b, np.sum(c, axis=0))
    c = c[1]
    for _ in range(1):
        c = x
    return np.sum(b * c)


def test_second_order_when_an_updated_adjoint_is_rebound_to_a_read_only_view():
    # was: ValueError "assignment destination is read-only" from reset(dc, _dc_final) in
    # the vjp of the gradient: dc, filled in place, was later rebound to unreduce's view
    x, y = RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))
    srcad.check_grad(rebound_after_update, x, y, wrt=(0, 1), modes=("fwd", "rev"), order=2)


# fuzz seed 5: a call returning a pair unpacked into a name it also reads -------------------
def unpack_over_an_argument(x, y):
    c = x * y
    b, c = pair(x, c)
    return np.sum(b * c)


def unpack_over_an_argument_in_a_loop(x, y):
    b = x * 1.0
    c = x * y
    for _ in range(3):
        c, b = pair(c, b)
    return np.sum(b * c)


@pytest.mark.parametrize("f", [unpack_over_an_argument, unpack_over_an_argument_in_a_loop])
def test_unpacking_a_call_into_a_name_it_reads(f):
    # was: UnsupportedConstructError "call to pair returns 2 values; unpack them into as many
    # names" (reverse) and "unpacking a differentiable value into several names" (forward)
    srcad.check_grad(f, X2, Y, wrt=(0, 1), modes=("fwd", "rev"))


# fuzz seed 72: forward mode read a view of an array after updating the array ---------------
def update_reading_a_row(x, y):
    u = np.sin(x)
    u[1] = u[1] * x[1]
    return np.sum(u * y)


def test_forward_mode_reads_a_row_before_updating_it():
    # was: a silently wrong jvp for 2-D x: the optimizer moved the tangent u[1] * dx[1] + ...
    # after the update, where u[1] (a view) already held the new row
    srcad.check_grad(update_reading_a_row, X2, Y, wrt=(0, 1), modes=("fwd", "rev"))
    _, tangent = srcad.jvp(update_reading_a_row, (X2, Y), (np.ones_like(X2), None))
    expected = np.sum(srcad.grad(update_reading_a_row)(X2, Y))
    assert tangent == pytest.approx(expected, rel=1e-12)


# open: second derivatives ----------------------------------------------------------------
def calls_a_helper(x):
    return np.sum(helper(x, 0.5))


@pytest.mark.xfail(
    strict=True,
    raises=srcad.UnsupportedConstructError,
    reason="second derivatives through calls of user functions: the gradient's code calls "
    "the callee's forward/backward pair, which is not differentiated again (a clear error "
    "naming the callee since 7ccbbeb; it named srcad's internals before)",
)
def test_second_order_through_a_helper_call():
    srcad.check_grad(calls_a_helper, X1, order=2, modes=("fwd", "rev"))


def appends_in_a_loop(x):
    outs = [x]
    for _ in range(2):
        outs.append(np.tanh(x) * x)
    return np.sum(np.stack(outs))


def test_second_order_of_a_list():
    srcad.check_grad(appends_in_a_loop, X1, order=2, modes=("fwd", "rev"))


def update_in_place(x):
    u = np.sin(x)
    u[1] = u[1] * x[1]
    return np.sum(u)


@pytest.mark.xfail(
    strict=True,
    raises=srcad.UnsupportedConstructError,
    reason="reverse over reverse of an in-place update: the gradient's "
    "restore(u, 1, tape.pop()) has no adjoint; a clear error since 47b68a7 (the second "
    "backward pass popped an empty tape before)",
)
def test_reverse_over_reverse_of_an_update_in_place():
    srcad.check_grad(update_in_place, X1, order=2, modes=("rev",))


@pytest.mark.xfail(
    strict=True,
    raises=srcad.UnsupportedConstructError,
    reason="forward over reverse of an in-place update: the gradient's restore(u, 1, "
    "tape.pop()) is refused as 'a call for its side effect on a differentiated value'",
)
def test_forward_over_reverse_of_an_update_in_place():
    srcad.check_grad(update_in_place, X1, order=2, modes=("fwd",))


# fuzz seed 58: an adjoint set in one branch and zeros in the other, then updated in place --
def scatter_after_a_branch(x, y):
    a = x
    b = a[::-1]
    if np.max(y) > 5.0:
        c = y
    else:
        c = np.mean(a, axis=-1, keepdims=True)
    return np.sum(b * c)


def test_scatter_into_an_adjoint_only_one_branch_owns():
    # was: ValueError "assignment destination is read-only" at da[::-1] = da[::-1] + db:
    # the zeros made for the if branch marked da owned in the else branch too, where it was
    # unreduce's read-only view
    srcad.check_grad(scatter_after_a_branch, X1, X1, wrt=(0, 1), modes=("fwd", "rev"))


# fuzz seed 32: second order where the gradient fills an array only in one branch ----------
def slice_in_one_branch(x, y):
    a = x
    if np.mean(y) > 5.0:
        a = x * 2.0
    else:
        a = x[..., 1:2]
    return np.sum((a + x) * y)


@pytest.mark.parametrize("y", [Y, Y + 6.0], ids=["else", "if"])
def test_second_order_where_the_gradient_fills_an_array_in_one_branch(y):
    # was: TypeError "'NoneType' object does not support item assignment" in reverse over
    # reverse: the backward pass put back the final contents of _dx (filled in place in the
    # else branch) even when that branch had not run and _dx was None
    srcad.check_grad(slice_in_one_branch, X2, y, wrt=(0, 1), order=2, modes=("fwd", "rev"))


def slice_in_a_loop(x, y, n):
    a = x
    for _ in range(n):
        a = x * x[..., 1:2]
    return np.sum(a * y)


@pytest.mark.parametrize("n", [0, 2])
def test_second_order_where_the_gradient_fills_an_array_in_a_loop(n):
    # the same for a loop that runs no turn (fuzz seed 32 again, shrunk further)
    srcad.check_grad(slice_in_a_loop, X2, Y, n, wrt=(0, 1), order=2, modes=("fwd", "rev"))


# generator defects the campaigns found (programs that were not valid, not srcad bugs) -------
def test_the_generator_parenthesizes_what_it_squares():
    # fuzz seed 100191 wrote np.sqrt(1.0 + a - c * a - c) for np.sqrt(1.0 + (a - c) * (a - c))
    from programs import ProgramWriter

    assert "np.sqrt(1.0 + a - c * a - c)" not in ProgramWriter(100191).program()
    assert "np.sqrt(1.0 + (a - c) * (a - c))" in ProgramWriter(100191).program()
