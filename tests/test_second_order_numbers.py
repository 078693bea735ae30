"""Second order where a differentiated argument is a Python float reduced by NumPy
(``np.sum(y)`` of a float ``y``): the reduction's rule in the code differentiated again
summed the float's cotangent to a Python float and read its ``dtype`` (campaign seed
4100244: ``AttributeError: 'float' object has no attribute 'dtype'`` from
``srcad/runtime/higher.py``, in both the written and the minimized program)."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, 0.8])


def reduced_float_scales(x, y):
    return np.sum(x * np.sum(y))


def reduced_float_written_in(x, y):
    u = np.sin(x) * y
    u[1] = np.sum(y) * 0.28
    return np.sum(u * x)


@pytest.mark.parametrize("f", [reduced_float_scales, reduced_float_written_in])
def test_a_python_float_reduced_by_numpy_at_second_order(f):
    srcad.check_grad(f, X, 0.7, wrt=(0, 1), order=2, modes=("rev", "fwd"))
    hessian = srcad.hessian(f, wrt=1)(X, 0.7)
    assert np.ndim(hessian) == 0
