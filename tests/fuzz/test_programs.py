"""Differential fuzzing: random programs with control flow, srcad against finite differences.

Every program is checked in float64 against central finite differences:

- reverse mode: the gradient with respect to ``x`` and ``y``, element by element, and
  ``srcad.vjp``'s pullback (called twice) against the gradient;
- forward mode: ``srcad.jvp`` along a random direction against finite differences along it,
  and against ``<gradient, direction>``;
- second order, on every ``SECOND_ORDER_EVERY``-th seed (it transforms the gradient again,
  in both modes, which costs several times a first-order check): the Hessian-vector product
  by forward-over-reverse and by reverse-over-reverse against finite differences of the
  gradient.

Inputs are drawn until every comparison on data and every kink the program meets is at
least ``MARGIN`` (relatively) from flipping, so that a finite-difference step never crosses
one; exact ties (``np.maximum(a, b)`` where ``b`` is ``a`` computed again) stay ties under
any step and are allowed.

A fixed budget of seeds runs in CI; ``make fuzz`` runs a long campaign over fresh seeds
(``SRCAD_FUZZ_START``, ``SRCAD_FUZZ_COUNT``); ``SRCAD_FUZZ_HYPOTHESIS`` sets how many programs
the hypothesis-driven test draws (it shrinks a failing program to a small one), and
``minimize.py`` shrinks a failing seed for tests/fuzz/test_regressions.py.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from programs import ProgramWriter, probe_source, programs

import srcad

START = int(os.environ.get("SRCAD_FUZZ_START", 0))
SEEDS = range(START, START + int(os.environ.get("SRCAD_FUZZ_COUNT", 40)))
HYPOTHESIS_EXAMPLES = int(os.environ.get("SRCAD_FUZZ_HYPOTHESIS", 8))
SECOND_ORDER_EVERY = 4
MARGIN = 1e-3
TIE = 1e-12
ATTEMPTS = 40
_DIR = Path(tempfile.mkdtemp(prefix="srcad-fuzz-"))


def load(source: str, tag: str = "fuzz"):
    """The module ``source`` defines, imported from a file (srcad reads functions' source)."""
    name = f"{tag}_{hashlib.sha256(source.encode()).hexdigest()[:16]}"
    if name in sys.modules:
        return sys.modules[name]
    path = _DIR / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def inputs(source: str, seed: int, shape: tuple[int, ...]):
    """``(x, y, w)`` at which every branch decision and kink of the program has a margin."""
    probe = load(probe_source(source), "probe")
    rng = np.random.default_rng(seed)
    for _ in range(ATTEMPTS):
        x, y = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape[-1:])
        w = rng.uniform(0.5, 1.5, shape)
        probe.GAPS.clear()
        try:
            with np.errstate(over="raise", invalid="raise", divide="raise"):
                probe.f(x, y, w)
        except (FloatingPointError, ValueError, IndexError) as exc:
            # the generator must write programs that run (bounded values, matching shapes)
            raise AssertionError(f"invalid program: {exc!r}") from None
        # a gap of (almost) zero is a tie of two equal functions (np.maximum(a, a * 1.0)),
        # which no step can break; only a near tie can flip
        if min((g for g in probe.GAPS if g > TIE), default=np.inf) > MARGIN:
            return x, y, w
    raise AssertionError(f"no inputs with margins {MARGIN} in {ATTEMPTS} draws")


def check_program(source: str, seed: int, shape: tuple[int, ...], order: int) -> None:
    f = load(source).f
    try:
        x, y, w = inputs(source, seed, shape)
        value = f(x, y, w)
        # finite differences lose digits in proportion to the value
        atol = 1e-6 * max(1.0, abs(value))
        srcad.check_grad(
            f, x, y, w, wrt=(0, 1), rtol=1e-4, atol=atol, order=order, modes=("fwd", "rev")
        )
        grads = srcad.grad(f, wrt=(0, 1))(x, y, w)
        out, pullback = srcad.vjp(f, x, y, w)
        for _ in range(2):
            cotangents = pullback(1.0)
            np.testing.assert_allclose(cotangents[0], grads[0], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(cotangents[1], grads[1], rtol=1e-12, atol=1e-14)
        assert out == pytest.approx(value)
    except AssertionError as exc:
        message = f"{exc}\n\nprogram (seed {seed}, x of shape {shape}):\n{source}"
        raise AssertionError(message) from None


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program(seed):
    order = 2 if seed % SECOND_ORDER_EVERY == 0 else 1
    writer = ProgramWriter(seed, second_order=order == 2)
    source = writer.program()
    check_program(source, seed, writer.shape, order)


@settings(max_examples=HYPOTHESIS_EXAMPLES, database=None)
@given(programs())
def test_random_program_shrinking(program):
    source, shape = program
    check_program(source, 0, shape, order=1)


def test_the_generator_covers_every_construct():
    """The CI seeds write every construct the fuzzer is meant to exercise."""
    seen: set[str] = set()
    for seed in range(40):
        writer = ProgramWriter(seed)
        writer.program()
        seen |= writer.constructs
    expected = {
        "indexing", "kinks", "helper calls", "tuple-returning helpers", "in-place updates",
        "lists", "comprehensions", "if/else", "elif", "for", "while", "break", "continue",
        "early return",
    }  # fmt: skip
    assert expected <= seen, expected - seen


def test_probes_see_every_decision():
    """The margin probe records thresholds (in helpers too) and kinks, and changes no value."""
    source = (
        "import numpy as np\n\n\ndef g(p, t):\n    if np.sum(p) > t:\n        return p\n"
        "    return -p\n\n\ndef f(x, y, w):\n    a = np.maximum(x, y) + np.abs(x)\n"
        "    b = np.where(x > 0, x, y)\n    return np.sum(g(a + b, 0.25) * w)\n"
    )
    plain, probe = load(source), load(probe_source(source), "probe")
    x, y = np.array([0.5, -0.2]), np.array([0.1, 0.3])
    probe.GAPS.clear()
    assert probe.f(x, y, 1.0) == plain.f(x, y, 1.0)
    assert len(probe.GAPS) == 4
    assert min(probe.GAPS) == pytest.approx(0.2 / 1.2)  # np.where's x > 0 at x = -0.2
