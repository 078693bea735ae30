"""No NaN where the derivative exists: kinks with a subgradient, and untaken branches."""

import warnings

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])


@pytest.fixture(autouse=True)
def _quiet():
    # the untaken branch's own values (sqrt or log of a negative) warn; their gradient is 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _jvp(f, x, t):
    return srcad.jvp(f, (x,), (t,))[1]


def _jacobian_by_jvp(f, x):
    return np.array([_jvp(f, x, e) for e in np.eye(x.size)])


def _exact(f, x, expected):
    """Reverse mode, forward mode (column by column) and no NaN anywhere."""
    g = srcad.grad(f)(x)
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(_jacobian_by_jvp(f, x), expected)


# ---- powers ----


def zero_base(y):
    return np.sum(np.zeros(3) ** y)


def zero_base_power(y):
    return np.sum(np.power(np.zeros(3), y))


def float_base(y):
    return np.sum(0.0**y)


def test_derivative_of_zero_to_the_y_is_zero():
    y = np.array([0.5, 1.0, 2.5])
    for f in (zero_base, zero_base_power, float_base):
        _exact(f, y, np.zeros(3))


def scalar_zero_base(y):
    return 0.0**y


def test_derivative_of_python_float_zero_base():
    assert srcad.grad(scalar_zero_base)(1.5) == 0.0
    assert _jvp(scalar_zero_base, 1.5, 1.0) == 0.0


def power_zero(x):
    return np.sum(x**0)


def power_of_name(x, b):
    return np.sum(x**b)


def test_x_to_the_zero_at_zero():
    x = np.array([0.0, 1.0, 2.0])
    _exact(power_zero, x, np.zeros(3))
    np.testing.assert_array_equal(srcad.grad(power_of_name)(x, 0.0), np.zeros(3))
    np.testing.assert_array_equal(srcad.hessian(power_zero)(x), np.zeros((3, 3)))


def power_both(a, b):
    return np.sum(a**b)


def test_power_still_exact_away_from_zero():
    a, b = np.array([0.4, 1.3, 2.0]), np.array([1.5, -0.5, 2.0])
    srcad.check_grad(power_both, a, b, wrt=(0, 1), modes=("rev", "fwd"), order=2)
    da, db = srcad.grad(power_both, wrt=(0, 1))(np.array([0.0, 0.0, 2.0]), np.abs(b))
    np.testing.assert_array_equal(db[:2], [0.0, 0.0])
    np.testing.assert_allclose(db[2], 4.0 * np.log(2.0))


# ---- std, var, norm, hypot: the subgradient 0 at zero spread ----


def std_one(x):
    return np.std(x[:1])


def std_equal(x):
    return np.std(x * 0.0 + 2.0) + np.sum(x)


def std_axis(x):
    return np.sum(np.std(np.stack([x, x]), axis=0))


def norm_zeros(x):
    return np.linalg.norm(x * 0.0) + np.sum(x)


def norm_rows(x):
    m = np.stack([x, x * 0.0])
    return np.sum(np.linalg.norm(m, axis=1))


def norm_keepdims(x):
    m = np.stack([x * 0.0, x * 0.0])
    return np.sum(np.linalg.norm(m, axis=0, keepdims=True)) + np.sum(x)


def frobenius_zeros(x):
    return np.linalg.norm(np.outer(x, x) * 0.0) + np.sum(x)


def hypot_zeros(x):
    return np.sum(np.hypot(x * 0.0, x * 0.0)) + np.sum(x)


def test_zero_spread_and_zero_norm_give_subgradient_zero():
    _exact(std_one, X, np.zeros(3))
    _exact(std_equal, X, np.ones(3))
    _exact(std_axis, X, np.zeros(3))
    _exact(norm_zeros, X, np.ones(3))
    _exact(norm_keepdims, X, np.ones(3))
    _exact(frobenius_zeros, X, np.ones(3))
    _exact(hypot_zeros, X, np.ones(3))
    np.testing.assert_allclose(srcad.grad(norm_rows)(X), X / np.linalg.norm(X))
    for f in (std_one, norm_zeros, std_axis):
        assert np.all(np.isfinite(srcad.hessian(f)(X)))


def std_spread(x):
    return np.sum(np.std(np.stack([x, x * x]), axis=0))


