"""Adjoints of the complex-number ops that are not holomorphic: imag, angle, sign, the
``.real`` and ``.imag`` attributes (real, conj and abs are in elementwise.py), and the list
of the rules right for complex values (every other rule refuses them: registry.py).

JAX's convention: a rule is the plain transpose (no conjugation) of the op's tangent map,
so a real function's gradient is df/dx - i df/dy; a real operand's cotangent is the real
part of what flows back to it (``fit_to``)."""

import numpy as np

from srcad.adjoints.registry import (
    Attribute,
    adjoint,
    complex_safe_rules,
    d,
    linear,
    nondifferentiable,
    partials,
    tangent,
    xp,
)
from srcad.runtime.accumulate import real_like, unit_if_zero
from srcad.runtime.complexes import (
    abs_slope,
    abs_slope_jvp,
    abs_slope_vjp,
    angle_unit,
    complex_checked,
    complex_checked_unless,
    conj_if_complex,
    fit_to,
    hermitian_weights,
    real_part,
)


@adjoint(Attribute("real"), shape_preserving=True, complex_safe=True)
def real_attribute(y, x):
    d[x] = xp.real(d[y])


@linear(np.imag, Attribute("imag"), shape_preserving=True)
def imag(y, val):
    d[val] = fit_to(-1j * xp.real(d[y]), val)


@adjoint(np.angle, shape_preserving=True, static=("deg",))
def angle(y, z, deg=False):
    # angle = atan2(Im z, Re z): d angle = Im(conj(z) dz) / |z|^2 (0 at 0, and for real z)
    r2 = unit_if_zero(xp.real(z * xp.conj(z)))
    d[z] = fit_to(-1j * xp.real(d[y]) * angle_unit(deg) * xp.conj(z) / r2, z)


# the helpers the rules of abs and fft call, for derivatives of derivatives


@linear(fit_to, static=("like", "axes"))
def fit_to_adjoint(r, g, like, axes=()):
    d[g] = fit_to(d[r], g, axes)


@adjoint(abs_slope, static=("y",))
def abs_slope_adjoint(s, x, y):
    d[x] = abs_slope_vjp(d[s], x, y)


# abs_slope's own derivatives are linear in what they carry (t, g) and the same map S
# (its own transpose under Re(a * b)): S t = (conj(t) - conj(x) a / r^2) / r, with
# r = |x|, a = Re(conj(x) t). Their derivative in x along u is
# K(t, u) = ((3 a b / r^2 - Re(conj(t) u)) conj(x) - a conj(u) - b conj(t)) / r^3,
# b = Re(conj(x) u), symmetric in t and u; 0 at x = 0 (the subgradient) and, through its
# real part, for real x (sign is flat). K is written with ops that have rules, so these
# differentiate to any order.


@adjoint(abs_slope_jvp, static=("y",))
def abs_slope_jvp_adjoint(r, t, x, y):
    d[t] = abs_slope_vjp(d[r], x, y)
    n = unit_if_zero(y)
    a = xp.real(xp.conj(x) * t)
    h = xp.real(xp.conj(x) * d[r])
    shared = (3 * a * h / (n * n) - xp.real(d[r] * xp.conj(t))) * xp.conj(x)
    d[x] = real_like(xp.where(y == 0, 0, (shared - a * xp.conj(d[r]) - h * xp.conj(t)) / n**3), x)


@adjoint(abs_slope_vjp, static=("y",))
def abs_slope_vjp_adjoint(r, g, x, y):
    d[g] = abs_slope_jvp(d[r], x, y)
    n = unit_if_zero(y)
    a = xp.real(xp.conj(x) * g)
    h = xp.real(xp.conj(x) * d[r])
    shared = (3 * a * h / (n * n) - xp.real(d[r] * xp.conj(g))) * xp.conj(x)
    d[x] = real_like(xp.where(y == 0, 0, (shared - a * xp.conj(d[r]) - h * xp.conj(g)) / n**3), x)


nondifferentiable(hermitian_weights, angle_unit)


# ---- tangents ----


@tangent(Attribute("real"))
def real_attribute_tangent(y, x):
    d[y] = xp.real(d[x])


@tangent(np.angle, static=("deg",))
def angle_tangent(y, z, deg=False):
    r2 = unit_if_zero(xp.real(z * xp.conj(z)))
    d[y] = xp.imag(xp.conj(z) * d[z]) * angle_unit(deg) / r2


@tangent(abs_slope, static=("y",))
def abs_slope_tangent(s, x, y):
    d[s] = abs_slope_jvp(d[x], x, y)


@tangent(abs_slope_jvp, static=("y",))
def abs_slope_jvp_tangent(r, t, x, y):
    d[r] = abs_slope_jvp(d[t], x, y)
    n = unit_if_zero(y)
    a = xp.real(xp.conj(x) * t)
    b = xp.real(xp.conj(x) * d[x])
    shared = (3 * a * b / (n * n) - xp.real(xp.conj(t) * d[x])) * xp.conj(x)
    d[r] = real_like(xp.where(y == 0, 0, (shared - a * xp.conj(d[x]) - b * xp.conj(t)) / n**3), x)


