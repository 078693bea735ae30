"""Adjoints of products: dot, matmul (also ``@``), outer, inner, einsum."""

import numpy as np

from srcad.adjoints.registry import Method, adjoint, d, xp
from srcad.runtime.accumulate import (
    grad_dot_lhs,
    grad_dot_rhs,
    grad_einsum,
    grad_inner_lhs,
    grad_inner_rhs,
)


@adjoint(np.dot, Method("dot"))
def dot(y, a, b):
    d[a] = grad_dot_lhs(d[y], a, b)
    d[b] = grad_dot_rhs(d[y], a, b)


@adjoint(np.outer)
def outer(y, a, b):
    d[a] = xp.reshape(d[y] @ xp.reshape(b, (-1,)), a.shape)
    d[b] = xp.reshape(xp.reshape(a, (-1,)) @ d[y], b.shape)


@adjoint(np.inner)
def inner(y, a, b):
    d[a] = grad_inner_lhs(d[y], a, b)
    d[b] = grad_inner_rhs(d[y], a, b)


@adjoint(np.einsum)
def einsum(y, subscripts, *operands):
    for i, x in enumerate(operands):
        d[x] = grad_einsum(subscripts, d[y], operands, i)
