"""Functions of libraries whose source srcad never transforms: they have rules or none."""

from __future__ import annotations

import os
import sysconfig
from typing import Any

from srcad.adjoints.scipy_table import is_scipy

#: array libraries whose Python functions (np.ma.masked_less, np.asmatrix) are not user code
_ARRAY_LIBRARIES = ("numpy", "cupy", "dask", "array_api_compat", "array_api_strict")
_STDLIB = tuple(
    {os.path.normcase(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}
)


def is_library_function(obj: Any) -> bool:
    """Whether ``obj`` belongs to SciPy, an array library or Python's standard library."""
    if is_scipy(obj):
        return True
    module = getattr(obj, "__module__", None) or ""
    if any(module == lib or module.startswith(lib + ".") for lib in _ARRAY_LIBRARIES):
        return True
    code = getattr(getattr(obj, "__func__", obj), "__code__", None)
    filename = os.path.normcase(getattr(code, "co_filename", ""))
    return filename.startswith(_STDLIB) and "-packages" not in filename
