"""The command line, through a subprocess, and docs/ops.md kept current."""

import importlib.util
import re
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


def test_version_is_the_package_version():
    import srcad

    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"srcad {srcad.__version__}"


def test_ops_filters_by_name_and_hides_srcad_helpers_unless_asked():
    rows = run("ops", "tanh", "LINALG.SOLVE").stdout.splitlines()
    ops = {row.split()[0] for row in rows}
    scipy = {"scipy.linalg.solve_triangular", "scipy.linalg.solve_sylvester"}
    scipy = scipy if importlib.util.find_spec("scipy") else set()
    assert ops == {"np.tanh", "np.arctanh", "math.tanh", "math.atanh", "numpy.linalg.solve"} | scipy
    assert not any(row.startswith("srcad.") for row in run("ops").stdout.splitlines())
    everything = run("ops", "--all").stdout.splitlines()
    assert any(row.startswith("srcad.unbroadcast") for row in everything)
    missing = run("ops", "no_such_op")
    assert missing.returncode == 1 and "no op matches no_such_op" in missing.stderr


def test_ops_survives_a_reader_that_closes_the_pipe():
    # `srcad ops | head -1`: the reader leaves after one line; no BrokenPipeError traceback
    writer = subprocess.Popen(
        [sys.executable, "-m", "srcad", "ops", "--all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    writer.stdout.readline()
    writer.stdout.close()
    _, err = writer.communicate()
    assert writer.returncode == 0 and b"Traceback" not in err and b"BrokenPipe" not in err


def test_console_script_is_installed():
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "srcad"]
    assert script.value == "srcad.__main__:main"
    exe = Path(sys.executable).parent / "srcad"
    result = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("srcad ")


# --- show and compile ----------------------------------------------------------------------

MODEL = """
import numpy as np

import srcad


def loss(W, b, x):
    h = np.tanh(x @ W + b)
    return np.sum(h * h) / x.shape[0]


def mlp(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)


def step(params, x, lr):
    value, g = srcad.value_and_grad(mlp)(params, x)
    return {k: params[k] - lr * g[k] for k in params}, value


def example_args():
    rng = np.random.default_rng(0)
    return {"W": rng.normal(size=(3, 2)), "b": np.zeros(2)}, rng.normal(size=(4, 3)), 0.1


def broken(x):
    while True:
        try:
            return np.sum(x)
        finally:
            pass


def bad_step(x):
    return srcad.grad(broken)(x)
"""


def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run_in(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "srcad", *args], capture_output=True, text=True, cwd=cwd
    )


def test_show_prints_the_gradient_source_without_colour_when_piped(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "show", "model.py:loss", "--wrt", "0,1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def value_and_grad_loss(W, b, x):")
    assert "return (loss, (dW, db))" in result.stdout
    assert "\033[" not in result.stdout


def test_show_colours_on_request_and_by_name(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "show", "model.py:loss", "--wrt", "b", "--color", "always")
    assert result.returncode == 0, result.stderr
    assert "\033[" in result.stdout
    plain = run_in(tmp_path, "show", "model.py:loss", "--wrt", "b").stdout
    assert re.sub(r"\033\[[0-9;]*m", "", result.stdout) == plain
    assert "return (loss, db)" in plain


def test_show_expands_pytrees_with_example_arguments(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "show", "model.py:mlp", "--example", "example_pair")
    assert result.returncode == 1 and "no function 'example_pair'" in result.stderr
    (tmp_path / "model.py").write_text(MODEL + "\n\ndef pair():\n    return example_args()[:2]\n")
    result = run_in(tmp_path, "show", "model.py:mlp", "--example", "pair")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def value_and_grad_mlp(params_W, params_b, x):")


def test_show_forward_mode(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "show", "model.py:loss", "--mode", "fwd", "--wrt", "0,1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def jvp_loss(W, b, x, dW, db):")
    assert "Tape" not in result.stdout


