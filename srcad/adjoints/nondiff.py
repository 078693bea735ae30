"""Ops whose outputs carry no gradient: shapes, comparisons, integer-valued functions."""

import builtins
import math

import numpy as np

from srcad.adjoints.registry import Attribute, Method, Operator, nondifferentiable
from srcad.runtime.attempts import attempted
from srcad.runtime.guards import number_argument

# ---- integer- and boolean-valued elementwise functions ----
nondifferentiable(  # np.sign has a rule in complex.py (z / |z| varies for complex z)
    np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix,
    np.isnan, np.isinf, np.isfinite, np.signbit, np.isneginf, np.isposinf,
    np.isclose, np.allclose, np.array_equal, np.array_equiv,
    np.iscomplex, np.iscomplexobj, np.isreal, np.isrealobj, np.isscalar,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.floor_divide, Operator("FloorDiv"), math.floor, math.ceil, math.trunc,
    Operator("Not"), Operator("Invert"), Operator("BitAnd"), Operator("BitOr"), Operator("BitXor"),
)  # fmt: skip

# ---- index-valued reductions and searches ----
nondifferentiable(
    np.argmax, np.argmin, np.argsort, np.nonzero, np.flatnonzero, np.count_nonzero,
    np.any, np.all, np.argpartition, np.argwhere, np.searchsorted,
    Method("argmax"), Method("argmin"), Method("argsort"), Method("argpartition"),
    Method("any"), Method("all"), Method("nonzero"), Method("round"),
)  # fmt: skip

# ---- array creation from shapes alone (the fill value of np.full/full_like, the ends
# of np.linspace and the entries of np.r_/np.c_ have rules in creation.py) ----
nondifferentiable(
    np.zeros, np.ones, np.empty, np.eye, np.identity,
    np.zeros_like, np.ones_like, np.empty_like,
)  # fmt: skip

# ---- shapes, sizes and types ----
nondifferentiable(
    np.shape, np.ndim, np.size, np.result_type,
    builtins.len, builtins.int, builtins.bool, builtins.round, builtins.range,
    builtins.slice, builtins.isinstance, builtins.type,
    Attribute("shape"), Attribute("ndim"), Attribute("size"), Attribute("dtype"),
)  # fmt: skip

# ---- the marker of a ``try`` lowered to a branch (a decision, not a value) ----
nondifferentiable(attempted)

# ---- the check that a parameter updated through another name holds a number ----
nondifferentiable(number_argument)
