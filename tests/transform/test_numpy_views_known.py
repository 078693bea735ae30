"""Every NumPy function that hands back a view of its argument (or the argument itself)
is known as one to srcad's aliasing analysis: the functions of ``np``, ``np.linalg`` and
``np.lib.stride_tricks`` are called on arrays, and each result sharing the argument's
memory must be what ``viewed_names`` says of that call. (``np.einsum("ii->i", a)``,
``np.trim_zeros``, ``np.rollaxis``, ``np.diff(a, 0)`` were missing until stop 30: an
update through them was silently lost.)"""

import inspect
import warnings

import gast
import numpy as np
import pytest

from srcad.transform.analyses.aliasing import viewed_names

#: what is not called here: input and output, settings, functions writing their argument
#: (analyses/mutators.py's table), classes
_SKIPPED = {
    "save", "savez", "savez_compressed", "savetxt", "tofile", "fromfile", "memmap", "load",
    "loadtxt", "genfromtxt", "fromregex", "info", "show_config", "show_runtime", "test",
    "set_printoptions", "seterr", "setbufsize", "seterrcall", "copyto", "place", "put",
    "putmask", "fill_diagonal", "put_along_axis", "get_include", "printoptions",
}  # fmt: skip
_MODULES = {"np": np, "np.linalg": np.linalg, "np.lib.stride_tricks": np.lib.stride_tricks}
_COUNTS = [(), (0,), (1,), (-1,)]


def _sharing_calls():
    vector, matrix = np.arange(1.0, 5.0), np.arange(1.0, 10.0).reshape(3, 3)
    found = []
    for prefix, module in _MODULES.items():
        for name in sorted(dir(module)):
            func = getattr(module, name)
            if name.startswith("_") or name in _SKIPPED or not callable(func):
                continue
            if inspect.isclass(func) and not issubclass(func, np.ndarray):
                continue
            for arg in (vector, matrix):
                for extra in _COUNTS:
                    given = arg.copy()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            result = func(given, *extra)
                        except Exception:  # (a function needing other arguments)
                            continue
                    parts = result if isinstance(result, (tuple, list)) else [result]
                    if any(isinstance(p, np.ndarray) and np.shares_memory(p, given) for p in parts):
                        found.append(f"{prefix}.{name}(a{''.join(f', {e}' for e in extra)})")
    return sorted(set(found))


SHARING = _sharing_calls()


def test_numpy_has_views_to_check():
    assert "np.ravel(a)" in SHARING and "np.einsum(a, (0,))" not in SHARING
    assert len(SHARING) > 30


@pytest.mark.parametrize("call", SHARING)
def test_each_numpy_view_is_known(call):
    expr = gast.parse(call).body[0].value
    assert viewed_names(expr) == {"a"}, call


@pytest.mark.parametrize(
    "call", ["np.einsum('ij->i', a)", "np.einsum('ii', a)", "np.diff(a)", "np.diff(a, 2)"]
)
def test_new_arrays_are_not_views(call):
    assert viewed_names(gast.parse(call).body[0].value) == set()
