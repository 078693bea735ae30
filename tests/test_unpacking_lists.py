"""Unpacking lists and tuples of differentiable values (#17): ``a, b = tuple(items)``,
``list(pair)``, nested targets, ``a, *rest = items``, a loop's ``zip``/``enumerate`` item
bound whole, each against central differences in both modes and at second order; some
three times over (reverse three times, ``jvp(hessian)``), as are ``items.extend(vs)`` and
``items += vs``.

The elements differ in shape (an array and a number): indexing a list that srcad took
for an array once stacked them (``zeros_like(items)``: "inhomogeneous shape").
"""

import numpy as np
import pytest
from opcheck import rand
from test_third_order_rules import (
    _cubed_function,
    check_along_varying_directions,
    check_jvp_of_hessian,
    check_reverse_three_times,
)

import srcad


def tuple_of_a_list(x):
    items = [np.sin(x), np.sum(x * x), np.cos(x)]
    a, b, c = tuple(items)
    return np.sum(a * b + c)


def list_of_a_pair(x):
    pair = [np.sum(np.sin(x)), x * x]
    a, b = list(pair)
    return np.sum(a * b)


def tuple_of_appended_list(x):
    items = []
    for i in range(3):
        items.append(np.sum(x ** (i + 1.0)) if i == 1 else x * (i + 1.0))
    a, b, c = tuple(items)
    return np.sum(a * b * c)


def tuple_of_a_list_by_name(x):
    # the copy is a list too: indexing it reads an element, not a row of an array
    items = [np.sin(x), np.sum(x * x)]
    t = tuple(items)
    rest = items[1:]
    return np.sum(t[0] * t[1] + rest[0])


def tuple_of_a_slice(x):
    a, b = tuple(x[:2])
    c, d = list(x[1:3] * x[:2])
    return a * b + np.sin(c) * d


def nested_from_displays(x):
    items = [np.sin(x), np.sum(x * x)]
    (a, b), c = items, np.cos(x)
    return np.sum(a * b + c)


def nested_from_a_list_of_lists(x):
    items = [[np.sin(x), np.sum(x * x)], np.cos(x)]
    (a, b), c = items
    inner = items[0]
    return np.sum(a * b + c * inner[1])


def loop_over_a_list_of_lists(x):
    pairs = [[np.sin(x), np.sum(x * x)], [np.cos(x), x]]
    s = 0.0
    for a, b in pairs:
        s = s + np.sum(a * b)
    c, d = pairs[1]
    return s * np.sum(c * d)


def nested_starred(x):
    items = [[np.sin(x), x * x, np.sum(x)], np.cos(x)]
    (a, *b), c = items
    return np.sum(a * b[0] * c) * b[1]


def starred_rest(x):
    items = [np.sin(x), np.sum(x * x), np.cos(x)]
    a, *rest = items
    return np.sum(a * rest[0] + rest[1]) * len(rest)


def starred_middle(x):
    items = [np.sin(x), np.sum(x * x), np.cos(x), x]
    a, *middle, z = tuple(items)
    return np.sum(a * middle[0] + middle[1] * z)


def starred_first(x):
    *init, z = [np.sin(x), np.sum(x * x), x]
    a, b, *empty = init
    return np.sum(z * a * b) + len(empty)


def starred_from_appends(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0) + np.sin(x))
    a, *rest = items
    s = np.sum(a)
    for r in rest:
        s = s * np.sum(r * a)
    return s


def zip_item_bound_whole(x):
    xs = [np.sin(x), x * x]
    ys = [np.sum(np.cos(x)), x]
    s = 0.0
    for p in zip(xs, ys):
        a, b = p
        s = s + np.sum(a * b) * p[1]
    return np.sum(s)


def enumerate_item_bound_whole(x):
    xs = [np.sin(x), x * x, np.sum(x)]
    s = 0.0
    for e in enumerate(xs):
        i, a = e
        s = s + np.sum(a * e[1]) * (i + 1.0)
    return s