def test_std_and_norm_exact_elsewhere():
    srcad.check_grad(std_spread, X, modes=("rev", "fwd"), order=2)
    srcad.check_grad(norm_rows, X, modes=("rev", "fwd"), order=2)


# ---- selections: the branch not taken contributes exactly zero ----


def where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def where_log_other(x):
    return np.sum(np.where(x > 0, x, np.log(x)))


def where_chain(x):
    return np.sum(np.where(x > 0, 3.0 * np.log(np.sqrt(x)) + x, x * x))


def where_scaled(x, s):
    return np.sum(np.where(x > 0, s * np.sqrt(x), 0.0))


def double_where(x):
    return np.sum(np.log(np.where(x > 0, x, 1.0)))


def clip_log(x):
    return np.sum(np.clip(np.log(x * x), -1.0, None))


def maximum_log(x):
    return np.sum(np.maximum(np.sqrt(x), 0.5))


def test_where_untaken_branch_is_exactly_zero():
    x = np.array([0.3, -0.7, 1.1, 0.0])
    pos = x > 0
    _exact(where_sqrt, x, np.where(pos, 0.5 / np.sqrt(np.abs(x) + ~pos), 0.0))
    _exact(where_log_other, np.array([0.3, 1.1]), np.ones(2))
    g = srcad.grad(where_log_other)(x)
    np.testing.assert_array_equal(g[[0, 2]], [1.0, 1.0])
    np.testing.assert_allclose(g[1], 1 / -0.7)
    assert g[3] == np.inf  # log's own derivative at 0: the branch taken
    expected = np.where(pos, 1.5 / np.where(pos, x, 1.0) + 1.0, 2 * x)
    np.testing.assert_allclose(srcad.grad(where_chain)(x), expected)
    np.testing.assert_allclose(_jacobian_by_jvp(where_chain, x), expected)
    np.testing.assert_array_equal(
        srcad.grad(double_where)(x), np.where(pos, 1 / np.where(pos, x, 1.0), 0.0)
    )


def test_where_operand_of_another_shape():
    x = np.array([0.3, -0.7, 0.0])
    gx, gs = srcad.grad(where_scaled, wrt=(0, 1))(x, 2.0)
    np.testing.assert_allclose(gx, [1 / np.sqrt(0.3), 0.0, 0.0])
    np.testing.assert_allclose(gs, np.sqrt(0.3))


def test_clip_and_maximum_untaken_side_is_zero():
    x = np.array([0.0, 2.0, -3.0])
    np.testing.assert_allclose(srcad.grad(clip_log)(x), [0.0, 1.0, -2 / 3])
    y = np.array([0.0, -1.0, 4.0])
    np.testing.assert_allclose(srcad.grad(maximum_log)(y), [0.0, 0.0, 0.25])


def test_where_second_order():
    x = np.array([0.3, -0.7, 1.1, 0.0])
    h = srcad.hessian(where_sqrt)(x)
    pos = np.where(x > 0, x, 1.0)
    np.testing.assert_allclose(h, np.diag(np.where(x > 0, -0.25 * pos**-1.5, 0.0)))
    hc = srcad.hessian(where_chain)(x)
    np.testing.assert_allclose(hc, np.diag(np.where(x > 0, -1.5 / pos**2, 2.0)))


def test_where_exact_away_from_the_kink():
    x = np.array([0.3, -0.7, 1.1, 2.0])
    srcad.check_grad(where_chain, x, modes=("rev", "fwd"), order=2)
    srcad.check_grad(where_sqrt, x, modes=("rev", "fwd"), order=2)


def where_used_twice(x):
    r = np.sqrt(x)
    return np.sum(np.where(x > 0, r, 0.0)) + np.sum(r)


def test_value_used_outside_the_branch_keeps_its_nan():
    # r is used where no selection guards it: its derivative at x < 0 does not exist
    g = srcad.grad(where_used_twice)(np.array([0.25, -1.0]))
    assert g[0] == 2.0 and np.isnan(g[1])


def plain(x):
    return np.sum(np.sqrt(x) * np.log(x))


def leaky_relu(x):
    return np.sum(np.maximum(x, 0.1 * x))


def test_zero_safe_products_only_behind_a_selection():
    assert "!= 0" not in srcad.source(plain)
    # scaling by a number keeps zeros zero: no mask needed on that path either
    assert "!= 0" not in srcad.source(leaky_relu)
    assert srcad.source(where_sqrt).count("!= 0") == 1


