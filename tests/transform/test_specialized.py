"""Code specialized for the ranks of NumPy arrays and Python numbers (the call fast path)."""

import math

import numpy as np
import pytest

import srcad
from srcad.testing import check_grad


def layer(W, b, x):
    h = np.tanh(x @ W + b)
    return np.sum(h * h) / x.shape[0]


def scalar(x, y):
    return math.sin(x) * y + math.exp(-x * y)


def vector_output(x):
    return x * 2.0


def rng_array(*shape):
    return np.random.default_rng(sum(shape) + len(shape)).normal(size=shape)


def test_known_ranks_give_plain_numpy():
    d = srcad.grad(layer, wrt=(0, 1))
    src = srcad.source(d, example_args=(rng_array(3, 4), rng_array(4), rng_array(5, 3)))
    assert "x.T @ " in src
    assert ".sum(axis=0)" in src
    assert "unbroadcast" not in src and "grad_matmul" not in src
    assert "array_namespace" not in src
    assert "= np.sum(" not in src  # grad alone: the loss value is not computed


@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 4), (4,), (5, 3)),
        ((3, 1), (1,), (5, 3)),
        ((3, 4), (1, 4), (1, 3)),
        ((1, 4), (4,), (5, 1)),
    ],
)
def test_length_one_axes_and_other_ranks_stay_correct(shapes):
    W, b, x = (rng_array(*s) for s in shapes)
    d = srcad.grad(layer, wrt=(0, 1, 2))
    check_grad(layer, W, b, x, wrt=(0, 1, 2))
    dW, db, dx = d(W, b, x)
    assert dW.shape == W.shape and db.shape == b.shape and dx.shape == x.shape


def test_each_rank_combination_has_its_own_code():
    d = srcad.grad(layer, wrt=1)
    first = srcad.source(d, example_args=(rng_array(3, 4), rng_array(4), rng_array(5, 3)))
    other = srcad.source(d, example_args=(rng_array(3, 4), rng_array(1, 4), rng_array(5, 3)))
    assert other != first
    assert "b 2-d (may have length-1 axes)" in other


def test_source_without_example_arguments_is_the_general_code_whatever_ran_before():
    d = srcad.grad(layer, wrt=1)
    general = srcad.source(d)
    d(rng_array(3, 4), rng_array(4), rng_array(5, 3))
    d(0.5 * rng_array(3, 4), rng_array(1, 4), rng_array(5, 3))
    assert srcad.source(d) == general
    assert "array_namespace" in general  # NumPy, CuPy or any Array API namespace


def test_scalar_code_calls_math_directly():
    d = srcad.grad(scalar, wrt=(0, 1))
    dx, dy = d(0.3, 1.7)
    src = srcad.source(d, example_args=(0.3, 1.7))
    assert "math_namespace" not in src and "unbroadcast" not in src
    e = math.exp(-0.3 * 1.7)
    assert dx == pytest.approx(math.cos(0.3) * 1.7 - 1.7 * e)
    assert dy == pytest.approx(math.sin(0.3) - 0.3 * e)


def test_non_scalar_output_is_still_an_error():
    with pytest.raises(TypeError, match="scalar output"):
        srcad.grad(vector_output)(np.ones(3))