X = rand(4, low=-1.0, high=1.0) + 0.3
PROGRAMS = [
    tuple_of_a_list,
    list_of_a_pair,
    tuple_of_appended_list,
    tuple_of_a_list_by_name,
    tuple_of_a_slice,
    nested_from_displays,
    nested_from_a_list_of_lists,
    loop_over_a_list_of_lists,
    nested_starred,
    starred_rest,
    starred_middle,
    starred_first,
    zip_item_bound_whole,
    enumerate_item_bound_whole,
]


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_first_and_second_order(f):
    srcad.check_grad(f, X, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("n", [1, 3])
def test_starred_list_of_a_length_known_at_run_time(n):
    srcad.check_grad(starred_from_appends, X, n, wrt=0, order=2, modes=("fwd", "rev"))


# ---- three times over; with the lists extended by other lists ----


def extended_by_a_display_name(x):
    items = [x]
    vs = [np.sin(x), np.sum(x * x)]
    items.extend(vs)
    return items[0] * items[1] + items[2]


def extended_by_an_appended_list(x):
    items = [x]
    vs = []
    for i in range(2):
        vs.append(np.cos(x) * (i + 1.0))
    items += vs
    return items[0] * items[1] + items[2]


def extended_in_a_loop(x):
    items = []
    for i in range(2):
        vs = [np.sin(x) * i, x * x]
        items.extend(vs)
    a, *rest = items
    return a * rest[0] + rest[1] * rest[2]


THIRD = [
    tuple_of_a_list,
    nested_from_a_list_of_lists,
    starred_middle,
    zip_item_bound_whole,
    extended_by_a_display_name,
    extended_by_an_appended_list,
    extended_in_a_loop,
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("f", THIRD, ids=[f.__name__ for f in THIRD])
def test_third_order(f):
    g = _cubed_function(f, (X,))
    srcad.check_grad(g, X, order=2, modes=("fwd", "rev"))
    check_reverse_three_times(g, (X,))
    check_jvp_of_hessian(g, (X,))


EXTENDED = [extended_by_a_display_name, extended_by_an_appended_list, extended_in_a_loop]


@pytest.mark.parametrize("f", EXTENDED, ids=[f.__name__ for f in EXTENDED])
def test_extended_lists_along_varying_directions(f):
    # (a note said these were refused there; they were not, and are checked here)
    check_along_varying_directions(_cubed_function(f, (X,)), (X,))


# ---- what is refused, by name; Python's errors where the length is wrong ----


def starred_array(x):
    a, *rest = x
    return a * np.sum(rest)


def starred_while_appending(x):
    items = [x]
    for _ in range(2):
        first, *rest, last = items
        items.append(np.sin(last))
    return np.sum(items[-1])


def sorted_pair(x):
    a, b = sorted([np.sum(x), np.max(x)])
    return a * b


def too_few_in_a_display(x):
    a, b, *rest = [x]
    return a * b * len(rest)


def slice_joined(x):
    items = [np.sin(x), x * x]
    joined = items[1:] + [x]
    return np.sum(joined[0])


@pytest.mark.parametrize(
    "f, message",
    [
        (starred_array, r"starred unpacking \('a, \*rest = x'\) is supported for a list"),
        (starred_while_appending, "reading an element of the list 'items' while it is still"),
        (sorted_pair, "no adjoint rule for sorted"),
        (too_few_in_a_display, r"not enough values to unpack \(expected at least 2, got 1\)"),
        (slice_joined, "joining or repeating lists"),
    ],
)
def test_refused_by_name(f, message):
    with pytest.raises(srcad.TransformError, match=message):
        srcad.grad(f)(X)


def wrong_length(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0))
    a, b = tuple(items)
    first, *rest, last = items
    return np.sum(a * b * first * last)


@pytest.mark.parametrize(
    "mode", [srcad.grad, lambda f: lambda x, n: srcad.jvp(f, (x, n), (x, None))]
)
def test_wrong_length_raises_as_python_does(mode):
    assert np.isfinite(wrong_length(X, 2))
    with pytest.raises(ValueError, match="expected 2"):
        mode(wrong_length)(X, 3)
    with pytest.raises(ValueError, match="not enough values|expected 2"):
        wrong_length(X, 1)
    with pytest.raises(ValueError, match="expected 2"):
        mode(wrong_length)(X, 1)