def backend_kinks(x, y):
    return np.sum(np.zeros(3) ** y) + np.sum(np.hypot(x * 0.0, x * 0.0)) + np.std(x[:1])


def test_kinks_on_array_api_strict():
    # the safe divisor must not add booleans to floats (the standard does not allow it)
    xps = pytest.importorskip("array_api_strict")
    gx, gy = srcad.grad(backend_kinks, wrt=(0, 1))(xps.asarray(X), xps.asarray([0.5, 1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(gx), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(gy), np.zeros(3))


# ---- forward mode: a selection's tangent is masked too ----

XS = np.array([0.3, -0.7, 1.1, 2.5, -1.5])
TAKEN = XS > 0


def sqrt_of_maximum(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0)))


def sqrt_of_clip(x):
    return np.sum(np.sqrt(np.clip(x, 0.0, None)))


def sqrt_of_where(x):
    return np.sum(np.sqrt(np.where(x > 0, x, 0.0)))


def power_of_fmax(x):
    return np.sum(np.fmax(x, 0.0) ** 0.5)


def cbrt_of_fmin(x):
    return np.sum(np.cbrt(-np.fmin(-x, 0.0)))


def chain_after_minimum(x):
    m = -np.minimum(x, 0.0) * 2.0
    return np.sum(1.0 / (1.0 + np.sqrt(np.sqrt(m * m) + m)))


def arcsin_of_clip(x):
    return np.sum(np.arcsin(np.clip(x, -1.0, 1.0)) * x)


SELECTED_FIRST = [sqrt_of_maximum, sqrt_of_clip, sqrt_of_where, power_of_fmax, cbrt_of_fmin]


def _zero_on(f, x, untaken):
    """grad, the jvp along each axis, the Hessian (forward over reverse) and reverse over
    reverse: finite, and exactly zero for the elements a selection did not choose."""
    g = srcad.grad(f)(x)
    j = _jacobian_by_jvp(f, x)
    h = srcad.hessian(f)(x)
    _, pullback = srcad.vjp(srcad.grad(f), x)
    hh = np.array([pullback(e)[0] for e in np.eye(x.size)])
    for name, value in [("grad", g), ("jvp", j), ("hessian", h), ("rev-over-rev", hh)]:
        assert np.all(np.isfinite(value)), (f.__name__, name, value)
    np.testing.assert_allclose(g, j, rtol=1e-14)
    np.testing.assert_array_equal(j[untaken], 0.0)
    np.testing.assert_array_equal(g[untaken], 0.0)
    for m in (h, hh):
        np.testing.assert_array_equal(m[untaken], 0.0)
        np.testing.assert_array_equal(m[:, untaken], 0.0)
    return g, h


@pytest.mark.parametrize("f", SELECTED_FIRST)
def test_function_of_a_selection_untaken_side_is_zero_in_both_modes(f):
    g, h = _zero_on(f, XS, ~TAKEN)
    np.testing.assert_allclose(g[TAKEN], 0.5 / np.sqrt(XS[TAKEN]) if f is not cbrt_of_fmin
                               else XS[TAKEN] ** (-2 / 3) / 3)  # fmt: skip
    srcad.check_grad(f, XS, modes=("rev", "fwd"), order=2)


def test_chains_after_a_selection():
    g, _ = _zero_on(chain_after_minimum, -XS, ~TAKEN)
    m = 4.0 * XS[TAKEN]
    np.testing.assert_allclose(g[TAKEN], 4.0 * 0.5 / np.sqrt(m) / (1 + np.sqrt(m)) ** 2)
    srcad.check_grad(chain_after_minimum, -XS, modes=("rev", "fwd"), order=2)
    x = np.array([0.3, 1.5, -2.0, 0.5, -0.2])
    inside = np.abs(x) < 1
    g, _ = _zero_on(arcsin_of_clip, x, np.zeros(5, bool))  # (x multiplies: not zero outside)
    np.testing.assert_allclose(g[~inside], np.arcsin(np.clip(x, -1, 1))[~inside])
    np.testing.assert_allclose(
        g[inside], np.arcsin(x[inside]) + x[inside] / np.sqrt(1 - x[inside] ** 2)
    )
    srcad.check_grad(arcsin_of_clip, np.array([0.3, 1.5, -2.0, 0.5]), modes=("rev", "fwd"))


# ---- across branches and loops ----


