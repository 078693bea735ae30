"""Mixed mode against the alternatives on the hierarchical multiscale LSTM cell update
(Chung et al., 2016): each element is flushed, copied or updated by its boundary flags.

Run: python benchmarks/mixed_mode.py [--quick]. Prints, per size, the median time of the
gradient with respect to c, f, i, g and its peak memory (tracemalloc; JAX's own buffers
are not seen by it), as ratios to hand-written NumPy. No assertions.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc

import numpy as np

import srcad


@srcad.elementwise
def cell(c, f, i, g, z, zb):
    if z == 1:
        return i * g  # flush
    elif zb == 0:
        return c  # copy
    else:
        return f * c + i * g  # update


def mixed_loss(c, f, i, g, z, zb, w):
    return np.sum(cell(c, f, i, g, z, zb) * w)


def where_loss(c, f, i, g, z, zb, w):
    new = np.where(z == 1, i * g, np.where(zb == 0, c, f * c + i * g))
    return np.sum(new * w)


def hand_written(c, f, i, g, z, zb, w):
    """The gradient a person writes: the loss's weights routed by the flags."""
    flush = z == 1
    update = ~flush & (zb != 0)
    dc = np.where(flush, 0.0, np.where(update, f * w, w))
    df = np.where(update, c * w, 0.0)
    dgate = np.where(flush | update, w, 0.0)
    return dc, df, dgate * g, dgate * i


def median_time(gradient, args: tuple, repeat: int) -> float:
    gradient(*args)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        gradient(*args)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def peak(gradient, args: tuple) -> int:
    gradient(*args)
    tracemalloc.start()
    gradient(*args)
    result = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result


def jax_gradient():
    """``jax.jit`` of the where formulation's gradient, or None without JAX."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def loss(c, f, i, g, z, zb, w):
        new = jnp.where(z == 1, i * g, jnp.where(zb == 0, c, f * c + i * g))
        return jnp.sum(new * w)

    grad = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))
    return lambda *a: [x.block_until_ready() for x in grad(*a)]


def main() -> None:
    quick = "--quick" in sys.argv
    rng = np.random.default_rng(0)
    mixed = srcad.grad(mixed_loss, wrt=(0, 1, 2, 3))
    where = srcad.grad(where_loss, wrt=(0, 1, 2, 3))
    jitted = jax_gradient()
    print(
        f"{'size':>8} {'hand-written':>13} {'mixed':>16} {'where (srcad)':>16} "
        f"{'jax.jit where':>14}   peak memory vs hand-written: mixed, where"
    )
    for size in (10**3, 10**4, 10**5) if quick else (10**3, 10**4, 10**5, 10**6):
        c, f, i, g, w = (rng.normal(size=size) for _ in range(5))
        z = (rng.random(size) < 0.2).astype(float)  # ~20% flush
        zb = (rng.random(size) < 0.5).astype(float)  # half the rest copy
        args = (c, f, i, g, z, zb, w)
        for got, want in zip(mixed(*args), hand_written(*args)):
            assert np.allclose(got, want)
        repeat = max(5, 2_000_000 // size) if not quick else 5
        hand = median_time(hand_written, args, repeat)
        t_mixed = median_time(mixed, args, repeat)
        t_where = median_time(where, args, repeat)
        t_jax = median_time(jitted, args, repeat) if jitted else float("nan")
        m_hand, m_mixed, m_where = (peak(g, args) for g in (hand_written, mixed, where))
        print(
            f"{size:>8} {hand * 1e3:>10.3f} ms {t_mixed / hand:>6.2f}x "
            f"({t_mixed * 1e3:6.2f}) {t_where / hand:>6.2f}x ({t_where * 1e3:6.2f}) "
            f"{t_jax / hand:>6.2f}x        {m_mixed / m_hand:5.2f}x, {m_where / m_hand:5.2f}x"
        )


if __name__ == "__main__":
    main()
