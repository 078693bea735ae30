"""The example files run and print what they promise (make demo runs train_digits.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PROMISES = {
    "quickstart.py": "gradient check passed",
    "custom_rules.py": "both modes and second order agree",
    "custom_derivatives.py": "no overflow",
    "gradient_controls.py": "held constant: True",
    "checkpointing.py": "same gradient: True",
    "numpy_breadth.py": "mixed_loss: both modes agree",
    "higher_order.py": "third derivative of a loop",
    "dask_training.py": "cluster stopped",
}
# a quick run where the default is a long one; modules an example needs beyond srcad's own
ARGS = {"dask_training.py": ["--rows", "40000", "--steps", "3"]}
NEEDS = {"dask_training.py": "distributed"}


@pytest.mark.parametrize("name", sorted(PROMISES))
def test_example_runs(name):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *ARGS.get(name, [])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert PROMISES[name] in done.stdout
    assert "Warning" not in done.stderr, done.stderr


def test_every_example_is_run_here_or_by_make_demo():
    names = {p.name for p in EXAMPLES.glob("*.py")}
    assert names == set(PROMISES) | {"train_digits.py"}
