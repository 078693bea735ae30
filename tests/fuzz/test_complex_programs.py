"""Differential fuzzing of complex numbers: random straight-line programs over a complex
vector ``z`` and a real vector ``x`` (mixed with complex constants: ``x * 1j``,
``np.exp(1j * x)``), through the complex-capable ops (arithmetic, exp, log, sin, sqrt, abs,
angle, sign, real/imag/conj and the attributes, vdot, @, sum/mean/cumsum, var/std, norm,
the np.fft family with random ``n``/``norm``, where, indexing), ending in a real loss.
Each is checked with ``srcad.check_grad`` (differences along real and imaginary directions)
in reverse and forward mode, and some at second order.

Branch cuts (log, sqrt, angle) are only met by values kept off them (``1.5 + w / (1 + |w|)``
has a real part above 0.5), and conditions by values away from their threshold, so a
difference step never crosses one. ``SRCAD_FUZZ_START`` / ``SRCAD_FUZZ_COUNT`` pick the
seeds, as for tests/fuzz/test_programs.py.
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
_DIR = Path(tempfile.mkdtemp(prefix="srcad-complex-"))
NORMS = [None, "ortho", "forward", "backward"]

# {c}: a complex vector, {r}: a real one, {w}: either; each term is a vector of length {n}
COMPLEX_TERMS = [
    "{c} * {w}", "{c} + {r}", "{c} - 0.5 * {w}", "{c} / (1.5 + {r} * {r})", "{c} * {k}",
    "{r} * 1j + {c}", "np.exp(1j * {r})", "np.exp(0.3 * {c})", "np.sin(0.5 * {c}) * {w}",
    "np.conj({c}) * {w}", "{c}.conj() + {k}", "np.conjugate({c}) * {r}", "{r} * {k}",
    "np.log({safe})", "np.sqrt({safe}) * {w}", "np.abs({c}) * {c}", "np.real({c}) * 1j + {w}",
    "{c}.imag * {k} + {c}", "{c}.real * {w}", "np.where(np.real({c}) > 0, {c}, {w})",
    "{c}[::-1] * {w}", "{c}[{perm}]", "np.roll({c}, 1) - {w}", "np.cumsum({c}) / {n}",
    "np.sum({c}) * {w}", "np.mean({c}) + {w}", "np.vdot({c}, {w}) * {r}", "M @ {c}",
    "{c} @ M", "np.sign({c}) * {w}", "np.fft.fft({w}, n={m}, norm={norm})[:{n}]",
    "np.fft.ifft({w}, n={m}, norm={norm})[:{n}]", "np.fft.fft({w}, norm={norm}) * {k}",
    "np.fft.rfft({r}, n={m2}, norm={norm})[:{n}] * {c}", "{c} ** 2 * 0.5",
    "np.fft.fftshift({c}) + {w}", "np.fft.fft2(np.outer({c}, {w}), norm={norm})[0]",
    "np.stack([{c}, {w}]).sum(axis=0)", "np.concatenate([{w}, {c}])[{n}:] * {r}",
    "np.dot({r}, {c}) * {w}", "np.linalg.solve(M + 3 * np.eye({n}), {w})",
    "np.einsum('ij,j->i', M, {w})", "np.maximum({c}, {w}) * {k}", "np.sort({c}) + {w}",
    "np.max({c}) * {w}", "np.cumprod({c} / (1 + np.abs({c})))", "np.prod({c} * 0.5) + {w}",
    "np.clip({c}, {k}, 2.0) * {w}", "np.inner({c}, {w}) * {w}",
]  # fmt: skip
REAL_TERMS = [
    "np.abs({c})", "np.real({c})", "{c}.imag", "np.imag({c}) * {r}", "np.angle({safe})",
    "np.abs({c}) ** 2 - {r}", "{r} * {r}", "np.sin({r}) + {r}", "np.var({c}) + {r}",
    "np.std({c}) * {r}", "np.linalg.norm({c}) * {r}", "np.real(np.vdot({c}, {w})) + {r}",
    "np.fft.irfft({c}, n={m}, norm={norm})[:{n}]", "np.angle({safe}, deg=True) / 90",
    "np.abs({c}) * np.real({c})", "np.var({w}) * {r}", "np.abs(np.dot({c}, {w})) + {r}",
    "np.linalg.vector_norm({w}) + {r}", "np.abs(np.sign({c}) - 0.5)",
]  # fmt: skip
LOSS = [
    "np.sum(np.abs({c}) ** 2)", "np.real(np.sum({c} * {k}))", "np.imag(np.sum({c}))",
    "np.sum(np.abs({c}))", "np.real(np.vdot({c}, {c}))", "np.sum({r} ** 2)",
    "np.sum({r} * np.abs({c}))",
]  # fmt: skip


class Writer:
    """One random program ``f(z, x)`` over a complex and a real vector of length ``n``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = self.rng.choice([2, 3, 4, 5])
        self.complex = ["z"]
        self.real = ["x"]
        self.count = 0

    def fill(self, template: str) -> str:
        rng, n = self.rng, self.n
        k = complex(round(rng.uniform(-1, 1), 2), round(rng.uniform(-1, 1), 2))
        c = rng.choice(self.complex)
        safe = f"1.5 + {c} / (1 + np.abs({c}))"
        return template.format(
            c=c,
            r=rng.choice(self.real),
            w=rng.choice(self.complex + self.real),
            k=f"({k})",
            n=n,
            m=rng.randint(n, n + 3),
            m2=rng.randint(2 * n - 1, 2 * n + 2),
            norm=repr(rng.choice(NORMS)),
            perm=repr([rng.randrange(n) for _ in range(n)]),
            safe=safe,
        )

    def source(self) -> str:
        lines = []
        for _ in range(self.rng.randint(2, 7)):
            self.count += 1
            name = f"t{self.count}"
            if self.rng.random() < 0.65:
                lines.append(f"    {name} = {self.fill(self.rng.choice(COMPLEX_TERMS))}")
                self.complex.append(name)
            else:
                lines.append(f"    {name} = {self.fill(self.rng.choice(REAL_TERMS))}")
                self.real.append(name)
        # the loss reads the latest values, so that most of the program matters
        terms = []
        for _ in range(self.rng.randint(1, 3)):
            self.complex[:] = self.complex[-2:]
            self.real[:] = self.real[-2:]
            terms.append(self.fill(self.rng.choice(LOSS)))
        lines.append(f"    return {' + '.join(terms)}")
        return "\n".join(["import numpy as np", "", "", "def f(z, x, M):", *lines, ""])


