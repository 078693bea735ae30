"""Functions run on other array libraries by tests/runtime/test_backends.py."""

import math

import numpy as np


def mlp(W1, b1, W2, x):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2
    return np.sum(out * out) / x.shape[0]


def rnn(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t, ...])
    return np.sum(h * h)


def indexing_and_updates(x, v):
    y = x * 2.0
    y[0] = v[1] * 3.0
    z = np.exp(y[1:3]) + x[0]
    y[1:3] = z * 0.5
    return np.sum(y * y) + np.sum(z)


def with_math(x, y):
    return math.sin(x) * y + math.exp(y)


def reshaped(w, x):
    # the rules of reshape, expand_dims and squeeze read their operand's shape (ravel:
    # not in array-api-strict)
    a = np.reshape(2.0 * x, (2, 1))
    b = np.reshape(x * x, (-1,))
    c = np.expand_dims(3.0 * x, 0)
    return np.sum(w * (a[:, 0] + b + c[0, ...])) * np.sum(np.squeeze(c, axis=0))
