"""Forward mode and second order of the ops a one-expression check cannot reach: in-place
updates, lists, computed indices, ``float``; each against central finite differences."""

import numpy as np
import pytest
from opcheck import check_function_second_order, check_jvp, rand


def set_element(x, v):
    y = x * 2.0
    y[0] = v * 3.0
    return y * y


def set_slice_broadcast(x, v):
    y = np.sin(x)
    y[1:3] = v
    return y


def add_to_slice(x, v):
    y = np.sin(x)
    y[1:3] += v
    return y**3


def set_constant(x):
    y = np.tanh(x)
    y[0] = 5.0
    return y * x


def masked(x):
    y = x * x
    y[y > 0.25] = 0.0
    return y * x


def fill_zeros_in_loop(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * (i + 1.0)
    return out


def rows_of_matrix(x, v):
    y = np.ones((3, 2)) * x
    y[1] = v
    y[:, 0] = y[:, 1] * v[0]
    return y


def appended(x):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0))
    return np.stack(parts, axis=1)


def appended_onto_constant(x, c):
    parts = []
    parts.append(c)
    for i in range(2):
        parts.append(np.sin(x) * (i + 1.0))
    return np.concatenate(parts)


def list_items(x, y):
    items = [x, np.sin(y), x * y]
    return items[0] * items[2] + items[-2]


def stacked_list(x, y):
    items = [x, y * 2.0, x * y]
    return np.stack(items, axis=-1)


def concatenated_list(x, y):
    items = [x, y, x * y]
    return np.concatenate(items, axis=1)


def builtin_sum_of_list(x, y):
    items = [x * x, np.sin(y), x * y]
    return sum(items)


def builtin_sum_of_array(x):
    return sum(x * x)


def computed_slice(x, n, m, k):
    return x[n:m] ** 2 + x[k] * 2.0


def integer_array_index(x, idx):
    return x[idx] ** 2


def boolean_mask(x, mask):
    return x[mask] * x[mask]


def as_python_float(x):
    return float(x[0]) * np.sin(x)


def update_of_a_row(x):
    y = x * 1.0
    y[0] = y[0] * y[1]
    return np.sin(y) * x


def updates_in_a_while_loop(x):
    y = x * 1.0
    k = 0
    while np.sum(y * y) < 40.0:
        y[k % 3] = y[k % 3] * 2.0 + np.sin(y[(k + 1) % 3])
        k = k + 1
    return y * x


def list_read_in_a_loop(x):
    items = []
    for i in range(3):
        items.append(np.sin(x * (i + 1.0)))
    s = x * 0.0
    for i in range(3):
        s = s + items[i] * items[i][0]
    return s


def list_in_a_branch(x, y):
    if np.sum(x) > 0.0:
        items = [x * x, np.sin(y)]
    else:
        items = [np.cos(x), y]
    return items[0] * items[1]


def list_grown_in_a_while_loop(x):
    items = [x]
    u = x
    while np.sum(u * u) < 20.0:
        u = u * 1.5 + 0.1
        items.append(u)
    return np.stack(items) * items[-1]


def tuple_of_a_list(x):
    items = []
    for i in range(2):
        items.append(x * (i + 0.5))
    t = tuple(items)
    return t[0] * t[1]


def vstack_of_a_list(x):
    items = [x, np.sin(x), x * x]
    return np.vstack(items)


CASES = [
    (set_element, (rand(4), 0.7)),
    (set_slice_broadcast, (rand(4), rand(1, seed=1))),
    (add_to_slice, (rand(4), rand(2, seed=1))),
    (set_constant, (rand(3),)),
    (masked, (rand(5, seed=3),)),
    (fill_zeros_in_loop, (rand(4),)),
    (rows_of_matrix, (rand(2), rand(2, seed=1))),
    (appended, (rand(3),)),
    (appended_onto_constant, (rand(3), np.ones(2))),
    (list_items, (rand(3), rand(3, seed=1))),
    (stacked_list, (rand(3), rand(3, seed=1))),
    (concatenated_list, (rand(2, 3), rand(2, 3, seed=1))),
    (builtin_sum_of_list, (rand(3), rand(2, 3, seed=1))),
    (builtin_sum_of_array, (rand(4, 3),)),
    (computed_slice, (rand(6), 1, 4, 5)),
    (integer_array_index, (rand(4), np.array([0, 2, 2, 3]))),
    (boolean_mask, (rand(5), np.array([True, False, True, True, False]))),
    (as_python_float, (rand(3),)),
    (update_of_a_row, (rand(2, 3),)),
    (updates_in_a_while_loop, (rand(3) + 1.0,)),
    (list_read_in_a_loop, (rand(3),)),
    (list_in_a_branch, (rand(3), rand(3, seed=1))),
    (list_in_a_branch, (-2.0 - rand(3), rand(3, seed=1))),
    (list_grown_in_a_while_loop, (rand(3) + 1.0,)),
    (tuple_of_a_list, (rand(3),)),
    (vstack_of_a_list, (rand(3),)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_forward_against_finite_differences(f, args):
    wrt = tuple(k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    check_jvp(f, args, wrt)
    if len(wrt) > 1:
        # one argument varying alone: rules read zeros for the others' tangents
        for k in wrt:
            check_jvp(f, args, (k,))


# Second order of these statements, in all four combinations of modes (generated code's
# in-place restores and list-gradient helpers differentiated again: issue #17).
@pytest.mark.parametrize(
    "f, args",
    [pytest.param(f, args, id=f.__name__) for f, args in CASES],
)
def test_second_order(f, args):
    check_function_second_order(f, args)
