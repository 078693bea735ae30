"""``map`` and ``functools.reduce`` (srcad/transform/normalize/functional.py): written as
the comprehension and the loop they stand for, differentiated in both modes."""

import functools
import operator
import re
from functools import reduce

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])
MATS = [
    np.array([[0.5, -0.2], [0.3, 0.8]]),
    np.array([[0.1, 0.4], [-0.6, 0.2]]),
    np.array([[0.9, 0.0], [0.3, -0.5]]),
]


def layer(v):
    return np.tanh(v) * 1.5


def mapped_ufunc(x):
    ys = list(map(np.tanh, [x, 2.0 * x]))
    return np.sum(ys[0] * ys[1])


def mapped_lambda(x):
    ys = list(map(lambda v: v * v, [x, np.sin(x)]))
    return np.sum(ys[0] + ys[1])


def mapped_over_two(x):
    pairs = map(lambda a, b: a * b, [x, x + 1.0], [np.cos(x), x])
    return sum(np.sum(p) for p in pairs)


def mapped_helper(x):
    total = 0.0
    for h in map(layer, [x, x * x]):
        total = total + np.sum(h)
    return total


def mapped_local_function(x):
    scale = np.sum(x)

    def scaled(v):
        return v * scale

    return np.sum(np.stack(tuple(map(scaled, [x, np.exp(x)]))))


def mapped_sum(x):
    return sum(map(np.sum, [x, x * x, np.sin(x)]))


def reduced_with_start(x):
    return functools.reduce(lambda acc, v: acc + np.sum(v**2), [x, 2.0 * x, np.sin(x)], 0.0)


def reduced_display(x):
    return np.sum(reduce(lambda a, b: a * b, [x, np.sin(x), x + 1.0]))


def reduced_name(x):
    parts = [x, np.cos(x), x * x]
    return np.sum(reduce(operator.mul, parts))


def reduced_matmul(w):
    chain = functools.reduce(np.matmul, [w, w.T, w])
    return np.sum(np.tanh(chain))


def reduced_helper(x):
    def step(h, v):
        return np.tanh(h + v)

    return np.sum(reduce(step, [x, np.sin(x), x * 0.5], np.zeros_like(x)))


def reduced_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + reduce(lambda a, b: a + np.sum(b) * k, [x, x * x], 0.0)
    return total


def reduced_in_a_condition(x):
    if reduce(np.add, [x, x]).sum() > 0:
        return np.sum(x**3)
    return np.sum(x)


def reduced_nested(x):
    inner = [reduce(operator.add, [x, np.sin(x)]), x * x]
    return np.sum(reduce(operator.mul, inner))


def reduced_of_mapped(x):
    return np.sum(reduce(operator.add, map(lambda v: np.exp(v * 0.5), [x, -x]), 0.0))


FIRST_ORDER = [
    mapped_ufunc,
    mapped_lambda,
    mapped_over_two,
    mapped_helper,
    mapped_local_function,
    mapped_sum,
    reduced_with_start,
    reduced_display,
    reduced_name,
    reduced_helper,
    reduced_in_a_loop,
    reduced_in_a_condition,
    reduced_nested,
    reduced_of_mapped,
]


@pytest.mark.parametrize("f", FIRST_ORDER, ids=lambda f: f.__name__)
def test_map_and_reduce_differentiated(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    # the derivative's value is the function's
    value, _ = srcad.value_and_grad(f)(X.copy())
    assert np.allclose(value, f(X.copy()))


@pytest.mark.parametrize("f", [mapped_lambda, reduced_display, reduced_helper, mapped_over_two])
def test_map_and_reduce_second_order(f):
    srcad.check_grad(f, X.copy(), order=2, modes=("rev", "fwd"))


def test_reduce_of_matrices():
    srcad.check_grad(reduced_matmul, MATS[0].copy(), modes=("rev", "fwd"))


def _code(f) -> str:
    """The generated code of ``f``'s gradient without its comments (which quote ``f``)."""
    text = srcad.source(srcad.grad(f))
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))


def test_the_generated_code_reads_as_the_loop():
    text = _code(reduced_with_start)
    assert not re.search(r"\b(reduce|lambda)\b", text)
    assert "acc" in text  # the lambda's parameter names the accumulator
    assert not re.search(r"\b(map|lambda)\b", _code(mapped_lambda))