def load(source: str, seed: int):
    path = _DIR / f"complex_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"srcad_complex_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)

    def away(shape):  # off the thresholds of where (real part 0) and of sign (0)
        v = rng.uniform(0.2, 1.2, shape) * rng.choice([-1.0, 1.0], shape)
        return v

    z = away(n) + 1j * away(n)
    x = away(n)
    m = (away((n, n)) + 1j * away((n, n))) / n
    return z, x, m


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", SEEDS)
def test_random_complex_program(seed):
    writer = Writer(seed)
    source = writer.source()
    module = load(source, seed)
    z, x, m = inputs(seed, writer.n)
    wrt = [(0, 1), (0,), (1,), (0, 1, 2)][seed % 4]
    try:
        value = module.f(z, x, m)
        assert np.isrealobj(value), "the loss is real"
        srcad.check_grad(module.f, z, x, m, wrt=wrt, modes=("rev", "fwd"), rtol=1e-4, atol=1e-5)
        if seed % 5 == 0:
            srcad.check_grad(
                module.f, z, x, m, wrt=wrt[:1], modes=("rev", "fwd"), order=2, rtol=1e-4, atol=1e-4
            )
    except Exception as exc:
        raise AssertionError(f"{type(exc).__name__}: {exc}\n\nseed {seed}:\n{source}") from None
