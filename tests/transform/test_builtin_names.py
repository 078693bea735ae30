"""A variable named as a Python builtin (``slice = 2.0``, ``len = 3``, ``max = ...``) is
renamed (``slice_``) before srcad writes code that calls builtins by name: it was a
``TypeError: 'float' object is not callable`` from the generated ``slice(...)`` of an index
until stop 30, in the function and in a helper written out. Parameters keep their names."""

import numpy as np
import pytest

import srcad

X3 = np.array([1.0, 2.0, 3.0])


def slice_named_variable(x):
    slice = 2.0
    u = x * slice
    u[1:] = x[:2] ** 2
    return np.sum(u * u)


def helper_with_a_slice_variable(v):
    slice = 2.0
    u = v * slice
    u[1:] = v[:2] ** 2
    return u


def calls_the_helper(x):
    return np.sum(helper_with_a_slice_variable(x) ** 2)


def len_and_max_named_variables(x):
    len = 3
    max = np.max(x)
    return np.sum(x[:len] * max)


def builtin_named_parameter(x, input=2.0):
    return np.sum(x[1:] * input)


FUNCTIONS = [
    slice_named_variable,
    calls_the_helper,
    len_and_max_named_variables,
    builtin_named_parameter,
]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_variable_named_as_a_builtin_is_differentiated(f):
    srcad.check_grad(f, X3.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X3.copy(), order=2, modes=("rev",))


def test_the_renamed_variable_reads_as_the_users():
    text = srcad.source(srcad.grad(len_and_max_named_variables))
    assert "len_ = 3" in text and "max_ = xp.max(x)" in text
    assert "def value_and_grad_len_and_max_named_variables(x)" in text
