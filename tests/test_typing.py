"""The public API's types as mypy sees them, and the wheel: py.typed, install, CLI."""

import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

import srcad

ROOT = Path(__file__).resolve().parents[1]

needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None, reason="mypy is in the dev extra"
)

# each line: an expression, then the type mypy must reveal for it
USER_CODE = """
import numpy as np
import srcad

def loss(x: np.ndarray, y: float) -> float:
    return float(np.sum(np.tanh(x) * y))

@srcad.grad
def decorated(x: np.ndarray) -> float:
    return float(np.sum(x**2))

@srcad.grad(wrt=1)
def decorated_wrt(x: np.ndarray, y: float) -> float:
    return float(np.sum(x * y))

@srcad.custom_vjp
def clipped(x: float) -> float:
    return x

def clipped_fwd(x: float) -> tuple[float, None]:
    return x, None

def clipped_bwd(res: None, g: float) -> tuple[float]:
    return (g,)

clipped.defvjp(clipped_fwd, clipped_bwd)

@srcad.custom_jvp
def twice(x: float) -> float:
    return 2 * x

@twice.defjvp
def twice_jvp(primals: tuple[float], tangents: tuple[float]) -> tuple[float, float]:
    return 2 * primals[0], 2 * tangents[0]

@srcad.adjoint(np.sinc)
def sinc_rule(y: float, x: float) -> None:
    pass

x = np.ones(3)
df = srcad.grad(loss, wrt=(0, 1))
reveal_type(df)
reveal_type(df(x, 2.0))
reveal_type(decorated)
reveal_type(decorated_wrt)
reveal_type(srcad.grad(wrt=1))
reveal_type(srcad.value_and_grad(loss))
reveal_type(srcad.vjp(loss, x, 2.0))
reveal_type(srcad.vjp(loss, x, 2.0, has_aux=True))
reveal_type(srcad.vjp(loss, x, 2.0)[1])
reveal_type(srcad.jvp(loss, (x, 2.0), (x, 0.0)))
reveal_type(srcad.jacobian(loss))
reveal_type(srcad.hessian(loss))
reveal_type(srcad.source(df))
reveal_type(srcad.check_grad(loss, x, 2.0))
reveal_type(srcad.export(loss, "out.py"))
reveal_type(clipped)
reveal_type(clipped(1.0))
reveal_type(twice_jvp)
reveal_type(srcad.checkpoint(loss))
reveal_type(srcad.stop_gradient(2.0))
reveal_type(sinc_rule)
reveal_type(srcad.elementwise(loss))
reveal_type(srcad.tree_flatten({"a": x}))
reveal_type(srcad.tree_leaves({"a": x}))
"""

ARGS = "[x: ndarray, y: float]"
EXPECTED = [
    f"srcad.api.Derivative[{ARGS}]",
    "Any",
    "srcad.api.Derivative[[x: ndarray]]",
    f"srcad.api.Derivative[{ARGS}]",
    "srcad.api.DerivativeDecorator",
    f"srcad.api.Derivative[{ARGS}]",
    "tuple[Any, def (Any) -> tuple[Any, ...]]",
    "tuple[Any, def (Any) -> tuple[Any, ...], Any]",
    "def (Any) -> tuple[Any, ...]",
    "tuple[Any, Any]",
    f"def ({ARGS[1:-1]}) -> Any",
    f"def ({ARGS[1:-1]}) -> Any",
    "str",
    "float",
    "pathlib.Path",
    "srcad.transform.calls.CustomVJP[[x: float], float]",
    "float",
    "def (primals: tuple[float], tangents: tuple[float]) -> tuple[float, float]",
    f"srcad.transform.calls.Checkpointed[{ARGS}, float]",
    "float",
    "def (y: float, x: float)",
    "srcad.kernels.function.ElementwiseFunction",
    "tuple[list[Any], tuple[Any, ...]]",
    "list[Any]",
]


def _normalize(revealed: str) -> str:
    # numpy spells ndarray's parameters differently across versions
    return re.sub(r"numpy\.ndarray\[.*?numpy\.dtype\[[^\]]*\]\]", "ndarray", revealed)


@needs_mypy
def test_mypy_sees_the_public_types(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(USER_CODE))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MYPYPATH": str(ROOT)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(user),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    lines = result.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]
    assert not errors, "\n".join(errors)
    revealed = [
        _normalize(line.split('Revealed type is "', 1)[1].rstrip('"'))
        for line in lines
        if "Revealed type is" in line
    ]
    assert revealed == EXPECTED, result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def _offline_build() -> list[str]:
    """Build with this interpreter's setuptools when it is new enough (no download)."""
    try:
        from importlib.metadata import version

        major = int(version("setuptools").split(".")[0])
    except Exception:
        return []
    return ["--no-build-isolation", "--no-index"] if major >= 77 else []


def test_wheel_has_py_typed_installs_and_runs(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            *_offline_build(),
            "-w",
            str(wheels),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = wheels.glob("srcad-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "srcad/py.typed" in names
    assert "srcad/pytree.py" in names
    assert not any(name.startswith("tests/") for name in names)

    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
    )
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    # the dependencies (gast, numpy) from this environment, which may itself be a venv;
    # a plain path line, so this environment's own srcad install (a .pth hook) stays out
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "srcad_test_deps.pth").write_text("\n".join(sorted(here)) + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
        + ["--no-index", "--force-reinstall", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    # away from the checkout and without PYTHONPATH: the installed wheel, not the sources
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = tmp_path / "use.py"
    script.write_text(
        "import srcad\n\ndef square(x):\n    return x * x\n\n"
        "print(srcad.__version__, srcad.__file__, srcad.grad(square)(3.0))\n"
    )
    check = subprocess.run(
        [str(python), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert check.returncode == 0, check.stderr
    version, location, gradient = check.stdout.split()
    assert version == srcad.__version__
    assert Path(location).is_relative_to(venv)
    assert float(gradient) == 6.0
    cli = subprocess.run(
        [str(bin_dir / "srcad"), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.strip() == f"srcad {srcad.__version__}"
