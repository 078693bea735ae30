"""Non-differentiable values pass through without adjoints and without errors."""

import numpy as np
from opcheck import check, make_function, rand

import srcad


def test_shape_reads_are_constants():
    check("x * x.shape[0] / x.size + x.ndim", rand(2, 3))


def test_comparisons_feed_where():
    check("np.where(np.abs(x) > 0.5, np.sin(x), x * 2.0)", rand(2, 3))


def test_sign_floor_and_arange_carry_no_gradient():
    check("x * np.sign(x) + np.floor(x) + np.arange(3)", rand(3))
    f = make_function("np.sum(np.round(x))", "x")
    np.testing.assert_array_equal(srcad.grad(f)(rand(3)), np.zeros(3))


def test_argmax_index():
    f = make_function("x[np.argmax(x)] * 3.0", "x")
    x = np.array([0.1, 0.9, 0.3])
    np.testing.assert_allclose(srcad.grad(f)(x), [0.0, 3.0, 0.0])
