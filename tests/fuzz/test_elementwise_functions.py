"""Differential fuzzing of ``srcad.elementwise`` (mixed mode): random scalar functions with
``if``/``elif``/``else``, early returns and rebinding, run vectorized against Python
running them element by element, and their derivatives against central differences.

Conditions compare the inputs with constants; inputs are drawn away from every threshold,
so a difference step never crosses one. ``SRCAD_FUZZ_START`` / ``SRCAD_FUZZ_COUNT`` pick
the seeds, as for tests/fuzz/test_programs.py.
"""

from __future__ import annotations

import importlib.util
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest

import srcad

START = int(os.environ.get("SRCAD_FUZZ_START", 0))
SEEDS = range(START, START + int(os.environ.get("SRCAD_FUZZ_COUNT", 40)))
_DIR = Path(tempfile.mkdtemp(prefix="srcad-elementwise-"))
MARGIN = 0.05

TERMS = [
    "{a} * {b}", "{a} + 0.5 * {b}", "np.sin({a})", "np.tanh({a}) * {b}", "{a} * {a} - {b}",
    "np.exp(0.3 * {a})", "np.cos({a} + {b})", "{a} / (1.5 + {b} * {b})", "-{a}",
    # Python's own, on numbers (an error on arrays until stop 31), and math's functions
    # without a NumPy twin (erf) or without a rule (atan2) until then
    "float({a}) * {b}", "math.erf({a}) * {b}", "math.atan2({a}, 1.5 + {b} * {b})",
    # Python's % and // (the CUDA kernel's were inexact until stop 32: 8.0 % 0.4)
    "{a} % 0.7 + {b}", "({a} // 0.4) * {b}",
]  # fmt: skip


#: variables named as the CUDA kernel's own names or C's (srcad renames them in the kernel)
RESERVED = ["x_in", "y_in", "n", "T", "out", "exp", "partial_0"]


class Writer:
    """One random scalar function ``f(x, y)`` and the thresholds its conditions use."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.thresholds: list[float] = []
        self.names = ["x", "y"]
        self.count = 0

    def expr(self) -> str:
        a, b = self.rng.choice(self.names), self.rng.choice(self.names)
        return self.rng.choice(TERMS).format(a=a, b=b)

    def condition(self) -> str:
        threshold = round(self.rng.uniform(-1.0, 1.0), 2)
        self.thresholds.append(threshold)
        name = self.rng.choice(["x", "y"])
        if self.rng.random() < 0.2:
            # a chained comparison (a ValueError on arrays until stop 31)
            upper = round(threshold + self.rng.uniform(0.2, 1.0), 2)
            self.thresholds.append(upper)
            return f"{threshold} < {name} < {upper}"
        return f"{name} {self.rng.choice(['>', '<'])} {threshold}"

    def block(self, depth: int, indent: str) -> list[str]:
        lines = []
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.random()
            if self.rng.random() < 0.15:
                # a parameter bound again in a branch, or updated in place (the first's
                # later tangent was dropped until stop 31: silently wrong partials; the
                # second refused)
                name = self.rng.choice(self.names)
                op = self.rng.choice(["+=", "*=", "-="])
                lines.append(f"{indent}if {self.condition()}:")
                lines.append(f"{indent}    {self.rng.choice(['x', 'y'])} = {self.expr()}")
                lines.append(f"{indent}{name} {op} {self.expr()}")
                continue
            if depth == 0 and self.rng.random() < 0.12:
                # a loop over a constant range updating a name, leaving early or returning
                name = self.rng.choice(self.names)
                lines.append(f"{indent}for i in range({self.rng.randint(1, 3)}):")
                lines.append(f"{indent}    {name} = {name} * 0.75 + 0.25 * {self.expr()}")
                jump = self.rng.choice(["break", "continue", f"return {self.expr()}"])
                lines.append(f"{indent}    if {self.condition()}:")
                lines.append(f"{indent}        {jump}")
                lines.append(f"{indent}    {name} = {name} + 0.1 * {self.expr()}")
                continue
            if kind < 0.35 or depth >= 2:
                self.count += 1
                name = f"t{self.count}"
                spare = [n for n in RESERVED if n not in self.names]
                if depth == 0 and spare and self.rng.random() < 0.15:
                    # a name CuPy or C reserves, or the kernel's own name for a copy of a
                    # reassigned parameter (a CuPy error and a C redeclaration until
                    # stops 32 and 33)
                    name = self.rng.choice(spare)
                lines.append(f"{indent}{name} = {self.expr()}")
                if depth == 0:
                    self.names.append(name)  # (only names bound on every path are read)
            elif kind < 0.6:
                lines.append(f"{indent}if {self.condition()}:")
                lines.append(f"{indent}    return {self.expr()}")
            else:
                name = f"t{self.count + 1}"
                self.count += 1
                lines.append(f"{indent}if {self.condition()}:")
                lines.append(f"{indent}    {name} = {self.expr()}")
                lines += self.block(depth + 1, indent + "    ")
                if self.rng.random() < 0.5:
                    lines.append(f"{indent}elif {self.condition()}:")
                    lines.append(f"{indent}    {name} = {self.expr()}")
                lines.append(f"{indent}else:")
                lines.append(f"{indent}    {name} = {self.expr()}")
                if depth == 0:
                    self.names.append(name)
        return lines

    def source(self) -> str:
        body = self.block(0, "    ")
        body.append(f"    return {self.expr()}")
        return "\n".join(
            [
                "import math",
                "",
                "import numpy as np",
                "import srcad",
                "",
                "",
                "def plain(x, y):",
                *body,
                "",
                "",
                "f = srcad.elementwise(plain)",
                "",
                "",
                "def total(x, y):",
                "    return np.sum(f(x, y))",
                "",
            ]
        )


def _gpu() -> bool:
    try:
        import cupy

        return bool(cupy.is_available())
    except Exception:
        return False


def load(source: str, seed: int):
    path = _DIR / f"elementwise_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"srcad_elementwise_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def away_from(thresholds: list[float], rng: np.random.Generator, n: int) -> np.ndarray:
    values = []
    while len(values) < n:
        v = rng.uniform(-1.5, 1.5)
        if all(abs(v - t) > MARGIN for t in thresholds):
            values.append(v)
    return np.array(values)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", SEEDS)
def test_random_elementwise_function(seed):
    writer = Writer(seed)
    source = writer.source()
    module = load(source, seed)
    rng = np.random.default_rng(seed)
    # one element (every selection then has one or none), a few, and y one number
    n = [1, 2, 7][seed % 3]
    x = away_from(writer.thresholds, rng, n)
    y = away_from(writer.thresholds, rng, n)
    if seed % 5 == 4:
        y = float(y[0])
    try:
        expected = np.array([module.plain(a, b) for a, b in np.broadcast(x, y)])
        np.testing.assert_allclose(module.f(x, y), expected, rtol=1e-12, atol=1e-12)
        srcad.check_grad(module.total, x, y, wrt=(0, 1), modes=("rev", "fwd"))
        if _gpu():
            # the CUDA kernel against the NumPy form: values and partials
            import cupy

            compiled = module.f.compiled((0, 1))
            value, partials = compiled(*map(cupy.asarray, np.broadcast_arrays(x, y)))
            ref_value, ref_partials = compiled(*np.broadcast_arrays(x, y))
            np.testing.assert_allclose(cupy.asnumpy(value), ref_value, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(cupy.asnumpy(partials), ref_partials, rtol=1e-9, atol=1e-12)
    except Exception as exc:
        raise AssertionError(f"{type(exc).__name__}: {exc}\n\nseed {seed}:\n{source}") from None
