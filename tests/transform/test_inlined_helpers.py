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
