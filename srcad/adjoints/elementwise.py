"""Adjoints of elementwise NumPy and ``math`` functions: gradient times local derivative."""

import math

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, nondifferentiable, tangent, xp
from srcad.runtime.accumulate import unbroadcast, unit_if_zero
from srcad.runtime.complexes import abs_slope, fit_to, real_part
from srcad.runtime.numeric import chosen
from srcad.runtime.tangents import broadcast_like

# ---- trigonometric and hyperbolic ----


@adjoint(np.sin, shape_preserving=True)
def sin(y, x):
    d[x] = d[y] * xp.cos(x)


@adjoint(np.cos, shape_preserving=True)
def cos(y, x):
    d[x] = -d[y] * xp.sin(x)


@adjoint(np.tan, shape_preserving=True)
def tan(y, x):
    d[x] = d[y] * (1 + y * y)


@adjoint(np.tanh, shape_preserving=True)
def tanh(y, x):
    d[x] = d[y] * (1 - y * y)


@adjoint(np.sinh, shape_preserving=True)
def sinh(y, x):
    d[x] = d[y] * xp.cosh(x)


@adjoint(np.cosh, shape_preserving=True)
def cosh(y, x):
    d[x] = d[y] * xp.sinh(x)


@adjoint(np.arcsin, shape_preserving=True)
def arcsin(y, x):
    d[x] = d[y] / xp.sqrt(1 - x * x)


@adjoint(np.arccos, shape_preserving=True)
def arccos(y, x):
    d[x] = -d[y] / xp.sqrt(1 - x * x)


@adjoint(np.arctan, shape_preserving=True)
def arctan(y, x):
    d[x] = d[y] / (1 + x * x)


# ---- exponentials and logarithms ----


@adjoint(np.exp, shape_preserving=True)
def exp(y, x):
    d[x] = d[y] * y


@adjoint(np.expm1, shape_preserving=True)
def expm1(y, x):
    d[x] = d[y] * (y + 1)


@adjoint(np.log, shape_preserving=True)
def log(y, x):
    d[x] = d[y] / x


@adjoint(np.log1p, shape_preserving=True)
def log1p(y, x):
    d[x] = d[y] / (1 + x)


@adjoint(np.log2, shape_preserving=True)
def log2(y, x):
    d[x] = d[y] / (x * math.log(2.0))


@adjoint(np.log10, shape_preserving=True)
def log10(y, x):
    d[x] = d[y] / (x * math.log(10.0))


# ---- powers and magnitudes ----


@adjoint(np.sqrt, shape_preserving=True)
def sqrt(y, x):
    d[x] = d[y] / (2 * y)


@adjoint(np.square, shape_preserving=True)
def square(y, x):
    d[x] = d[y] * 2 * x


@adjoint(np.abs, np.absolute, abs, shape_preserving=True)
def absolute(y, x):
    # sign(x) for real x; conj(x) / |x| for complex (JAX's convention), 0 at 0 for both;
    # the cotangent of the real y is real (stack or vdot of y with complex values may leave
    # an imaginary part in it, which conj(x) would turn into a wrong real one)
    d[x] = real_part(d[y]) * abs_slope(x, y)


# ---- selection: ties split the gradient evenly ----


