"""One-line gradient checks: write a tiny function around an expression, compare with FD."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import itertools
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

import srcad
from srcad.testing import numerical_grad

_DIR = Path(tempfile.mkdtemp(prefix="srcad-opcheck-"))
_serial = itertools.count()
PARAMS = "xyzuvw"
SCIPY_MODULES = ("special", "stats", "linalg", "signal")


def make_function(
    body: str, params: str, namespace: dict[str, Any] | None = None, before: str = ""
) -> Any:
    """A real module-level function ``f(params)`` returning ``body`` (source on disk), after
    the statement ``before`` if given. The same source and namespace give the same function
    again, so that srcad's cache of transformed functions serves repeated checks."""
    key = (body, params, before, tuple((k, _fingerprint(v)) for k, v in (namespace or {}).items()))
    if key not in _made:
        _made[key] = _write_function(body, params, namespace, before)
    return _made[key]


_made: dict[tuple, Any] = {}


def _fingerprint(value: Any) -> Any:
    """What ``value`` is, hashable: an array by its contents, anything else by identity."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return ("float", value)
    return ("object", id(value))


def _write_function(body: str, params: str, namespace: dict[str, Any] | None, before: str) -> Any:
    name = f"opcheck_{next(_serial)}"
    path = _DIR / f"{name}.py"
    first = f"    {before}\n" if before else ""
    # SciPy only where the expression uses it: srcad must find it imported by user code
    scipy = "".join(f"import scipy.{m}\n" for m in SCIPY_MODULES if f"scipy.{m}." in body + before)
    path.write_text(
        f"import math\nimport numpy as np\n{scipy}\n\ndef f({params}):\n{first}    return {body}\n"
    )
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if namespace:
        vars(module).update(namespace)
    return module.f


def check(
    expr: str, *args: Any, wrt: tuple[int, ...] | None = None, order: int = 2, **tol: Any
) -> float:
    """Check ``expr`` in both modes over the float arguments ``args``: the gradient of
    ``sum(weights * expr)`` (reverse) and the jvp of ``expr`` along a random direction
    (forward), each against central finite differences.

    ``expr`` names its arguments x, y, z, ... in order. Random weights make every output
    element count with a different factor, so a wrong reduction cannot hide.

    With ``order=2`` (the default) the derivative code is differentiated again in all four
    combinations of modes (see :func:`check_second_order`). Pass ``order=1`` only where the
    second derivative does not exist at the test point (a tie of max/min, a kink).
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
    worst = srcad.check_grad(f, *args, wrt=wrt, **tol)
    if order == 2:
        square = make_function(f"np.sum(WEIGHTS * ({expr}) ** 2)", params, {"WEIGHTS": weights})
        worst = max(worst, check_second_order(square, probe, weights, args, wrt, **tol))
    return worst


