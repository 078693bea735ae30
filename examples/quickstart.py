"""srcad quick start: differentiate a small NumPy loss and read the generated gradient.

Run with `python examples/quickstart.py` (or `make demo` on a fresh machine).
"""

import math

import numpy as np

import srcad


def loss(W, b, x):
    h = np.tanh(x @ W + b)
    return np.sum(h * h) / x.shape[0]


@srcad.grad
def dwave(t):
    return math.sin(t) * np.exp(-0.5 * t)


rng = np.random.default_rng(0)
W, b, x = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(5, 3))

dloss = srcad.grad(loss, wrt=(0, 1))  # gradients with respect to W and b

print("== generated source of srcad.grad(loss, wrt=(0, 1)) ==")
print(srcad.source(dloss))

print("== gradient ==")
dW, db = dloss(W, b, x)
print(f"dW: shape {dW.shape}, dtype {dW.dtype}\n{np.round(dW, 4)}")
print(f"db: shape {db.shape}, dtype {db.dtype}\n{np.round(db, 4)}\n")

print("== value_and_grad (wrt by parameter name) ==")
value, (dW2, db2) = srcad.value_and_grad(loss, wrt=("W", "b"))(W, b, x)
print(f"loss = {value:.6f}, same gradient: {np.allclose(dW, dW2) and np.allclose(db, db2)}\n")

print("== vjp: one cotangent per argument ==")
out, pullback = srcad.vjp(loss, W, b, x)
gW, gb, gx = pullback(1.0)
print(f"loss = {out:.6f}, cotangent shapes: {gW.shape} {gb.shape} {gx.shape}\n")

print("== @srcad.grad on a scalar function ==")
t = 0.3
by_hand = (math.cos(t) - 0.5 * math.sin(t)) * math.exp(-0.5 * t)
print(f"d/dt sin(t) * exp(-t/2) at t = {t}: srcad {dwave(t):.8f}, by hand {by_hand:.8f}\n")

print("== check_grad against central finite differences ==")
error = srcad.check_grad(loss, W, b, x, wrt=(0, 1))
print(f"max abs error: {error:.2e}")
print("gradient check passed")