@adjoint(np.maximum)
def maximum(y, a, b):
    d[a] = unbroadcast(xp.where(a > b, d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(xp.where(b > a, d[y], xp.where(a == b, 0.5 * d[y], 0)), b)


@adjoint(np.minimum)
def minimum(y, a, b):
    d[a] = unbroadcast(xp.where(a < b, d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(xp.where(b < a, d[y], xp.where(a == b, 0.5 * d[y], 0)), b)


# a condition is boolean: no derivative flows to it (``static``), even where it counts as
# varying (a decision put on a tape beside varied values, in generated code differentiated
# again)
@adjoint(np.where, static=("condition",))
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


@adjoint(np.clip)
def clip(y, x, a_min=None, a_max=None):
    d[x] = unbroadcast(xp.where(y == x, d[y], 0), x)
    d[a_min] = unbroadcast(xp.where(x < a_min, d[y], 0), a_min)
    d[a_max] = unbroadcast(xp.where(x > a_max, d[y], 0), a_max)


# ---- the math module, on Python floats ----


@adjoint(math.sin)
def math_sin(y, x):
    d[x] = d[y] * math.cos(x)


@adjoint(math.cos)
def math_cos(y, x):
    d[x] = -d[y] * math.sin(x)


@adjoint(math.tanh)
def math_tanh(y, x):
    d[x] = d[y] * (1 - y * y)


@adjoint(math.exp)
def math_exp(y, x):
    d[x] = d[y] * y


@adjoint(math.log)
def math_log(y, x):
    d[x] = d[y] / x


@adjoint(math.sqrt)
def math_sqrt(y, x):
    d[x] = d[y] / (2 * y)


@adjoint(math.pow)
def math_pow(y, a, b):
    # as the power operator's rule: finite at b == 0 and at a == 0
    d[a] = d[y] * b * math.pow(a, unit_if_zero(b) - 1)
    d[b] = d[y] * y * math.log(unit_if_zero(a))


# ---- more elementwise functions ----


@adjoint(np.arcsinh, shape_preserving=True)
def arcsinh(y, x):
    d[x] = d[y] / xp.sqrt(x * x + 1)


@adjoint(np.arccosh, shape_preserving=True)
def arccosh(y, x):
    d[x] = d[y] / xp.sqrt(x * x - 1)


@adjoint(np.arctanh, shape_preserving=True)
def arctanh(y, x):
    d[x] = d[y] / (1 - x * x)


@adjoint(np.exp2, shape_preserving=True)
def exp2(y, x):
    d[x] = d[y] * y * math.log(2.0)


@adjoint(np.cbrt, shape_preserving=True)
def cbrt(y, x):
    d[x] = d[y] / (3 * y * y)


@adjoint(np.reciprocal, shape_preserving=True)
def reciprocal(y, x):
    d[x] = -d[y] * y * y


@adjoint(np.fabs, shape_preserving=True)
def fabs(y, x):
    d[x] = d[y] * xp.sign(x)


@adjoint(np.deg2rad, np.radians, shape_preserving=True)
def deg2rad(y, x):
    d[x] = d[y] * (math.pi / 180.0)


@adjoint(np.rad2deg, np.degrees, shape_preserving=True)
def rad2deg(y, x):
    d[x] = d[y] * (180.0 / math.pi)


@adjoint(np.hypot)
def hypot(y, a, b):
    # at a == b == 0 the subgradient 0 (a and b are 0 where y is)
    d[a] = unbroadcast(d[y] * a / unit_if_zero(y), a)
    d[b] = unbroadcast(d[y] * b / unit_if_zero(y), b)


@adjoint(np.arctan2)
def arctan2(y, a, b):
    d[a] = unbroadcast(d[y] * b / (a * a + b * b), a)
    d[b] = unbroadcast(-d[y] * a / (a * a + b * b), b)


@adjoint(np.logaddexp)
def logaddexp(y, a, b):
    d[a] = unbroadcast(d[y] * xp.exp(a - y), a)
    d[b] = unbroadcast(d[y] * xp.exp(b - y), b)


@adjoint(np.logaddexp2)
def logaddexp2(y, a, b):
    d[a] = unbroadcast(d[y] * xp.exp2(a - y), a)
    d[b] = unbroadcast(d[y] * xp.exp2(b - y), b)


@adjoint(np.fmax)
def fmax(y, a, b):
    # as maximum (ties split evenly), except that a NaN loses to a number
    d[a] = unbroadcast(xp.where((a > b) | xp.isnan(b), d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(
        xp.where((b > a) | (xp.isnan(a) & ~xp.isnan(b)), d[y], xp.where(a == b, 0.5 * d[y], 0)), b
    )


@adjoint(np.fmin)
def fmin(y, a, b):
    d[a] = unbroadcast(xp.where((a < b) | xp.isnan(b), d[y], xp.where(a == b, 0.5 * d[y], 0)), a)
    d[b] = unbroadcast(
        xp.where((b < a) | (xp.isnan(a) & ~xp.isnan(b)), d[y], xp.where(a == b, 0.5 * d[y], 0)), b
    )


@adjoint(np.sinc, shape_preserving=True)
def sinc(y, x):
    # sinc'(x) = (cos(pi x) - sinc(x)) / x cancels near 0: there its Taylor series, which
    # also gives the higher derivatives at 0
    small = xp.abs(x) < 0.01
    series = x * (-(xp.pi**2) / 3 + x * x * (xp.pi**4 / 30 - x * x * xp.pi**6 / 840))
    d[x] = d[y] * xp.where(small, series, (xp.cos(xp.pi * x) - y) / xp.where(small, 1, x))


@adjoint(np.nan_to_num, shape_preserving=True, static=("nan", "posinf", "neginf"))
def nan_to_num(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # a replaced NaN or infinity is a constant: no gradient flows to it
    d[x] = xp.where(xp.isfinite(x), d[y], 0)


@adjoint(np.real, shape_preserving=True)
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


@tangent(np.sin)
def sin_tangent(y, x):
    d[y] = d[x] * xp.cos(x)


@tangent(np.cos)
def cos_tangent(y, x):
    d[y] = -d[x] * xp.sin(x)


@tangent(np.tan)
def tan_tangent(y, x):
    d[y] = d[x] * (1 + y * y)


@tangent(np.tanh)
def tanh_tangent(y, x):
    d[y] = d[x] * (1 - y * y)


@tangent(np.sinh)
def sinh_tangent(y, x):
    d[y] = d[x] * xp.cosh(x)


@tangent(np.cosh)
def cosh_tangent(y, x):
    d[y] = d[x] * xp.sinh(x)


@tangent(np.arcsin)
def arcsin_tangent(y, x):
    d[y] = d[x] / xp.sqrt(1 - x * x)


@tangent(np.arccos)
def arccos_tangent(y, x):
    d[y] = -d[x] / xp.sqrt(1 - x * x)


@tangent(np.arctan)
def arctan_tangent(y, x):
    d[y] = d[x] / (1 + x * x)


@tangent(np.exp)
def exp_tangent(y, x):
    d[y] = d[x] * y


@tangent(np.expm1)
def expm1_tangent(y, x):
    d[y] = d[x] * (y + 1)


@tangent(np.log)
def log_tangent(y, x):
    d[y] = d[x] / x


@tangent(np.log1p)
def log1p_tangent(y, x):
    d[y] = d[x] / (1 + x)


@tangent(np.log2)
def log2_tangent(y, x):
    d[y] = d[x] / (x * math.log(2.0))


@tangent(np.log10)
def log10_tangent(y, x):
    d[y] = d[x] / (x * math.log(10.0))


@tangent(np.sqrt)
def sqrt_tangent(y, x):
    d[y] = d[x] / (2 * y)


@tangent(np.square)
def square_tangent(y, x):
    d[y] = d[x] * 2 * x


@tangent(np.abs, np.absolute, abs)
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


@tangent(np.clip)
def clip_tangent(y, x, a_min=None, a_max=None):
    d[y] = xp.where(y == x, d[x], 0)
    d[y] = broadcast_like(xp.where(x < a_min, d[a_min], 0), y)
    d[y] = broadcast_like(xp.where(x > a_max, d[a_max], 0), y)


@tangent(math.sin)
def math_sin_tangent(y, x):
    d[y] = d[x] * math.cos(x)


@tangent(math.cos)
def math_cos_tangent(y, x):
    d[y] = -d[x] * math.sin(x)


@tangent(math.tanh)
def math_tanh_tangent(y, x):
    d[y] = d[x] * (1 - y * y)


@tangent(math.exp)
def math_exp_tangent(y, x):
    d[y] = d[x] * y


@tangent(math.log)
def math_log_tangent(y, x):
    d[y] = d[x] / x


@tangent(math.sqrt)
def math_sqrt_tangent(y, x):
    d[y] = d[x] / (2 * y)


@tangent(math.pow)
def math_pow_tangent(y, a, b):
    d[y] = d[a] * b * math.pow(a, unit_if_zero(b) - 1)
    d[y] = d[b] * y * math.log(unit_if_zero(a))


@tangent(np.arcsinh)
def arcsinh_tangent(y, x):
    d[y] = d[x] / xp.sqrt(x * x + 1)


@tangent(np.arccosh)
def arccosh_tangent(y, x):
    d[y] = d[x] / xp.sqrt(x * x - 1)


@tangent(np.arctanh)
def arctanh_tangent(y, x):
    d[y] = d[x] / (1 - x * x)


@tangent(np.exp2)
def exp2_tangent(y, x):
    d[y] = d[x] * y * math.log(2.0)


@tangent(np.cbrt)
def cbrt_tangent(y, x):
    d[y] = d[x] / (3 * y * y)


@tangent(np.reciprocal)
def reciprocal_tangent(y, x):
    d[y] = -d[x] * y * y


@tangent(np.fabs)
def fabs_tangent(y, x):
    d[y] = d[x] * xp.sign(x)


@tangent(np.deg2rad, np.radians)
def deg2rad_tangent(y, x):
    d[y] = d[x] * (math.pi / 180.0)


@tangent(np.rad2deg, np.degrees)
def rad2deg_tangent(y, x):
    d[y] = d[x] * (180.0 / math.pi)


@tangent(np.hypot)
def hypot_tangent(y, a, b):
    d[y] = d[a] * a / unit_if_zero(y)
    d[y] = d[b] * b / unit_if_zero(y)


@tangent(np.arctan2)
def arctan2_tangent(y, a, b):
    d[y] = d[a] * b / (a * a + b * b)
    d[y] = -d[b] * a / (a * a + b * b)


@tangent(np.logaddexp)
def logaddexp_tangent(y, a, b):
    d[y] = d[a] * xp.exp(a - y)
    d[y] = d[b] * xp.exp(b - y)


@tangent(np.logaddexp2)
def logaddexp2_tangent(y, a, b):
    d[y] = d[a] * xp.exp2(a - y)
    d[y] = d[b] * xp.exp2(b - y)


@tangent(np.fmax)
def fmax_tangent(y, a, b):
    d[y] = xp.where((a > b) | xp.isnan(b), d[a], xp.where(a == b, 0.5 * d[a], 0))
    d[y] = xp.where((b > a) | (xp.isnan(a) & ~xp.isnan(b)), d[b], xp.where(a == b, 0.5 * d[b], 0))


@tangent(np.fmin)
def fmin_tangent(y, a, b):
    d[y] = xp.where((a < b) | xp.isnan(b), d[a], xp.where(a == b, 0.5 * d[a], 0))
    d[y] = xp.where((b < a) | (xp.isnan(a) & ~xp.isnan(b)), d[b], xp.where(a == b, 0.5 * d[b], 0))


@tangent(np.sinc)
def sinc_tangent(y, x):
    small = xp.abs(x) < 0.01
    series = x * (-(xp.pi**2) / 3 + x * x * (xp.pi**4 / 30 - x * x * xp.pi**6 / 840))
    d[y] = d[x] * xp.where(small, series, (xp.cos(xp.pi * x) - y) / xp.where(small, 1, x))


@tangent(np.nan_to_num, static=("nan", "posinf", "neginf"))
def nan_to_num_tangent(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    d[y] = xp.where(xp.isfinite(x), d[x], 0)


@tangent(np.real)
def real_tangent(y, x):
    d[y] = xp.real(d[x])


@tangent(np.real_if_close)
def real_if_close_tangent(y, x):
    d[y] = fit_to(d[x], y)


@tangent(np.conj, Method("conj"), Method("conjugate"))
def conj_tangent(y, x):
    d[y] = xp.conj(d[x])
