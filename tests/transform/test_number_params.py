"""``z = x; z += y`` with ``x`` a parameter: differentiated for a number, arrays refused."""

import numpy as np
import pytest

import srcad


def through_another_name(x, y):
    z = x
    z += y
    return z * 2.0 + x * 3.0  # x is still the number it was


def test_a_python_float_parameter_updated_through_another_name():
    assert through_another_name(1.0, 2.0) == 9.0
    assert srcad.grad(through_another_name, wrt=(0, 1))(1.0, 2.0) == (5.0, 2.0)
    assert srcad.jvp(through_another_name, (1.0, 2.0), (1.0, 0.0)) == (9.0, 5.0)
    assert srcad.check_grad(through_another_name, 1.0, 2.0, wrt=(0, 1), modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(through_another_name, 1.0, 2.0, wrt=(0, 1), order=2) < 1e-6
    assert srcad.grad(through_another_name)(np.float64(1.0), 2.0) == 5.0  # immutable too


@pytest.mark.parametrize("x", [np.array(1.0), np.ones(3)], ids=["0-d", "1-d"])
def test_an_array_there_is_refused_by_name(x):
    # NumPy would change x too: srcad says so rather than differentiate another function
    message = r"in-place update of 'z', which may share memory with 'x'.*'x' holds an array"
    with pytest.raises(srcad.UnsupportedConstructError, match=message) as info:
        srcad.grad(through_another_name)(x, 2.0)
    assert info.value.lineno == through_another_name.__code__.co_firstlineno + 2
    assert "^" in str(info.value)
    with pytest.raises(srcad.UnsupportedConstructError, match=message):
        srcad.jvp(through_another_name, (x, 2.0), (x, 0.0))


def through_a_local(x, y):
    w = x * 1.0
    z = w
    z += y
    return z + w  # w is not a parameter: refused when the function is transformed


def test_a_local_name_read_later_is_still_refused():
    with pytest.raises(srcad.TransformError, match="in-place update of 'z'"):
        srcad.grad(through_a_local)(1.0, 2.0)
