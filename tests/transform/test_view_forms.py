"""Every way NumPy makes a view is an alias: an update through one name shows through the
others, so srcad either differentiates NumPy's semantics or refuses clearly; it never
differentiates the value before the update (which was silently wrong for the function
forms np.ravel(u), np.reshape, np.transpose, np.swapaxes, np.moveaxis, np.split(u)[k],
np.asanyarray, astype(copy=False) and a, b = np.split(u, 2))."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])

VIEWS = [
    "np.ravel(u)", "np.transpose(u)", "np.reshape(u, (3, 1))", "np.swapaxes(u[None], 0, 1)",
    "np.moveaxis(u[None], 0, 1)", "np.asanyarray(u)", "np.ascontiguousarray(u)",
    "u.astype(u.dtype, copy=False)", "np.split(u, 3)[0]", "np.array_split(u, 2)[1]",
    "u[1:][::-1]", "u[None].swapaxes(0, 1)", "np.squeeze(u[None])", "u.reshape(3)", "u.T",
    # (silently wrong until stop 29: an element of a display, a conditional expression,
    # conj of a real array, NumPy's other view functions)
    "(u, x)[0]", "[x, u][1]", "{'k': u}['k']", "tuple((u, x))[0]", "u if x[0] > -9.0 else x",
    "(u or x)", "u.conj()", "np.lib.stride_tricks.sliding_window_view(u, 1)[:, 0]",
    "np.array(u, copy=None)", "np.asarray_chkfinite(u)",
    # (silently wrong until stop 30: einsum of one operand keeping its indices, the other
    # NumPy functions handing back a view, a count that hands back the argument itself,
    # a function imported by name, getattr)
    "np.einsum('i->i', u)", "np.einsum('i', u)", "np.einsum(u, [0])", "np.trim_zeros(u)",
    "np.rollaxis(u[None], 1)[:, 0]", "np.diff(u, 0)", "np.diff(u, n=0)", "np.polyint(u, 0)",
    "ravel(u)", "getattr(u, 'T')",
]  # fmt: skip


def _module(tmp_path, view: str):
    source = f"""
import numpy as np
from numpy import ravel


def read_after_update(x):
    u = x * 2.0
    v = {view}
    u[1] = x[0] ** 3
    return np.sum(v * v) + np.sum(u)


def write_through_view(x):
    u = x * 2.0
    v = {view}
    v[...] = np.sin(v) * x[2]
    return np.sum(u * u)


def unpacked_split(x):
    u = x * 2.0
    a, b, c = np.split(u, 3)
    u[0] = x[1] ** 3
    return np.sum(a * a) + np.sum(u)
"""
    path = tmp_path / "views_of_u.py"
    path.write_text(source)
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"views_{abs(hash(view))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["read_after_update", "write_through_view", "unpacked_split"])
@pytest.mark.parametrize("view", VIEWS)
def test_a_view_is_differentiated_as_numpy_runs_it_or_refused(tmp_path, view, name):
    f = getattr(_module(tmp_path, view), name)
    try:
        srcad.check_grad(f, X.copy(), modes=("fwd", "rev"))
    except srcad.TransformError as exc:
        assert "memory with" in str(exc) and "views_of_u.py:" in str(exc), exc


def read_through_a_no_copy_array(x):
    u = x * 2.0
    v = np.array(u, copy=None)
    w = np.asarray(u * x, copy=False)
    return np.sum(v * x + w)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_no_copy_array_with_no_update_is_differentiated(mode):
    # (no update shows whether v is u itself: only its value is left, which has a rule;
    # "np.array: arguments not supported ... 'copy'" until stop 30, campaign seed 5100195)
    srcad.check_grad(read_through_a_no_copy_array, X.copy(), modes=(mode,))
