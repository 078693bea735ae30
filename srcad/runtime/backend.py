"""The array namespace of a call's arguments: NumPy, CuPy, or any Array API namespace.

Generated code asks for ``xp = array_namespace(*args)`` once per call and spells every
array operation ``xp.name(...)`` with NumPy's names. NumPy and CuPy have those names
already; any other namespace (array-api-strict, dask.array, torch, ... through
array-api-compat) is seen through :class:`NumpyNames`, which maps NumPy's names onto the
Array API's and says clearly when the namespace lacks an operation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy

_SCALARS = (float, int, bool, complex, str, type(None), numpy.generic)
_WRAPPED: dict[int, NumpyNames] = {}


def array_namespace(*args: Any) -> Any:
    """The namespace of the arrays among ``args``; TypeError if they come from several.

    NumPy arrays may join the arrays of a library that takes them as operands (dask.array:
    NumPy parameters with chunked data), whose namespace is then the answer.
    """
    found = None
    for arg in args:
        if isinstance(arg, numpy.ndarray):
            namespace = numpy
        elif isinstance(arg, _SCALARS) or not hasattr(arg, "shape"):
            continue  # numbers, and objects that are not arrays
        else:
            namespace = _namespace_of(arg)
        if found is None or found is numpy and getattr(namespace, "takes_numpy", False):
            found = namespace
        elif namespace is not found and not (
            namespace is numpy and getattr(found, "takes_numpy", False)
        ):
            raise TypeError(
                f"arrays from different libraries in one call ({_label(found)} and "
                f"{_label(namespace)}); convert them to one library first"
            )
    return numpy if found is None else found


def math_namespace(*args: Any) -> Any:
    """What ``math.f(x)`` in the user's code runs: ``math`` for Python numbers (and NumPy,
    where ``math`` works as in plain Python), else the arrays' namespace (no host copy)."""
    for arg in args:
        if isinstance(arg, (_SCALARS, numpy.ndarray)) or not hasattr(arg, "shape"):
            continue
        return array_namespace(*args)
    return math


def _namespace_of(arg: Any) -> Any:
    if type(arg).__module__.partition(".")[0] == "cupy":
        import cupy

        return cupy
    import array_api_compat

    inner = array_api_compat.array_namespace(arg)
    wrapped = _WRAPPED.get(id(inner))
    if wrapped is None:
        wrapped = _WRAPPED[id(inner)] = NumpyNames(inner)
        # dask arrays take NumPy arrays as operands (NumPy parameters, dask data)
        wrapped.takes_numpy = type(arg).__module__.partition(".")[0] == "dask"
    return wrapped


def _label(namespace: Any) -> str:
    return getattr(namespace, "__name__", type(namespace).__name__)


class NumpyNames:
    """An Array API namespace reached through NumPy's names (``concatenate`` -> ``concat``)."""

    _ALIASES = {
        "concatenate": "concat",
        "arcsin": "asin",
        "arccos": "acos",
        "arctan": "atan",
        "arcsinh": "asinh",
        "arccosh": "acosh",
        "arctanh": "atanh",
        "power": "pow",
        "absolute": "abs",
        "amax": "max",
        "amin": "min",
        "cumprod": "cumulative_prod",
        "cumsum": "cumulative_sum",
        "bool_": "bool",
    }

    def __init__(self, namespace: Any) -> None:
        self._namespace = namespace
        self.__name__ = getattr(namespace, "__name__", "array namespace")

    def __getattr__(self, name: str) -> Any:
        target = self._ALIASES.get(name, name)
        try:
            value = getattr(self._namespace, target)
        except AttributeError:
            raise AttributeError(
                f"{self.__name__} has no '{name}' (NumPy's name for the operation); srcad "
                "cannot run it on these arrays"
            ) from None
        setattr(self, name, value)  # found once, then an ordinary attribute
        return value

    def transpose(self, x: Any, axes: Any = None) -> Any:
        """NumPy's ``transpose``: reverse the axes unless ``axes`` is given."""
        if axes is None:
            axes = tuple(reversed(range(x.ndim)))
        return self._namespace.permute_dims(x, tuple(axes))

    def swapaxes(self, x: Any, axis1: int, axis2: int) -> Any:
        """NumPy's ``swapaxes``."""
        axes = list(range(x.ndim))
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
        return self._namespace.permute_dims(x, tuple(axes))

    def expand_dims(self, x: Any, axis: Any) -> Any:
        """NumPy's ``expand_dims``, with a tuple of axes too."""
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        ndim = x.ndim + len(axes)
        for a in sorted(a % ndim for a in axes):
            x = self._namespace.expand_dims(x, axis=a)
        return x

    def split(self, x: Any, bounds: list[int], axis: int = 0) -> list[Any]:
        """NumPy's ``split`` at the given indices."""
        edges = [0, *bounds, x.shape[axis]]
        index = [slice(None)] * x.ndim
        pieces = []
        for start, stop in zip(edges[:-1], edges[1:]):
            index[axis] = slice(start, stop)
            pieces.append(x[tuple(index)])
        return pieces

    def ndim(self, x: Any) -> int:
        """NumPy's ``ndim``."""
        return x.ndim

    def shape(self, x: Any) -> tuple[int, ...]:
        """NumPy's ``shape``: ``()`` for a Python number (an operand of the arrays' ops)."""
        return tuple(getattr(x, "shape", ()))

    def __repr__(self) -> str:
        return f"<NumPy names over {self.__name__}>"
