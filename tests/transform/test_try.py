"""``try``/``except``: a branch whose decision is recorded when the function runs."""

import numpy as np
import pytest

import srcad
from srcad.errors import TransformError
from srcad.runtime.tape import counting_pushes
from tests.test_third_order_rules import check_reverse_three_times

A = np.array([[2.0, 1.0], [1.0, 3.0]])
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
B = np.array([1.0, -1.0])


def solve_or_pinv(A, b):
    try:
        y = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        y = np.linalg.pinv(A) @ b
    return np.sum(np.sin(y) ** 2)


@pytest.mark.parametrize("M", [A, SINGULAR], ids=["solved", "handled"])
def test_each_arm_matches_finite_differences_in_both_modes(M):
    assert srcad.check_grad(solve_or_pinv, M, B, wrt=1, modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(solve_or_pinv, M, B, wrt=1, order=2) < 1e-6


@pytest.mark.parametrize("M", [A, SINGULAR], ids=["solved", "handled"])
def test_the_gradient_is_the_arm_taken(M):
    # y = M^-1 b, or pinv(M) b where M is singular; d/db sum(sin(y)^2) = T^T sin(2y)
    T = np.linalg.inv(M) if M is A else np.linalg.pinv(M)
    expected = T.T @ np.sin(2 * (T @ B))
    np.testing.assert_allclose(srcad.grad(solve_or_pinv, wrt=1)(M, B), expected, rtol=1e-10)
    _, pullback = srcad.vjp(solve_or_pinv, M, B)
    np.testing.assert_allclose(pullback(1.0)[1], expected, rtol=1e-10)


def test_the_derivative_catches_what_the_function_catches():
    source = srcad.source(srcad.grad(solve_or_pinv, wrt=1), example_args=(A, B))
    assert "try:" in source
    assert "except LinAlgError:" in source


def fails_in_some_turns(x):
    s = 0.0
    for i in range(3):
        try:
            t = np.sqrt(x - i)
            if np.any(np.isnan(t)):
                raise ValueError("negative")
        except ValueError:
            t = x * 2
        s = s + np.sum(t)
    return s


X = np.array([1.5, 2.5])


@np.errstate(invalid="ignore")
def test_a_body_failing_after_it_pushed_takes_its_pushes_back():
    # the third turn fails after overwriting t: the handler's tape must not see that
    # the third turn fails for the whole array (x[0] - 2 < 0): both elements take 2x
    grad = srcad.grad(fails_in_some_turns)(X)
    np.testing.assert_allclose(grad, 0.5 / np.sqrt(X) + 0.5 / np.sqrt(X - 1) + 2.0)
    assert srcad.check_grad(fails_in_some_turns, X, modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(fails_in_some_turns, X, order=2) < 1e-6
    with counting_pushes() as pushed:
        srcad.grad(fails_in_some_turns)(X)
    assert len(pushed) > 0  # the tape is in use, and came back empty (no error above)


@np.errstate(invalid="ignore")
def test_second_order_of_a_failing_body_in_every_composition():
    v = np.array([1.0, -0.5])
    curvature = -0.25 * (X**-1.5 + (X - 1) ** -1.5)
    np.testing.assert_allclose(srcad.hvp(fails_in_some_turns, (X,), (v,)), curvature * v)
    np.testing.assert_allclose(
        srcad.jvp(srcad.grad(fails_in_some_turns), (X,), (v,))[1], curvature * v
    )
    np.testing.assert_allclose(srcad.hessian(fails_in_some_turns)(X), np.diag(curvature))


def with_finally(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x
    finally:
        z = 2.0
    return np.sum(y * z)


def handler_reraises(x):
    try:
        y = np.sqrt(x)
    except (ValueError, TypeError):
        raise
    return np.sum(y)


def in_a_helper(x):
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        return np.linalg.cholesky(x + 10 * np.eye(len(x)))


def calls_the_helper(x):
    return np.sum(in_a_helper(x @ x.T - 2 * np.eye(2)))


@pytest.mark.parametrize("f", [with_finally, handler_reraises])
def test_finally_and_reraising_handlers(f):
    assert srcad.check_grad(f, X, modes=("rev", "fwd")) < 1e-6


def test_a_try_in_a_helper_at_first_and_second_order():
    x = np.array([[1.0, 0.2], [0.3, 0.5]])  # x @ x.T - 2 is not positive definite
    assert srcad.check_grad(calls_the_helper, x, modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(calls_the_helper, x, order=2) < 1e-6


def several_handlers(x):
    try:
        y = np.log(x)
    except ValueError:
        y = x
    except TypeError:
        y = 2 * x
    return np.sum(y)


def with_else(x):
    try:
        y = np.log(x)
    except ValueError:
        y = x
    else:
        y = y * 2
    return np.sum(y)


def reads_the_exception(x):
    try:
        y = np.log(x)
    except ValueError as e:
        y = x * len(str(e))
    return np.sum(y)


def keeps_half_the_body(x):
    try:
        a = x * 2
        y = np.log(a)
    except ValueError:
        y = x
    return np.sum(y + a)


def handler_reads_the_body(x):
    try:
        a = x * 2
        y = np.log(a)
    except ValueError:
        y = a
    return np.sum(y)


def updates_in_place(x):
    y = np.zeros_like(x)
    try:
        y[0] = x[0] * 2
        y = np.log(y)
    except ValueError:
        y = x
    return np.sum(y)


def updates_through_out(x):
    y = x * 1.0
    try:
        np.sin(y, out=y)
        y = np.log(y)
    except ValueError:
        y = x
    return np.sum(y)


@pytest.mark.parametrize(
    "f, message",
    [
        (several_handlers, "several 'except' clauses"),
        (with_else, "'else' clause of a 'try'"),
        (reads_the_exception, r"reading the exception \('except ... as e'\)"),
        (keeps_half_the_body, "assigns 'a', which is read after it"),
        (handler_reads_the_body, "the handler reads 'a'"),
        (updates_in_place, "in-place update inside a 'try' body"),
        (updates_through_out, "in-place update inside a 'try' body"),
    ],
)
def test_what_cannot_be_differentiated_exactly_is_refused(f, message):
    with pytest.raises(TransformError, match=message):
        srcad.grad(f)(X)


def try_in_a_loop_branch(x):
    a = x * 1.0
    for i in range(2):
        if x[i] > 0.67:
            pass
        else:
            try:
                t = np.sin(np.mean(a, axis=-1, keepdims=True)) * x
            except ValueError:
                t = 0.5
            a = t
    return np.sum(a * a)


def test_third_order_through_a_try_in_a_loop():
    # fuzz seed 2200312: differentiating the forward-over-reverse code again refused its
    # 'try', counting the zero tangents set up before the loop as reads after the body
    x = np.array([-0.4, 0.3, 0.5])
    v = np.array([0.7, -0.2, 0.4])
    hessian = srcad.hessian(try_in_a_loop_branch)
    _, got = srcad.jvp(hessian, (x,), (v,))
    h = 1e-4
    want = (hessian(x + h * v) - hessian(x - h * v)) / (2 * h)
    assert np.max(np.abs(want)) > 0.05
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def builds_its_own_array(x):
    try:
        q = np.zeros_like(x)
        q[0] = x[0] * 2.0
        q[1:] = np.sin(x[1:])
        t = np.log(np.sum(q * q) + 1.0) * x
        if np.sum(x) > 10.0:
            raise ValueError("taken")
    except ValueError:
        t = x * 2.0
    return np.sum(t * x)


def upd_arg(p):
    p[:1] = np.tanh(p[:1])
    return np.sum(p * np.cos(p))


grad_upd_arg = srcad.grad(upd_arg)


def calls_a_gradient_that_updates(x):
    try:
        t = grad_upd_arg(x * 1.0) * 0.5
        if np.sum(x) > 10.0:
            raise ValueError("taken")
    except ValueError:
        t = x * 2.0
    return np.sum(t * x)


@pytest.mark.parametrize("f", [builds_its_own_array, calls_a_gradient_that_updates])
@pytest.mark.parametrize("scale", [1.0, 10.0])  # the body whole, the handler
def test_an_array_the_body_makes_may_be_updated_in_it(f, scale):
    # an update of memory the body allocates cannot be seen half done outside the body
    # (seed 2600244: a gradient of an updating function, written out at second order,
    # made its arrays and a tape inside the try; the tape's mark was read before the try)
    x = np.array([0.3, 0.7, 1.1, -0.4]) * scale
    srcad.check_grad(f, x, order=2)


def fails_or_not(x):
    try:
        t = np.sin(x) * x
        if np.sum(x) > 10.0:
            raise ValueError("taken")
    except ValueError:
        t = x * 2.0
    return np.sum(t * x)


@pytest.mark.parametrize("f", [fails_or_not, builds_its_own_array, calls_a_gradient_that_updates])
@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_reverse_mode_three_times_through_a_try(f, scale):
    # the backward arm of a failed body sets up zero adjoints of what the body assigns,
    # zeros_like(v): a read of v's shape alone, once refused as a read of a half-done value
    check_reverse_three_times(f, (np.array([0.3, 0.7, 1.1, -0.4]) * scale,))


def updates_a_view_made_in_the_body(x):
    y = x * 1.0
    try:
        v = y[1:]
        v[0] = x[0] * 2.0
        t = np.log(y * y + 1.0)
    except ValueError:
        t = x
    return np.sum(t)


def updates_before_making(x):
    t = x * 1.0
    q = x * 1.0
    for _ in range(2):
        try:
            q[0] = x[0] * 3.0
            q = np.zeros_like(x)
            t = t + np.log(q * q + 1.0)
        except ValueError:
            t = x
    return np.sum(t)


@pytest.mark.parametrize("f", [updates_a_view_made_in_the_body, updates_before_making])
def test_an_update_of_memory_from_outside_the_body_stays_refused(f):
    with pytest.raises(TransformError, match="in-place update inside a 'try' body"):
        srcad.grad(f)(np.array([0.3, 0.7, 1.1]))
