"""Side-by-side timing: medians of many samples, two callables interleaved so that both see
the same noise (another process on the machine, frequency changes)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def calls_per_sample(fn: Callable[[], object], target: float = 0.002) -> int:
    """How many calls make one sample last about ``target`` seconds."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target or n >= 1 << 20:
            return max(1, int(n * target / max(elapsed, 1e-9)))
        n *= 4


def _sample(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def compare(fns: dict[str, Callable[[], object]], samples: int = 41) -> dict[str, float]:
    """Median seconds per call of each callable, sampled round-robin."""
    for fn in fns.values():  # warm up: caches, first-call transformation, jit compilation
        fn()
        fn()
    counts = {name: calls_per_sample(fn) for name, fn in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(samples):
            for name, fn in fns.items():
                times[name].append(_sample(fn, counts[name]))
    finally:
        if gc_was:
            gc.enable()
    return {name: statistics.median(ts) for name, ts in times.items()}
