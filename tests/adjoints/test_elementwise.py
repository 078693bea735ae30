"""Elementwise NumPy and math functions against central finite differences."""

import numpy as np
import pytest
from opcheck import check, rand

import srcad

UNIT = dict(low=-0.9, high=0.9)
POSITIVE = dict(low=0.5, high=2.0)
UNARY = [
    ("np.sin", {}),
    ("np.cos", {}),
    ("np.tan", dict(low=-1.0, high=1.0)),
    ("np.tanh", {}),
    ("np.sinh", {}),
    ("np.cosh", {}),
    ("np.arcsin", UNIT),
    ("np.arccos", UNIT),
    ("np.arctan", {}),
    ("np.exp", {}),
    ("np.expm1", {}),
    ("np.log", POSITIVE),
    ("np.log1p", POSITIVE),
    ("np.log2", POSITIVE),
    ("np.log10", POSITIVE),
    ("np.sqrt", POSITIVE),
    ("np.square", {}),
    ("np.abs", {}),
    ("np.absolute", {}),
    ("abs", {}),
]


@pytest.mark.parametrize("func, domain", UNARY)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_unary(func, domain, shape):
    x = rand(*shape, **domain)
    if shape == () and func != "abs":
        x = np.float64(x)
    check(f"{func}(x)", x)


@pytest.mark.parametrize("func", ["np.maximum", "np.minimum"])
@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), ()), ((2, 1), (1, 3))])
def test_maximum_minimum(func, sa, sb):
    check(f"{func}(x, y)", rand(*sa), rand(*sb, seed=1))


def test_maximum_ties_split_evenly():
    x = np.array([1.0, 2.0, 3.0])
    # at a tie the gradient jumps: no second derivative to check (first order only)
    check("np.maximum(x, y)", x, x.copy(), order=1)


@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), ())])
def test_where(sa, sb):
    check("np.where(x > 0, x, y)", rand(*sa), rand(*sb, seed=1))
    check("np.where(x > 0, x * 2.0, 0.0)", rand(*sa))
    # the smaller operand picked where it is broadcast
    check("np.where(y > 0, y, x)", rand(*sa), rand(*sb, seed=1))


def test_clip():
    check("np.clip(x, -1.0, 1.0)", rand(2, 4))
    check("np.clip(x, None, 0.5)", rand(2, 4))
    check("np.clip(x, y, z)", rand(2, 3), rand(3, low=-2, high=-0.5), rand(3, low=0.5, high=2))
    check("np.clip(x, y, 0.5)", rand(3), rand(2, 3, low=-2, high=0.0, seed=1))
    check("np.clip(x, y, z)", rand(3), rand(3, low=-2, high=-0.5), rand(2, 3, low=0.5, high=2))


@pytest.mark.parametrize(
    "expr, args",
    [
        ("math.sin(x)", (0.3,)),
        ("math.cos(x)", (0.3,)),
        ("math.tanh(x)", (0.3,)),
        ("math.exp(x)", (0.3,)),
        ("math.log(x)", (1.3,)),
        ("math.sqrt(x)", (1.3,)),
        ("math.pow(x, y)", (1.3, 0.7)),
        ("math.sin(x) * math.exp(y) + math.sqrt(x)", (1.3, 0.7)),
        # (no rule until stop 31: "no adjoint rule for math.tan")
        ("math.tan(x) + math.sinh(x) + math.cosh(x)", (0.3,)),
        ("math.asin(x) + math.acos(x) * 2 + math.atan(x)", (0.3,)),
        ("math.asinh(x) + math.acosh(x + 1.5) + math.atanh(x)", (0.3,)),
        ("math.erf(x) + math.erfc(x) * 2", (0.3,)),
        ("math.log1p(x) + math.expm1(x) + math.log2(x) + math.log10(x)", (0.3,)),
        ("math.exp2(x) + math.cbrt(x) + math.fabs(x - 1.0)", (0.3,)),
        ("math.atan2(x, y) + math.hypot(x, y)", (0.3, -0.7)),
    ],
)
def test_math(expr, args):
    check(expr, *args)


def hinge(w, x, y):
    s = np.dot(w, x)
    return max(0.0, 1.0 - y * s) + 0.1 * min(np.sum(w**2), 2.0) + pow(np.sum(w), 2)


@pytest.mark.parametrize("label", [1.0, -1.0])
def test_python_max_min_and_pow_of_numbers(label):
    # (no rule until stop 27: "Python's max() picks one whole value")
    w, x = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -1.0])
    srcad.check_grad(hinge, w, x, label, modes=("rev", "fwd"), order=2)


def first_of_a_tie(t):
    return max(t, 2.0 * t) + min(3.0 * t, t)


def test_python_max_gives_the_gradient_to_the_value_it_returns():
    # at t = 0 both sides tie: Python returns the first, which takes the whole gradient
    assert srcad.grad(first_of_a_tie)(0.0) == pytest.approx(1.0 + 3.0)
    assert srcad.jvp(first_of_a_tie, (0.0,), (1.0,))[1] == pytest.approx(4.0)
    assert srcad.grad(first_of_a_tie)(1.0) == pytest.approx(2.0 + 1.0)


def max_of_three(t):
    return max(t, 0.1, t * t)


def test_python_max_of_more_than_two_is_refused_by_name():
    with pytest.raises(srcad.TransformError, match="max: arguments not supported"):
        srcad.grad(max_of_three)(0.5)
