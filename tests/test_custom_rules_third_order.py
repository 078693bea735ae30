"""Third order through the custom rules (#17): a srcad.checkpoint function is
differentiated as the plain function from second order on; a srcad.custom_vjp function's
``fwd`` and ``bwd`` and a srcad.custom_jvp function's ``jvp`` are differentiated as Python
functions (as JAX does), written out in the code differentiated again. Jvp of the
hessian, reverse three times, reverse over forward over reverse and jacobian three times
are each checked against central differences of the next-lower derivative; rules that are
not the function's own derivative show that the rule is what is differentiated. What
still cannot be done is refused, naming the function: forward mode over a custom_vjp
function (by design, as in JAX), and residuals holding a dict or list."""

import numpy as np
import pytest
from test_third_order_rules import (
    _close,
    check_along_varying_directions,
    check_jvp_of_hessian,
    check_reverse_three_times,
)

import srcad

RNG = np.random.default_rng(17)
ARGS = (RNG.normal(size=3), RNG.normal(size=3), RNG.uniform(0.5, 1.0, size=3))
EPS = 1e-5


@srcad.checkpoint
def checked(a, b):
    return np.sin(a) * b + a * a


@srcad.custom_jvp
def smooth(x):
    return np.log1p(np.exp(x))


@smooth.defjvp
def smooth_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return smooth(x), dx / (1.0 + np.exp(-x))


@srcad.custom_vjp
def soft(p, q):
    return np.tanh(p) * q


def soft_fwd(p, q):
    t = np.tanh(p)
    return t * q, (t, q)


def soft_bwd(res, g):
    t, q = res
    return g * (1.0 - t * t) * q, g * t


soft.defvjp(soft_fwd, soft_bwd)


# ---- rules that are not the function's derivative: the rule is what is differentiated ----


@srcad.custom_jvp
def fast_exp(x):
    return np.exp(x)


@fast_exp.defjvp
def fast_exp_jvp(primals, tangents):
    # twice the true derivative, through the function itself: each order doubles again
    (x,), (dx,) = primals, tangents
    y = fast_exp(x)
    return y, 2.0 * y * dx


@srcad.custom_jvp
def tripled_sin(x):
    return np.sin(x)


@tripled_sin.defjvp
def tripled_sin_jvp(primals, tangents):
    # three times the true derivative; from the second order on, this rule's tangent is
    # differentiated as Python (so central differences of each order check the next)
    (x,), (dx,) = primals, tangents
    return tripled_sin(x), 3.0 * np.cos(x) * dx


@srcad.custom_vjp
def fast_exp_vjp(x):
    return np.exp(x)


def fast_exp_fwd(x):
    return np.exp(x), x


def fast_exp_bwd(x, g):
    return (2.0 * g * fast_exp_vjp(x),)


fast_exp_vjp.defvjp(fast_exp_fwd, fast_exp_bwd)


@srcad.custom_vjp
def scaled_sin(p, q):
    return np.sin(p) * q


def scaled_sin_fwd(p, q):
    c = np.cos(p)
    return np.sin(p) * q, (c, (q, np.sin(p)))  # nested tuple residuals


def scaled_sin_bwd(res, g):
    c, (q, s) = res
    return 3.0 * g * c * q, g * s  # three times the derivative in p


scaled_sin.defvjp(scaled_sin_fwd, scaled_sin_bwd)


@srcad.custom_jvp
def product(a, b, scale=2.0):
    return a * b * scale


@product.defjvp
def product_jvp(primals, tangents):
    a, b, scale = primals
    da, db, _ = tangents
    # the true derivative, plus a term in da that is not: 0.5 * scale * b * b * da
    return product(a, b, scale), scale * (da * b + a * db) + 0.5 * scale * b * b * da


@srcad.custom_vjp
def pair(p):
    return np.tanh(p), p * p


def pair_fwd(p):
    t = np.tanh(p)
    return (t, p * p), (t, (p,))


def pair_bwd(res, g):
    t, (p,) = res
    gt, gs = g
    return (gt * (1 - t * t) + gs * 2.0 * p,)


pair.defvjp(pair_fwd, pair_bwd)


def through_checkpoint(x, y, w):
    return np.sum(checked(x * y, w) ** 2 * np.cos(y))


def through_custom_jvp(x, y, w):
    return np.sum(smooth(x * y) ** 3 * w)


def through_custom_vjp(x, y, w):
    return np.sum(soft(x * y, 0.75) * w)


def through_both_arguments(x, y, w):
    return np.sum(soft(x * y, y * w + 1.0) ** 2 * w)


