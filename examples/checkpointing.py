"""Checkpointing: keep one RNN state in k on the tape and recompute the rest.

Run: python examples/checkpointing.py  (prints peak memory of both gradients)
"""

import tracemalloc

import numpy as np

import srcad

T, K = 120, 12
rng = np.random.default_rng(0)
W = 0.3 * rng.normal(size=(64, 64))


def segment(h, xs, start):
    """K steps of a tanh RNN."""
    for t in range(start, start + K):
        h = np.tanh(h @ W + xs[t])
    return h


segment_checkpointed = srcad.checkpoint(segment)


def loss(h, xs):
    for start in range(0, T, K):
        h = segment(h, xs, start)
    return np.sum(h * h)


def loss_checkpointed(h, xs):
    for start in range(0, T, K):
        h = segment_checkpointed(h, xs, start)
    return np.sum(h * h)


def peak_memory(f, *args):
    f(*args)  # the first call transforms; measure a later one
    tracemalloc.start()
    result = f(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak


def main() -> None:
    h0, xs = rng.normal(size=(256, 64)), rng.normal(size=(T, 256, 64))
    plain, plain_peak = peak_memory(srcad.grad(loss), h0, xs)
    ckpt, ckpt_peak = peak_memory(srcad.grad(loss_checkpointed), h0, xs)
    print(f"peak memory: {plain_peak / 1e6:.1f} MB plain, {ckpt_peak / 1e6:.1f} MB checkpointed")
    print(f"({plain_peak / ckpt_peak:.1f}x less; about {T / (T / K + K):.1f}x expected)")
    print("same gradient:", np.allclose(plain, ckpt, rtol=1e-12, atol=0))


if __name__ == "__main__":
    main()
