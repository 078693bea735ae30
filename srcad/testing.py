"""Gradient checking against central finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from srcad import pytree
from srcad.api import (
    Wrt,
    _has_one_element,
    _labels,
    _positional_params,
    caller_wrt,
    grad,
    jvp,
    vjp,
)
from srcad.arraytypes import check_arrays
from srcad.tracebacks import boundary


def numerical_grad(f: Callable, args: Sequence[Any], index: int, eps: float = 1e-6) -> Any:
    """Central finite-difference gradient of scalar ``f(*args)`` with respect to ``args[index]``;
    for a complex argument JAX's df/dx - i df/dy (differences along both directions). ``f``
    runs on copies of the arrays: one that updates its arguments in place leaves them as
    they were for the next evaluation."""
    f = _on_copies(f)
    args = list(args)
    x = args[index]
    if pytree.is_container(x):
        return _numerical_tree_grad(f, args, index, eps)
    if np.iscomplexobj(x):
        return _numerical_complex_grad(f, args, index, eps)
    if not hasattr(x, "shape"):
        args[index] = x + eps
        up = _number(f(*args))
        args[index] = x - eps
        down = _number(f(*args))
        return float((up - down) / (2 * eps))
    # C order: reshape(-1) must be a view (of a Fortran-ordered array it is a copy, and
    # the differences would never reach x or the result: all zeros)
    x = np.array(x, dtype=np.float64, order="C")
    out = np.zeros_like(x, order="C")
    flat = x.reshape(-1)
    for k in range(flat.size):
        saved = flat[k]
        flat[k] = saved + eps
        args[index] = x.copy()
        up = _number(f(*args))
        flat[k] = saved - eps
        args[index] = x.copy()
        down = _number(f(*args))
        flat[k] = saved
        out.reshape(-1)[k] = (up - down) / (2 * eps)
    return out


def _numerical_complex_grad(f: Callable, args: list[Any], index: int, eps: float) -> Any:
    """:func:`numerical_grad` for a complex argument: df/dx - i df/dy."""
    x = args[index]
    scalar = not hasattr(x, "shape")
    z = np.array(x, dtype=np.complex128, order="C")
    out = np.zeros_like(z, order="C")
    flat = z.reshape(-1)
    for k in range(flat.size):
        for step, weight in ((eps, 1.0), (1j * eps, -1j)):
            moved = flat.copy()
            moved[k] += step
            args[index] = complex(moved[0]) if scalar else moved.reshape(z.shape)
            up = _number(f(*args))
            moved[k] -= 2 * step
            args[index] = complex(moved[0]) if scalar else moved.reshape(z.shape)
            down = _number(f(*args))
            out.reshape(-1)[k] += weight * (up - down) / (2 * eps)
    args[index] = x
    return complex(out) if scalar else out


def _number(value: Any) -> Any:
    """An output of one element in an array of shape (1,), (1, 1), ... as a 0-d array (grad
    accepts them, seeding ones); anything else as it is."""
    return value.reshape(()) if _has_one_element(value) else value


def _numerical_tree_grad(f: Callable, args: list[Any], index: int, eps: float) -> Any:
    """:func:`numerical_grad` for a pytree argument: leaf by leaf, in its structure."""
    leaves, treedef = pytree.flatten(args[index])
    out = []
    for j, leaf in enumerate(leaves):

        def at_leaf(*moved: Any, j: int = j) -> Any:
            rebuilt = list(moved)
            new = [*leaves[:j], moved[index], *leaves[j + 1 :]]
            rebuilt[index] = pytree.unflatten(treedef, new)
            return f(*rebuilt)

        out.append(numerical_grad(at_leaf, [*args[:index], leaf, *args[index + 1 :]], index, eps))
    return pytree.unflatten(treedef, out)


def _float64(x: Any) -> Any:
    """``x`` in float64 (complex128 when complex)."""
    if not hasattr(x, "shape"):
        return x
    return np.array(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)


@boundary
def check_grad(
    f: Callable,
    *args: Any,
    wrt: Wrt = 0,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    order: int = 1,
    modes: Sequence[str] = ("rev",),
    seed: int = 0,
) -> float:
    """Compare srcad's derivatives of ``f`` with central finite differences in float64.

    ``modes`` picks reverse mode (``"rev"``: the gradient, element by element) and forward
    mode (``"fwd"``: the directional derivative along random directions, and its agreement
    with the gradient). ``order=2`` also checks second derivatives along random directions
    ``u``: ``H u`` by forward-over-reverse (``"fwd"``) and reverse-over-reverse (``"rev"``)
    against finite differences of the (checked) gradient. A complex argument is moved along
    its real and imaginary directions (its gradient is JAX's df/dx - i df/dy). Raises
    AssertionError naming what differs; returns the largest error seen.
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    unknown = set(modes) - {"fwd", "rev"}
    if unknown or not modes:
        raise ValueError(f"modes must name 'fwd' and/or 'rev', got {modes!r}")
    indices, _ = caller_wrt(f, wrt)
    check_arrays(args, _labels(_positional_params(f), len(args)))  # before np.array drops them
    args = [pytree.tree_map(_float64, a) if k in indices else a for k, a in enumerate(args)]
    name = getattr(f, "__name__", "f")
    on_copies = _on_copies(f)  # (what the finite differences evaluate)
    worst = _check_first_order(f, args, indices, eps, rtol, atol) if "rev" in modes else 0.0
    rng = np.random.default_rng(seed)
    directions = [_direction(args[k], rng) for k in indices]
    gradient = grad(f, wrt=tuple(indices))
    if "fwd" in modes:
        tangents = [None] * len(args)
        for k, u in zip(indices, directions):
            tangents[k] = u
        _, derivative = jvp(f, args, tangents)
        numeric = (
            on_copies(*_moved(args, indices, directions, eps))
            - on_copies(*_moved(args, indices, directions, -eps))
        ) / (2 * eps)
        worst = max(
            worst, _compare(f"forward-mode derivative of {name}", derivative, numeric, rtol, atol)
        )
        if "rev" in modes:
            inner = sum(
                float(np.real(np.sum(g * u)))  # (JAX's convention: Re(g u) for complex)
                for gs, us in zip(gradient(*args), directions)
                for g, u in zip(pytree.tree_leaves(gs), pytree.tree_leaves(us))
            )
            worst = max(
                worst, _compare(f"<gradient, direction> of {name}", inner, derivative, rtol, atol)
            )
    if order == 2:
        up = gradient(*_moved(args, indices, directions, eps))
        down = gradient(*_moved(args, indices, directions, -eps))
        numeric = [
            pytree.tree_map(lambda a, b: (a - b) / (2 * eps), a, b) for a, b in zip(up, down)
        ]
        tol = (10 * rtol, 10 * atol)  # differences of differences: less exact
        if "fwd" in modes:
            tangents = [None] * len(args)
            for k, u in zip(indices, directions):
                tangents[k] = u
            _, hu = jvp(gradient, args, tangents)
            for k, a, b in zip(indices, hu, numeric):
                label = f"forward-over-reverse Hessian-vector product of {name} (argument {k})"
                worst = max(worst, _compare_trees(label, a, b, *tol))
        if "rev" in modes:
            _, pullback = vjp(gradient, *args)
            hu = pullback(tuple(directions))
            for k, b in zip(indices, numeric):
                label = f"reverse-over-reverse Hessian-vector product of {name} (argument {k})"
                worst = max(worst, _compare_trees(label, hu[k], b, *tol))
    return worst


def _direction(x: Any, rng: np.random.Generator) -> Any:
    """A random unit-scale direction shaped like ``x``."""
    if pytree.is_container(x):
        return pytree.tree_map(lambda leaf: _direction(leaf, rng), x)
    if np.iscomplexobj(x):
        u = rng.standard_normal(np.shape(x)) + 1j * rng.standard_normal(np.shape(x))
        return u if hasattr(x, "shape") else complex(u)
    if hasattr(x, "shape"):
        return rng.standard_normal(np.shape(x))
    return float(rng.standard_normal())


def _on_copies(f: Callable) -> Callable:
    """``f`` called with a copy of each array argument (and of each array in a pytree)."""
    if getattr(f, "_srcad_on_copies", False):
        return f

    def call(*args: Any) -> Any:
        return f(*(pytree.tree_map(_copied, a) for a in args))

    call._srcad_on_copies = True  # type: ignore[attr-defined]
    return call


def _copied(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def _moved(
    args: list[Any], indices: Sequence[int], directions: list[Any], step: float
) -> list[Any]:
    moved = list(args)
    for k, u in zip(indices, directions):
        moved[k] = pytree.tree_map(lambda a, v: a + step * v, args[k], u)
    return moved


def _compare_trees(what: str, analytic: Any, numeric: Any, rtol: float, atol: float) -> float:
    """:func:`_compare` leaf by leaf, naming the leaf's path in a pytree."""
    leaves, treedef = pytree.flatten(numeric)
    if treedef[0] == "leaf":
        return _compare(what, analytic, numeric, rtol, atol)
    got, got_def = pytree.flatten(analytic)
    if got_def != treedef:
        raise AssertionError(f"{what} has another structure than its argument")
    worst = 0.0
    for path, a, b in zip(pytree.paths(treedef), got, leaves):
        label = what + "".join(f"[{p!r}]" for p in path)
        worst = max(worst, _compare(label, a, b, rtol, atol))
    return worst


def _compare(what: str, analytic: Any, numeric: Any, rtol: float, atol: float) -> float:
    """The largest error of ``analytic`` against ``numeric``; AssertionError beyond tolerance."""
    kind = np.complex128 if np.iscomplexobj(analytic) or np.iscomplexobj(numeric) else np.float64
    analytic = np.asarray(analytic, dtype=kind)
    numeric = np.asarray(numeric, dtype=kind)
    error = np.abs(analytic - numeric)
    bound = atol + rtol * np.abs(numeric)
    if np.any(~(error <= bound)):
        where = np.unravel_index(np.argmax(error - bound), np.shape(error))
        where_text = f" at index {tuple(int(i) for i in where)}" if np.ndim(error) else ""
        raise AssertionError(
            f"{what} differs from finite differences{where_text}: srcad "
            f"{analytic[where]!r}, finite differences {numeric[where]!r} "
            f"(max abs error {float(np.max(error)):.3g})"
        )
    return float(np.max(error)) if np.size(error) else 0.0


def _check_first_order(
    f: Callable, args: list[Any], indices: Sequence[int], eps: float, rtol: float, atol: float
) -> float:
    """Every element of the reverse-mode gradient against finite differences."""
    grads = grad(f, wrt=tuple(indices))(*args)
    worst = 0.0
    for index, analytic in zip(indices, grads):
        numeric = numerical_grad(f, args, index, eps)
        what = f"gradient of {getattr(f, '__name__', 'f')} with respect to argument {index}"
        worst = max(worst, _compare_trees(what, analytic, numeric, rtol, atol))
    return worst