def selected_in_branch(x):
    y = np.sqrt(x)
    if x[0] > 0:
        z = np.where(x > 0, y, 0.0)
    else:
        z = x
    return np.sum(z)


def selected_in_loop(x):
    y = np.sqrt(x)
    s = 0.0
    for _ in range(2):
        s = s + np.sum(np.where(x > 0, y, 0.0))
    return s


def selected_in_while(x):
    y = np.log(x)
    s = 0.0
    n = 0
    while n < 3:
        s = s + np.sum(np.where(x > 0, y * y, 0.0))
        n += 1
    return s


def sqrt_in_branch_after_selection(x):
    m = np.clip(x, 0.0, None)
    if x[0] > 0:
        z = np.sqrt(m)
    else:
        z = m
    return np.sum(z)


def sqrt_in_loop_after_selection(x):
    h = np.maximum(x, 0.0)
    for _ in range(2):
        h = np.sqrt(h) + h
    return np.sum(h)


def test_selection_and_kink_in_different_blocks():
    pos = np.where(TAKEN, XS, 1.0)
    root = np.where(TAKEN, 0.5 / np.sqrt(pos), 0.0)
    g, h = _zero_on(selected_in_branch, XS, ~TAKEN)
    np.testing.assert_allclose(g, root)
    np.testing.assert_allclose(np.diag(h), np.where(TAKEN, -0.25 * pos**-1.5, 0.0))
    g, _ = _zero_on(selected_in_loop, XS, ~TAKEN)
    np.testing.assert_allclose(g, 2 * root)
    g, _ = _zero_on(selected_in_while, XS, ~TAKEN)
    np.testing.assert_allclose(g, np.where(TAKEN, 6 * np.log(pos) / pos, 0.0))
    g, _ = _zero_on(sqrt_in_branch_after_selection, XS, ~TAKEN)
    np.testing.assert_allclose(g, root)
    g, _ = _zero_on(sqrt_in_loop_after_selection, XS, ~TAKEN)
    h1 = np.sqrt(pos) + pos
    expected = (0.5 / np.sqrt(h1) + 1) * (0.5 / np.sqrt(pos) + 1)
    np.testing.assert_allclose(g, np.where(TAKEN, expected, 0.0))
    for f in (selected_in_branch, selected_in_loop, selected_in_while,
              sqrt_in_branch_after_selection, sqrt_in_loop_after_selection):  # fmt: skip
        srcad.check_grad(f, XS, modes=("rev", "fwd"), order=2)
    # the other branch: no selection on that path, sqrt's own derivative (NaN below 0)
    x = -np.abs(XS)
    assert np.all(srcad.grad(selected_in_branch)(x) == 1.0)
    assert np.all(_jacobian_by_jvp(sqrt_in_branch_after_selection, x) == 0.0)


# ---- through calls of the user's functions ----


def _root(v):
    return np.sqrt(v)


def _scaled_root(v):
    return 2.0 * _root(v) + v


def where_of_helper(x):
    return np.sum(np.where(x > 0, _root(x), 0.0))


def where_of_nested_helper(x):
    return np.sum(np.where(x > 0, _scaled_root(x), 0.0))


def helper_of_selection(x):
    return np.sum(_root(np.maximum(x, 0.0)))


def nested_helper_of_selection(x):
    return np.sum(_scaled_root(np.where(x > 0, x, 0.0)))


_checkpointed_root = srcad.checkpoint(_root)


def where_of_checkpoint(x):
    return np.sum(np.where(x > 0, _checkpointed_root(x), 0.0))


class _Roots:
    def root(self, v):
        return np.sqrt(v)


def where_of_method(x, obj):
    return np.sum(np.where(x > 0, obj.root(x), 0.0))


def test_helpers_see_the_mask_of_their_caller():
    pos = np.where(TAKEN, XS, 1.0)
    root = np.where(TAKEN, 0.5 / np.sqrt(pos), 0.0)
    for f, expected in [
        (where_of_helper, root),
        (helper_of_selection, root),
        (where_of_nested_helper, np.where(TAKEN, 2 * root + 1, 0.0)),
        (nested_helper_of_selection, np.where(TAKEN, 2 * root + 1, 0.0)),
        (where_of_checkpoint, root),
    ]:
        g = srcad.grad(f)(XS)
        j = _jacobian_by_jvp(f, XS)
        np.testing.assert_allclose(g, expected, err_msg=f.__name__)
        np.testing.assert_array_equal(j, g)
        np.testing.assert_array_equal(g[~TAKEN], 0.0)
        srcad.check_grad(f, XS, modes=("rev", "fwd"))
    g = srcad.grad(where_of_method)(XS, _Roots())
    np.testing.assert_allclose(g, root)
    j = np.array([srcad.jvp(where_of_method, (XS, _Roots()), (e, None))[1] for e in np.eye(5)])
    np.testing.assert_array_equal(j, g)


