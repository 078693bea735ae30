"""The command line, through a subprocess, and docs/ops.md kept current."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "srcad", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_ops_lists_rules_and_nondifferentiable_ops():
    result = run("ops")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert any(line.startswith("np.tanh") and "reverse" in line for line in lines)
    assert any(line.startswith("np.argmax") and "none" in line for line in lines)


def test_docs_ops_md_is_generated_from_the_registry():
    table = run("ops", "--markdown").stdout
    assert table.strip() and table in (ROOT / "docs" / "ops.md").read_text()


def test_unknown_command_fails():
    assert run("nonsense").returncode != 0
