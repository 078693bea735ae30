"""The benchmark problems: each a loss written with NumPy (or ``math``), its hand-written
gradient, and inputs. Every peer differentiates the same ``loss`` (translated to its own
array library in ``peers.py``); the hand-written gradient is the baseline of every ratio.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import srcad

# ---------------------------------------------------------------- MLP 32x64 -> 128 -> 10


def mlp(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    r = out - y
    return np.sum(r * r) / x.shape[0]


def mlp_hand(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    r = h @ W2 + b2 - y
    dout = (2.0 / x.shape[0]) * r
    dW2 = h.T @ dout
    db2 = dout.sum(axis=0)
    da = (dout @ W2.T) * (1.0 - h * h)
    dW1 = x.T @ da
    db1 = da.sum(axis=0)
    return dW1, db1, dW2, db2


def mlp_inputs(rng):
    return (
        rng.normal(size=(64, 128)) * 0.1,
        rng.normal(size=128) * 0.1,
        rng.normal(size=(128, 10)) * 0.1,
        rng.normal(size=10) * 0.1,
        rng.normal(size=(32, 64)),
        rng.normal(size=(32, 10)),
    )


# ---------------------------------------------------------------- RNN, 50 steps


def rnn(Wx, Wh, b, xs):
    h = np.zeros((xs.shape[1], Wh.shape[0]))
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        loss = loss + np.sum(h * h)
    return loss


def rnn_hand(Wx, Wh, b, xs):
    steps = xs.shape[0]
    hs = [np.zeros((xs.shape[1], Wh.shape[0]))]
    for t in range(steps):
        hs.append(np.tanh(xs[t] @ Wx + hs[-1] @ Wh + b))
    dWx = np.zeros_like(Wx)
    dWh = np.zeros_like(Wh)
    db = np.zeros_like(b)
    dh = np.zeros_like(hs[0])
    for t in range(steps - 1, -1, -1):
        h = hs[t + 1]
        dh += 2.0 * h
        da = dh * (1.0 - h * h)
        dWx += xs[t].T @ da
        dWh += hs[t].T @ da
        db += da.sum(axis=0)
        dh = da @ Wh.T
    return dWx, dWh, db


def rnn_inputs(rng):
    return (
        rng.normal(size=(32, 64)) * 0.1,
        rng.normal(size=(64, 64)) * 0.1,
        rng.normal(size=64) * 0.1,
        rng.normal(size=(50, 16, 32)),
    )


# ---------------------------------------------------------------- LSTM cell


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm(Wi, Wf, Wo, Wg, x, h, c):
    xh = np.concatenate([x, h], axis=1)
    i = 1.0 / (1.0 + np.exp(-(xh @ Wi)))
    f = 1.0 / (1.0 + np.exp(-(xh @ Wf)))
    o = 1.0 / (1.0 + np.exp(-(xh @ Wo)))
    g = np.tanh(xh @ Wg)
    c2 = f * c + i * g
    h2 = o * np.tanh(c2)
    return np.sum(h2 * h2) + np.sum(c2 * c2)


def lstm_hand(Wi, Wf, Wo, Wg, x, h, c):
    xh = np.concatenate([x, h], axis=1)
    i = 1.0 / (1.0 + np.exp(-(xh @ Wi)))
    f = 1.0 / (1.0 + np.exp(-(xh @ Wf)))
    o = 1.0 / (1.0 + np.exp(-(xh @ Wo)))
    g = np.tanh(xh @ Wg)
    c2 = f * c + i * g
    tc = np.tanh(c2)
    h2 = o * tc
    dh2 = 2.0 * h2
    dc2 = 2.0 * c2 + dh2 * o * (1.0 - tc * tc)
    do = dh2 * tc
    di, df, dg = dc2 * g, dc2 * c, dc2 * i
    xhT = xh.T
    dWi = xhT @ (di * i * (1.0 - i))
    dWf = xhT @ (df * f * (1.0 - f))
    dWo = xhT @ (do * o * (1.0 - o))
    dWg = xhT @ (dg * (1.0 - g * g))
    return dWi, dWf, dWo, dWg


def lstm_inputs(rng):
    n, d_in, d_h = 16, 32, 64
    w = [rng.normal(size=(d_in + d_h, d_h)) * 0.1 for _ in range(4)]
    return (*w, rng.normal(size=(n, d_in)), rng.normal(size=(n, d_h)), rng.normal(size=(n, d_h)))


# ---------------------------------------------------------------- attention block


def attention(Wq, Wk, Wv, x):
    q = x @ Wq
    k = x @ Wk
    v = x @ Wv
    s = (q @ k.T) / math.sqrt(q.shape[1])
    e = np.exp(s - srcad.stop_gradient(np.max(s, axis=1, keepdims=True)))
    p = e / np.sum(e, axis=1, keepdims=True)
    out = p @ v
    return np.sum(out * out)


def attention_hand(Wq, Wk, Wv, x):
    q = x @ Wq
    k = x @ Wk
    v = x @ Wv
    scale = 1.0 / math.sqrt(q.shape[1])
    s = (q @ k.T) * scale
    e = np.exp(s - np.max(s, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    out = p @ v
    dout = 2.0 * out
    dp = dout @ v.T
    dv = p.T @ dout
    ds = p * (dp - np.sum(dp * p, axis=1, keepdims=True)) * scale
    dq = ds @ k
    dk = ds.T @ q
    xT = x.T
    return xT @ dq, xT @ dk, xT @ dv


def attention_inputs(rng):
    n, d = 32, 64
    return (
        rng.normal(size=(d, d)) * 0.1,
        rng.normal(size=(d, d)) * 0.1,
        rng.normal(size=(d, d)) * 0.1,
        rng.normal(size=(n, d)),
    )


# ---------------------------------------------------------------- small vectors


def small(x, y):
    return np.sum(np.sin(x) * y + x * x)


def small_hand(x, y):
    return np.cos(x) * y + 2.0 * x, np.sin(x)


def small_inputs(rng):
    return rng.normal(size=4), rng.normal(size=4)


# ---------------------------------------------------------------- scalar, math module


def scalar(x, y):
    return math.sin(x) * y + math.exp(-x * y)


def scalar_hand(x, y):
    e = math.exp(-x * y)
    return math.cos(x) * y - y * e, math.sin(x) - x * e


def scalar_inputs(rng):
    return 0.3, 1.7


@dataclass
class Problem:
    name: str
    loss: Callable
    hand: Callable
    inputs: Callable
    wrt: tuple[int, ...]
    scalar: bool = False

    def args(self) -> tuple[Any, ...]:
        return self.inputs(np.random.default_rng(0))


PROBLEMS = [
    Problem("mlp", mlp, mlp_hand, mlp_inputs, (0, 1, 2, 3)),
    Problem("rnn50", rnn, rnn_hand, rnn_inputs, (0, 1, 2)),
    Problem("lstm", lstm, lstm_hand, lstm_inputs, (0, 1, 2, 3)),
    Problem("attention", attention, attention_hand, attention_inputs, (0, 1, 2)),
    Problem("small4", small, small_hand, small_inputs, (0, 1)),
    Problem("scalar", scalar, scalar_hand, scalar_inputs, (0, 1), scalar=True),
]
BY_NAME = {p.name: p for p in PROBLEMS}
