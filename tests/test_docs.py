"""The documentation site builds with --strict, and the notebook guide runs in a kernel."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def test_docs_site_builds_strict(tmp_path):
    # strict: a broken link, a missing page or an API entry mkdocstrings cannot document fails
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr
    api = (tmp_path / "api" / "index.html").read_text()
    names = ("grad", "value_and_grad", "vjp", "jvp", "hessian", "check_grad", "export")
    for name in (*names, "tree_flatten", "tree_unflatten", "tree_map", "register_pytree_node"):
        assert f'id="srcad.{name}"' in api


def test_notebook_guide_runs_in_a_jupyter_kernel():
    # functions defined in notebook cells have a source srcad can read
    notebook = nbformat.read(ROOT / "examples" / "guide.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={}).execute()
    outputs = [
        output.get("text", "") + str(output.get("data", {}).get("text/plain", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    ]
    assert not any(
        o.get("output_type") == "error" for c in notebook.cells for o in c.get("outputs", [])
    )
    assert any(text.startswith("((3, 2), (2,))") for text in outputs)
    assert any("def grad_loss(W, b, x):" in text for text in outputs)
