"""A chained assignment (``a = b = x * y``) binds one object to every name, and ``d[k] += v``
changes the array ``d[k]`` holds in place (NumPy's ``__iadd__``): an update through one
name shows through the others. Until stop 31 srcad took the names of a chain as two arrays,
and ``d[k] += v`` as a new array for ``d[k]``: both silently wrong in both modes."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])
Y = np.array([0.5, 0.2, -0.4])


def chained_updated(x, y):
    a = b = x * y
    a += x * x
    return np.sum(b * x)


def chained_element_updated(x, y):
    a = b = x * y
    b[0] = x[2] * 3.0
    return np.sum(a * x)


def chained_unpacked_updated(x, y):
    a, b = c, d = x * y, x * 2.0
    a += x * x
    return np.sum(c * y) + np.sum(b * d)


def helper_chained(p):
    q = r = p * 1.0
    q += p
    return r


def chained_in_a_helper(x, y):
    return np.sum(helper_chained(x) * y)


def dict_element_updated(x, y):
    u = x * y
    d = {"k": u}
    d["k"] += x * x
    return np.sum(u * x)


def dict_element_scaled(x, y):
    u = x * y
    d = {"k": u, "j": y}
    v = u[:2]
    d["k"] *= np.cos(x)
    return np.sum(v * y[:2])


REFUSED = [
    (chained_updated, "in-place update of 'a', which may share memory with 'b'"),
    (chained_element_updated, "in-place update of 'b', which shares memory with 'a'"),
    (chained_unpacked_updated, "in-place update of 'a', which may share memory with 'c'"),
    (chained_in_a_helper, "in-place update of 'q', which may share memory with 'r'"),
    (dict_element_updated, r"in-place update of d\['k'\], which may share memory with 'u'"),
    (dict_element_scaled, r"in-place update of d\['k'\], which may share memory with"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=lambda v: getattr(v, "__name__", ""))
def test_an_update_through_another_name_of_one_object_is_refused(f, message):
    with pytest.raises(srcad.TransformError, match=message):
        srcad.grad(f)(X, Y)
    with pytest.raises(srcad.TransformError, match=message):
        srcad.jvp(f, (X, Y), (X, Y))


def chained_read(x, y):
    a = b = x * y
    return np.sum(a * b)


def chained_unpacked(x, y):
    a, b = c, d = x * y, np.sin(x)
    return np.sum(a * d) + np.sum(b * c)


def chained_numbers(x, y):
    s = t = 0.5
    s += x[0]  # a Python float: s is a new number, t stays 0.5
    return s * t * x[1]


def chained_rebound(x, y):
    a = b = x * y
    a = a + x  # a new array: b keeps x * y
    return np.sum(a * b)


def dict_element_accumulated(x, y):
    grads = {"W": np.zeros(3), "b": np.zeros(3)}
    for i in range(3):
        grads["W"] += x * y * i
        grads["b"] += np.sin(x)
    return np.sum(grads["W"] * grads["b"])


WORKS = [chained_read, chained_unpacked, chained_numbers, chained_rebound, dict_element_accumulated]


@pytest.mark.parametrize("f", WORKS, ids=lambda f: f.__name__)
def test_chains_and_element_updates_no_one_else_sees_are_differentiated(f):
    assert srcad.check_grad(f, X, Y, wrt=(0, 1), modes=("rev", "fwd")) < 1e-6
    np.testing.assert_allclose(srcad.value_and_grad(f)(X, Y)[0], f(X.copy(), Y.copy()))
