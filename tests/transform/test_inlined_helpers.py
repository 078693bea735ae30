"""Second derivatives through calls of your own functions: the gradient differentiated
again has the helpers written out (srcad/transform/normalize/helpers.py). Checked against
finite differences in both modes, for early returns, defaults, keywords, helpers of
helpers and helpers in loops; and the derivative goes stale when a helper's code, defaults
or globals change."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -1.2, 2.0])
SCALE = 1.5


def shaped(p, s=0.5, shift=0.25):
    return np.tanh(p) * s + shift


def branchy(p, t):
    if np.sum(p) > t:
        return np.tanh(p) * 2.0
    q = p * p
    return q * 0.5 + 0.1


def scaled_by_global(p):
    return np.sin(p) * SCALE


def two_levels(p):
    return shaped(p, shift=0.0) * scaled_by_global(p)


def loss(x):
    total = 0.0
    for k in range(2):
        total = total + np.sum(shaped(x * (k + 1.0), s=0.7) ** 2)
    return total + np.sum(branchy(x, 0.5)) + np.sum(two_levels(x))


@pytest.mark.parametrize("x", [X, -X])
def test_hessian_through_helpers_against_finite_differences(x):
    srcad.check_grad(loss, x, order=2, modes=("rev", "fwd"))
    h = srcad.hessian(loss)(x)
    assert h.shape == (3, 3) and not np.allclose(h, 0.0)


def test_first_order_code_still_calls_the_helpers():
    text = srcad.source(srcad.grad(loss))
    assert "shaped_vjp" in text or "shaped" in text


def test_a_changed_helper_is_seen():
    global SCALE
    x = X.copy()
    before = srcad.hessian(loss)(x)
    try:
        SCALE = 3.0  # a global the inlined helper reads
        changed = srcad.hessian(loss)(x)
        assert not np.allclose(changed, before)
        srcad.check_grad(loss, x, order=2, modes=("fwd",))
        shaped.__defaults__ = (0.9, 0.25)  # a default written out
        assert not np.allclose(srcad.hessian(loss)(x), changed)
        srcad.check_grad(loss, x, order=2, modes=("fwd",))
    finally:
        SCALE = 1.5
        shaped.__defaults__ = (0.5, 0.25)
    np.testing.assert_allclose(srcad.hessian(loss)(x), before)


# --- helpers the inliner writes out since #17: closures, returns in loops, object
# defaults, valueless paths, checkpoints, custom_vjp; recursion refused by name


def _hessian_fd(f, x, eps=1e-5):
    """Central differences of srcad's (first-order, checked elsewhere) gradient."""
    grad = srcad.grad(f)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = eps
        cols.append((grad(x + e) - grad(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)


def _second_order(f, x):
    """The Hessian matches finite differences, in both modes of check_grad, and is not 0."""
    srcad.check_grad(f, x, order=2, modes=("rev", "fwd"))
    h = srcad.hessian(f)(x)
    np.testing.assert_allclose(h, _hessian_fd(f, x), rtol=1e-6, atol=1e-7)
    assert not np.allclose(h, 0.0)
    return h


def make_closure(a):
    factor = np.array([1.0, 2.0, 3.0]) * a

    def closed(t):
        return factor * np.sin(t) ** 2

    def set_factor(value):
        nonlocal factor
        factor = value

    return closed, set_factor


closed, set_factor = make_closure(0.5)


def uses_closure(x):
    return np.sum(closed(x) * x)


def test_closure_helper_second_order_and_its_cell_is_watched():
    before = _second_order(uses_closure, X)
    set_factor(np.array([3.0, -1.0, 0.5]))  # the cell changes: the written-out code is stale
    try:
        after = _second_order(uses_closure, X)
        assert not np.allclose(after, before)
    finally:
        set_factor(np.array([1.0, 2.0, 3.0]) * 0.5)
    np.testing.assert_allclose(srcad.hessian(uses_closure)(X), before)


def first_large(p, t):
    for k in range(3):
        if np.sum(p) * (k + 1) > t:
            return np.tanh(p) * (k + 1.0)
        for j in range(2):
            if j * np.sum(p) > t + 5.0:
                return p**3
    return np.sin(p) * p


def uses_loop_returns(x):
    return np.sum(first_large(x, 1.0) ** 2) + np.sum(first_large(x * 0.1, 3.0))


@pytest.mark.parametrize("x", [X, -X, 3 * X])
def test_returns_inside_loops_second_order(x):
    _second_order(uses_loop_returns, x)


WEIGHTS = np.array([0.5, -1.5, 2.0])


def weighted(p, w=WEIGHTS):
    return np.tanh(p * w)


def uses_object_defaults(x):
    return np.sum(weighted(x) ** 2)


def test_object_defaults_second_order_and_rebound_default_is_seen():
    before = _second_order(uses_object_defaults, X)
    defaults = weighted.__defaults__
    weighted.__defaults__ = (np.array([1.0, 1.0, 1.0]),)
    try:
        after = _second_order(uses_object_defaults, X)
        assert not np.allclose(after, before)
    finally:
        weighted.__defaults__ = defaults


def maybe_value(p, flag):
    if flag:
        return np.exp(p) * p
    if flag is None:
        return  # a path without a value: raises when it runs


def uses_maybe_value(x, flag=True):
    return np.sum(maybe_value(x, flag))


def test_helper_with_valueless_path():
    _second_order(uses_maybe_value, X)
    with pytest.raises(srcad.NoOutputError, match="maybe_value returns None here"):
        srcad.hessian(uses_maybe_value)(X, None)
    with pytest.raises(srcad.NoOutputError, match="maybe_value returns None here"):
        srcad.hessian(uses_maybe_value)(X, False)  # the end, without a return


def unrolled(p, n):
    if n == 0:
        return p
    return unrolled(np.sin(p), n - 1)


def uses_recursion(x):
    return np.sum(unrolled(x, 2) ** 2)


def halving(p, t):
    if np.sum(np.abs(p)) > t:
        return halving(p * 0.5, t) + p * 0.1
    return p


def tree_recursion(p, n):
    if n < 2:
        return p
    return tree_recursion(p, n - 1) * 0.5 + np.sin(tree_recursion(p, n - 2))


def ping(p, n):
    if n <= 0:
        return p
    return pong(np.sin(p), n)


def pong(p, n):
    return ping(p * 1.1, n - 1)


def uses_mutual_recursion(x):
    return np.sum(ping(x, 2) ** 2)


def uses_tree_recursion(x):
    return np.sum(tree_recursion(x, 5)) + np.sum(unrolled(x, 0) * x)


def uses_data_dependent_depth(x):
    return np.sum(halving(x, 0.7) ** 2)


def uses_depth_argument(x, n=2):
    return np.sum(unrolled(x, n) ** 2)


def uses_too_deep_a_recursion(x):
    return np.sum(unrolled(x * 0.1, 80))  # more than 64 calls: not written out


def test_recursion_with_constant_depth_second_order_unrolled():
    srcad.check_grad(uses_recursion, X, modes=("rev", "fwd"))
    _second_order(uses_recursion, X)
    _second_order(uses_tree_recursion, X)  # two recursive calls a level; n = 0 at once
    _second_order(uses_mutual_recursion, X)


@pytest.mark.parametrize(
    "f", [uses_data_dependent_depth, uses_depth_argument, uses_too_deep_a_recursion]
)
def test_recursion_depth_not_decided_by_constants_at_second_order(f):
    # was refused by name; now its calls are followed level by level (issue #17)
    srcad.check_grad(f, X, order=2, modes=("rev", "fwd"))


def inner_steps(p):
    for _ in range(2):
        p = np.tanh(p) * 1.1
    return p


checkpointed = srcad.checkpoint(inner_steps)


def uses_checkpoint(x):
    return np.sum(checkpointed(x) ** 2) + np.sum(srcad.checkpoint(np.sin)(x) ** 2)


def test_checkpoint_second_order():
    _second_order(uses_checkpoint, X)
    # first order still rematerializes (the checkpoint's handle is called)
    assert "checkpoint" in srcad.source(srcad.grad(uses_checkpoint))


@srcad.custom_vjp
def soft_clip(p, s):
    return np.tanh(p) * s


def soft_clip_fwd(p, s):
    t = np.tanh(p)
    return t * s, (t, s)


def soft_clip_bwd(residuals, g):
    t, s = residuals
    # deliberately 0.5 x the true derivative in p, so the tests can tell it is used
    return (0.5 * g * s * (1 - t * t), None)


soft_clip.defvjp(soft_clip_fwd, soft_clip_bwd)


@srcad.custom_vjp
def cube(p):
    return p**3


cube.defvjp(lambda p: (p**3, p), lambda p, g: (3 * p * p * g,))


def uses_custom_vjp(x):
    return np.sum(soft_clip(np.sin(x), 2.0) * x) + np.sum(cube(x))


def test_custom_vjp_second_order_differentiates_fwd_and_bwd():
    h = srcad.hessian(uses_custom_vjp)(X)
    np.testing.assert_allclose(h, _hessian_fd(uses_custom_vjp, X), rtol=1e-6, atol=1e-7)

    # the rule is used: d/dx of the hand-written (halved) gradient, not the true Hessian
    def true_function(x):
        return np.sum(np.tanh(np.sin(x)) * 2.0 * x) + np.sum(x**3)

    assert not np.allclose(h, srcad.hessian(true_function)(X))
    hvp = srcad.hvp(uses_custom_vjp, (X,), (np.array([1.0, -2.0, 0.5]),))
    np.testing.assert_allclose(hvp, h @ np.array([1.0, -2.0, 0.5]), rtol=1e-10)


@srcad.custom_vjp
def bad_bwd(p):
    return p * 2.0


bad_bwd.defvjp(lambda p: (p * 2.0, None), lambda r, g: 2.0 * g)  # not a tuple


def test_custom_vjp_bwd_not_a_tuple_is_refused_at_second_order():
    with pytest.raises(TypeError, match="must return a tuple"):
        srcad.hessian(lambda x: np.sum(bad_bwd(x) ** 2))(X)


@srcad.custom_jvp
def smooth(p):
    return np.log1p(np.exp(p))


@smooth.defjvp
def smooth_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    return smooth(p), dp / (1 + np.exp(-p))


@srcad.custom_jvp
def halved(p):
    return np.log1p(np.exp(p))


@halved.defjvp
def halved_jvp(primals, tangents):
    (p,) = primals
    (dp,) = tangents
    # deliberately 0.5 x the true derivative, so the tests can tell the rule is used
    return halved(p), dp / (1 + np.exp(-p)) * 0.5


@srcad.custom_jvp
def sin_times(a, b):
    return a * np.sin(b)


@sin_times.defjvp
def sin_times_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    return sin_times(a, b), da * np.sin(b) + a * np.cos(b) * db


def uses_custom_jvps(x):
    return np.sum(smooth(x) ** 2 * x) + np.sum(sin_times(x, x * 0.5) * x)


def test_custom_jvp_second_order_differentiates_its_rule():
    # exact rules: the Hessian is the function's, and matches differences of the gradient
    h = srcad.hessian(uses_custom_jvps)(X)
    expected = srcad.hessian(
        lambda x: np.sum(np.log1p(np.exp(x)) ** 2 * x) + np.sum(x * np.sin(x * 0.5) * x)
    )(X)
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-12)
    hv = srcad.hvp(uses_custom_jvps, (X,), (np.array([1.0, -2.0, 0.5]),))
    np.testing.assert_allclose(hv, h @ np.array([1.0, -2.0, 0.5]), rtol=1e-10)
    # the rule is what is differentiated (as in JAX): with the halved rule the gradient of
    # sum(halved(x) ** 2) is s * sigma, and its derivative 0.5 * sigma**2 + s * sigma'
    s, sigma = np.log1p(np.exp(X)), 1 / (1 + np.exp(-X))
    h = srcad.hessian(lambda x: np.sum(halved(x) ** 2))(X)
    np.testing.assert_allclose(h, np.diag(0.5 * sigma**2 + s * sigma * (1 - sigma)), rtol=1e-10)
    # reverse over reverse: through a rule of one argument and of several
    # (tests/test_custom_jvp_second_order.py has more)
    np.testing.assert_allclose(srcad.grad(halved_gradient_along_x)(X), h @ X, rtol=1e-10)
    h = srcad.hessian(uses_custom_jvps)(X)
    np.testing.assert_allclose(srcad.grad(custom_jvps_gradient_along_x)(X), h @ X, rtol=1e-10)


def halved_loss(x):
    return np.sum(halved(x) ** 2)


def halved_gradient_along_x(y):
    return np.sum(srcad.grad(halved_loss)(y) * X)


def custom_jvps_gradient_along_x(y):
    return np.sum(srcad.grad(uses_custom_jvps)(y) * X)


def with_local_functions(p):
    def sq(v):
        return v * v * 0.5

    cube = lambda v: v**3  # noqa: E731
    return sq(np.sin(p)) + cube(p) * 0.1


def uses_local_functions_of_a_helper(x):
    return np.sum(with_local_functions(x) * x)


def test_a_helpers_local_functions_are_written_out_at_second_order():
    _second_order(uses_local_functions_of_a_helper, X)


factor = 3.0


def reads_global_factor(p):
    return np.sin(p) * factor


def shadows_the_helpers_global(x):
    factor = x * 0.5  # the caller's local of the name the helper reads as a global
    return np.sum(reads_global_factor(x) * factor)


def test_a_helpers_global_is_not_the_callers_local_of_that_name():
    _second_order(shadows_the_helpers_global, X)


def stacks_a_comprehension(x, w):
    a = np.mean(np.stack([np.sin(x[::-1] * (j + 1.0)) for j in range(3)]), axis=0)
    total = sum(np.cos(v) for v in [x, x * x])
    return np.sum(a * w + total)


def calls_a_stacking_helper(x):
    return stacks_a_comprehension(x, np.array([0.7, 0.2, -0.4])) * 2.0


def test_a_helper_stacking_a_comprehension_at_second_order():
    # written out in code differentiated again, the helper's comprehension stayed one:
    # np.stack's rule refused it ("'arrays' must be a list or tuple written out")
    srcad.check_grad(calls_a_stacking_helper, np.array([0.3, 0.5, -0.8]), order=2)


def pair_by_branch(p):
    if np.sum(p) > 0:
        return p * 2.0, np.cos(p)
    return p, np.sin(p)


def through_pair_by_branch(x):
    a, b = pair_by_branch(x)
    r = pair_by_branch(-x)
    return np.sum(a * b) + np.sum(r[0] ** 2 * r[1])


def test_a_helper_returning_tuples_from_two_returns_at_second_order():
    # written out, its result started as None, a tuple name then assigned something other
    # than a tuple: "building a container of differentiable values" (first order worked)
    srcad.check_grad(through_pair_by_branch, X, modes=("rev", "fwd"), order=2)
