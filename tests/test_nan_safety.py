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
