"""One-line gradient checks: write a tiny function around an expression, compare with FD."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import srcad

_DIR = Path(tempfile.mkdtemp(prefix="srcad-opcheck-"))
_serial = itertools.count()
PARAMS = "xyzuvw"


def make_function(body: str, params: str, namespace: dict[str, Any] | None = None) -> Any:
    """A real module-level function ``f(params)`` returning ``body`` (source on disk)."""
    name = f"opcheck_{next(_serial)}"
    path = _DIR / f"{name}.py"
    path.write_text(f"import math\nimport numpy as np\n\n\ndef f({params}):\n    return {body}\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if namespace:
        vars(module).update(namespace)
    return module.f


def check(expr: str, *args: Any, wrt: tuple[int, ...] | None = None, **tol: Any) -> float:
    """Check ``expr`` in both modes over the float arguments ``args``: the gradient of
    ``sum(weights * expr)`` (reverse) and the jvp of ``expr`` along a random direction
    (forward), each against central finite differences.

    ``expr`` names its arguments x, y, z, ... in order. Random weights make every output
    element count with a different factor, so a wrong reduction cannot hide.
    """
    params = ", ".join(PARAMS[: len(args)])
    probe = make_function(expr, params)
    out = probe(*args)
    rng = np.random.default_rng(len(expr))
    weights = rng.uniform(0.5, 1.5, size=np.shape(out))
    f = make_function(f"np.sum(WEIGHTS * ({expr}))", params, {"WEIGHTS": weights})
    if wrt is None:
        wrt = tuple(
            k
            for k, a in enumerate(args)
            if isinstance(a, float) or getattr(getattr(a, "dtype", None), "kind", "") == "f"
        )
    check_jvp(probe, args, wrt, **tol)
    if len(wrt) > 1:
        # one operand varying alone: the others' terms are dropped or their tangents zeros,
        # and a lone term must still have the result's full shape
        for k in wrt:
            check_jvp(probe, args, (k,), **tol)
    return srcad.check_grad(f, *args, wrt=wrt, **tol)


def check_jvp(
    f: Any,
    args: tuple[Any, ...],
    wrt: tuple[int, ...],
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """Check ``srcad.jvp(f)`` along a random direction against a central finite difference
    of ``f`` along it, element by element, and its primal output against ``f`` itself."""
    args = tuple(
        np.array(a, dtype=np.float64) if k in wrt and isinstance(a, np.ndarray) else a
        for k, a in enumerate(args)
    )
    rng = np.random.default_rng(len(args) + 17 * len(wrt))
    tangents = tuple(_direction(a, rng) if k in wrt else None for k, a in enumerate(args))
    out, tangent = srcad.jvp(f, args, tangents)
    expected = f(*args)
    np.testing.assert_array_equal(out, expected, err_msg="jvp's primal output differs from f")
    # a tangent of a smaller, broadcastable shape would give wrong reductions downstream
    assert np.shape(tangent) == np.shape(expected), (
        f"tangent has shape {np.shape(tangent)}, the output {np.shape(expected)}"
    )
    up = f(*(_step(a, t, eps) for a, t in zip(args, tangents)))
    down = f(*(_step(a, t, -eps) for a, t in zip(args, tangents)))
    numeric = (np.asarray(up, dtype=np.float64) - np.asarray(down, dtype=np.float64)) / (2 * eps)
    np.testing.assert_allclose(
        np.asarray(tangent, dtype=np.float64),
        numeric,
        rtol=rtol,
        atol=atol,
        err_msg="jvp differs from finite differences along the tangent",
    )


def _direction(a: Any, rng: np.random.Generator) -> Any:
    """A random tangent of the type and shape of ``a``."""
    if isinstance(a, float):
        return float(rng.uniform(-1.0, 1.0))
    return np.asarray(rng.uniform(-1.0, 1.0, size=np.shape(a)), dtype=np.float64)[()]


def _step(a: Any, t: Any, eps: float) -> Any:
    """``a + eps * t`` (``a`` itself when it has no tangent)."""
    return a if t is None else a + eps * t


def rand(*shape: int, low: float = -2.0, high: float = 2.0, seed: int = 0) -> np.ndarray:
    """Random float64 array (or Python float for no shape) in [low, high)."""
    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    if not shape:
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)