def through_tripled_sin(x, y, w):
    return np.sum(tripled_sin(x * y) * w)


def through_scaled_sin(x, y, w):
    return np.sum(scaled_sin(x * y, w) ** 2)


def through_product(x, y, w):
    # (linear in product's values: what a rule that is not the derivative gives at one
    # order is what the next order differentiates, as the differences see it)
    return np.sum(product(x * y, y * w) * w + 0.5 * product(y, x, scale=w))


def through_two_outputs(x, y, w):
    a, b = pair(x * y)
    return np.sum(a * b * w)


CHECKS = [check_jvp_of_hessian, check_reverse_three_times, check_along_varying_directions]
# (forward mode over a custom_vjp function is refused, as in JAX: reverse over forward
# over reverse runs forward mode over the gradient in w, where soft is called as itself)
REVERSE_ONLY = [check_jvp_of_hessian, check_reverse_three_times]
CASES = [
    (through_checkpoint, CHECKS),
    (through_custom_jvp, CHECKS),
    (through_tripled_sin, CHECKS),
    (through_product, CHECKS),
    (through_custom_vjp, REVERSE_ONLY),
    (through_both_arguments, REVERSE_ONLY),
    (through_scaled_sin, REVERSE_ONLY),
    (through_two_outputs, REVERSE_ONLY),
]
PAIRS = [(f, check) for f, checks in CASES for check in checks]


@pytest.mark.parametrize("f, check", PAIRS, ids=[f"{f.__name__}-{c.__name__}" for f, c in PAIRS])
def test_third_order_against_differences_of_the_second(f, check):
    check(f, ARGS)


def test_lower_orders_through_the_custom_rules():
    # what the third order stands on: first and second order
    # (the rules that are not the function's derivative differ from differences of the
    # function itself: the tests below check them by their closed forms)
    for f in (through_checkpoint, through_custom_jvp):
        srcad.check_grad(f, *ARGS, wrt=(0, 1, 2), order=2, modes=("rev", "fwd"))
    for f in (through_custom_vjp, through_both_arguments, through_two_outputs):
        srcad.check_grad(f, *ARGS, wrt=(0, 1, 2), order=2, modes=("rev",))


def _third_by_reverse(f, x, u, v):
    """``grad(x -> sum(u * grad(x -> sum(v * grad(f)(x)))(x)))(x)``."""

    def inner(x):
        return np.sum(v * srcad.grad(f)(x))

    def outer(x):
        return np.sum(u * srcad.grad(inner)(x))

    return srcad.grad(outer)(x)


def test_a_custom_jvp_rule_is_what_is_differentiated():
    # tripled_sin's rule is three times cos: the third derivative of sum(w * tripled_sin)
    # is -3 w cos(x) (the function's own: -w cos(x)), in each mode
    x, _, w = ARGS
    u, v = RNG.normal(size=3), RNG.normal(size=3)

    def f(x):
        return np.sum(w * tripled_sin(x))

    _, third = srcad.jvp(srcad.hessian(f), (x,), (u,))
    np.testing.assert_allclose(third, np.diag(-3.0 * w * np.cos(x) * u), rtol=1e-12)
    np.testing.assert_allclose(
        _third_by_reverse(f, x, u, v), -3.0 * w * np.cos(x) * u * v, rtol=1e-12
    )
    jacobians = srcad.jacobian(srcad.jacobian(srcad.grad(f)))(x)
    np.testing.assert_allclose(np.einsum("iii->i", jacobians), -3.0 * w * np.cos(x), rtol=1e-12)


def test_a_custom_jvp_rule_is_differentiated_at_each_order():
    # fast_exp's rule says d fast_exp = 2 fast_exp dx: through the rule, the third
    # derivative of sum(w * fast_exp(x)) is 8 w exp(x) (the function's own: w exp(x))
    x, _, w = ARGS
    u, v = RNG.normal(size=3), RNG.normal(size=3)

    def f(x):
        return np.sum(w * fast_exp(x))

    _, third = srcad.jvp(srcad.hessian(f), (x,), (u,))
    np.testing.assert_allclose(third, np.diag(8.0 * w * np.exp(x) * u), rtol=1e-12)
    by_reverse = _third_by_reverse(f, x, u, v)
    np.testing.assert_allclose(by_reverse, 8.0 * w * np.exp(x) * u * v, rtol=1e-12)
    jacobians = srcad.jacobian(srcad.jacobian(srcad.grad(f)))(x)
    np.testing.assert_allclose(np.einsum("iii->i", jacobians), 8.0 * w * np.exp(x), rtol=1e-12)
    third = srcad.jacobian(srcad.jacobian(srcad.jacobian(fast_exp)))(x)
    np.testing.assert_allclose(np.einsum("iiii->i", third), 8.0 * np.exp(x), rtol=1e-12)


