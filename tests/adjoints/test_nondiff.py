"""Non-differentiable values pass through without adjoints and without errors."""

import builtins
import math

import numpy as np
from opcheck import check, make_function, rand

import srcad
from srcad.adjoints.registry import (
    Attribute,
    Method,
    Operator,
    is_nondifferentiable,
    nondifferentiable_ops,
)


def test_shape_reads_are_constants():
    check("x * x.shape[0] / x.size + x.ndim", rand(2, 3))


def test_comparisons_feed_where():
    check("np.where(np.abs(x) > 0.5, np.sin(x), x * 2.0)", rand(2, 3))


def test_sign_floor_and_arange_carry_no_gradient():
    check("x * np.sign(x) + np.floor(x) + np.arange(3)", rand(3))
    f = make_function("np.sum(np.round(x))", "x")
    np.testing.assert_array_equal(srcad.grad(f)(rand(3)), np.zeros(3))


def test_argmax_index():
    f = make_function("x[np.argmax(x)] * 3.0", "x")
    x = np.array([0.1, 0.9, 0.3])
    np.testing.assert_allclose(srcad.grad(f)(x), [0.0, 3.0, 0.0])


# ---- every op declared without gradient: a documented reason, checked where it can be ----

_BOOLEAN_OR_INTEGER = [
    np.isnan, np.isinf, np.isfinite, np.signbit, np.isneginf, np.isposinf, np.iscomplex,
    np.iscomplexobj, np.isreal, np.isrealobj, np.isscalar, np.logical_not, np.argmax,
    np.argmin, np.argsort, np.flatnonzero, np.count_nonzero, np.any, np.all, np.argwhere,
    np.shape, np.ndim, np.size, len, builtins.bool, builtins.int, builtins.round,
    math.floor, math.ceil, math.trunc,
]  # fmt: skip
_BOOLEAN_OR_INTEGER_BINARY = [
    np.isclose, np.allclose, np.array_equal, np.array_equiv, np.logical_and, np.logical_or,
    np.logical_xor, np.equal, np.not_equal, np.less, np.less_equal, np.greater,
    np.greater_equal, np.searchsorted,
]  # fmt: skip
#: float results, constant between jumps: the derivative is 0 wherever it exists
_PIECEWISE_CONSTANT = [
    np.sign, np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix,
]  # fmt: skip
#: values made from shapes (or a dtype) alone
_FROM_SHAPES = [np.zeros, np.ones, np.empty, np.eye, np.identity]
_LIKE = [np.zeros_like, np.ones_like, np.empty_like]
#: not called with arrays in a way the checks below can do: what they give
_OTHER = {
    np.nonzero: "indices", np.argpartition: "indices", np.floor_divide: "piecewise constant",
    np.result_type: "a dtype", builtins.range: "integers", builtins.isinstance: "a bool",
    builtins.type: "a type", np.s_: "slices", np.index_exp: "slices", builtins.slice: "a slice",
    np.fft.fftfreq: "frequencies from a length", np.fft.rfftfreq: "frequencies from a length",
}  # fmt: skip
_KEYS = {
    Operator(n) for n in ("FloorDiv", "Not", "Invert", "BitAnd", "BitOr", "BitXor")
} | {Attribute(n) for n in ("shape", "ndim", "size", "dtype")} | {
    Method(n) for n in ("argmax", "argmin", "argsort", "argpartition", "any", "all", "nonzero")
}  # fmt: skip


def test_every_nondifferentiable_op_has_a_reason():
    documented = {
        id(op)
        for op in [*_BOOLEAN_OR_INTEGER, *_BOOLEAN_OR_INTEGER_BINARY, *_PIECEWISE_CONSTANT]
        + [*_FROM_SHAPES, *_LIKE, *_OTHER]
    }
    for key in nondifferentiable_ops():
        if key in _KEYS or id(key) in documented:
            continue
        # srcad's own helpers in generated code: shapes, indices, axes, shares of ties
        assert getattr(key, "__module__", "").startswith("srcad."), key


def test_declared_outputs_are_boolean_integer_or_constant():
    x = np.array([[0.3, -0.7], [1.1, 2.6]])
    for f in _BOOLEAN_OR_INTEGER:
        value = f(x[0, 0]) if f.__module__ in ("math", "builtins") and f is not len else f(x)
        assert np.asarray(value).dtype.kind in "biu", f
    for f in _BOOLEAN_OR_INTEGER_BINARY:
        value = f(np.sort(x.ravel()), x) if f is np.searchsorted else f(x, x * 0.5)
        assert np.asarray(value).dtype.kind in "biu", f
    for f in _PIECEWISE_CONSTANT:
        np.testing.assert_array_equal(f(x), f(x + 1e-7))
    for f in _FROM_SHAPES[:2] + _LIKE[:2]:
        arg = x if f in _LIKE else 2
        np.testing.assert_array_equal(f(arg), f(arg * 3.0 + 1.0 if f in _LIKE else arg))


def test_ops_whose_values_follow_their_arguments_are_not_declared_nondifferentiable():
    for op in (np.arange, np.linspace, np.full, np.full_like, np.r_, np.c_, np.mgrid, np.ogrid):
        assert not is_nondifferentiable(op), op
