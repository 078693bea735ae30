"""Side-by-side timing: the fastest of many samples, the callables interleaved (in a shuffled
order each round) so that all see the same conditions.

The fastest sample, not the median: on a busy machine a sample either runs undisturbed or
is descheduled for a time slice or more (10-30 ms against 1.4 ms for the RNN gradient), and
when about half the samples are hit the median lands on either side at random. That made
the rnn50 ratio 4-7x in some processes and 0.2x in others; the fastest samples agree to a
few percent from process to process.
"""

from __future__ import annotations

import gc
import random
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
    """Seconds per call of each callable: its fastest sample, sampled in shuffled rounds."""
    for fn in fns.values():  # warm up: caches, first-call transformation, jit compilation
        fn()
        fn()
    counts = {name: calls_per_sample(fn) for name, fn in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    order = list(fns)
    shuffle = random.Random(0).shuffle
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(samples):
            shuffle(order)
            for name in order:
                times[name].append(_sample(fns[name], counts[name]))
    finally:
        if gc_was:
            gc.enable()
    return {name: min(ts) for name, ts in times.items()}
