"""Functions that tests compile with srcad.export (export needs their source files)."""

import math
import warnings
from functools import partial

import numpy as np
from export_other import rescale

import srcad

SCALE = 0.5
OFFSETS = np.array([0.25, -0.5, 1.0])
LIMIT = float("inf")


def layer(W, h):
    return np.tanh(h @ W)


def loss_fn(params, x, y):
    h = layer(params["W1"], x)
    logits = h @ params["W2"] + params["b2"]
    z = logits - np.max(logits, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(y * (z - lse), axis=1)) * SCALE


def sgd(params, grads, lr):
    return {k: params[k] - lr * grads[k] for k in params}


def train_step(params, x, y, lr):
    loss, g = srcad.value_and_grad(loss_fn)(params, x, y)
    return sgd(params, g, lr), loss


def looped(x, n):
    s = 0.0
    for _ in range(n):
        if np.sum(x) > 0:
            x = np.sin(x) * 2.0
        else:
            x = x * x
        s = s + np.sum(x)
    return s + math.sin(1.0)


def loop_step(x, n):
    return srcad.grad(looped)(x, n)


def with_constants(w, x):
    return np.sum(np.minimum(w * x + OFFSETS, LIMIT)) + rescale(np.sum(w))


def weighted(w, x, p=2.0):
    return np.sum(np.abs(w * x) ** p)


dweighted = srcad.grad(weighted, wrt=(0, 1))


def named_step(w, x):
    gw, gx = dweighted(w, x)
    return gw + gx


def pair_loss(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def pair_step(layers, x):
    return srcad.value_and_grad(pair_loss)(layers, x)


def untransformable(x):
    with warnings.catch_warnings():
        return np.sum(x * 2.0)


def solve_or_pinv(A, b):
    try:
        y = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        y = np.linalg.pinv(A) @ b
    return np.sum(y**2)


def bad_step(x):
    return srcad.grad(untransformable)(x)


class Opaque:
    scale = 2.0


OBJECT = Opaque()


def reads_object(x):
    return np.sum(x) * OBJECT.scale


def scaled_twice(w, x):
    return rescale(np.sum(w * x)) * SCALE


@srcad.custom_vjp
def softclip(x):
    return np.tanh(x)


def softclip_fwd(x):
    y = np.tanh(x)
    return y, (y,)


def softclip_bwd(res, g):
    (y,) = res
    return (g * (1 - y * y),)


softclip.defvjp(softclip_fwd, softclip_bwd)


def power(p, x):
    return x**p


cube = partial(power, 3.0)


def nested(x, n):
    if n == 0:
        return x
    return np.sin(nested(x, n - 1))


def handles(x):
    kept = np.sum(softclip(x) * srcad.stop_gradient(x))
    return kept + np.sum(cube(x)) + np.sum(nested(x, 3))


def wave(x, w):
    h = x
    for _k in range(3):
        h = np.sin(h * w)
    return np.sum(h * h)


def slope_step(x, w, v):
    value, slope = srcad.jvp(wave, (x, w), (v, None))
    return value, slope


def log_volume(A):
    return np.linalg.slogdet(A)[1]


def encode(params, x):
    h = np.tanh(x @ params["W"])
    return {"mean": h[:, :2], "logvar": 0.1 * h[:, 2:]}


def vae_loss(params, x):
    stats = encode(params, x)
    return np.sum(stats["mean"] ** 2 + np.exp(stats["logvar"]) - stats["logvar"])
