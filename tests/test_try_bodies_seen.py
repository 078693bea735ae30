"""The passes that run before ``try`` is lowered to a branch, and the analyses of a
helper's own code (where ``try`` stays), see the statements of a ``try`` body. They once
skipped them: an update in place of generated code differentiated again went unseen
(campaign seed 4300272: a wrong third derivative through a ``try`` body calling the
gradient of a function updating an array in place), a helper returning its argument from
a ``try`` body was not known to (a silently wrong gradient once the result was updated in
place), and a comprehension in a ``try`` body was moved out of it (its exception escaped
the handler)."""

import numpy as np
import pytest

import srcad
from srcad.errors import TransformError

X = np.array([0.3, -0.5, 0.9])
V = np.array([1.0, 0.0, 0.0])


def updates(p):
    q = p * 1.0
    q[..., :1] = np.sin(q[..., :1]) * 2.0
    return np.sum(q * q)


grad_updates = srcad.grad(updates)


def in_a_try(x):
    try:
        t = np.cos(x) * grad_updates(x)
    except ValueError:
        t = x
    return np.sum(t)


def without_the_try(x):
    return np.sum(np.cos(x) * grad_updates(x))


def third_error(f):
    hessian = srcad.hessian(f)
    _, got = srcad.jvp(hessian, (X,), (V,))
    h = 1e-4
    want = (hessian(X + h * V) - hessian(X - h * V)) / (2 * h)
    return float(np.max(np.abs(got - want)))


def test_second_order_and_the_third_without_the_try_are_right():
    srcad.check_grad(in_a_try, X, modes=("rev", "fwd"), order=2)
    assert third_error(without_the_try) < 1e-2


def test_third_derivative_through_a_try_body():
    # was off by 21.6 on the first element
    assert third_error(in_a_try) < 1e-2


def test_forward_and_reverse_over_the_hessian_vector_product_agree_with_differences():
    g = srcad.grad(in_a_try)

    def directional(x):
        return srcad.jvp(g, (x,), (V,))[1]

    h = 1e-3
    want = (directional(X + h * V) - directional(X - h * V)) / (2 * h)
    forward = srcad.jvp(directional, (X,), (V,))[1]
    reverse = srcad.grad(lambda x: np.sum(directional(x) * V))(X)
    np.testing.assert_allclose(forward, want, atol=1e-4)
    np.testing.assert_allclose(reverse, want, atol=1e-4)


def view_or_all(y):
    try:
        z = y[:2]
    except ValueError:
        z = y
    return z


def updates_what_a_helper_returned(x):
    y = x * 1.0
    z = view_or_all(y)
    z[0] = 4.0
    return np.sum(y * x)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_helper_returning_its_argument_from_a_try_body_is_known_to(mode):
    # was a silently wrong gradient (0.6 where finite differences give 4.0)
    with pytest.raises(TransformError, match="may return the array 'y' passed to it"):
        srcad.check_grad(updates_what_a_helper_returned, X, modes=(mode,))


def fill_in_a_try(y):
    try:
        y[0] = 5.0
    except ValueError:
        pass
    return 0.0


def calls_a_helper_filling_its_argument(x):
    y = x * 1.0
    fill_in_a_try(y)
    return np.sum(y * x)


def test_a_helper_updating_its_argument_in_a_try_body_says_so():
    with pytest.raises(TransformError, match="changes its argument 'y' in place"):
        srcad.grad(calls_a_helper_filling_its_argument)(X)


def checked(v):
    if v > 0.5:
        raise ValueError("too large")
    return v


def comprehension_may_fail(x):
    try:
        t = sum([np.sin(checked(v)) for v in x])
    except ValueError:
        t = np.sum(x * x)
    return t


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_comprehension_failing_in_a_try_body_goes_to_the_handler(mode):
    assert comprehension_may_fail(X) == pytest.approx(np.sum(X * X))
    np.testing.assert_allclose(srcad.grad(comprehension_may_fail)(X), 2 * X)
    small = X * 0.5
    srcad.check_grad(comprehension_may_fail, X, modes=(mode,), order=2)
    srcad.check_grad(comprehension_may_fail, small, modes=(mode,), order=2)
    np.testing.assert_allclose(srcad.grad(comprehension_may_fail)(small), np.cos(small))


def errstate_in_a_try(x):
    try:
        with np.errstate(divide="ignore"):
            t = np.sum(np.log(x * x))
    except ValueError:
        t = 0.0
    return t


def test_errstate_inside_a_try_body():
    srcad.check_grad(errstate_in_a_try, X, modes=("rev", "fwd"), order=2)


def local_function_may_fail(x):
    def halved_or_raise(v):
        if np.max(v) > 0.5:
            raise ValueError("too large")
        return np.sin(v)

    try:
        t = np.sum(halved_or_raise(x))
    except ValueError:
        t = np.sum(x * x)
    return t


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_local_function_failing_in_a_try_body_goes_to_the_handler(mode):
    # its body was written out before the 'try': the exception escaped the derivative
    np.testing.assert_allclose(srcad.grad(local_function_may_fail)(X), 2 * X)
    srcad.check_grad(local_function_may_fail, X, modes=(mode,), order=2)
    srcad.check_grad(local_function_may_fail, X * 0.5, modes=(mode,), order=2)


# ---- a helper's 'with' body: the same walkers skipped it (silently wrong gradients in
# both modes, found while fixing the above)


def fill_under_errstate(y):
    with np.errstate(divide="ignore"):
        y[0] = 5.0
    return 0.0


def calls_a_helper_filling_under_errstate(x):
    y = x * 1.0
    s = fill_under_errstate(y)
    return np.sum(y * x) + s


def returned_under_errstate(y):
    with np.errstate(all="ignore"):
        return y


def updates_what_an_errstate_helper_returned(x):
    y = x * 1.0
    z = returned_under_errstate(y)
    z[1] = 2.0
    return np.sum(y * x)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_helper_changing_or_returning_its_argument_under_errstate_is_known_to(mode):
    # were 0.6 and -1.0 where differences give 5.0 and 2.0
    with pytest.raises(TransformError, match="changes its argument 'y' in place"):
        srcad.check_grad(calls_a_helper_filling_under_errstate, X, modes=(mode,))
    with pytest.raises(TransformError, match="may return the array 'y' passed to it"):
        srcad.check_grad(updates_what_an_errstate_helper_returned, X, modes=(mode,))
