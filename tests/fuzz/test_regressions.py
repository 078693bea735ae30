"""Every failure the program fuzzer found, as the minimized program it shrank to.

Fixed bugs are plain tests; bugs still open are ``xfail(strict=True)`` with the reason, so
that a fix makes them pass loudly (and they must then become plain tests).
"""

import sys

import numpy as np
import pytest
from programs import Spec
from test_programs import check_first_order, drawn

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


# issue-16 families (the extended generator, seeds of its first runs) ------------------------
# each was wrong or crashed on 7d9ae64 and is fixed on main; the fuzz checker itself checks
# them: vjp with a random cotangent, grad, jvp, dtypes, and no argument, tangent or
# cotangent changed
def list_alias_in_a_pytree_function(p, w):
    x = p["x"]
    outs = [x]
    alias = outs
    alias.append(x * 2.0)
    return np.sum(np.stack(outs), axis=0) * w


def list_alias(x, y, w):
    outs = [x]
    alias = outs
    alias.append(x * y)
    return np.sum(np.stack(outs) * w)


def local_function_in_a_comprehension(x, y, w):
    def sq(v):
        return v * v * 0.5

    c = np.stack([sq(x * (j + 1.0)) for j in range(2)])
    return np.sum(c * w) + np.sum(y)


def dict_store_and_read(x, y, w):
    c = x * y
    d = {}
    d["p"] = c
    c = d["p"]
    return np.sum(c * w)


def repeated_index_update(p, w):
    u = p["x"] * p["y"]
    u[[1, 1]] += u[[2, 2]]
    return np.sum(u * w)


def dict_literal(p, w):
    x = p["x"]
    d = {"p": x * 2.0, "q": np.sin(x)}
    return np.sum(d["q"] * d["p"] * w)


def comprehension_in_a_pytree_function(p, w):
    x, y = p
    a = np.sum(np.stack([np.sin(x * y * (j + 1.0)) for j in range(3)]), axis=0)
    return np.sum(a * w)


def zero_derivative_ops(x, y, w):
    a = np.r_[x * y, x]
    b = np.c_[x, y * x]
    c = np.linspace(np.sum(x) * 0.1, np.mean(x), x.shape[-1])
    return np.sum(a**2) * 0.1 + np.sum(b * 0.5) + np.sum(c * w)


def einsum_sublists(x, y, w):
    return np.sum(np.einsum(x, [0, 1], [1]) * y) + np.sum(np.einsum(x, [0, 1], w, [0, 1], [1]))


def nan_on_the_untaken_side(x, y, w):
    c = x + y
    a = np.where(c > 0.05, np.sqrt(c), 0.0) + np.where(1.0 > np.abs(c), np.arcsin(c), np.sin(c))
    return (a + np.where(c > 0.05, np.log(c), c)) * w


def exactly_zero_derivatives(x, y, w):
    a = np.std(x[..., :1], axis=-1, keepdims=True) + x * y
    b = np.linalg.norm(x * 0.0) * x + np.zeros_like(x) ** (1.5 + np.sin(x))
    return np.sum((a + b + (x * 0.0) ** 0 * x) * w)


def keyed(p, *, k=2.0):
    return np.sin(p * k)


def scaled(p, s=0.5, shift=0.25):
    return np.tanh(p) * s + shift


def make_scale(k):
    def scale(p):
        return np.sin(p) * k

    return scale


scale3 = make_scale(0.75)


def copy_of_a_view_then_update(x, y, w):
    u = np.sin(x)
    a = u[::-1] * 1.0
    u[0] = x[0] * y[0]
    return np.sum(a + u)


def fill_then_return(x, y, w):
    u = np.sin(x) * y
    u.fill(0.5)
    return u * w


def fill_with_data_in_a_branch(x, y, w):
    a = x * 1.0
    u = np.sin(x)
    if np.mean(u) > 1.65:
        pass
    else:
        u.fill(np.sum(u * y))
    return (np.sum(a * w), u)


