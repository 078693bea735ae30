"""Adjoints of Python's arithmetic operators (``+ - * / ** % @``, unary minus), and of
the ``operator`` module's functions for them."""

import operator

import numpy as np

from srcad.adjoints.registry import Operator, adjoint, bilinear, d, partials, tangent, xp
from srcad.runtime.accumulate import grad_matmul_lhs, grad_matmul_rhs, unbroadcast, unit_if_zero


@partials(Operator("Add"), np.add, operator.add, elementwise=True, broadcast_transparent=True)
def add(y, a, b):
    return 1, 1


@partials(Operator("Sub"), np.subtract, operator.sub, elementwise=True, broadcast_transparent=True)
def sub(y, a, b):
    return 1, -1


# a product's tangents keep each operand in its place (d[a] * b, a * d[b]): bilinear, not
# partials (d[b] * a)


@bilinear(Operator("Mult"), np.multiply, operator.mul, elementwise=True, broadcast_transparent=True)
def mul(y, a, b):
    d[a] = unbroadcast(d[y] * b, a)
    d[b] = unbroadcast(d[y] * a, b)


@adjoint(Operator("Square"), elementwise=True, broadcast_transparent=True)
def mul_self(y, a):
    d[a] = d[y] * 2 * a


@tangent(Operator("Square"))
def mul_self_tangent(y, a):
    d[y] = 2 * a * d[a]


@partials(
    Operator("Div"), np.divide, operator.truediv, elementwise=True, broadcast_transparent=True
)
def truediv(y, a, b):
    return 1 / b, -y / b


@partials(
    Operator("Pow"),
    np.power,
    pow,
    operator.pow,
    cuda="pow",
    elementwise=True,
    broadcast_transparent=True,
)
def power(y, a, b):
    # a ** 0 is constant (0 ** -1 would make 0 * inf); 0 ** b is too for b > 0 (log 0 would
    # make 0 * -inf): the zeros replaced by ones keep both terms finite, and exact elsewhere
    return b * a ** (unit_if_zero(b) - 1), y * xp.log(unit_if_zero(a))


@partials(Operator("Mod"), np.mod, operator.mod, elementwise=True, broadcast_transparent=True)
def mod(y, a, b):
    return 1, -xp.floor_divide(a, b)


@bilinear(
    Operator("MatMult"),
    np.matmul,
    operator.matmul,
    broadcast_transparent=True,
    changes_shape=True,
)
def matmul(y, a, b):
    d[a] = grad_matmul_lhs(d[y], a, b)
    d[b] = grad_matmul_rhs(d[y], a, b)


@partials(
    Operator("USub"), np.negative, operator.neg, shape_preserving=True, broadcast_transparent=True
)
def neg(y, x):
    return -1


# float's tangent is a float too (below)
@partials(
    Operator("UAdd"),
    Operator("Copy"),
    np.positive,
    operator.pos,
    float,
    shape_preserving=True,
    broadcast_transparent=True,
    takes_lists=True,
)
def identity(y, x):
    return 1


@tangent(float)
def float_tangent(y, x):
    d[y] = float(d[x])
