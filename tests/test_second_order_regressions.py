"""Second order when a name is rebound in straight-line code after a loop or branch that
also binds it (issue #16), and in-place updates of a name that may still alias another
after such a loop or branch. Each program is minimized; each is checked forward over
reverse (jvp of grad, hessian) and reverse over reverse (vjp of grad, grad of a function
calling grad) against finite differences of the gradient."""

import numpy as np
import pytest
from test_third_order_rules import check_jvp_of_hessian, check_reverse_three_times

import srcad

X = np.array([0.3, -0.7, 1.1])
U = np.array([0.5, -1.2, 0.8])


def zero_trip_for(y):
    for _ in range(0):
        a = y
    a = y
    a = np.sin(a)
    return np.sum(a)


def untaken_if(y):
    if y[0] > 100:
        a = y
    a = y
    a = np.sin(a)
    return np.sum(a)


def zero_trip_while(y):
    n = 0
    while n < 0:
        a = y
        n += 1
    a = y
    a = np.sin(a)
    return np.sum(a)


def if_else_both_bind(y):
    if y[0] > 0.0:
        a = y * 2.0
    else:
        a = np.cos(y)
    a = y
    a = np.tanh(a)
    a = a * y
    return np.sum(a)


def one_trip_then_rebound_twice(y):
    a = y
    for _ in range(1):
        a = np.sin(a) * y
    a = y
    a = np.sin(a)
    a = a * a
    return np.sum(a)


def many_trips_then_rebound(y):
    a = y
    for _ in range(3):
        a = np.sin(a) + y
    b = a
    a = y
    a = np.exp(0.3 * a) * b
    return np.sum(a)


def nested_loops_then_rebound(y):
    a = y
    for i in range(2):
        for _ in range(i):
            a = np.sin(a) * y
    a = y * 0.5
    a = np.cos(a)
    return np.sum(a * y)


def break_then_rebound(y):
    a = y
    for i in range(3):
        a = np.tanh(a) * y
        if i == 1:
            break
    a = a * y
    a = np.sin(a)
    return np.sum(a)


def continue_then_rebound(y):
    b = y * 0.5
    for i in range(3):
        a = y
        if i == 0:
            continue
        b = np.sin(b) * y
    a = y
    a = np.sin(a) * b
    return np.sum(a)


def fresh_copy_updated_in_place(y):
    a = y * 1.0
    for _ in range(0):
        a = y
    a *= y
    a = np.sin(a)
    return np.sum(a)


def _helper(u, v):
    return np.sin(u) * v


def helper_in_loop_then_rebound(y):
    a = y
    for _ in range(0):
        a = y
    a = _helper(y, y)
    a = np.cos(a)
    return np.sum(a)


def reduced_in_a_zero_trip_loop(y):
    # the loop's backward code makes a's adjoint uniform (one number spread); after the
    # loop that fact must be forgotten, as the loop may not have run (specialized code
    # read the loop's number there: UnboundLocalError)
    a = y
    for _ in range(0):
        a = np.sum(a) * y
    b = y * 0.5
    a = np.exp(a)
    return np.sum(a * b)


def reduced_in_a_zero_trip_while(y):
    a = y
    n = 0
    while n < 0:
        a = np.sum(a) * y
        n += 1
    a = np.exp(a)
    return np.sum(a * y)


def taken_if_then_reversed(y):
    # the vjp of its gradient reassigns the cotangent parameter ('ddy = d_t10'), which
    # copy propagation took for the one assignment of that name: NameError
    a = y
    if y[0] < 100.0:
        a = y
    a = a[::-1]
    a = np.sin(a)
    return np.sum(a)


PROGRAMS = [
    taken_if_then_reversed,
    reduced_in_a_zero_trip_loop,
    reduced_in_a_zero_trip_while,
    zero_trip_for,
    untaken_if,
    zero_trip_while,
    if_else_both_bind,
    one_trip_then_rebound_twice,
    many_trips_then_rebound,
    nested_loops_then_rebound,
    break_then_rebound,
    continue_then_rebound,
    fresh_copy_updated_in_place,
]


@pytest.mark.parametrize("f", [reduced_in_a_zero_trip_loop, reduced_in_a_zero_trip_while])
def test_first_order(f):
    srcad.check_grad(f, X.copy(), modes=("fwd", "rev"))
    srcad.check_grad(f, 0.4 * X, modes=("rev",))  # the same specialized code, called again


