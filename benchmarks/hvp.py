"""Hessian-vector products: srcad.hvp against one gradient and against forming the Hessian.

Run with ``python benchmarks/hvp.py``; prints median times and ratios (no assertions).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import srcad


def mlp_loss(w, x, y):
    """A two-layer network's squared error, with its weights in one flat vector."""
    n_in, n_hidden = x.shape[1], 16
    W1 = w[: n_in * n_hidden].reshape(n_in, n_hidden)
    W2 = w[n_in * n_hidden :].reshape(n_hidden, 1)
    h = np.tanh(x @ W1)
    return np.sum((h @ W2 - y) ** 2) / x.shape[0]


def rosenbrock(x):
    """The extended Rosenbrock function."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def median_time(call, repeat: int = 30) -> float:
    """Median seconds per call after one warm-up call."""
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(name: str, f, args, repeat: int) -> None:
    """One line: gradient, hvp and Hessian times and the ratios of hvp and Hessian to it."""
    x = args[0]
    v = np.random.default_rng(1).normal(size=x.shape)
    gradient = srcad.grad(f)
    tangents = (v,) + (None,) * (len(args) - 1)
    g = median_time(lambda: gradient(*args), repeat)
    hv = median_time(lambda: srcad.hvp(f, args, tangents), repeat)
    hessian = srcad.hessian(f)
    H = median_time(lambda: hessian(*args), max(3, repeat // 10))
    product = srcad.hvp(f, args, tangents)
    product = product[0] if len(args) > 1 else product
    check = np.max(np.abs(product - hessian(*args) @ v))
    print(
        f"{name:<22} n={x.size:<5} grad {g * 1e6:9.1f} us   hvp {hv * 1e6:9.1f} us "
        f"({hv / g:4.1f}x grad)   Hessian {H * 1e3:9.2f} ms ({H / hv:7.0f}x hvp)   "
        f"|hvp - H v| = {check:.1e}"
    )


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 8))
    y = rng.normal(size=(64, 1))
    w = 0.3 * rng.normal(size=8 * 16 + 16)
    measure("MLP weights", mlp_loss, (w, x, y), 50)
    measure("Rosenbrock", rosenbrock, (rng.normal(size=200),), 50)


if __name__ == "__main__":
    main()
