"""Differential fuzzing: random programs with control flow, srcad against finite differences.

A fixed budget of seeds runs in CI; ``make fuzz`` runs a long campaign over fresh seeds.
"""

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from programs import ProgramWriter

import srcad

START = int(os.environ.get("SRCAD_FUZZ_START", 0))
SEEDS = range(START, START + int(os.environ.get("SRCAD_FUZZ_COUNT", 40)))
_DIR = Path(tempfile.mkdtemp(prefix="srcad-fuzz-"))


def load(seed: int):
    source = ProgramWriter(seed).program()
    path = _DIR / f"fuzz_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"fuzz_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.f, source


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program(seed):
    f, source = load(seed)
    rng = np.random.default_rng(seed)
    x, y, w = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), rng.uniform(0.5, 1.5, 3)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            value = f(x, y, w)
    except (FloatingPointError, ValueError, IndexError) as exc:
        # the generator must write programs that run (bounded values, matching shapes)
        raise AssertionError(f"invalid program (seed {seed}): {exc}\n{source}") from None
    try:
        srcad.check_grad(f, x, y, w, wrt=(0, 1), rtol=1e-4, atol=1e-6)
        grads = srcad.grad(f, wrt=(0, 1))(x, y, w)
        out, pullback = srcad.vjp(f, x, y, w)
        for _ in range(2):
            cotangents = pullback(1.0)
            np.testing.assert_allclose(cotangents[0], grads[0], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(cotangents[1], grads[1], rtol=1e-12, atol=1e-14)
        assert out == pytest.approx(value)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n\nprogram (seed {seed}):\n{source}") from None
