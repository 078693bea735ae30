"""Run-time handles of a recursion whose depth depends on data (built by
srcad/transform/recursive_calls.py; generated code calls them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from srcad.runtime.calls import CallVJP
from srcad.runtime.errors import TransformError
from srcad.runtime.higher import GradientList


class TupleForwardVJP:
    """Reverse-mode calls of a :class:`_TupleForward`. The code calling it unpacks
    ``(a, b), residuals = f_forward(x)`` as ``t, residuals = ...; a = t[0]; b = t[1]``,
    whose adjoints start from ``zeros_like(t)``: ``t`` is a :class:`Values`, so that
    gives a list of zeros (NumPy cannot make an array of values of other shapes). Its
    methods are reached through objects that refuse a further derivative by name."""

    def __init__(self, inner: CallVJP, recursion: Callable) -> None:
        self.inner = inner
        self.recursion = recursion
        self.forward = Refused(self._forward, recursion)
        self.backward = Refused(self._backward, recursion)

    def _forward(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        (values, kept), residuals = self.inner.forward(*args, **kwargs)
        return (Values(values), kept), (residuals, values)

    def _backward(self, residuals: Any, g_values: Any, g_kept: Any) -> tuple[Any, ...]:
        """The cotangents of the differentiated parameters, from the values' cotangent
        (a list, a missing element zero; or a zero for all) and the kept arguments'."""
        residuals, values = residuals
        if isinstance(g_values, (list, tuple)):
            given = list(g_values)
        elif g_values is None or (np.ndim(g_values) == 0 and g_values == 0):
            given = [None] * len(values)  # (``zeros_like`` of the values: a zero)
        else:
            raise TypeError(f"a cotangent of {len(values)} values that is not a list")
        if len(given) != len(values):  # (never silently fewer cotangents)
            raise TypeError(f"{len(given)} cotangents for {len(values)} values")
        given = [zero_like(v) if g is None else g for g, v in zip(given, values)]
        return self.inner.backward(residuals, *given, g_kept)

    def result_count(self) -> int:
        return 2

    def masked(self) -> TupleForwardVJP:
        return TupleForwardVJP(self.inner.masked(), self.recursion)  # type: ignore[arg-type]


class Values(tuple):
    """The values of a call returning a tuple, read element by element by generated code
    (see :class:`TupleForwardVJP`): ``np.zeros_like`` of it is a list of zeros, one
    shaped like each value."""

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.zeros_like:
            return GradientList(zero_like(v) for v in self)
        return NotImplemented


def zero_like(value: Any) -> Any:
    return np.zeros_like(value) if hasattr(value, "shape") else 0.0


class Refused:
    """A method of a handle that a derivative's code calls: ``call`` when run; a
    TransformError naming the recursion when that code is differentiated again."""

    def __init__(self, call: Callable, recursion: Callable) -> None:
        self.call = call
        self.recursion = recursion
        self.__name__ = self.__qualname__ = getattr(call, "__name__", "call").lstrip("_")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.call(*args, **kwargs)

    @staticmethod
    def fun(*args: Any, **kwargs: Any) -> None:
        """(What srcad binds a call's arguments to, before asking for a handle.)"""

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """Refused: the code calling it is a derivative's, differentiated again."""
        code = self.recursion.__code__
        raise TransformError(
            f"a further derivative of {self.recursion.__qualname__} is not supported here: "
            + not_again_reason(self.recursion),
            filename=code.co_filename,
            lineno=code.co_firstlineno,
        )


def not_again_reason(recursion: Callable) -> str:
    """Why code calling a recursion's derivative functions is not differentiated again."""
    code = recursion.__code__
    return (
        f"{recursion.__qualname__} ({code.co_filename}:{code.co_firstlineno}) is a recursion "
        "whose depth depends on data (not decided by constant arguments of the call), "
        "which srcad differentiates to second order only, or to third order where it returns "
        "one value (not a tuple) and the second derivative is reverse over reverse (grad of "
        "grad, then grad or jvp of that; not jvp of a hessian, or of a jvp); write the depth "
        "as a constant argument, or the recursion as a loop"
    )