def check_function_second_order(probe: Any, args: tuple[Any, ...], **tol: Any) -> float:
    """:func:`check_second_order` for a function written in a test module (statements,
    loops, in-place updates), differentiated over its float arguments.

    The weighted sum of squares is written into a copy of the function's own source (each
    ``return v`` becoming ``return np.sum(WEIGHTS * (v) ** 2)``) rather than around a call of
    it, so that what is differentiated twice is the function's statements themselves.
    """
    wrt = tuple(k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    rng = np.random.default_rng(len(args))
    weights = rng.uniform(0.5, 1.5, size=np.shape(probe(*args)))
    f = with_returns(probe, "np.sum(WEIGHTS * ({}) ** 2)", {"WEIGHTS": weights})
    return check_second_order(f, probe, weights, args, wrt, **tol)


def with_returns(probe: Any, form: str, names: dict[str, Any]) -> Any:
    """``probe`` written again from its own source (in a module of its own, with its
    globals and ``names``), each ``return v`` made ``return form.format(v)``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(probe)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Return):
            node.value = ast.parse(form.format(ast.unparse(node.value))).body[0].value
    name = f"opcheck_{next(_serial)}"
    path = _DIR / f"{name}.py"
    path.write_text(ast.unparse(tree) + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    vars(module).update({k: v for k, v in probe.__globals__.items() if not k.startswith("__")})
    spec.loader.exec_module(module)
    vars(module).update(names)
    return getattr(module, probe.__name__)


def check_second_order(
    square: Any,
    probe: Any,
    weights: Any,
    args: tuple[Any, ...],
    wrt: tuple[int, ...],
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> float:
    """Differentiate the derivatives of ``probe`` again, once in each combination of modes,
    against central differences of first derivatives, along one random direction ``u``.

    Reverse mode differentiates ``square = sum(weights * probe ** 2)``, not the weighted sum
    itself: the gradient flowing into each op's rule then varies with the inputs, so the
    rules of the helpers it calls are exercised even where the op is linear (the gradient of
    ``sum(weights * concatenate(...))`` is a constant):

    - forward over reverse: ``jvp(grad(square))`` along ``u``, against the difference of the
      gradient along ``u`` (``H u``);
    - reverse over reverse: ``vjp(grad(square))`` pulling ``u`` back (``H`` is symmetric).

    Forward mode differentiates ``D(x) = sum(weights * probe(x) * jvp(probe)(x; u * x))``:
    the tangent reaches the result through a product, and its direction depends on ``x``,
    so both the adjoints and the tangents of the forward code's helpers see varying values:

    - reverse over forward: ``grad(D)``, element by element against differences of ``D``;
    - forward over forward: ``jvp(D)`` along ``u``, against the same differences.

    Tolerances are 10 times the first order's: differences of differences are less exact.
    Returns the largest error seen.
    """
    args = tuple(
        np.array(a, dtype=np.float64) if k in wrt and isinstance(a, np.ndarray) else a
        for k, a in enumerate(args)
    )
    rng = np.random.default_rng(len(args) + 31 * len(wrt))
    u = tuple(_direction(a, rng) if k in wrt else None for k, a in enumerate(args))
    tol = {"rtol": 10 * rtol, "atol": 10 * atol}
    gradient = srcad.grad(square, wrt=wrt)
    up = gradient(*(_step(a, t, eps) for a, t in zip(args, u)))
    down = gradient(*(_step(a, t, -eps) for a, t in zip(args, u)))
    hu = [(np.asarray(a) - np.asarray(b)) / (2 * eps) for a, b in zip(up, down)]
    _, by_fwd_rev = srcad.jvp(gradient, args, u)
    _, pullback = srcad.vjp(gradient, *args)
    by_rev_rev = [pullback(tuple(u[k] for k in wrt))[k] for k in wrt]
    worst = 0.0
    for label, values in [
        ("forward-over-reverse", by_fwd_rev),
        ("reverse-over-reverse", by_rev_rev),
    ]:
        for k, analytic, expected in zip(wrt, values, hu):
            what = f"{label} Hessian-vector product (argument {k})"
            worst = max(worst, _compare(what, analytic, expected, **tol))
    directional = _directional(probe, weights, args, u)
    numeric = [numerical_grad(directional, args, k, eps) for k in wrt]
    by_rev_fwd = srcad.grad(directional, wrt=wrt)(*args)
    for k, analytic, expected in zip(wrt, by_rev_fwd, numeric):
        what = f"reverse-over-forward gradient of the jvp (argument {k})"
        worst = max(worst, _compare(what, analytic, expected, **tol))
    _, by_fwd_fwd = srcad.jvp(directional, args, u)
    expected = sum(float(np.sum(g * u[k])) for g, k in zip(numeric, wrt))
    what = "forward-over-forward derivative of the jvp along u"
    return max(worst, _compare(what, by_fwd_fwd, expected, **tol))


def _directional(probe: Any, weights: Any, args: tuple[Any, ...], u: tuple[Any, ...]) -> Any:
    """``x -> sum(weights * probe(x) * jvp(probe)(x; u * x))``, written so srcad can
    differentiate it: its derivatives differentiate forward-mode code again."""
    names: dict[str, Any] = {"PROBE": probe, "WEIGHTS": weights, "srcad": srcad}
    params = PARAMS[: len(args)]
    tangents = []
    for k, t in enumerate(u):
        if t is None:
            tangents.append("None")
        else:
            names[f"U{k}"] = t
            tangents.append(f"U{k} * {params[k]}")
    listed = ", ".join(params)
    jvp = f"value, tangent = srcad.jvp(PROBE, ({listed},), ({', '.join(tangents)},))"
    return make_function("np.sum(WEIGHTS * value * tangent)", listed, names, before=jvp)


def _compare(what: str, analytic: Any, numeric: Any, rtol: float, atol: float) -> float:
    """The largest error of ``analytic`` against ``numeric``; AssertionError beyond tolerance."""
    analytic = np.asarray(analytic, dtype=np.float64)
    numeric = np.asarray(numeric, dtype=np.float64)
    assert analytic.shape == numeric.shape, (
        f"{what} has shape {analytic.shape}, the argument {numeric.shape}"
    )
    np.testing.assert_allclose(
        analytic, numeric, rtol=rtol, atol=atol, err_msg=f"{what} differs from finite differences"
    )
    return float(np.max(np.abs(analytic - numeric))) if analytic.size else 0.0


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
