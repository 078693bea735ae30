"""Gradient timings of srcad and its peers against hand-written NumPy, side by side.

    python -m benchmarks.run               # every peer that is installed; table + PNG
    python -m benchmarks.run --quick       # fewer samples
    python -m benchmarks.run --peers srcad,torch --problems mlp,rnn50

Each peer runs in its own process (thread pools do not fight), with the same thread
pinning for all. Within a process, the peer's gradient and the hand-written gradient are
sampled in shuffled rounds; a ratio is the peer's fastest sample over the hand-written one measured
beside it. The srcad process also measures the forward pass alone, the peak memory of the
RNN gradient (tracemalloc), the transformation time of a 200-line function and the cost a
cached call adds over calling the compiled function directly.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from benchmarks.peers import MODULES, PEERS
from benchmarks.problems import BY_NAME, PROBLEMS
from benchmarks.timing import compare

THREADS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- in one peer's process


def worker(peer: str, problems: list[str], samples: int) -> dict:
    if peer == "torch":
        import torch

        torch.set_num_threads(1)
    make = PEERS[peer]
    results = {}
    for name in problems:
        problem = BY_NAME[name]
        args = problem.args()
        call, check = make(problem)
        ref = problem.hand(*args)
        error = max(
            float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in zip(check(), ref)
        )
        fns = {"hand": lambda p=problem, a=args: p.hand(*a), "peer": call}
        if peer == "srcad":
            fns["forward"] = lambda p=problem, a=args: p.loss(*a)
        times = compare(fns, samples)
        results[name] = {**times, "ratio": times["peer"] / times["hand"], "error": error}
        if peer == "srcad":
            results[name]["vs_forward"] = times["peer"] / times["forward"]
    if peer == "srcad":
        results["_extra"] = srcad_extras(samples)
    return results


def _peak(fn) -> int:
    fn()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def srcad_extras(samples: int) -> dict:
    import srcad

    rnn = BY_NAME["rnn50"]
    args = rnn.args()
    g = srcad.grad(rnn.loss, wrt=rnn.wrt)
    memory = {"srcad": _peak(lambda: g(*args)), "hand": _peak(lambda: rnn.hand(*args))}
    scalar = BY_NAME["scalar"]
    a = scalar.args()
    gs = srcad.grad(scalar.loss, wrt=scalar.wrt)
    gs(*a)
    compiled = gs.generated(args=a).function
    overhead = compare({"cached": lambda: gs(*a), "compiled": lambda: compiled(*a)}, samples)
    return {
        "memory": memory,
        "memory_ratio": memory["srcad"] / memory["hand"],
        "transform_200_lines": transform_time(),
        "cached_call": overhead,
        "cached_overhead": overhead["cached"] - overhead["compiled"],
    }


def long_function(lines: int, tag: int) -> str:
    """Source of a straight-line NumPy function of about ``lines`` lines."""
    body = ["    a0 = x @ W + b", "    a1 = np.tanh(a0)"]
    k = 2
    while len(body) < lines - 1:
        j = len(body) % 5
        if j == 0:
            body.append(f"    a{k} = np.tanh(a{k - 1} * {1 + tag * 0.01 + k * 1e-3}) + a{k - 2}")
        elif j == 1:
            body.append(f"    a{k} = a{k - 1} @ V - 0.5 * a{k - 2}")
        elif j == 2:
            body.append(f"    a{k} = np.sin(a{k - 1}) * np.exp(-a{k - 2} * a{k - 2})")
        elif j == 3:
            body.append(f"    a{k} = a{k - 1} / (1.0 + np.sum(a{k - 2} * a{k - 2}))")
        else:
            body.append(f"    a{k} = np.maximum(a{k - 1}, 0.0) + b * a{k - 2}")
        k += 1
    body.append(f"    return np.sum(a{k - 1} * a{k - 1})")
    return f"import numpy as np\n\n\ndef long_{tag}(W, V, b, x):\n" + "\n".join(body) + "\n"


def transform_time(repeats: int = 5) -> float:
    """Median seconds of the first call of ``grad`` on a fresh 200-line function."""
    import srcad

    rng = np.random.default_rng(0)
    args = (
        rng.normal(size=(8, 8)),
        rng.normal(size=(8, 8)) * 0.1,
        rng.normal(size=8),
        rng.normal(size=(4, 8)),
    )
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, tmp)
        for tag in range(repeats):
            path = Path(tmp) / f"long_{tag}.py"
            path.write_text(long_function(200, tag))
            spec = importlib.util.spec_from_file_location(f"long_{tag}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            f = getattr(module, f"long_{tag}")
            start = time.perf_counter()
            srcad.grad(f, wrt=(0, 1, 2))(*args)
            times.append(time.perf_counter() - start)
        sys.path.remove(tmp)
    times.sort()
    return times[len(times) // 2]


# ---------------------------------------------------------------- the driver


def run_peer(peer: str, problems: list[str], samples: int) -> dict | str:
    if importlib.util.find_spec(MODULES[peer]) is None:
        return f"not installed ({MODULES[peer]}); pip install -e '.[bench]'"
    env = {**os.environ, **THREADS, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "benchmarks.run", "--worker", peer, "--samples", str(samples),
           "--problems", ",".join(problems)]  # fmt: skip
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _us(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 100 else f"{us:.0f}"


def table(results: dict, problems: list[str]) -> str:
    peers = [p for p in results if isinstance(results[p], dict)]
    head = "| problem | hand-written (µs) | " + " | ".join(peers) + " |"
    lines = [head, "|" + "---|" * (2 + len(peers))]
    for name in problems:
        hand = results[peers[0]][name]["hand"] if peers else float("nan")
        cells = []
        for p in peers:
            r = results[p][name]
            cells.append(f"{r['ratio']:.2f}× ({_us(r['peer'])} µs)")
        lines.append(f"| {name} | {_us(hand)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def extras_text(results: dict, problems: list[str]) -> str:
    r = results.get("srcad")
    if not isinstance(r, dict):
        return ""
    out = ["", "srcad gradient / forward pass alone: " + ", ".join(
        f"{n} {r[n]['vs_forward']:.2f}×" for n in problems if n in r)]  # fmt: skip
    x = r["_extra"]
    m = x["memory"]
    out.append(f"RNN gradient peak memory (tracemalloc): srcad {m['srcad'] / 1e6:.2f} MB, "
               f"hand-written {m['hand'] / 1e6:.2f} MB, ratio {x['memory_ratio']:.2f}")  # fmt: skip
    out.append(f"first call of grad on a 200-line function: {x['transform_200_lines']:.3f} s")
    c = x["cached_call"]
    out.append(
        f"cached call of grad (scalar problem): {_us(c['cached'])} µs, compiled function "
        f"directly {_us(c['compiled'])} µs, overhead {_us(x['cached_overhead'])} µs"
    )
    return "\n".join(out)


def chart(results: dict, problems: list[str], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no chart)")
        return
    peers = [p for p in results if isinstance(results[p], dict)]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / max(len(peers), 1)
    for k, p in enumerate(peers):
        ratios = [results[p][n]["ratio"] for n in problems]
        ax.bar([i + k * width for i in range(len(problems))], ratios, width, label=p)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks([i + width * (len(peers) - 1) / 2 for i in range(len(problems))], problems)
    ax.set_ylabel("time / hand-written NumPy (log)")
    ax.set_title("Gradient time relative to hand-written code (fastest sample, lower is better)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"chart: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--problems", default=",".join(p.name for p in PROBLEMS))
    parser.add_argument("--samples", type=int, default=41)
    parser.add_argument("--quick", action="store_true", help="11 samples instead of 41")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    problems = ns.problems.split(",")
    samples = 11 if ns.quick else ns.samples
    if ns.worker:
        print(json.dumps(worker(ns.worker, problems, samples)))
        return
    results = {}
    for peer in ns.peers.split(","):
        print(f"running {peer} ...", file=sys.stderr, flush=True)
        results[peer] = run_peer(peer, problems, samples)
        if isinstance(results[peer], str):
            print(f"  {peer}: {results[peer]}", file=sys.stderr)
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, NumPy {np.__version__}, float64, 1 thread; "
          f"fastest of {samples} samples; ratio = time / hand-written gradient\n")  # fmt: skip
    print(table(results, problems))
    print(extras_text(results, problems))
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    chart(results, problems, out / "ratios.png")


if __name__ == "__main__":
    main()
