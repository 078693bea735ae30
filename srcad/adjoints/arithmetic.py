"""Adjoints of Python's arithmetic operators (``+ - * / ** % @``, unary minus)."""

import numpy as np

from srcad.adjoints.registry import Operator, adjoint, d, xp
from srcad.runtime.accumulate import grad_matmul_lhs, grad_matmul_rhs, unbroadcast


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
    d[a] = unbroadcast(d[y] * b * a ** (b - 1), a)
    d[b] = unbroadcast(d[y] * y * xp.log(a), b)


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