def test_a_custom_vjp_rule_is_differentiated_at_each_order():
    # fast_exp_vjp's bwd calls the function again: d^3/dx^3 through it is 8 exp(x)
    x, _, w = ARGS
    u, v = RNG.normal(size=3), RNG.normal(size=3)

    def f(x):
        return np.sum(w * fast_exp_vjp(x))

    by_reverse = _third_by_reverse(f, x, u, v)
    np.testing.assert_allclose(by_reverse, 8.0 * w * np.exp(x) * u * v, rtol=1e-12)
    # scaled_sin's bwd is three times the derivative in p: the third derivative of
    # sum(scaled_sin(x, 1)) in x is -3 cos(x), differentiating bwd as a Python function
    ones = np.ones(3)

    def g(x):
        return np.sum(scaled_sin(x, ones))

    np.testing.assert_allclose(_third_by_reverse(g, x, u, v), -3.0 * np.cos(x) * u * v, rtol=1e-12)
    _, third = srcad.jvp(srcad.hessian(g), (x,), (u,))
    np.testing.assert_allclose(third, np.diag(-3.0 * np.cos(x) * u), rtol=1e-12)
    jacobians = srcad.jacobian(srcad.jacobian(srcad.grad(g)))(x)
    np.testing.assert_allclose(np.einsum("iii->i", jacobians), -3.0 * np.cos(x), rtol=1e-12)


def test_jacobian_three_times_through_a_custom_jvp_function():
    # a vector output: each level is forward mode over the code of the one before
    x, y, _ = ARGS

    def f(x, y):
        return smooth(x * y) * y + product(x, y) ** 2

    nested = srcad.jacobian(srcad.jacobian(f))
    third = srcad.jacobian(nested)(x, y)
    up, down = nested(x + EPS * np.eye(3)[1], y), nested(x - EPS * np.eye(3)[1], y)
    _close("jacobian three times, along x[1]", third[..., 1], (up - down) / (2 * EPS))


@srcad.custom_vjp
def dict_residuals(p):
    return np.sin(p)


def dict_residuals_fwd(p):
    return np.sin(p), {"c": np.cos(p)}


def dict_residuals_bwd(res, g):
    return (g * res["c"],)


dict_residuals.defvjp(dict_residuals_fwd, dict_residuals_bwd)


def through_dict_residuals(x, y, w):
    return np.sum(dict_residuals(x * y) * w)


def test_residuals_holding_a_dict_are_refused_by_name_at_third_order():
    # second order works (the residuals' structure is met at run time)
    srcad.check_grad(through_dict_residuals, *ARGS, wrt=(0, 1, 2), order=2, modes=("rev",))
    named = r"dict_residuals, a custom_vjp function.*its fwd returns residuals holding a dict"
    with pytest.raises(srcad.TransformError, match=named):
        check_reverse_three_times(through_dict_residuals, ARGS)
    with pytest.raises(srcad.TransformError, match=named):
        check_jvp_of_hessian(through_dict_residuals, ARGS)


def test_forward_mode_over_a_custom_vjp_function_is_refused_by_name():
    with pytest.raises(srcad.TransformError, match="custom vjp, which forward mode cannot use"):
        check_along_varying_directions(through_custom_vjp, ARGS)


def of_a_constant_through_custom_jvp(x, y, w):
    return np.sum(smooth(y) * x**3 * w)