def _recursive_root(v, n):
    if n == 0:
        return np.sqrt(v)
    return _recursive_root(v, n - 1) * 1.0


def where_of_recursive_helper(x):
    return np.sum(np.where(x > 0, _recursive_root(x, 2), 0.0))


def recursive_helper_of_selection(x):
    return np.sum(_recursive_root(np.maximum(x, 0.0), 2))


def test_recursive_helpers_see_the_mask():
    root = np.where(TAKEN, 0.5 / np.sqrt(np.where(TAKEN, XS, 1.0)), 0.0)
    for f in (where_of_recursive_helper, recursive_helper_of_selection):
        np.testing.assert_allclose(srcad.grad(f)(XS), root)
        np.testing.assert_allclose(_jacobian_by_jvp(f, XS), root)
        np.testing.assert_array_equal(_jacobian_by_jvp(f, XS)[~TAKEN], 0.0)


def sum_of_helper(x):
    return np.sum(_root(x))


def test_unmasked_calls_keep_their_own_derivative():
    # the same helper called without a selection: the caller passes an ordinary cotangent
    assert np.isnan(srcad.grad(sum_of_helper)(XS)[1])
    assert srcad.grad(where_of_helper)(XS)[1] == 0.0


# ---- through indexing and reshaping (elements moved, not mixed) ----


def where_of_sliced_sqrt(x):
    return np.sum(np.where(x[:2] > 0, np.sqrt(x)[:2], 0.0))


def sqrt_of_reshaped_maximum(x):
    m = np.maximum(x, 0.0).reshape(x.size, 1)
    return np.sum(np.sqrt(m.T))


def where_of_reshaped_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x.reshape(x.size, 1)).ravel(), 0.0))


def sqrt_of_element_of_maximum(x):
    return np.sqrt(np.maximum(x, 0.0)[1]) + np.sum(np.flip(np.sqrt(np.clip(x, 0.0, None))))


def test_masks_pass_through_indexing_and_reshaping():
    pos = np.where(TAKEN, XS, 1.0)
    root = np.where(TAKEN, 0.5 / np.sqrt(pos), 0.0)
    g, _ = _zero_on(where_of_sliced_sqrt, XS, ~np.array([1, 0, 0, 0, 0], bool))
    np.testing.assert_allclose(g[0], root[0])
    for f in (sqrt_of_reshaped_maximum, where_of_reshaped_sqrt, sqrt_of_element_of_maximum):
        g, _ = _zero_on(f, XS, ~TAKEN)
        np.testing.assert_allclose(g, root, err_msg=f.__name__)
        srcad.check_grad(f, XS, modes=("rev", "fwd"), order=2)


# ---- what the guarantee does not cover, and ordinary code ----


def matmul_between(x):
    return np.sum(np.where(x > 0, np.ones((3, 3)) @ np.sqrt(x), 0.0))


def test_mixing_elements_ends_the_guarantee():
    # the matmul mixes the untaken element's NaN value into every element: no derivative
    g = srcad.grad(matmul_between)(X)
    assert np.isnan(g[1])


def ordinary(x):
    s = np.sqrt(x)
    t = 0.0
    for _ in range(2):
        if t < 1.0:
            t = t + np.sum(np.log(s) * _root(x))
    return t


def relu_mlp(x):
    h = np.maximum(x, 0.0)
    return np.sum(np.tanh(np.outer(h, h) @ x))


def test_no_mask_in_ordinary_code_in_either_mode():
    for mode in ("rev", "fwd"):
        assert "!= 0" not in srcad.source(ordinary, mode=mode)
    # the chain ends at the product (outer, @), in both modes
    for mode in ("rev", "fwd"):
        assert "!= 0" not in srcad.source(relu_mlp, mode=mode)
    assert srcad.source(sqrt_of_maximum, mode="fwd").count("!= 0") == 1
    assert srcad.source(plain, mode="fwd").count("!= 0") == 0