def mutating_calls(x, y, w):
    u = x * y
    np.multiply(u, x, out=u)
    np.sin(u, out=u)
    u.__iadd__(np.tanh(x))
    u.sort()
    np.copyto(u, u * x + y)
    return u * w


def keyword_only_default(x, y, w):
    c = x * y
    b, a = pair(keyed(c, k=1.5), keyed(x))
    return (a, b * w)


def helpers_with_defaults_and_a_closure(x, y, w):
    return np.sum((scaled(x) + scaled(x, shift=y) + scale3(x)) * w)


@pytest.mark.parametrize(
    ("f", "spec"),
    [
        # seeds 27, 485: u.fill(0.5) kept the gradient of what u held before
        (fill_then_return, Spec((3,), output="array")),
        # seed 6: u.fill(np.sum(...)) in a branch, a pair output
        (fill_with_data_in_a_branch, Spec((3,), output="pair")),
        # seeds 434, 34, 26: out=u, sort and __iadd__ (wrong gradients or refusals)
        (mutating_calls, Spec((2, 3), output="array")),
        # seed 2: a silently wrong jvp (0.39 off): the tangent of a = u[::-1] * 1.0
        # changed with the later update of u
        (copy_of_a_view_then_update, Spec((3,))),
        # seed 23: TypeError "unsupported operand type(s) for *: 'float' and 'NoneType'": a
        # keyword-only parameter's default (keyed's k) was None in the callee's derivative
        (keyword_only_default, Spec((1,), output="pair")),
        # seed 32: np.r_ (and np.c_, np.linspace of data) had a zero gradient
        (zero_derivative_ops, Spec((2, 3))),
        # seeds 19, 40: UnsupportedConstructError "the gradient of np.einsum with respect
        # to its argument 'subscripts' is not implemented" (sublist form)
        (einsum_sublists, Spec((2, 3))),
        # seed 5: NaN gradients from the side of np.where that is not taken
        (nan_on_the_untaken_side, Spec((4,), y="0d", output="array")),
        # seeds 25, 39: the std of one element and the norm of zeros gave NaN gradients
        (exactly_zero_derivatives, Spec((3, 2))),
        # seed 29: u[[1, 1]] += v adds v once in NumPy (the gradient counted it twice)
        (repeated_index_update, Spec((4,), pytree="dict")),
        # seed 35: UnsupportedConstructError "building a container of differentiable
        # values is not supported yet" for a dict literal
        (dict_literal, Spec((4,), pytree="dict")),
        # seed 234: UnsupportedConstructError "comprehensions are not supported yet" in a
        # function with a pytree argument (any comprehension)
        (comprehension_in_a_pytree_function, Spec((1, 1), pytree="tuple")),
        # seed 69: the appended element was missing from the value (vjp's value 0.16, not 0.47)
        (list_alias_in_a_pytree_function, Spec((2,), pytree="dict", output="array")),
        # seed 151: the same through an alias of a list, plain arguments
        (list_alias, Spec((4,))),
        # seed 83: NameError: name 'j1' is not defined (the inlined local function's body
        # read the comprehension's variable outside it)
        (local_function_in_a_comprehension, Spec((3, 1))),
        # seed 114: IndexError (a dict store compiled to an index write with the key)
        (dict_store_and_read, Spec((1, 4), y="0d")),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN on untaken sides, as NumPy warns
def test_issue_16_families(f, spec):
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-1, 1, spec.shape), rng.uniform(-1, 1, spec.shape[-1:])
    leaves, w = drawn(spec, x, y, rng.uniform(0.5, 1.5, spec.shape))
    check_first_order(f, spec, leaves, w, seed=3)


# second derivatives ---------------------------------------------------------------------
def calls_a_helper(x):
    return np.sum(helper(x, 0.5))


def test_second_order_through_a_helper_call():
    # was open (a clear error): the gradient differentiated again now has the helper
    # written out (srcad/transform/normalize/helpers.py)
    srcad.check_grad(calls_a_helper, X1, order=2, modes=("fwd", "rev"))


def appends_in_a_loop(x):
    outs = [x]
    for _ in range(2):
        outs.append(np.tanh(x) * x)
    return np.sum(np.stack(outs))


def test_second_order_of_a_list():
    srcad.check_grad(appends_in_a_loop, X1, order=2, modes=("fwd", "rev"))


# second derivatives of lists: seeds 508, 548, 648 (the generator's second-order programs
# had lists for a while, after the plain case above started to work)
def stack_of_a_comprehension(x, y):
    c = np.stack([y for _ in range(2)])
    return np.sum(y * c)


def list_in_an_untaken_branch(x, y):
    c = x
    if np.sum(x) > 50.0:
        items = [y, x]
        c = items[0]
    return np.sum(y * c)


def list_of_an_array_and_a_number(x, y):
    items = [y, 0.5]
    c = items[0]
    return np.sum(y * c * x)


LISTS = [stack_of_a_comprehension, list_in_an_untaken_branch, list_of_an_array_and_a_number]


@pytest.mark.parametrize("f", LISTS)
@pytest.mark.parametrize("y", [Y, np.float64(0.3)], ids=["row", "0-d"])
def test_forward_over_reverse_of_lists(f, y):
    srcad.check_grad(f, X2, y, wrt=(0, 1), order=2, modes=("fwd",))


@pytest.mark.parametrize("f", LISTS)
@pytest.mark.parametrize("y", [Y, np.float64(0.3)], ids=["row", "0-d"])
def test_reverse_over_reverse_of_lists(f, y):
    # was refused: the gradient's code called drop_gradient (no adjoint), and passed the
    # list to unbroadcast and scatter_element (refused as a list reaching an array helper)
    srcad.check_grad(f, X2, y, wrt=(0, 1), order=2, modes=("rev",))


# fuzz seed 368 (second order): a name bound in an untaken branch, then rebound ----------
def rebound_after_an_untaken_branch(x, y):
    if np.sum(y) > 54.82:
        a = x
    a = y
    a = np.sin(a)
    return np.sum(a * x)


def test_second_order_after_a_rebinding_in_an_untaken_branch():
    # was: a wrong forward-over-reverse Hessian-vector product
    srcad.check_grad(
        rebound_after_an_untaken_branch, X1, X1 * 0.5, wrt=(0, 1), order=2, modes=("fwd", "rev")
    )


def update_in_place(x):
    u = np.sin(x)
    u[1] = u[1] * x[1]
    return np.sum(u)


def test_reverse_over_reverse_of_an_update_in_place():
    # was refused: the gradient's restore(u, 1, tape.pop()) had no adjoint (it is now
    # u = setitem(u, 1, tape.pop()) when differentiated again)
    srcad.check_grad(update_in_place, X1, order=2, modes=("rev",))


def test_forward_over_reverse_of_an_update_in_place():
    # was refused as "a call for its side effect on a differentiated value"
    srcad.check_grad(update_in_place, X1, order=2, modes=("fwd",))


# fuzz seeds 524 and 584 (second order): a row updated in place, its gradient differentiated
def row_updated(x, y, w):
    u = np.sin(x) * y
    u[0] = u[0] * x[0]
    return np.sum(np.sin(u) * w)


def test_second_order_of_an_update_of_a_row():
    # was: a wrong forward-over-reverse Hessian-vector product: the gradient keeps the view
    # _t1 = u[0], and forward mode updated the tangent of u in place without putting back
    # (the tangent of) what the restore puts back, which nothing read but that view
    srcad.check_grad(row_updated, X2, Y, X2 + 1.0, wrt=(0, 1), order=2, modes=("fwd", "rev"))


def copied_then_updated(x):
    y = x.copy()
    y[0] = y[0] * np.sin(y[1])
    return y * x


def test_forward_over_forward_of_a_copy_updated_in_place():
    # was: a wrong second derivative, and the caller's tangent changed: in the jvp's code
    # the update is _t3 = setitem(y, 0, ...), which the next jvp did not see as an update
    # of y, so the tangent of y = x.copy() was the tangent passed in, then written into
    u, v = X1 * 0.5 + 0.1, X1[::-1].copy()
    given = u.copy()

    def tangent(x):
        return srcad.jvp(copied_then_updated, (x,), (v,))[1]

    _, second = srcad.jvp(tangent, (X1,), (u,))
    np.testing.assert_array_equal(u, given)
    eps = 1e-6
    expected = (tangent(X1 + eps * u) - tangent(X1 - eps * u)) / (2 * eps)
    np.testing.assert_allclose(second, expected, rtol=1e-6, atol=1e-8)


# issue #17: second derivatives of a recursion whose depth depends on data -----------------
def shrink(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(np.sin(x) * x) * n
    return shrink(x / 2.0, n) * 1.5 + np.sum(x**3) * 0.01


def shrink_linear(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(x)
    return shrink_linear(x / 2.0, n)


def calls_shrink(x):
    return shrink(np.tanh(x) * 4.0, 2.0) ** 2


def ping(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(np.cos(x))
    return pong(x * 0.6, n) * n


def pong(x, n):
    return ping(x - 0.1, n) + np.sum(x * x) * 0.1


def constant_self_call(x, n):
    if n == 0:
        return np.sum(np.sin(x))
    return constant_self_call(x * 2.0, 0) * n


RECURSIONS = [
    (shrink, (np.array([3.0, 1.2]), 2.0)),
    (calls_shrink, (np.array([3.0, -1.2]),)),
    (ping, (np.array([3.0, 1.2]), 1.5)),
    (constant_self_call, (np.array([0.3, 0.5]), 2)),
]


@pytest.mark.parametrize("f, args", RECURSIONS, ids=[f.__name__ for f, _ in RECURSIONS])
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_second_order_of_a_recursion_whose_depth_depends_on_data(f, args, mode):
    # was: hessian leaked the inliner's internal _NotUnrolled (a function calling itself),
    # KeyError for constant_self_call; a helper's recursion was refused by name
    srcad.check_grad(f, *args, order=2, modes=(mode,))


def test_hessian_of_a_recursion_whose_depth_depends_on_data():
    x, I2 = np.array([3.0, 1.0]), np.eye(2)
    np.testing.assert_array_equal(srcad.hessian(shrink_linear)(x, 0), np.zeros((2, 2)))
    h = srcad.hessian(shrink)(x, 2.0)
    eps = 1e-6
    gradient = srcad.grad(shrink)
    rows = [(gradient(x + eps * e, 2.0) - gradient(x - eps * e, 2.0)) / (2 * eps) for e in I2]
    np.testing.assert_allclose(h, np.stack(rows), rtol=1e-6, atol=1e-8)
    assert np.max(np.abs(h)) > 0.1  # (not a linear case: the check can fail)


def halves(x, n):
    if np.sum(x * x) < 1.0:
        return np.sin(x), np.sum(x * x)
    a, b = halves(x / 2.0, n)
    return a * x, b * 2.0 + np.sum(a)


def uses_halves(x):
    a, b = halves(x, 1)
    return np.sum(a * a) + b**2


def test_second_order_of_a_recursion_returning_a_tuple():
    # was refused by name; now followed as a one-value recursion is (tests/
    # test_recursion_data_depth.py checks it against differences of the gradient)
    srcad.check_grad(uses_halves, np.array([3.0, 1.2]), order=2, modes=("fwd", "rev"))


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
    from programs import write

    sources = [write(seed)[0] for seed in range(200)]
    assert any("np.sqrt(1.0 + (" in source for source in sources)
    assert all(
        part.startswith("(") for source in sources for part in source.split("np.sqrt(1.0 + ")[1:]
    )


def test_helpers_rebound_after_a_derivative_was_built():
    # the fuzz checker's 'rebind' step (programs.py: "rebound defaults and closures"): the
    # derivative built before the helpers' defaults and the closure changed went stale
    from test_programs import rebound

    spec = Spec((3,))
    rng = np.random.default_rng(5)
    leaves, w = drawn(spec, rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), np.ones(3))
    f = helpers_with_defaults_and_a_closure
    check_first_order(f, spec, leaves, w, seed=5)
    with rebound(sys.modules[__name__]):
        check_first_order(f, spec, leaves, w, seed=6)
    check_first_order(f, spec, leaves, w, seed=7)


# seeds 310, 361, 441, 718, 891, 947: a list holding an array that is then updated in place
def list_holding_an_updated_array(x, y, w):
    u = x * y
    items = [u, x]
    u[1] = 0.13
    b = items[0]  # the same array as u: NumPy shows the update
    return b * w


def test_a_list_holding_an_array_updated_later():
    # was: a silently wrong gradient and jvp (items[0] differentiated as u before the
    # update: the pullback's x[1] was y[1] * w[1], not 0); now refused clearly (10a3995),
    # and a correct result would do too
    spec = Spec((3,), output="array")
    rng = np.random.default_rng(4)
    leaves, w = drawn(spec, rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), np.ones(3))
    try:
        check_first_order(list_holding_an_updated_array, spec, leaves, w, seed=4)
    except srcad.TransformError as exc:
        assert "shares memory with 'items'" in str(exc)
        assert "test_regressions.py:" in str(exc)


# fuzz seed 602840 (campaign, second order): a constant saved on a tape beside varied values
def constant_saved_beside_varied_values(x):
    a = x
    for _ in range(3):
        return np.sum(np.zeros_like(a) ** (1.5 + a))


def save_a_constant_beside_varied_values(x):
    a = x
    for _ in range(3):
        b = np.zeros_like(a) + 0.5
        a = np.sin(a) * b ** (1.5 + a)
    return np.sum(a)


@pytest.mark.parametrize(
    "f", [constant_saved_beside_varied_values, save_a_constant_beside_varied_values]
)
def test_a_constant_saved_on_a_tape_stays_constant(f):
    # was: NaN in the Hessian-vector products: the gradient saves zeros_like(a) on the
    # tape that also saves varied values, and its pop was taken to vary, so the power
    # rule's base term d_t5 * b * _t5 ** (b - 1) met 0 * inf
    x = RNG.uniform(-1, 1, 3)
    srcad.check_grad(f, x, modes=("fwd", "rev"), order=2)
    x[1] = -0.9  # an exponent below 1 at the zero base
    hvp = srcad.hvp(f, (x,), (np.ones(3),))[1]
    assert np.isfinite(hvp).all()


def test_third_order_through_pops_whose_values_are_dropped():
    # the second derivative pops the constant's saved value without using it (a bare
    # tape.pop()); the third keeps that pop paired with its push on its own tapes
    def f(x):
        a = x
        for _ in range(3):
            b = np.zeros_like(a) + 0.5
            a = np.sin(a) * b ** (1.5 + a)
        return a

    g2 = srcad.grad(srcad.grad(f))
    g3 = srcad.grad(g2)
    x, eps = 0.3, 1e-5
    np.testing.assert_allclose(g3(x), (g2(x + eps) - g2(x - eps)) / (2 * eps), rtol=1e-5)
    np.testing.assert_allclose(srcad.jvp(g2, (x,), (1.0,))[1], g3(x), rtol=1e-10)


def check_at_random_inputs(f, spec: Spec, seed: int) -> None:
    """The fuzzer's first-order checks of ``f`` at inputs drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, spec.shape), rng.uniform(-1, 1, spec.shape[-1:])
    leaves, w = drawn(spec, x, y, np.ones(spec.shape))
    check_first_order(f, spec, leaves, w, seed=seed)


# fuzz seed 603173 (campaign): a helper's result that is its argument, read by the backward
# pass after the argument was changed in place -------------------------------------------
def same_array(p, q):
    return q


def tail_of(q):
    return q[1:]


def same_array_again(q):
    return same_array(None, q)


def fill_from_a_returned_argument(x, y):
    u = x * y
    u.fill(np.sum(np.abs(same_array(x, u))))
    return u


def assign_from_a_returned_view(x, y):
    u = x * y
    u[...] = np.sum(np.abs(tail_of(u)))
    return u


def update_in_a_loop_from_a_returned_argument(x, y):
    u = x * y
    for i in range(2):
        u[i] = np.sum(np.sin(same_array(x, u)))
    return u


def fill_through_two_helpers(x, y):
    u = x * y
    t = np.sum(np.abs(same_array_again(u)))
    u.fill(t)
    return u


@pytest.mark.parametrize(
    "f",
    [
        fill_from_a_returned_argument,
        assign_from_a_returned_view,
        update_in_a_loop_from_a_returned_argument,
        fill_through_two_helpers,
    ],
)
def test_a_returned_argument_read_by_the_backward_pass_after_an_update(f):
    # was: a silently wrong pullback (dx[1] = 2.7 instead of -2.7): abs's adjoint read
    # sign(_t1), where _t1 is u itself (the helper returns its argument), after u.fill
    # changed it; the vjp saved nothing, as it did not know _t1 shares u's memory
    check_at_random_inputs(lambda x, y, w: f(x, y) * w, Spec((3,), output="array"), seed=7)


def scaled_by_first(p, q):
    return p * q


def fill_after_a_helper_kept_the_array(x, y):
    u = x * y
    u.fill(np.sum(scaled_by_first(x, u)))
    return u


def update_in_a_loop_after_a_helper_kept_the_array(x, y):
    u = x * y
    for i in range(2):
        u[i] = np.sum(np.sin(scaled_by_first(x, u)))
    return u


@pytest.mark.parametrize(
    "f", [fill_after_a_helper_kept_the_array, update_in_a_loop_after_a_helper_kept_the_array]
)
def test_a_helper_call_keeps_an_argument_updated_in_place_later(f):
    # fuzz seed 603173, minimized: was a silently wrong pullback (dx[0] 1.32 instead of
    # 0.9): the helper's residuals hold u itself, and u.fill changed it before the helper's
    # backward pass read it; now u's old contents are saved and put back before that
    spec = Spec((2,), y="0d", output="array")
    check_at_random_inputs(lambda x, y, w: f(x, y) * w, spec, seed=3)


# fuzz seed 47 (after adding pick to the generator): a helper's result broadcast, in a branch
def pick(p, q):
    return q


def broadcast_result_of_a_helper(p, w):
    x = p["x"]
    a = x
    c = x
    outs = [a]
    for _ in range(0):
        return w
    outs.append(pick(a, c[2]) * x)
    return np.stack(outs)


def test_a_helper_result_broadcast_in_a_branch_gets_its_own_shape_back():
    # was: ValueError "could not broadcast input array from shape (3,3) into shape (3,)": the
    # adjoint of pick(a, c[2]) (shape (3,)), a term broadcast against x and not yet
    # reduced (the call sits in the branch an early return makes), went to the helper's
    # backward pass unreduced
    spec = Spec((3, 3), y="float", pytree="dict", output="array")
    check_at_random_inputs(broadcast_result_of_a_helper, spec, seed=47)


# fuzz seed 22616 (found while extending second order through recursive helpers), minimized
def branchy_helper(p, t):
    if np.sum(p) > t:
        return np.tanh(p) * 2.0
    return p * 0.5 + 0.1


def picks_from_a_helper_in_a_loop(x, y):
    b = x * 1.0
    for _ in range(1):
        e8, f8 = branchy_helper(y, -0.68)[:2]
        b = b + e8 * f8
    return np.sum(b)


def test_reverse_over_reverse_resets_only_arrays():
    # was: TypeError "'float' object does not support item assignment" in reset(): the
    # adjoint of a value a tape gave back as None is the number 0.0, later "put back"
    x, y = np.array([0.3, -0.2, 0.5]), np.array([0.4, 0.1, -0.3])
    for mode in ("rev", "fwd"):
        assert srcad.check_grad(picks_from_a_helper_in_a_loop, x, y, wrt=(0, 1), order=2,
                                modes=(mode,)) < 1e-6  # fmt: skip
