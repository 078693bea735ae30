"""Operators: each case is sum(weights * expr) checked against central finite differences."""

import copy
import operator

import numpy as np
import pytest
from opcheck import check, rand

import srcad

SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((3,), ()),
    ((), (2, 3)),
    ((), ()),
]


@pytest.mark.parametrize("op", ["+", "-", "*"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_binary_broadcasting(op, shapes):
    check(f"x {op} y", rand(*shapes[0]), rand(*shapes[1], seed=1))


@pytest.mark.parametrize("shapes", SHAPES)
def test_division(shapes):
    check("x / y", rand(*shapes[0]), rand(*shapes[1], low=0.5, high=2.0, seed=1))


@pytest.mark.parametrize("shapes", SHAPES)
def test_power_both_operands(shapes):
    check("x ** y", rand(*shapes[0], low=0.5, high=2.0), rand(*shapes[1], seed=1))


@pytest.mark.parametrize(
    "expr", ["x ** 2", "x ** 3", "x ** 0.5", "x ** -2", "2.0 ** x", "x ** 1", "np.power(x, 3)"]
)
def test_power_constant(expr):
    check(expr, rand(2, 3, low=0.5, high=2.0))


@pytest.mark.parametrize(
    "expr",
    [
        "-x",
        "+x",
        "x * x",
        "x * 3.0 - 1.0",
        "1.0 - x / 4.0",
        "x % 1.5",
        "x // 2.0 + x",
        "np.add(x, 1.0)",
        "np.subtract(1.0, x)",
        "np.multiply(x, x)",
        "np.divide(1.0, x)",
        "np.negative(x)",
    ],
)
def test_unary_and_constant_forms(expr):
    check(expr, rand(2, 3, low=0.1, high=1.4))


@pytest.mark.parametrize(
    "sa, sb", [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((5, 2, 3), (3, 4)),
               ((2, 3), (4, 3, 2)), ((2, 1, 2, 3), (5, 3, 2))],
)  # fmt: skip
def test_matmul(sa, sb):
    check("x @ y", rand(*sa), rand(*sb, seed=1))
    check("np.matmul(x, y)", rand(*sa), rand(*sb, seed=1))


def test_mod_broadcasting():
    check("x % y", rand(3, low=0.1, high=1.4), rand(2, 3, low=1.5, high=2.0, seed=1))
    check("x % y", rand(2, 3, low=2.5, high=3.4), rand(3, low=1.5, high=2.0, seed=1))


def test_python_floats():
    check("x * y + x / y - x ** 2", 0.7, 1.3)


def through_operator_functions(x, W):
    # the operator module's functions are the operators (no rule until stop 28)
    a = operator.add(x, operator.mul(x, x))
    b = operator.truediv(operator.sub(a, 0.5), operator.pos(W[0]) + 2.0)
    c = operator.matmul(W, operator.neg(x)) + operator.pow(np.sum(x), 2)
    return np.sum(b * operator.mod(x + 5.0, 3.0)) + np.sum(c)


def through_copies(x, W):
    # copy.copy and copy.deepcopy of arrays are the arrays (no rule until stop 28)
    return np.sum(copy.deepcopy(W) @ copy.copy(x) * x)


@pytest.mark.parametrize("f", [through_operator_functions, through_copies])
def test_operator_and_copy_functions(f):
    x = np.array([0.3, -0.5, 0.9])
    W = np.array([[0.2, 0.1, -0.3], [0.5, 0.4, 0.1], [0.0, 0.2, 0.3]])
    srcad.check_grad(f, x, W, wrt=(0, 1), modes=("rev", "fwd"), order=2)