def test_compile_writes_a_module_that_uses_example_args(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "compile", "model.py:step", "-o", "build/step.py")
    assert result.returncode == 0, result.stderr
    assert "wrote build/step.py (specialized to the example arguments)" in result.stdout
    text = (tmp_path / "build" / "step.py").read_text()
    assert text.startswith("# Generated by srcad ")
    assert " from step in model.py (sha256 of source: " in text.splitlines()[0]
    assert "leaves = (params['W'], params['b'], x)" in text
    again = run_in(tmp_path, "compile", "model.py:step", "-o", "build/again.py")
    assert again.returncode == 0
    assert (tmp_path / "build" / "again.py").read_bytes() == text.encode()
    check = (
        "import sys; sys.path.insert(0, 'build'); import step, model, numpy as np; "
        "args = model.example_args(); new, value = step.step(*args); "
        "import srcad; live = srcad.value_and_grad(model.mlp)(*args[:2]); "
        "assert abs(value - live[0]) < 1e-12; "
        "assert all(np.allclose(new[k], args[0][k] - 0.1 * live[1][k]) for k in new)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr


def test_compile_a_derivative_without_examples(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "compile", "model.py:loss", "-o", "out.py", "--no-example")
    assert result.returncode == 0, result.stderr
    assert "def loss(" in (tmp_path / "out.py").read_text()


def test_missing_file_and_function_are_clear_errors(tmp_path):
    model(tmp_path)
    missing = run_in(tmp_path, "show", "nowhere.py:loss")
    assert missing.returncode == 1 and missing.stderr.strip() == "error: no such file: nowhere.py"
    absent = run_in(tmp_path, "compile", "model.py:nope", "-o", "out.py")
    assert absent.returncode == 1
    assert "error: model.py has no function 'nope' (it defines: " in absent.stderr
    assert "loss" in absent.stderr
    malformed = run_in(tmp_path, "show", "model.py")
    assert malformed.returncode == 1 and "FILE.py:FUNCTION" in malformed.stderr
    assert not (tmp_path / "out.py").exists()


def test_untransformable_function_reports_file_and_line(tmp_path):
    model(tmp_path)
    line = MODEL.splitlines().index("        try:") + 1
    for command in (
        ("compile", "model.py:bad_step", "-o", "out.py", "--no-example"),
        ("show", "model.py:broken"),
    ):
        result = run_in(tmp_path, *command)
        assert result.returncode == 1
        assert result.stderr.startswith(f"error: {tmp_path / 'model.py'}:{line}: ")
        assert "Traceback" not in result.stderr and result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py"]


def test_example_arguments_that_do_not_fit_are_a_clear_error(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "compile", "model.py:bad_step", "-o", "out.py")  # example_args
    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: running bad_step on the example arguments failed: TypeError: "
    )
    assert not (tmp_path / "out.py").exists()


def test_unwritable_output_is_a_clear_error(tmp_path):
    model(tmp_path)
    (tmp_path / "taken").write_text("a file")
    result = run_in(tmp_path, "compile", "model.py:loss", "-o", "taken/out.py")
    assert result.returncode == 1
    assert result.stderr.startswith("error: cannot write taken/out.py: ")
    assert (tmp_path / "taken").read_text() == "a file"


def test_show_uses_example_args_when_a_parameter_needs_its_structure(tmp_path):
    model(tmp_path)
    result = run_in(tmp_path, "show", "model.py:mlp")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def value_and_grad_mlp(params_W, params_b, x):")
    assert "zeros_like(params)" not in result.stdout


def test_a_pytree_parameter_of_unknown_structure_is_refused_not_miscompiled(tmp_path):
    # without examples, code treating params as one array (zeros_like(params),
    # add_at(dparams, 'b', ...)) was written and crashed when run
    model(tmp_path)
    line = MODEL.splitlines().index("def mlp(params, x):") + 2
    for command in (
        ("show", "model.py:mlp", "--no-example"),
        ("compile", "model.py:step", "-o", "out.py", "--no-example"),
    ):
        result = run_in(tmp_path, *command)
        assert result.returncode == 1, result.stdout
        assert result.stderr.startswith(f"error: {tmp_path / 'model.py'}:{line}: parameter ")
        assert "structure is not known" in result.stderr and "--example" in result.stderr
    assert not (tmp_path / "out.py").exists()


def test_a_file_that_fails_to_import_is_one_line(tmp_path):
    (tmp_path / "bad.py").write_text("import numpy as np\n\n\nraise RuntimeError('boom')\n")
    (tmp_path / "syntax.py").write_text("def f(x:\n")
    result = run_in(tmp_path, "show", "bad.py:f")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"error: cannot import bad.py: RuntimeError: boom ({tmp_path / 'bad.py'}:4)\n"
    )
    result = run_in(tmp_path, "compile", "syntax.py:f", "-o", "out.py")
    assert result.returncode == 1 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: cannot import syntax.py: SyntaxError: ")


def test_module_colon_function_targets(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(MODEL)
    result = run_in(tmp_path, "show", "pkg.model:loss", "--wrt", "b")
    assert result.returncode == 0, result.stderr
    assert "return (loss, db)" in result.stdout
    missing = run_in(tmp_path, "show", "pkg.nothing:loss")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "error: no such file or module: pkg.nothing"
