"""Helpers for complex numbers in generated code (JAX's convention: a real function's
gradient is df/dx - i df/dy, and a rule is the plain transpose of the op's tangent map).

A cotangent reaching a real value is the real part of what flows back to it (the transpose
of the promotion of a real value into a complex computation)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy

from srcad.errors import NoAdjointError
from srcad.runtime.backend import array_namespace


def is_complex(x: Any) -> bool:
    """Whether ``x`` is a complex number or an array of a complex dtype."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return isinstance(x, complex)
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind == "c"
    return bool(array_namespace(x).isdtype(dtype, "complex floating"))


def real_part(g: Any) -> Any:
    """``g``'s real part, ``g`` itself when it is real."""
    if not is_complex(g):
        return g
    if isinstance(g, numbers.Number):
        return g.real
    return array_namespace(g).real(g)


def fit_to(g: Any, like: Any, axes: Any = ()) -> Any:
    """``g`` cropped or zero-padded along ``axes`` to ``like``'s lengths there, and only
    its real part where ``like`` is real: the cotangent of ``like`` from a transform that
    resized it (np.fft's ``n=``/``s=``) or turned it complex."""
    if not is_complex(like):
        g = real_part(g)
    if axes is None:
        axes = range(len(getattr(like, "shape", ())))
    elif isinstance(axes, int):
        axes = (axes,)
    shape = tuple(getattr(like, "shape", ()))
    for axis in axes:
        g = _resize(g, shape[axis], axis)
    return g


def _resize(g: Any, length: int, axis: int) -> Any:
    """``g`` cropped or zero-padded at the end of ``axis`` to ``length``."""
    have = g.shape[axis]
    if have == length:
        return g
    xp = array_namespace(g)
    axis = axis % g.ndim
    if have > length:
        return g[(slice(None),) * axis + (slice(0, length),)]
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, length - have)
    return xp.pad(g, widths)


def abs_slope(x: Any, y: Any) -> Any:
    """What the cotangent of ``y = abs(x)`` is multiplied by: ``sign(x)`` for real ``x``,
    ``conj(x) / |x|`` for complex (0 at 0: the subgradient, as for real ``x``)."""
    if not hasattr(x, "shape"):  # a Python number
        if isinstance(x, complex):
            return x.conjugate() / y if y else 0.0
        return (x > 0) - (x < 0)
    xp = array_namespace(x)
    if not is_complex(x):
        return xp.sign(x)
    return xp.conj(x) / _unit_if_zero(xp, y)


def abs_slope_jvp(t: Any, x: Any, y: Any) -> Any:
    """The tangent of :func:`abs_slope` along ``t`` (0 for real ``x``: sign is flat)."""
    xp = array_namespace(x, t)
    if not is_complex(x):
        return xp.zeros_like(x) * t
    r = _unit_if_zero(xp, y)
    dr = xp.real(xp.conj(x) * t) / r
    return xp.where(y == 0, 0, xp.conj(t) / r - xp.conj(x) * dr / (r * r))


def abs_slope_vjp(g: Any, x: Any, y: Any) -> Any:
    """The transpose of :func:`abs_slope_jvp`: the cotangent of ``x`` from ``g``."""
    xp = array_namespace(x, g)
    if not is_complex(x):
        return xp.zeros_like(x) * real_part(g)
    r = _unit_if_zero(xp, y)
    along = xp.real(g * xp.conj(x)) / (r * r * r)
    return xp.where(y == 0, 0, xp.conj(g) / r - along * xp.conj(x))


def _unit_if_zero(xp: Any, v: Any) -> Any:
    return xp.where(v == 0, xp.asarray(1, dtype=v.dtype), v)


def hermitian_weights(n: int, length: int, axis: int, ndim: int, dtype: Any = None) -> Any:
    """Weights of the half spectrum (of ``length`` entries) a real signal of ``n`` samples
    is made from by np.fft.irfft: 1 for the zero frequency and (``n`` even) the Nyquist
    one, 2 for the others (each stands for itself and its conjugate); shaped to broadcast
    along ``axis`` of an array of ``ndim`` axes."""
    w = numpy.full(length, 2.0)
    w[0] = 1.0
    if n % 2 == 0 and n // 2 < length:
        w[n // 2] = 1.0
    shape = [1] * ndim
    shape[axis] = length
    return w.reshape(shape)


def angle_unit(deg: bool = False) -> float:
    """Units of ``np.angle(z, deg)``'s result per radian (degrees with ``deg``)."""
    return 180.0 / math.pi if deg else 1.0


def refuse_complex(label: str, *values: Any) -> None:
    """Raise when one of ``values`` (what a rule not known right for complex numbers reads)
    is complex: its derivative would be silently wrong."""
    for v in values:
        kind = getattr(getattr(v, "dtype", None), "kind", None)
        if kind == "c" or (kind is None and (isinstance(v, complex) or _complex_array(v))):
            raise NoAdjointError(
                f"the derivative of {label} is not implemented for complex values "
                "(see 'Complex numbers' in docs/api.md for the ops that support them)"
            )


def complex_checked(value: Any, label: str, values: tuple) -> Any:
    """``value`` (a rule's contribution), after :func:`refuse_complex` on ``values``."""
    refuse_complex(label, *values)
    return value


def complex_checked_unless(value: Any, ok: bool, label: str, values: tuple) -> Any:
    """``value``, after :func:`refuse_complex` on ``values`` unless ``ok`` (a rule right
    for complex values in some of its modes only: np.linalg.norm's 2-norm, not its other
    ords)."""
    if not ok:
        refuse_complex(label, *values)
    return value


def _complex_array(v: Any) -> bool:
    # an array of another library (its dtype has no NumPy kind), or a list of numbers
    if hasattr(v, "dtype"):
        return is_complex(v)
    if isinstance(v, (list, tuple)):
        return any(isinstance(e, complex) or _complex_array(e) for e in v)
    return False


def conj_if_complex(x: Any) -> Any:
    """``conj(x)``, or ``x`` itself (no copy) when it is real."""
    if not is_complex(x):
        return x
    if isinstance(x, numbers.Number):
        return x.conjugate()
    return array_namespace(x).conj(x)