def test_third_order_with_a_custom_jvp_of_constants():
    # hessian(wrt=0) leaves y constant (fuzz seed 224 built the rule's transposed
    # function for no argument with an empty wrt there, a ValueError from srcad.grad; this
    # smaller program does not reach that path, the fuzzer's family does)
    x, y, w = ARGS
    v = RNG.normal(size=3)
    hessian = srcad.hessian(of_a_constant_through_custom_jvp, wrt=0)
    _, got = srcad.jvp(hessian, (x, y, w), (v, None, None))
    h = 1e-5
    want = (hessian(x + h * v, y, w) - hessian(x - h * v, y, w)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # the closed form: d/dx of diag(6 x w smooth(y)) along v
    np.testing.assert_allclose(got, np.diag(6 * v * w * smooth(y)), rtol=1e-10)


@srcad.custom_vjp
def untupled(p, q):
    return p * q


def untupled_fwd(p, q):
    return p * q, (p, q)


def untupled_bwd(res, g):
    p, q = res
    return g * np.stack([q, p])  # an array, not a tuple: refused, not unpacked by rows


untupled.defvjp(untupled_fwd, untupled_bwd)


def through_untupled(x, y, w):
    return np.sum(untupled(x * y, 2.0 * x) * w)


@pytest.mark.parametrize("check", REVERSE_ONLY, ids=[c.__name__ for c in REVERSE_ONLY])
def test_a_bwd_returning_no_tuple_is_refused_at_third_order(check):
    # (written out, nothing else runs bwd first: the written-out code checks the tuple)
    with pytest.raises(TypeError, match="the bwd of untupled must return a tuple"):
        check(through_untupled, ARGS)


X, Y, W = ARGS
WEIGHTS = np.outer(W, Y)


def vector_through_custom_jvp(x):
    return np.sum(smooth(x * Y) ** 3 * W + product(x, Y) ** 2)


def vector_through_custom_vjp(x):
    a, b = pair(x)
    return np.sum(soft(x * Y, x + 1.0) ** 2 * W + a * b)


def weighted_hessian_through_custom_jvp(x):
    return np.sum(srcad.hessian(vector_through_custom_jvp)(x) * WEIGHTS)


def weighted_hessian_through_custom_vjp(x):
    return np.sum(srcad.hessian(vector_through_custom_vjp)(x) * WEIGHTS)


@pytest.mark.parametrize(
    "f, inside",
    [
        (vector_through_custom_jvp, weighted_hessian_through_custom_jvp),
        (vector_through_custom_vjp, weighted_hessian_through_custom_vjp),
    ],
    ids=["custom_jvp", "custom_vjp"],
)
def test_jacobian_of_the_hessian_and_grad_of_a_hessian_inside(f, inside):
    hessian = srcad.hessian(f)
    numeric = np.stack(
        [(hessian(X + EPS * e) - hessian(X - EPS * e)) / (2 * EPS) for e in np.eye(3)], axis=-1
    )
    _close("jacobian of the hessian", srcad.jacobian(hessian)(X), numeric)
    _close("grad of a function calling srcad.hessian", srcad.grad(inside)(X),
           np.einsum("ij,ijk->k", WEIGHTS, numeric))  # fmt: skip


# ---- the custom rules called in a loop: the residuals recorded on a tape (#17) ----


@srcad.custom_jvp
def blend(p, q, s=0.5):
    return np.sin(p) * q * s


@blend.defjvp
def blend_jvp(primals, tangents):
    p, q, s = primals
    dp, dq, ds = tangents
    return np.sin(p) * q * s, (np.cos(p) * q * dp + np.sin(p) * dq) * s + np.sin(p) * q * ds


@srcad.custom_vjp
def nested_soft(p, q):
    return np.tanh(p) * q


def nested_soft_fwd(p, q):
    t = np.tanh(p)
    return t * q, (t, (q, 1.0))


def nested_soft_bwd(res, g):
    t, (q, one) = res
    return g * (1.0 - t * t) * q * one, g * t


nested_soft.defvjp(nested_soft_fwd, nested_soft_bwd)


def blend_in_a_loop(x, y, w):
    # (the call of tests/fuzz/programs.py's f11: a value carried from one turn to the next)
    a = x * 1.0
    u = np.sin(x * y) * 0.5
    for _ in range(0, 3, 2):
        t = blend(u, np.cos(u), 0.75) * 0.25
        a = t * a + w
    return np.sum(a * x)


def blend_of_the_carried_value(x, y, w):
    a = x * y
    for _ in range(2):
        a = blend(a, np.cos(a) + w, 0.75) + 0.5 * a
    return np.sum(a * w)


def smooth_in_a_for_loop(x, y, w):
    a = x * y
    for _ in range(3):
        a = smooth(a * w) - 0.5 * a
    return np.sum(a * y)


def smooth_in_a_while_loop(x, y, w):
    a = x * y
    k = 0
    while k < 3:
        a = smooth(a) * w + 0.25 * a
        k += 1
    return np.sum(a * a)


def soft_in_a_loop(x, y, w):
    a = x * 1.0
    for _ in range(3):
        a = soft(a * y, w) + 0.5 * a
    return np.sum(a * w)


def nested_soft_in_a_loop(x, y, w):
    a = x * 1.0
    for _ in range(2):
        a = nested_soft(a * y, w + 0.5) + 0.5 * a
    return np.sum(a * w)


def _updated_in_place(p):
    p[..., :1] = np.tanh(p[..., :1])
    return np.sum(p * np.cos(p))


grad_updated_in_place = srcad.grad(_updated_in_place)


def blend_into_a_gradient_in_a_loop(x, y, w):
    # (an exception branch in a loop, into a gradient whose in-place update puts values
    # on the tape that are taken back into other names: the residuals still split)
    a = x * 1.0
    u = np.sin(x * y) * 0.5
    for _ in range(0, 3, 2):
        try:
            t = x * w
            if np.sum(x) > 10.0:
                raise ValueError("taken")
        except ValueError:
            t = grad_updated_in_place(blend(u, np.cos(u), 0.75)) * 0.25
        a = t * a
    return np.sum(a * x)


def blend_into_a_gradient_in_a_loop_taken(x, y, w):
    a = x * 1.0
    u = np.sin(x * y) * 0.5
    for _ in range(0, 3, 2):
        t = grad_updated_in_place(blend(u, np.cos(u) * w, 0.75)) * 0.25
        a = t * a + w
    return np.sum(a * x)


def checkpoint_in_a_loop(x, y, w):
    a = x * 1.0
    for _ in range(2):
        a = checked(a, y) * w
    return np.sum(a * np.cos(y))


LOOP_CASES = [
    (blend_in_a_loop, CHECKS),
    (blend_of_the_carried_value, CHECKS),
    (smooth_in_a_for_loop, CHECKS),
    (smooth_in_a_while_loop, CHECKS),
    (soft_in_a_loop, REVERSE_ONLY),
    (nested_soft_in_a_loop, REVERSE_ONLY),
    (checkpoint_in_a_loop, CHECKS),
    # (the two slowest: the third order along varying directions, 10 s each, is left to
    # the cases above; jvp of hessian and reverse three times check these)
    (blend_into_a_gradient_in_a_loop, CHECKS[:2]),
    (blend_into_a_gradient_in_a_loop_taken, CHECKS[:2]),
]
LOOP_PAIRS = [(f, check) for f, checks in LOOP_CASES for check in checks]


@pytest.mark.parametrize(
    "f, check", LOOP_PAIRS, ids=[f"{f.__name__}-{c.__name__}" for f, c in LOOP_PAIRS]
)
def test_third_order_through_a_custom_rule_called_in_a_loop(f, check):
    check(f, ARGS)


@pytest.mark.parametrize("f", [f for f, _ in LOOP_CASES], ids=[f.__name__ for f, _ in LOOP_CASES])
def test_lower_orders_through_a_custom_rule_called_in_a_loop(f):
    modes = ("rev",) if "soft" in f.__name__ else ("rev", "fwd")
    srcad.check_grad(f, *ARGS, wrt=(0, 1, 2), order=2, modes=modes)


TAPED = """
def f(x):
    tape = Tape()
    r = None
    for k in range(3):
        tape.push(r)
        r = (x * k, (x + k, 2.0))
    out = r[0] * 0.0
    for k in range(3):
        out = out + r[0] * k + r[1][0] - r[1][1]
        r = tape.pop()
    return out
"""
# (the tape's pops not all going back to the names pushed; r read whole while None)
UNSPLIT = {
    "bare pop": ("        r = tape.pop()", "        tape.pop()"),
    "read while None": ("    return out", "    return out, r is None"),
    "the user's class named Tape": ("", ""),
}


@pytest.mark.parametrize("form", ["split", *UNSPLIT])
def test_a_tuple_on_a_tape_splits_with_its_pushes_and_pops(form):
    # the split pushes each element and pops them back in reverse order, and starts each
    # as None; a tape whose pops do not all go back to the names pushed is left whole, and
    # so is a name read whole while None
    import gast

    from srcad.runtime.tape import Tape
    from srcad.transform.codegen import to_source
    from srcad.transform.naming import Namer
    from srcad.transform.normalize.tuples import split_tuples

    text = TAPED.replace(*UNSPLIT[form]) if form in UNSPLIT else TAPED
    tree = gast.parse(text).body[0]
    namer = Namer.for_tree(tree)
    if form != "the user's class named Tape":
        namer.globals["Tape"] = Tape
    split = to_source(split_tuples(tree, namer))
    assert ("r_1_0" in split) is (form == "split"), split
    before, after = {"Tape": Tape}, {"Tape": Tape}
    exec(text, before)
    exec(split, after)
    x = np.array([0.5, -1.5])
    want, got = before["f"](x), after["f"](x)
    assert srcad.pytree.flatten(got)[1] == srcad.pytree.flatten(want)[1]
    for a, b in zip(srcad.pytree.flatten(got)[0], srcad.pytree.flatten(want)[0]):
        np.testing.assert_array_equal(a, b)
