"""Adjoints of elementwise NumPy and ``math`` functions: gradient times local derivative."""

import math

import numpy as np

from srcad.adjoints.registry import (
    Method,
    adjoint,
    d,
    linear,
    nondifferentiable,
    partials,
    tangent,
    xp,
)
from srcad.runtime.accumulate import unbroadcast, unit_if_zero
from srcad.runtime.complexes import abs_slope, fit_to, real_part
from srcad.runtime.numeric import chosen
from srcad.runtime.tangents import broadcast_like

# ---- trigonometric and hyperbolic ----


@partials(np.sin, shape_preserving=True, cuda="sin")
def sin(y, x):
    return xp.cos(x)


@partials(np.cos, shape_preserving=True, cuda="cos")
def cos(y, x):
    return -xp.sin(x)


@partials(np.tan, shape_preserving=True, cuda="tan")
def tan(y, x):
    return 1 + y * y


@partials(np.tanh, shape_preserving=True, cuda="tanh")
def tanh(y, x):
    return 1 - y * y


@partials(np.sinh, shape_preserving=True, cuda="sinh")
def sinh(y, x):
    return xp.cosh(x)


@partials(np.cosh, shape_preserving=True, cuda="cosh")
def cosh(y, x):
    return xp.sinh(x)


@partials(np.arcsin, shape_preserving=True, cuda="asin")
def arcsin(y, x):
    return 1 / xp.sqrt(1 - x * x)


@partials(np.arccos, shape_preserving=True, cuda="acos")
def arccos(y, x):
    return -1 / xp.sqrt(1 - x * x)


@partials(np.arctan, shape_preserving=True, cuda="atan")
def arctan(y, x):
    return 1 / (1 + x * x)


# ---- exponentials and logarithms ----


@partials(np.exp, shape_preserving=True, cuda="exp")
def exp(y, x):
    return y


@partials(np.expm1, shape_preserving=True, cuda="expm1")
def expm1(y, x):
    return y + 1


@partials(np.log, shape_preserving=True, cuda="log")
def log(y, x):
    return 1 / x


@partials(np.log1p, shape_preserving=True, cuda="log1p")
def log1p(y, x):
    return 1 / (1 + x)


@partials(np.log2, shape_preserving=True, cuda="log2")
def log2(y, x):
    return 1 / (x * math.log(2.0))


@partials(np.log10, shape_preserving=True, cuda="log10")
def log10(y, x):
    return 1 / (x * math.log(10.0))


# ---- powers and magnitudes ----


@partials(np.sqrt, shape_preserving=True, cuda="sqrt")
def sqrt(y, x):
    return 1 / (2 * y)


@partials(np.square, shape_preserving=True)
def square(y, x):
    return 2 * x


@adjoint(np.abs, np.absolute, abs, math.fabs, shape_preserving=True)
def absolute(y, x):
    # sign(x) for real x; conj(x) / |x| for complex (JAX's convention), 0 at 0 for both;
    # the cotangent of the real y is real (stack or vdot of y with complex values may leave
    # an imaginary part in it, which conj(x) would turn into a wrong real one)
    d[x] = real_part(d[y]) * abs_slope(x, y)


# ---- selection: ties split the gradient evenly ----


