# ruff: noqa: B008 (defaults made by calls are what these tests are about)
"""A default value made by a call (``buf=np.zeros(3)``) is the function's own: the
generated signature once wrote it out, run when the code was compiled, in the generated
code's namespace (a NameError from inside srcad until stop 29)."""

import numpy as np

import srcad


def with_a_made_default(v, buf=np.zeros(3), scale=-1.5):
    out = buf * 1.0
    out[0] = v * scale
    return out


def calls_a_helper_with_a_made_default(x):
    return np.sum(with_a_made_default(np.sum(x * x)) * x)


def scaled_sum(x, weights=np.ones(3) * 2.0):
    return np.sum(np.sin(x) * weights)


def total(v, scale=-1.5, buf=np.zeros(3)):
    return np.sum(buf + v * scale)


def test_a_default_value_made_by_a_call_is_the_functions_own():
    x = np.array([0.3, -0.5, 0.9])
    srcad.check_grad(calls_a_helper_with_a_made_default, x, modes=("rev", "fwd"), order=2)
    np.testing.assert_allclose(srcad.grad(scaled_sum)(x), 2.0 * np.cos(x))
    srcad.check_grad(scaled_sum, x, modes=("rev", "fwd"), order=2)
    # (a constant default stays in the signature, to be read)
    assert "scale=-1.5" in srcad.source(srcad.grad(total))
    assert srcad.grad(total)(2.0) == -4.5
