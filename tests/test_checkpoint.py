"""srcad.checkpoint: calls keep only their arguments and run again in the backward pass;
the gradient is unchanged and peak memory drops."""

import tracemalloc

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(5)
T, K = 120, 12
W = 0.3 * RNG.normal(size=(64, 64))
XS = RNG.normal(size=(T, 256, 64))


def segment(h, xs, start):
    for t in range(start, start + K):
        h = np.tanh(h @ W + xs[t])
    return h


checkpointed_segment = srcad.checkpoint(segment)


def plain_rnn(h, xs):
    for s in range(0, T, K):
        h = segment(h, xs, s)
    return np.sum(h * h)


def checkpointed_rnn(h, xs):
    for s in range(0, T, K):
        h = checkpointed_segment(h, xs, s)
    return np.sum(h * h)


def inline_checkpoint(h, xs):
    for s in range(0, T, K):
        h = srcad.checkpoint(segment)(h, xs, s)
    return np.sum(h * h)


def peak(f, *args):
    f(*args)  # transform first: only the gradient's own memory is measured
    tracemalloc.start()
    try:
        result = f(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_gradient_is_the_same_and_peak_memory_drops():
    h0 = RNG.normal(size=(256, 64))
    plain, plain_peak = peak(srcad.grad(plain_rnn), h0, XS)
    ckpt, ckpt_peak = peak(srcad.grad(checkpointed_rnn), h0, XS)
    np.testing.assert_allclose(ckpt, plain, rtol=1e-12, atol=1e-12)
    # the plain tape holds T hidden states (and their tanh outputs); the checkpointed one
    # T / K states, plus one segment recomputed at a time: K = 12 bounds the drop
    assert ckpt_peak < plain_peak / 3, (plain_peak, ckpt_peak)


def test_checkpoint_written_inline_and_in_forward_mode():
    h0 = RNG.normal(size=(256, 64))
    np.testing.assert_allclose(
        srcad.grad(inline_checkpoint)(h0, XS), srcad.grad(plain_rnn)(h0, XS), rtol=1e-12
    )
    v = RNG.normal(size=h0.shape)
    np.testing.assert_allclose(
        srcad.jvp(checkpointed_rnn, (h0, XS), (v, None))[1],
        srcad.jvp(plain_rnn, (h0, XS), (v, None))[1],
        rtol=1e-12,
    )


def small(x, y):
    return np.sin(x) * y, np.cos(x)


def uses_small(x, y):
    a, b = srcad.checkpoint(small)(x, y)
    return np.sum(a * b)


def test_checkpointed_call_with_several_results_against_finite_differences():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    assert srcad.check_grad(uses_small, x, y, wrt=(0, 1), modes=("fwd", "rev")) < 1e-6


def test_checkpoint_needs_a_function():
    with pytest.raises(TypeError, match="needs a function"):
        srcad.checkpoint(3)
