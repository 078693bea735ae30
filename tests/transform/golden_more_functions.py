"""Functions whose generated code test_golden_more.py pins: loops, forward mode, kernels."""

import numpy as np

import srcad


def rnn_loss(W, U, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def newton_sqrt(a):
    x = a
    while np.abs(x * x - a) > 1e-10:
        x = 0.5 * (x + a / x)
    return x


def first_crossing(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 3.0:
            break
        s = s + np.sin(x[i]) * x[i]
    return s


@srcad.elementwise
def leaky(x, a):
    if x > 0:
        return x
    return a * x