@pytest.mark.parametrize("f", PROGRAMS)
def test_second_order_by_both_routes(f):
    srcad.check_grad(f, X.copy(), order=2, modes=("fwd", "rev"))


def _fd_hessian(f, x, eps=1e-5):
    g = srcad.grad(f)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)], 1)


@pytest.mark.parametrize("f", PROGRAMS)
def test_hessian_and_hvp(f):
    expected = _fd_hessian(f, X)
    np.testing.assert_allclose(srcad.hessian(f)(X.copy()), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcad.hvp(f, (X.copy(),), (U,)), expected @ U, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", PROGRAMS)
def test_vjp_of_grad(f):
    _, pullback = srcad.vjp(srcad.grad(f), X.copy())
    np.testing.assert_allclose(pullback(U.copy())[0], _fd_hessian(f, X) @ U, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", PROGRAMS)
def test_grad_of_a_function_calling_grad(f):
    def outer(v):
        return np.sum(srcad.grad(f)(v) * U)

    expected = _fd_hessian(f, X) @ U
    np.testing.assert_allclose(srcad.grad(outer)(X.copy()), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", [zero_trip_for, untaken_if, zero_trip_while])
def test_issue_example_matches_the_closed_form(f):
    np.testing.assert_allclose(srcad.hessian(f)(X.copy()), np.diag(-np.sin(X)), atol=1e-12)
    hu = srcad.grad(lambda v: np.sum(srcad.grad(f)(v) * U))(X.copy())
    np.testing.assert_allclose(hu, -np.sin(X) * U, atol=1e-12)


def test_second_order_through_a_helper():
    # was refused: the gradient differentiated again now has the helper written out
    # d/dy sum(cos(sin(y) * y)) = -sin(t) * t', t = y sin y; the Hessian is diagonal
    t, dt, d2t = X * np.sin(X), np.sin(X) + X * np.cos(X), 2 * np.cos(X) - X * np.sin(X)
    expected = -np.cos(t) * dt**2 - np.sin(t) * d2t
    np.testing.assert_allclose(
        srcad.hessian(helper_in_loop_then_rebound)(X.copy()), np.diag(expected), atol=1e-10
    )


def scalar_untaken_if(y):
    if y > 100:
        a = y
    a = y
    a = np.sin(a) * y
    a = a * a
    return a


def scalar_zero_trip(y):
    for _ in range(0):
        a = y
    a = y
    a = np.sin(a) * y
    return a


@pytest.mark.parametrize("f", [scalar_untaken_if, scalar_zero_trip])
def test_third_order(f):
    x, eps = 0.45, 1e-5
    g1 = srcad.grad(f)
    g2 = srcad.grad(g1)
    g3 = srcad.grad(g2)
    np.testing.assert_allclose(g2(x), (g1(x + eps) - g1(x - eps)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(g3(x), (g2(x + eps) - g2(x - eps)) / (2 * eps), rtol=1e-5)
    np.testing.assert_allclose(srcad.jvp(g2, (x,), (1.0,))[1], g3(x), rtol=1e-12)


# ---- in-place updates of a name that one path leaves aliasing another: refused ----


def alias_kept_on_untaken_branch(y):
    a = y
    if y[1] > 0.0:
        a = a * 1.0
    a *= y
    return np.sum(a * y)


def alias_kept_by_zero_trip_loop(y):
    a = y
    for _ in range(0):
        a = a * 2.0
    a *= y
    return np.sum(a * y)


def alias_kept_by_while_loop(y):
    a = y
    n = 0
    while n < 0:
        a = a * 2.0
        n += 1
    a += y
    return np.sum(a * y)


def alias_made_before_break(y):
    a = y * 1.0
    for _ in range(3):
        b = a
        if y[0] > 0.0:
            break
        b = a * 2.0
    b *= y
    return np.sum(a * b)


def alias_made_before_continue(y):
    a = y * 1.0
    for _ in range(3):
        b = a
        if y[0] > 0.0:
            continue
        b = b * 2.0
    b *= y
    return np.sum(a * b)


def row_of_a_loop(y):
    a = np.outer(y, y)
    for row in a:
        row *= y[0]
    return np.sum(a * a)


def reversed_view_of_an_alias(y):
    a = y
    a = a[::-1]
    a *= y
    return np.sum(np.sin(y)) + np.sum(a)


@pytest.mark.parametrize(
    "f",
    [
        alias_kept_on_untaken_branch,
        alias_kept_by_zero_trip_loop,
        alias_kept_by_while_loop,
        alias_made_before_break,
        alias_made_before_continue,
        row_of_a_loop,
        reversed_view_of_an_alias,
    ],
)
def test_update_under_a_possible_alias_is_refused(f):
    with pytest.raises(srcad.UnsupportedConstructError, match="in-place update of") as info:
        srcad.grad(f)(X.copy())
    assert __file__ in str(info.value) and "^" in str(info.value)
    with pytest.raises(srcad.UnsupportedConstructError, match="in-place update of"):
        srcad.jvp(f, (X.copy(),), (U,))


def loop_surely_replaces_the_alias(y):
    a = y
    for _ in range(2):
        a = a * 2.0
    a *= y
    return np.sum(a * y)


def test_loop_that_surely_runs_ends_the_alias():
    srcad.check_grad(loop_surely_replaces_the_alias, X.copy(), order=2, modes=("fwd", "rev"))


# ---- a parameter not differentiated that a loop or branch makes vary ----


def parameter_carried_by_a_loop(y, z):
    for _ in range(2):
        y = np.sin(y) * z
    return np.sum(y)


def parameter_rebound_in_a_branch(y, z):
    if z[0] > 0.0:
        y = y * z
    y = np.sin(y)
    return np.sum(y * z)


@pytest.mark.parametrize("f", [parameter_carried_by_a_loop, parameter_rebound_in_a_branch])
@pytest.mark.parametrize("wrt", [1, (0, 1)])
def test_parameter_not_differentiated_starts_with_a_zero_tangent(f, wrt):
    srcad.check_grad(f, X.copy(), U.copy(), wrt=wrt, order=2, modes=("fwd", "rev"))
    _, tangent = srcad.jvp(f, (X.copy(), U.copy()), (None, X.copy()))
    assert np.isclose(tangent, np.sum(srcad.grad(f, wrt=1)(X.copy(), U.copy()) * X))


# ---- a pop of an adjoint tape whose value is not needed still runs ----
# (third order: the backward of ``da_1 = dtape.pop()`` pushes on ``ddtape``; the backward of
# its ``dtape.push(da_1)`` must pop even where nothing reads the value, or the next pop
# takes the wrong entry: a silently wrong third derivative)


def sin_times_y_after_zero_trip(y):
    a = y
    for _ in range(0):
        a = y
    a = np.sin(a)
    a = a * y
    return a


def sin_times_y_after_untaken_if(y):
    a = y
    if y > 100.0:
        a = y
    a = np.sin(a)
    a = a * y
    return a


def sin_times_y_after_while(y):
    a = y
    n = 0
    while n < 0:
        a = y
        n += 1
    a = np.sin(a)
    a = a * y
    return a


@pytest.mark.parametrize(
    "f", [sin_times_y_after_zero_trip, sin_times_y_after_untaken_if, sin_times_y_after_while]
)
def test_third_order_matches_the_closed_form(f):
    x, eps = 0.45, 1e-5
    g2 = srcad.grad(srcad.grad(f))
    exact = -np.cos(x) * x - 3.0 * np.sin(x)  # d^3/dy^3 of y sin(y)
    np.testing.assert_allclose(srcad.grad(g2)(x), exact, rtol=1e-10)
    np.testing.assert_allclose(srcad.jvp(g2, (x,), (1.0,))[1], exact, rtol=1e-10)
    np.testing.assert_allclose((g2(x + eps) - g2(x - eps)) / (2 * eps), exact, rtol=1e-6)


# ---- a variable only a branch assigns, whose adjoint the other branch's backward zeros ----


def correlated_branches(y):
    if y > 0.0:
        t = np.cos(y)
    a = y * 2.0
    if y > 0.0:
        a = a * t
    return a


def cos_in_else(y):
    b = y * 0.5
    if y > 0.0:
        a = b
    else:
        a = np.cos(y) * b
    a = a * y
    return np.cos(a)


def cos_in_zero_trip_loop(y):
    a = y * 1.0
    for _ in range(0):
        t = np.cos(a)
        a = a * t
    a = np.sin(a) * y
    return a


@pytest.mark.parametrize("x", [0.45, -0.45])
def test_first_order_with_a_name_one_branch_assigns(x):
    eps = 1e-6
    f = correlated_branches
    np.testing.assert_allclose(srcad.grad(f)(x), (f(x + eps) - f(x - eps)) / (2 * eps), rtol=1e-6)


@pytest.mark.parametrize("x", [0.45, -0.45])
@pytest.mark.parametrize("f", [correlated_branches, cos_in_else, cos_in_zero_trip_loop])
def test_second_order_with_a_name_one_branch_assigns(f, x):
    eps = 1e-5
    g1 = srcad.grad(f)
    ref = (g1(x + eps) - g1(x - eps)) / (2 * eps)
    np.testing.assert_allclose(srcad.grad(g1)(x), ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(srcad.hessian(f)(x), ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(srcad.jvp(g1, (x,), (1.0,))[1], ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(srcad.vjp(g1, x)[1](1.0)[0], ref, rtol=1e-6, atol=1e-9)
    g2 = srcad.grad(g1)
    ref3 = (g2(x + eps) - g2(x - eps)) / (2 * eps)
    np.testing.assert_allclose(srcad.grad(g2)(x), ref3, rtol=1e-5, atol=1e-8)


def sin_times_y_in_loop(y):
    a = y * 1.0
    for _ in range(2):
        a = np.sin(a) * y
    return a


@pytest.mark.parametrize("f", [sin_times_y_after_zero_trip, sin_times_y_in_loop])
def test_fourth_order(f):
    # fourth order differentiates ``da = da + dtape.pop()``, whose pop lands in a temporary
    # that must vary with the input as the value pushed does
    x, eps = 0.45, 1e-4
    g3 = srcad.grad(srcad.grad(srcad.grad(f)))
    ref = (g3(x + eps) - g3(x - eps)) / (2 * eps)
    np.testing.assert_allclose(srcad.grad(g3)(x), ref, rtol=1e-6)
    np.testing.assert_allclose(srcad.jvp(g3, (x,), (1.0,))[1], ref, rtol=1e-6)
    if f is sin_times_y_after_zero_trip:
        np.testing.assert_allclose(srcad.grad(g3)(x), -4.0 * np.cos(x) + x * np.sin(x))


# ---- a helper reads an array, which then changes in place (campaign seed 2900200) ----


def read_back(p):
    return np.sin(p) * p


@srcad.custom_jvp
def read_back_rule(p):
    return np.sin(p) * p


@read_back_rule.defjvp
def read_back_rule_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    return np.sin(p) * p, (np.cos(p) * p + np.sin(p)) * dp


def helper_then_update(x):
    u = x * 1.0
    u[1] = np.sum(read_back(u))
    return np.sum(u)


def rule_then_update(x):
    u = x * 1.0
    u[1] = np.sum(read_back_rule(u))
    return np.sum(u)


def helper_then_updates_in_a_loop(x):
    u = x * 1.0
    for k in range(2):
        u[k] = np.sum(read_back(u)) * 0.5
    return np.sum(u)


@pytest.mark.parametrize("f", [helper_then_update, rule_then_update, helper_then_updates_in_a_loop])
def test_a_helpers_argument_updated_in_place_after_the_call(f):
    # code differentiated again makes the backward pass's restore of u a new array: the
    # written-out helper's parameter (p = u) and the custom rule's residuals kept the old
    # array, updated in place: silently wrong Hessians (0.53 against 1.52 on the diagonal)
    srcad.check_grad(f, X, order=2, modes=("fwd", "rev"))
    check_reverse_three_times(f, (X,))
    check_jvp_of_hessian(f, (X,))


def test_a_helpers_argument_updated_in_place_closed_form():
    # f = x0 + x2 + sum(sin(x) * x): the Hessian is diag(2 cos x - x sin x)
    for f in (helper_then_update, rule_then_update):
        np.testing.assert_allclose(
            np.diag(srcad.hessian(f)(X)), 2 * np.cos(X) - X * np.sin(X), rtol=1e-12
        )
