"""Adjoints of Python's arithmetic operators (``+ - * / ** % @``, unary minus)."""

import numpy as np

from srcad.adjoints.registry import Operator, adjoint, d, tangent, xp
from srcad.runtime.accumulate import (
    grad_matmul_lhs,
    grad_matmul_rhs,
    unbroadcast,
    unit_if_zero,
)
from srcad.runtime.tangents import broadcast_like


@adjoint(Operator("Add"), np.add)
def add(y, a, b):
    d[a] = unbroadcast(d[y], a)
    d[b] = unbroadcast(d[y], b)


@adjoint(Operator("Sub"), np.subtract)
def sub(y, a, b):
    d[a] = unbroadcast(d[y], a)
    d[b] = unbroadcast(-d[y], b)


@adjoint(Operator("Mult"), np.multiply)
def mul(y, a, b):
    d[a] = unbroadcast(d[y] * b, a)
    d[b] = unbroadcast(d[y] * a, b)


@adjoint(Operator("Square"))
def mul_self(y, a):
    d[a] = d[y] * 2 * a


@adjoint(Operator("Div"), np.divide)
def truediv(y, a, b):
    d[a] = unbroadcast(d[y] / b, a)
    d[b] = unbroadcast(-d[y] * y / b, b)


@adjoint(Operator("Pow"), np.power)
def power(y, a, b):
    # a ** 0 is constant (0 ** -1 would make 0 * inf); 0 ** b is too for b > 0 (log 0 would
    # make 0 * -inf): the zeros replaced by ones keep both terms finite, and exact elsewhere
    d[a] = unbroadcast(d[y] * b * a ** (unit_if_zero(b) - 1), a)
    d[b] = unbroadcast(d[y] * y * xp.log(unit_if_zero(a)), b)


@adjoint(Operator("Mod"), np.mod)
def mod(y, a, b):
    d[a] = unbroadcast(d[y], a)
    d[b] = unbroadcast(-d[y] * xp.floor_divide(a, b), b)


@adjoint(Operator("MatMult"), np.matmul)
def matmul(y, a, b):
    d[a] = grad_matmul_lhs(d[y], a, b)
    d[b] = grad_matmul_rhs(d[y], a, b)


@adjoint(Operator("USub"), np.negative, shape_preserving=True)
def neg(y, x):
    d[x] = -d[y]


@adjoint(Operator("UAdd"), Operator("Copy"), np.positive, float, shape_preserving=True)
def identity(y, x):
    d[x] = d[y]


# ---- tangents ----


@tangent(Operator("Add"), np.add)
def add_tangent(y, a, b):
    d[y] = broadcast_like(d[a], y)
    d[y] = broadcast_like(d[b], y)


@tangent(Operator("Sub"), np.subtract)
def sub_tangent(y, a, b):
    d[y] = broadcast_like(d[a], y)
    d[y] = broadcast_like(-d[b], y)


@tangent(Operator("Mult"), np.multiply)
def mul_tangent(y, a, b):
    d[y] = d[a] * b
    d[y] = a * d[b]


@tangent(Operator("Square"))
def mul_self_tangent(y, a):
    d[y] = 2 * a * d[a]


@tangent(Operator("Div"), np.divide)
def truediv_tangent(y, a, b):
    d[y] = d[a] / b
    d[y] = -d[b] * y / b


@tangent(Operator("Pow"), np.power)
def power_tangent(y, a, b):
    d[y] = d[a] * b * a ** (unit_if_zero(b) - 1)
    d[y] = d[b] * y * xp.log(unit_if_zero(a))


@tangent(Operator("Mod"), np.mod)
def mod_tangent(y, a, b):
    d[y] = broadcast_like(d[a], y)
    d[y] = -d[b] * xp.floor_divide(a, b)


@tangent(Operator("MatMult"), np.matmul)
def matmul_tangent(y, a, b):
    d[y] = d[a] @ b
    d[y] = a @ d[b]


@tangent(Operator("USub"), np.negative)
def neg_tangent(y, x):
    d[y] = -d[x]


@tangent(Operator("UAdd"), Operator("Copy"), np.positive)
def identity_tangent(y, x):
    d[y] = d[x]


@tangent(float)
def float_tangent(y, x):
    d[y] = float(d[x])