def stacked_copy(x):
    xs = [x, x * x]
    return np.sum(np.stack(list(xs)) * np.concatenate(tuple(xs))[:3])


def summed_copy(x):
    ys = [np.sin(v) for v in [x, 2.0 * x]]
    return np.sum(sum(list(ys)))


@pytest.mark.parametrize("f", [stacked_copy, summed_copy])
def test_a_copy_of_a_list_given_to_numpy_is_the_list(f):
    # np.stack(list(map(f, xs))): the op only reads the copy (was refused: "'arrays' must
    # be a list or tuple written out in the call")
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))


def refused_lazy(x):
    return np.sum(x) if np.sum(x) > 5 else reduce(operator.add, [x, x]).sum()


def refused_default(x):
    return reduce(lambda a, b=1.0: a * b, [x, x]).sum()


def refused_arity(x):
    return np.sum(list(map(lambda a, b: a * b, [x, x]))[0])


def refused_while(x):
    while reduce(operator.add, [x, x]).sum() > 10.0:
        x = x * 0.5
    return np.sum(x)


def refused_no_start(x):
    return np.sum(reduce(operator.add, {"a": x, "b": np.sin(x)}.values()))


@pytest.mark.parametrize(
    "f, message",
    [
        (refused_lazy, "functools.reduce evaluated on some paths only"),
        (refused_default, "functools.reduce of a lambda taking other than two plain"),
        (refused_arity, "map of a lambda taking other than 1 plain parameters"),
        (refused_while, "functools.reduce in a while condition"),
        (refused_no_start, "functools.reduce without an initial value"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_forms_not_written_out_are_refused_by_name(f, message):
    with pytest.raises(srcad.TransformError) as info:
        srcad.grad(f)(X.copy())
    assert message in str(info.value)
    assert "test_map_reduce.py:" in str(info.value)


def forward_through(layers, h):
    return reduce(lambda a, w: np.tanh(w @ a), layers, h)


def mlp_by_reduce(w1, w2, x):
    return np.sum(forward_through([w1, w2], x) ** 2)


def test_reduce_in_a_helper_over_layers():
    # a helper folding layers (written out where it is called, at second order too)
    w1, w2 = MATS[0].copy(), MATS[1].copy()
    x = np.array([0.4, -0.3])
    srcad.check_grad(mlp_by_reduce, w1, w2, x, wrt=(0, 1, 2), modes=("rev", "fwd"))
    srcad.check_grad(mlp_by_reduce, w1, w2, x, wrt=(0, 1), order=2, modes=("rev",))


# Python's max(xs) and min(xs) of a sequence (refused as "max: arguments not supported"
# until stop 33): the reduce of max(a, b), which keeps the first of equal values


def max_of_a_generator(x):
    return max(np.sum(r**2) for r in x)


def min_of_a_display(x):
    a, b, c = np.sum(x[0]), np.sum(x[1] * 2), np.sum(x[0] * x[1])
    return min([a, b, c]) + max(a, b)


def extrema_of_a_list(x):
    vals = []
    for r in x:
        vals.append(np.sum(np.sin(r)))
    return max(vals) * min(vals)


ROWS = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4], [0.1, 0.9, -0.3]])


@pytest.mark.parametrize(
    "f", [max_of_a_generator, min_of_a_display, extrema_of_a_list], ids=lambda f: f.__name__
)
def test_max_and_min_of_a_sequence(f):
    srcad.check_grad(f, ROWS.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, ROWS.copy(), modes=("rev", "fwd"), order=2)


def test_max_of_a_sequence_takes_the_first_of_equal_values():
    # rows 0 and 2 have the same sum of squares: Python's max returns row 0's
    rows = np.array([[1.0, 2.0], [0.5, 0.5], [2.0, 1.0]])
    g = srcad.grad(max_of_a_generator)(rows)
    assert np.allclose(g, [[2.0, 4.0], [0.0, 0.0], [0.0, 0.0]])
    s = np.sin(ROWS).sum(axis=1)
    g = srcad.grad(extrema_of_a_list)(ROWS.copy())
    expected = np.zeros_like(ROWS)
    expected[s.argmax()] += np.cos(ROWS[s.argmax()]) * s.min()
    expected[s.argmin()] += np.cos(ROWS[s.argmin()]) * s.max()
    assert np.allclose(g, expected)