@adjoint(np.maximum, elementwise=True, selects=True, broadcast_transparent=True)
def maximum(y, a, b):
    d[a] = unbroadcast(xp.where(a > b, d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(xp.where(b > a, d[y], xp.where(a == b, 0.5 * d[y], 0)), b)


@adjoint(np.minimum, elementwise=True, selects=True, broadcast_transparent=True)
def minimum(y, a, b):
    d[a] = unbroadcast(xp.where(a < b, d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(xp.where(b < a, d[y], xp.where(a == b, 0.5 * d[y], 0)), b)


# Python's max(a, b) and min(a, b) of numbers return one of them whole: it takes the whole
# gradient (on a tie the first, which Python returns: it replaces a only when b is larger)
@adjoint(max)
def python_max(y, a, b):
    d[a] = unbroadcast(xp.where(b > a, 0, d[y]), a)
    d[b] = unbroadcast(xp.where(b > a, d[y], 0), b)


@adjoint(min)
def python_min(y, a, b):
    d[a] = unbroadcast(xp.where(b < a, 0, d[y]), a)
    d[b] = unbroadcast(xp.where(b < a, d[y], 0), b)


@tangent(max)
def python_max_tangent(y, a, b):
    d[y] = xp.where(b > a, 0, d[a])
    d[y] = xp.where(b > a, d[b], 0)


@tangent(min)
def python_min_tangent(y, a, b):
    d[y] = xp.where(b < a, 0, d[a])
    d[y] = xp.where(b < a, d[b], 0)


# a condition is boolean: no derivative flows to it (``static``), even where it counts as
# varying (a decision put on a tape beside varied values, in generated code differentiated
# again)
@adjoint(
    np.where,
    static=("condition",),
    elementwise=True,
    selects=True,
    broadcast_transparent=True,
)
def where(y, condition, a, b):
    d[a] = unbroadcast(xp.where(condition, d[y], 0), a)
    d[b] = unbroadcast(xp.where(condition, 0, d[y]), b)


nondifferentiable(chosen)


@adjoint(np.select, static=("condlist",))
def select(y, condlist, choicelist, default=0):
    # each element from the choice of the first condition that holds, else the default
    for i, c in enumerate(choicelist):
        d[c] = unbroadcast(xp.where(chosen(condlist, i), d[y], 0), c)
    d[default] = unbroadcast(xp.where(chosen(condlist, -1), d[y], 0), default)


@adjoint(np.clip, Method("clip"), elementwise=True, selects=True, broadcast_transparent=True)
def clip(y, x, a_min=None, a_max=None):
    d[x] = unbroadcast(xp.where(y == x, d[y], 0), x)
    d[a_min] = unbroadcast(xp.where(x < a_min, d[y], 0), a_min)
    d[a_max] = unbroadcast(xp.where(x > a_max, d[y], 0), a_max)


# ---- the math module, on Python floats ----


@partials(math.sin, cuda="sin")
def math_sin(y, x):
    return math.cos(x)


@partials(math.cos, cuda="cos")
def math_cos(y, x):
    return -math.sin(x)


@partials(math.tanh, cuda="tanh")
def math_tanh(y, x):
    return 1 - y * y


@partials(math.exp, cuda="exp")
def math_exp(y, x):
    return y


@partials(math.log, cuda="log")
def math_log(y, x):
    return 1 / x


@partials(math.sqrt, cuda="sqrt")
def math_sqrt(y, x):
    return 1 / (2 * y)


@partials(math.pow, cuda="pow")
def math_pow(y, a, b):
    # as the power operator's rule: finite at b == 0 and at a == 0
    return b * math.pow(a, unit_if_zero(b) - 1), y * math.log(unit_if_zero(a))


@partials(math.tan, cuda="tan")
def math_tan(y, x):
    return 1 + y * y


@partials(math.sinh, cuda="sinh")
def math_sinh(y, x):
    return math.cosh(x)


@partials(math.cosh, cuda="cosh")
def math_cosh(y, x):
    return math.sinh(x)


@partials(math.asin, cuda="asin")
def math_asin(y, x):
    return 1 / math.sqrt(1 - x * x)


@partials(math.acos, cuda="acos")
def math_acos(y, x):
    return -1 / math.sqrt(1 - x * x)


@partials(math.atan, cuda="atan")
def math_atan(y, x):
    return 1 / (1 + x * x)


@partials(math.asinh, cuda="asinh")
def math_asinh(y, x):
    return 1 / math.sqrt(x * x + 1)


@partials(math.acosh, cuda="acosh")
def math_acosh(y, x):
    return 1 / math.sqrt(x * x - 1)


@partials(math.atanh, cuda="atanh")
def math_atanh(y, x):
    return 1 / (1 - x * x)


@partials(math.erf, cuda="erf")
def math_erf(y, x):
    return 1.1283791670955126 * math.exp(-x * x)  # 2 / sqrt(pi)


@partials(math.erfc, cuda="erfc")
def math_erfc(y, x):
    return -1.1283791670955126 * math.exp(-x * x)


@partials(math.log1p, cuda="log1p")
def math_log1p(y, x):
    return 1 / (1 + x)


@partials(math.expm1, cuda="expm1")
def math_expm1(y, x):
    return y + 1


@partials(math.log2, cuda="log2")
def math_log2(y, x):
    return 1 / (x * 0.6931471805599453)  # ln 2


@partials(math.log10, cuda="log10")
def math_log10(y, x):
    return 1 / (x * 2.302585092994046)  # ln 10


@partials(math.exp2, cuda="exp2")
def math_exp2(y, x):
    return y * 0.6931471805599453


@partials(math.cbrt, cuda="cbrt")
def math_cbrt(y, x):
    return 1 / (3 * y * y)


@partials(math.atan2, cuda="atan2")
def math_atan2(y, a, b):
    return b / (a * a + b * b), -a / (a * a + b * b)


@partials(math.hypot, cuda="hypot")
def math_hypot(y, a, b):
    # at a == b == 0 the subgradient 0, as np.hypot's
    return a / unit_if_zero(y), b / unit_if_zero(y)


# ---- more elementwise functions ----


@partials(np.arcsinh, shape_preserving=True, cuda="asinh")
def arcsinh(y, x):
    return 1 / xp.sqrt(x * x + 1)


@partials(np.arccosh, shape_preserving=True, cuda="acosh")
def arccosh(y, x):
    return 1 / xp.sqrt(x * x - 1)


@partials(np.arctanh, shape_preserving=True, cuda="atanh")
def arctanh(y, x):
    return 1 / (1 - x * x)


@partials(np.exp2, shape_preserving=True)
def exp2(y, x):
    return y * math.log(2.0)


@partials(np.cbrt, shape_preserving=True, cuda="cbrt")
def cbrt(y, x):
    return 1 / (3 * y * y)


@partials(np.reciprocal, shape_preserving=True)
def reciprocal(y, x):
    return -y * y


@partials(np.fabs, shape_preserving=True, cuda="fabs")
def fabs(y, x):
    return xp.sign(x)


@partials(np.deg2rad, np.radians, shape_preserving=True)
def deg2rad(y, x):
    return math.pi / 180.0


@partials(np.rad2deg, np.degrees, shape_preserving=True)
def rad2deg(y, x):
    return 180.0 / math.pi


@partials(np.hypot, cuda="hypot", elementwise=True)
def hypot(y, a, b):
    # at a == b == 0 the subgradient 0 (a and b are 0 where y is)
    return a / unit_if_zero(y), b / unit_if_zero(y)


@partials(np.arctan2, cuda="atan2", elementwise=True)
def arctan2(y, a, b):
    return b / (a * a + b * b), -a / (a * a + b * b)


@partials(np.logaddexp, elementwise=True)
def logaddexp(y, a, b):
    return xp.exp(a - y), xp.exp(b - y)


@partials(np.logaddexp2, elementwise=True)
def logaddexp2(y, a, b):
    return xp.exp2(a - y), xp.exp2(b - y)


@adjoint(np.fmax, elementwise=True, selects=True)
def fmax(y, a, b):
    # as maximum (ties split evenly), except that a NaN loses to a number
    d[a] = unbroadcast(xp.where((a > b) | xp.isnan(b), d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(
        xp.where((b > a) | (xp.isnan(a) & ~xp.isnan(b)), d[y], xp.where(a == b, 0.5 * d[y], 0)), b
    )


@adjoint(np.fmin, elementwise=True, selects=True)
def fmin(y, a, b):
    d[a] = unbroadcast(xp.where((a < b) | xp.isnan(b), d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(
        xp.where((b < a) | (xp.isnan(a) & ~xp.isnan(b)), d[y], xp.where(a == b, 0.5 * d[y], 0)), b
    )


@partials(np.sinc, shape_preserving=True)
def sinc(y, x):
    # sinc'(x) = (cos(pi x) - sinc(x)) / x cancels near 0: there its Taylor series, which
    # also gives the higher derivatives at 0
    small = xp.abs(x) < 0.01
    series = x * (-(xp.pi**2) / 3 + x * x * (xp.pi**4 / 30 - x * x * xp.pi**6 / 840))
    return xp.where(small, series, (xp.cos(xp.pi * x) - y) / xp.where(small, 1, x))


@adjoint(np.nan_to_num, shape_preserving=True, static=("nan", "posinf", "neginf"))
def nan_to_num(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # a replaced NaN or infinity is a constant: no gradient flows to it
    d[x] = xp.where(xp.isfinite(x), d[y], 0)


@linear(np.real, shape_preserving=True)
def real(y, x):
    d[x] = xp.real(d[y])


@adjoint(np.real_if_close, shape_preserving=True)
def real_if_close(y, x):
    # the imaginary parts are dropped only when all are small: then the cotangent is real
    d[x] = fit_to(d[y], y)


@adjoint(np.conj, Method("conj"), Method("conjugate"), shape_preserving=True)
def conj(y, x):
    d[x] = xp.conj(d[y])


# ---- tangents ----


@tangent(np.abs, np.absolute, abs, math.fabs)
def absolute_tangent(y, x):
    d[y] = xp.real(d[x] * abs_slope(x, y))


# a tie moves with half of each side's tangent, as the adjoints split the gradient evenly;
# comparing a with b already gives the result's shape


@tangent(np.maximum)
def maximum_tangent(y, a, b):
    d[y] = xp.where(a > b, d[a], xp.where(a == b, 0.5 * d[a], 0))
    d[y] = xp.where(b > a, d[b], xp.where(a == b, 0.5 * d[b], 0))


@tangent(np.minimum)
def minimum_tangent(y, a, b):
    d[y] = xp.where(a < b, d[a], xp.where(a == b, 0.5 * d[a], 0))
    d[y] = xp.where(b < a, d[b], xp.where(a == b, 0.5 * d[b], 0))


@tangent(np.where, static=("condition",))
def where_tangent(y, condition, a, b):
    d[y] = broadcast_like(xp.where(condition, d[a], 0), y)
    d[y] = broadcast_like(xp.where(condition, 0, d[b]), y)


@tangent(np.select, static=("condlist",))
def select_tangent(y, condlist, choicelist, default=0):
    for i, c in enumerate(choicelist):
        d[y] = broadcast_like(xp.where(chosen(condlist, i), d[c], 0), y)
    d[y] = broadcast_like(xp.where(chosen(condlist, -1), d[default], 0), y)


@tangent(np.clip, Method("clip"))
def clip_tangent(y, x, a_min=None, a_max=None):
    d[y] = xp.where(y == x, d[x], 0)
    d[y] = broadcast_like(xp.where(x < a_min, d[a_min], 0), y)
    d[y] = broadcast_like(xp.where(x > a_max, d[a_max], 0), y)


@tangent(np.fmax)
def fmax_tangent(y, a, b):
    d[y] = xp.where((a > b) | xp.isnan(b), d[a], xp.where(a == b, 0.5 * d[a], 0))
    d[y] = xp.where((b > a) | (xp.isnan(a) & ~xp.isnan(b)), d[b], xp.where(a == b, 0.5 * d[b], 0))


@tangent(np.fmin)
def fmin_tangent(y, a, b):
    d[y] = xp.where((a < b) | xp.isnan(b), d[a], xp.where(a == b, 0.5 * d[a], 0))
    d[y] = xp.where((b < a) | (xp.isnan(a) & ~xp.isnan(b)), d[b], xp.where(a == b, 0.5 * d[b], 0))


@tangent(np.nan_to_num, static=("nan", "posinf", "neginf"))
def nan_to_num_tangent(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    d[y] = xp.where(xp.isfinite(x), d[x], 0)


@tangent(np.real_if_close)
def real_if_close_tangent(y, x):
    d[y] = fit_to(d[x], y)


@tangent(np.conj, Method("conj"), Method("conjugate"))
def conj_tangent(y, x):
    d[y] = xp.conj(d[x])