@tangent(abs_slope_vjp, static=("y",))
def abs_slope_vjp_tangent(r, g, x, y):
    d[r] = abs_slope_vjp(d[g], x, y)
    n = unit_if_zero(y)
    a = xp.real(xp.conj(x) * g)
    b = xp.real(xp.conj(x) * d[x])
    shared = (3 * a * b / (n * n) - xp.real(xp.conj(g) * d[x])) * xp.conj(x)
    d[r] = real_like(xp.where(y == 0, 0, (shared - a * xp.conj(d[x]) - b * xp.conj(g)) / n**3), x)


# ---- the helpers of the refusal of complex values (registry.complex_safe) ----


@partials(complex_checked, static=("label", "values"), complex_safe=True)
def complex_checked_adjoint(r, value, label, values):
    return 1


@partials(complex_checked_unless, static=("ok", "label", "values"), complex_safe=True)
def complex_checked_unless_adjoint(r, value, ok, label, values):
    return 1


@linear(conj_if_complex, shape_preserving=True, complex_safe=True)
def conj_if_complex_adjoint(r, x):
    d[x] = conj_if_complex(d[r])


@linear(real_part, shape_preserving=True, complex_safe=True)
def real_part_adjoint(r, g):
    d[g] = real_part(d[r])


@linear(real_like, static=("like",), shape_preserving=True, complex_safe=True)
def real_like_adjoint(r, g, like):
    d[g] = real_like(d[r], like)


# ---- sign: z / |z| for complex z (0 at 0), flat for real x ----


@adjoint(np.sign, shape_preserving=True, complex_safe=True)
def sign(y, x):
    # d sign = (dz - sign Re(conj(sign) dz)) / |z|, transposed; for real x, sign is +-1 or 0
    # and both terms cancel exactly
    r = unit_if_zero(xp.abs(x))
    d[x] = fit_to(xp.where(y == 0, 0, d[y] - xp.real(d[y] * y) * xp.conj(y)) / r, x)


@tangent(np.sign, complex_safe=True)
def sign_tangent(y, x):
    r = unit_if_zero(xp.abs(x))
    d[y] = xp.where(y == 0, 0, d[x] - y * xp.real(xp.conj(y) * d[x])) / r


# ---- the rules right for complex values, each checked against finite differences along
# real and imaginary directions (tests/test_complex.py, tests/fuzz/test_complex_programs.py);
# every other rule refuses complex values at run time (registry._refusing_complex).
# Holomorphic ops are right by the plain transpose; selections (maximum, sort, max, clip,
# where) move whole values, so they are right under NumPy's ordering of complex values ----

_ADJOINTS = "srcad.adjoints."
for _module in (
    "shape", "indexing", "updates", "containers", "fft", "generated", "complex", "ufunc_methods",
):  # fmt: skip
    complex_safe_rules(_ADJOINTS + _module)
complex_safe_rules(
    _ADJOINTS + "arithmetic",
    "add", "sub", "mul", "mul_self", "truediv", "power", "matmul", "neg", "identity",
)  # fmt: skip
complex_safe_rules(
    _ADJOINTS + "elementwise",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan", "exp", "expm1",
    "log", "log1p", "log2", "log10", "sqrt", "square", "absolute", "maximum", "minimum",
    "where", "select", "clip", "arcsinh", "arccosh", "arctanh", "exp2", "reciprocal",
    "fmax", "fmin", "real", "conj", "nan_to_num", "real_if_close",
    "sinc",
)  # fmt: skip
complex_safe_rules(
    _ADJOINTS + "linalg",
    "dot", "vdot", "outer", "inner", "einsum", "multi_dot", "tensordot", "grad_tensordot_lhs",
    "grad_tensordot_rhs", "kron", "grad_kron_lhs", "grad_kron_rhs", "cross", "inv", "solve",
    "det", "matrix_power", "trace", "diagonal", "undiagonal", "upper_block", "upper_right",
    "diagonal_blocks", "norm", "vector_norm", "matrix_norm", "grad_einsum_general",
    "grad_einsum_general_replacing", "einsum_general_replacing",
)  # fmt: skip
complex_safe_rules(
    _ADJOINTS + "reductions",
    "sum", "mean", "prod", "max", "var", "std", "nansum", "nanmax", "nanmean", "nanprod",
    "nanvar", "nanstd", "average", "cumsum", "cumulative_sum", "cumprod",
)  # fmt: skip
complex_safe_rules(_ADJOINTS + "decompositions", "split", "array_split", "hsplit", "vsplit")
complex_safe_rules(_ADJOINTS + "decompositions", "dsplit")
complex_safe_rules(_ADJOINTS + "creation", "full_like", "linspace", "index_rows", "index_columns")
complex_safe_rules(_ADJOINTS + "numeric", "convolve", "correlate", "polyval", "vander")
complex_safe_rules(_ADJOINTS + "numeric", "trapezoid")
complex_safe_rules(_ADJOINTS + "numeric", "gradient", "gradient_along", "gradient_transposed")


# ops NumPy, math and SciPy reject complex values for themselves, before any rule runs:
# no check needed (so real programs pay nothing for it)
complex_safe_rules(
    _ADJOINTS + "elementwise",
    "arctan2", "hypot", "logaddexp", "logaddexp2", "cbrt", "fabs", "deg2rad", "rad2deg",
    "math_sin", "math_cos", "math_tanh", "math_exp", "math_log", "math_sqrt", "math_pow",
)  # fmt: skip
complex_safe_rules(_ADJOINTS + "arithmetic", "mod")
complex_safe_rules(_ADJOINTS + "scipy_special", "expit", "logit", "erfinv", "gammaln", "betaln")
