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
    """Check the gradient of ``sum(weights * expr)`` over the float arguments ``args``.

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
    return srcad.check_grad(f, *args, wrt=wrt, **tol)


def rand(*shape: int, low: float = -2.0, high: float = 2.0, seed: int = 0) -> np.ndarray:
    """Random float64 array (or Python float for no shape) in [low, high)."""
    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    if not shape:
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)
