"""``with np.errstate(...)``: the body is differentiated inline and the derivative runs
under the same settings (warnings silenced stay silent; errors asked for are raised)."""

import warnings

import numpy as np
import pytest

import srcad

X = np.array([0.0, 1.0, 2.0])


def safe_log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(x > 0, np.log(x), 0.0)
    return np.sum(y * x)


def raising(x):
    with np.errstate(all="raise"):
        y = np.log(x)
    return np.sum(y)


def two_settings(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    with np.errstate(invalid="ignore"):
        z = np.sqrt(y)
    return np.sum(z)


def other_context(x):
    with open("/dev/null"):
        y = x * 2.0
    return np.sum(y)


def test_silenced_warnings_stay_silent_in_both_modes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = srcad.grad(safe_log)(X)
        _, t = srcad.jvp(safe_log, (X,), (np.ones(3),))
    np.testing.assert_allclose(g, [0.0, 1.0, np.log(2.0) + 1.0])
    assert t == pytest.approx(g.sum())
    srcad.check_grad(safe_log, X + 0.5, modes=("rev", "fwd"), order=2)
    assert "with np.errstate(divide='ignore', invalid='ignore'):" in srcad.source(safe_log)


def test_errors_asked_for_are_raised():
    with pytest.raises(FloatingPointError):
        raising(X)
    with pytest.raises(FloatingPointError):
        srcad.grad(raising)(X)
    assert srcad.grad(raising)(X + 1.0) == pytest.approx(1.0 / (X + 1.0))


def test_different_settings_and_other_contexts_are_refused():
    with pytest.raises(srcad.TransformError, match="different settings"):
        srcad.grad(two_settings)(X + 1.0)
    with pytest.raises(srcad.TransformError, match="'with' statements"):
        srcad.grad(other_context)(X)


def in_a_loop_with_returns(x, y):
    a = x * 1.0
    b = y * x
    for i in range(3):
        if np.max(x[i]) > 1.9:
            return np.sum(a * 0.5)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = b * np.sin(a)
        if a[2].sum() > 0.5:
            return np.sum(x[i] ** 2 * a)
    return np.sum(a + b)


def test_second_order_through_loops_and_returns():
    # the block was inlined after the passes that find a tape's pushes had run: reverse
    # over reverse silently lost them (wrong Hessian-vector products; seed 228)
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)
    srcad.check_grad(in_a_loop_with_returns, x, y, wrt=(0, 1), order=2, modes=("rev", "fwd"))


# ---- a helper holding np.errstate, written out at second order ----


def guarded_log(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(p > 0, np.log(np.abs(p)), 0.0)
    return r * p


def calls_guarded_log(x):
    return np.sum(guarded_log(x) * x)


def raises_overflow_and_calls_guarded_log(x):
    with np.errstate(over="raise"):
        y = np.exp(x)
    return np.sum(guarded_log(y))


def test_a_helper_holding_errstate_at_second_order():
    # was refused by name ("it holds 'with'"): the helper's body is written out and the
    # derivative runs under its settings (warnings silenced stay silent at x = 0)
    srcad.check_grad(calls_guarded_log, X + 0.5, modes=("rev", "fwd"), order=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = srcad.hessian(calls_guarded_log)(X)
    # d2/dx2 of x^2 log x = 2 log x + 3 where x > 0, 0 where the where picks 0.0
    np.testing.assert_allclose(np.diag(h), [0.0, 3.0, 2 * np.log(2.0) + 3.0])


def test_a_helper_with_other_errstate_settings_is_refused_at_second_order():
    srcad.grad(raises_overflow_and_calls_guarded_log)(X)  # first order: its own derivative
    with pytest.raises(srcad.TransformError, match="one setting"):
        srcad.hessian(raises_overflow_and_calls_guarded_log)(X)
