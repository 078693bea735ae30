"""srcad.export: standalone modules that run where srcad and gast cannot be imported, and
give what the live srcad gives."""

import ast
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import export_functions as fx
import numpy as np
import pytest

import srcad
from srcad.export import export_source
from srcad.standalone import names, values
from srcad.transform import cache

HERE = Path(__file__).resolve().parent

# a finder that makes importing srcad (and what it needs) fail in the subprocess
BLOCK = textwrap.dedent(
    """
    import importlib.abc, sys
    class _Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in ("srcad", "gast", "array_api_compat"):
                raise ImportError("blocked: " + name)
    sys.meta_path.insert(0, _Block())
    """
)


def run_standalone(module: Path, call: str, args: tuple, tmp_path: Path):
    """``call`` (an expression of ``m``, the module, and ``args``) evaluated in a fresh
    interpreter where ``import srcad`` fails."""
    inputs, outputs = tmp_path / "inputs.pkl", tmp_path / "outputs.pkl"
    inputs.write_bytes(pickle.dumps(args))
    code = BLOCK + textwrap.dedent(
        f"""
        import importlib.util, pickle
        try:
            import srcad
        except ImportError:
            pass
        else:
            raise SystemExit("srcad was importable")
        spec = importlib.util.spec_from_file_location("exported", {str(module)!r})
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        args = pickle.loads(open({str(inputs)!r}, "rb").read())
        result = {call}
        loaded = sorted(n for n in sys.modules if n.partition(".")[0] in ("srcad", "gast"))
        open({str(outputs)!r}, "wb").write(pickle.dumps((result, loaded)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    result, loaded = pickle.loads(outputs.read_bytes())
    assert loaded == []
    return result


def mlp_params(rng):
    params = {"W1": rng.normal(size=(4, 5)), "W2": rng.normal(size=(5, 3)), "b2": np.zeros(3)}
    x = rng.normal(size=(6, 4))
    y = np.eye(3)[rng.integers(0, 3, 6)]
    return params, x, y


def test_train_step_with_dict_params_runs_without_srcad(tmp_path):
    params, x, y = mlp_params(np.random.default_rng(0))
    path = srcad.export(fx.train_step, tmp_path / "step.py", example_args=(params, x, y, 0.1))
    (new, loss) = run_standalone(path, "m.train_step(*args)", (params, x, y, 0.1), tmp_path)
    live_loss, g = srcad.value_and_grad(fx.loss_fn)(params, x, y)
    assert loss == pytest.approx(live_loss, rel=1e-12)
    assert list(new) == ["W1", "W2", "b2"]
    for k in params:
        np.testing.assert_allclose(new[k], params[k] - 0.1 * g[k], rtol=1e-12)
    text = path.read_text()
    assert "def layer_fwd(" in text and "def layer_bwd(" in text  # the helper's own pair
    assert "def sgd(" in text  # a helper the step calls, copied


def test_loops_and_branches_carry_the_tape(tmp_path):
    path = srcad.export(fx.loop_step, tmp_path / "loop.py")
    text = path.read_text()
    assert "class Tape(list):" in text and "tape.push(" in text
    x = np.array([0.3, -0.2, 0.5])
    for n in (0, 1, 4):
        got = run_standalone(path, "m.loop_step(*args)", (x, n), tmp_path)
        np.testing.assert_allclose(got, srcad.grad(fx.looped)(x, n), rtol=1e-12)
    negative = -np.ones(3)
    got = run_standalone(path, "m.loop_step(*args)", (negative, 3), tmp_path)
    np.testing.assert_allclose(got, srcad.grad(fx.looped)(negative, 3), rtol=1e-12)


def test_a_derivative_itself_exports_with_constants_and_another_modules_helper(tmp_path):
    path = srcad.export(srcad.grad(fx.with_constants), tmp_path / "g.py")
    text = path.read_text()
    assert "OFFSETS = numpy.array([0.25, -0.5, 1.0], dtype='float64')" in text
    assert "LIMIT = float('inf')" in text
    assert "SCALE = 3.0" in text  # export_other's, read by rescale
    assert "__all__ = ['grad_of_with_constants']" in text
    w, x = np.array([0.5, 1.5, -1.0]), np.array([2.0, -1.0, 0.5])
    got = run_standalone(path, "m.grad_of_with_constants(*args)", (w, x), tmp_path)
    np.testing.assert_allclose(got, srcad.grad(fx.with_constants)(w, x), rtol=1e-12)


def test_names_that_clash_across_modules_are_renamed(tmp_path):
    # export_functions.SCALE is 0.5 and export_other.SCALE (read by rescale) is 3.0
    path = srcad.export(fx.scaled_twice, tmp_path / "both.py")
    text = path.read_text()
    assert "SCALE = 0.5" in text and "SCALE_2 = 3.0" in text
    assert "return v * SCALE_2" in text
    w, x = np.array([0.5, 1.5, -1.0]), np.array([2.0, -1.0, 0.5])
    got = run_standalone(path, "m.scaled_twice(*args)", (w, x), tmp_path)
    assert got == pytest.approx(fx.scaled_twice(w, x), rel=1e-12)


def test_a_global_derivative_and_default_arguments(tmp_path):
    path = srcad.export(fx.named_step, tmp_path / "named.py")
    w, x = np.array([0.5, -1.5]), np.array([2.0, 0.25])
    got = run_standalone(path, "m.named_step(*args)", (w, x), tmp_path)
    np.testing.assert_allclose(got, fx.named_step(w, x), rtol=1e-12)
    assert "def grad_of_weighted(w, x, p=2.0):" in path.read_text()


def test_lists_of_tuples_keep_their_structure(tmp_path):
    rng = np.random.default_rng(2)
    layers = [(rng.normal(size=(3, 3)), np.zeros(3)), (rng.normal(size=(3, 2)), np.ones(2))]
    x = rng.normal(size=(4, 3))
    path = srcad.export(fx.pair_step, tmp_path / "pairs.py", example_args=(layers, x))
    value, grads = run_standalone(path, "m.pair_step(*args)", (layers, x), tmp_path)
    live_value, live = srcad.value_and_grad(fx.pair_loss)(layers, x)
    assert value == pytest.approx(live_value, rel=1e-12)
    assert type(grads) is list and all(type(pair) is tuple for pair in grads)
    for pair, live_pair in zip(grads, live):
        for g, expected in zip(pair, live_pair):
            np.testing.assert_allclose(g, expected, rtol=1e-12)


def test_gradients_keep_their_arguments_types(tmp_path):
    path = srcad.export(srcad.grad(fx.weighted, wrt=(0, 1)), tmp_path / "types.py")
    args = (np.ones(3, dtype=np.float32), 1.5)
    gw, gx = run_standalone(path, "m.grad_of_weighted(*args)", args, tmp_path)
    live_w, live_x = srcad.grad(fx.weighted, wrt=(0, 1))(*args)
    assert gw.dtype == np.float32 and type(gx) is float
    np.testing.assert_allclose(gw, live_w)
    assert gx == pytest.approx(live_x)


def test_output_is_deterministic_and_starts_with_a_header(tmp_path):
    example = (*mlp_params(np.random.default_rng(0)), 0.1)
    first = srcad.export(fx.train_step, tmp_path / "a.py", example_args=example).read_bytes()
    cache.clear()  # transformed again from scratch
    second = srcad.export(fx.train_step, tmp_path / "b.py", example_args=example).read_bytes()
    assert first == second
    header = first.decode().splitlines()[0]
    assert header.startswith(f"# Generated by srcad {srcad.__version__} from train_step in ")
    assert "export_functions.py (sha256 of source: " in header
    assert header.endswith("). Do not edit.")
    assert str(HERE.parent) not in first.decode()  # no absolute paths


def test_the_hash_follows_the_source(tmp_path):
    module = tmp_path / "mod.py"
    for k, body in enumerate(["np.sum(x * x)", "np.sum(x * x * 2.0)"]):
        module.write_text(f"import numpy as np\n\ndef f(x):\n    return {body}\n")
        namespace = {}
        exec(compile(module.read_text(), str(module), "exec"), namespace)
        import linecache

        linecache.checkcache(str(module))
        header = export_source(srcad.grad(namespace["f"])).splitlines()[0]
        if k == 0:
            first = header
    assert first != header and first.split("sha256")[0] == header.split("sha256")[0]


def test_the_module_imports_only_numpy_and_the_standard_library(tmp_path):
    example = (*mlp_params(np.random.default_rng(0)), 0.1)
    text = export_source(fx.train_step, example_args=example)
    imported = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            imported |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").partition(".")[0])
    assert "numpy" in imported
    assert imported - {"numpy"} <= set(sys.stdlib_module_names)


def test_untransformable_function_names_its_line_and_writes_nothing(tmp_path):
    target = tmp_path / "out.py"
    with pytest.raises(srcad.TransformError) as info:
        srcad.export(fx.bad_step, target, example_args=(np.ones(2),))
    assert f"export_functions.py:{fx.untransformable.__code__.co_firstlineno + 1}" in str(
        info.value
    )
    assert os.listdir(tmp_path) == []


def test_an_object_that_cannot_be_written_is_named(tmp_path):
    with pytest.raises(srcad.ExportError, match="'OBJECT'"):
        srcad.export(srcad.grad(fx.reads_object), tmp_path / "out.py")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("make", ["file_parent", "folder"])
def test_an_unwritable_path_raises_and_leaves_nothing(tmp_path, make):
    if make == "file_parent":
        (tmp_path / "taken").write_text("a file, not a folder")
        target = tmp_path / "taken" / "out.py"
    else:
        target = tmp_path / "folder"
        target.mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(srcad.ExportError, match="cannot write"):
        srcad.export(fx.loop_step, target)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_missing_folder_is_created(tmp_path):
    path = srcad.export(fx.loop_step, tmp_path / "build" / "deep" / "loop.py")
    assert path.is_file() and oct(path.stat().st_mode & 0o777) == oct(0o644)


def test_export_refuses_what_is_not_a_function(tmp_path):
    with pytest.raises(TypeError, match="Python function"):
        srcad.export(np.sum, tmp_path / "out.py")


@pytest.mark.parametrize(
    "value",
    [None, True, 3, -2.5, float("nan"), float("-inf"), 1 + 2j, "s", b"b", (1,), [1, (2, 3)],
     {"a": [1.0]}, slice(1, None, 2), np.float32(1.5), np.int64(3), np.bool_(True),
     np.arange(6.0).reshape(2, 3), np.zeros((0, 3)), np.array(2.5)],
)  # fmt: skip
def test_literals_rebuild_their_values(value):
    text, _ = values.literal(value)
    rebuilt = eval(text, {"numpy": np})
    assert type(rebuilt) is type(value)
    if isinstance(value, np.ndarray):
        assert rebuilt.dtype == value.dtype and rebuilt.shape == value.shape
        np.testing.assert_array_equal(rebuilt, value)
    elif isinstance(value, float) and value != value:
        assert rebuilt != rebuilt
    else:
        assert rebuilt == value


def test_literals_refuse_objects():
    with pytest.raises(values.NotWritable):
        values.literal(object())
    with pytest.raises(values.NotWritable):
        values.literal(np.zeros(values.MAX_ARRAY_SIZE + 1))


def test_free_names_and_renaming():
    text = "def f(x, axis=1):\n    y = g(x, axis=axis)\n    return y + SCALE + len(x)\n"
    assert names.free_names(text) == {"g", "SCALE", "len"}
    renamed = names.rename(text, "SCALE", "SCALE_2")
    assert "SCALE_2" in renamed and names.free_names(renamed) == {"g", "SCALE_2", "len"}
    assert names.rename(text, "f", "f_2").startswith("def f_2(x, axis=1):")
    with pytest.raises(ValueError):
        names.rename(text, "y", "y_2")  # a local: renaming it would change its meaning


def test_custom_vjp_partial_stop_gradient_and_recursion(tmp_path):
    path = srcad.export(srcad.grad(fx.handles), tmp_path / "handles.py")
    text = path.read_text()
    assert "def softclip_fwd(x):" in text and "def softclip_bwd(res, g):" in text
    assert "functools.partial(power_fwd, 3.0)" in text
    assert "= stop_gradient(x)" in text and "def stop_gradient(x" in text
    assert "srcad" not in {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    x = np.array([0.3, -1.2, 2.0])
    got = run_standalone(path, "m.grad_of_handles(*args)", (x,), tmp_path)
    np.testing.assert_allclose(got, srcad.grad(fx.handles)(x), rtol=1e-12)


def test_jvp_inside_the_exported_function_is_compiled_too(tmp_path):
    x, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -2.0])
    path = srcad.export(fx.slope_step, tmp_path / "slope.py", example_args=(x, 1.3, v))
    text = path.read_text()
    assert "def jvp_wave(x, w, dx):" in text and "def jvp_of_wave(" in text
    value, slope = run_standalone(path, "m.slope_step(*args)", (x, 1.3, v), tmp_path)
    live = srcad.jvp(fx.wave, (x, 1.3), (v, None))
    assert value == pytest.approx(live[0], rel=1e-12)
    assert slope == pytest.approx(live[1], rel=1e-12)


def test_a_try_statement_is_exported_with_the_class_it_catches(tmp_path):
    path = srcad.export(srcad.grad(fx.solve_or_pinv, wrt=1), tmp_path / "attempt.py")
    text = path.read_text()
    assert "except LinAlgError:" in text
    for A in (np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[1.0, 2.0], [2.0, 4.0]])):
        b = np.array([1.0, -1.0])
        got = run_standalone(path, "m.grad_of_solve_or_pinv(*args)", (A, b), tmp_path)
        np.testing.assert_allclose(got, srcad.grad(fx.solve_or_pinv, wrt=1)(A, b), rtol=1e-12)


def test_helpers_deriving_from_others_come_after_them(tmp_path):
    # slogdet's rule refuses complex values with NoAdjointError(TransformError): the
    # module once wrote the subclass first and failed on import
    path = srcad.export(srcad.grad(fx.log_volume), tmp_path / "volume.py")
    A = np.array([[2.0, 0.5], [0.25, 3.0]])
    got = run_standalone(path, "m.grad_of_log_volume(*args)", (A,), tmp_path)
    np.testing.assert_allclose(got, np.linalg.inv(A).T, rtol=1e-12)


@srcad.custom_vjp
def polar(r, theta):
    return r * np.cos(theta), r * np.sin(theta)


def polar_fwd(r, theta):
    # (not ``polar(r, theta)``: export copies plain functions, and polar is decorated)
    return (r * np.cos(theta), r * np.sin(theta)), (r, theta)


def polar_bwd(residuals, cotangents):
    r, theta = residuals
    gx, gy = cotangents
    c, s = np.cos(theta), np.sin(theta)
    return gx * c + gy * s, r * (gy * c - gx * s)


polar.defvjp(polar_fwd, polar_bwd)


def unpacked_polar(theta, r):
    x, y = polar(r, theta)
    return np.sum(x * 2.0 + y**2)


def indexed_polar(theta, r):
    pair = polar(r, theta)
    return np.sum(pair[0] * 2.0 + pair[1] ** 2)


@pytest.mark.parametrize("loss", [unpacked_polar, indexed_polar])
def test_custom_vjp_with_several_outputs_is_exported(loss, tmp_path):
    theta, r = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, 2.0])
    derivative = srcad.grad(loss, wrt=(0, 1))
    path = srcad.export(derivative, tmp_path / "polar.py")
    got = run_standalone(path, f"m.grad_of_{loss.__name__}(*args)", (theta, r), tmp_path)
    # x = r cos, y = r sin: d/dtheta (2x + y**2) = -2 r sin + 2 y r cos; d/dr = 2 cos + 2 y sin
    y = r * np.sin(theta)
    expected = (
        -2 * r * np.sin(theta) + 2 * y * r * np.cos(theta),
        2 * np.cos(theta) + 2 * y * np.sin(theta),
    )
    for g, live, closed in zip(got, derivative(theta, r), expected):
        np.testing.assert_allclose(g, live, rtol=1e-12)
        np.testing.assert_allclose(g, closed, rtol=1e-12)


def test_a_helper_returning_a_dict_hands_on_its_values(tmp_path):
    # the module's forward picks the dict's values in key order, as srcad's handle does
    rng = np.random.default_rng(3)
    params, x = {"W": rng.normal(size=(3, 4))}, rng.normal(size=(5, 3))
    derivative = srcad.grad(fx.vae_loss)
    path = srcad.export(derivative, tmp_path / "vae.py", example_args=(params, x))
    got = run_standalone(path, "m.grad_of_vae_loss(*args)", (params, x), tmp_path)
    np.testing.assert_allclose(got["W"], derivative(params, x)["W"], rtol=1e-12)
    srcad.check_grad(fx.vae_loss, params, x)
