"""``tuple(x)`` and ``list(x)`` of an array: a sequence of its rows. Reverse mode refused
it at run time with a TypeError ("tuple()/list() of a ndarray cannot be differentiated"),
and a loop over it crashed in the generated code (a tuple's zero gradient was a float);
forward mode's ``np.array(tuple(x))`` took the tuple of tangents for the array's tangent,
which ``* 2`` repeated (stop 28). Checked in both modes and at second order."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.5, 0.9])
W = np.array([0.2, 0.5, 0.7])


def array_of_the_sequence(x):
    return np.sum((np.array(tuple(x)) ** 2 * 0.5 + np.asarray(list(x)) * x) * W)


def unpacked(x):
    a, b, c = tuple(x)
    return a * b + c**2


def rows_of_a_matrix(x):
    rows = list(x.reshape(3, 1) * x)
    return np.sum(rows[0] * rows[2])


def looped_over(x):
    total = 0.0
    for v in tuple(x):
        total = total + v * v
    return total


@pytest.mark.parametrize("f", [array_of_the_sequence, unpacked, rows_of_a_matrix, looped_over])
def test_a_sequence_of_an_arrays_rows(f):
    srcad.check_grad(f, X, modes=("rev", "fwd"), order=2)
