"""Functions with control flow, differentiated by tests/transform/test_control_flow.py."""

import numpy as np


def branch_on_data(x):
    if np.sum(x) > 0:
        y = np.sin(x) * 2.0
    elif np.sum(x) > -1.0:
        y = x * x
    else:
        y = np.exp(x)
    return np.sum(y)


def branch_on_static(x, n):
    if n > 2:
        y = x * 3.0
    else:
        y = np.tanh(x)
    if n == 0:
        y = y + 1.0
    return np.sum(y * x)


def ternary(x):
    y = np.sin(x) if np.sum(x) > 0 else np.cos(x)
    return np.sum(y * y)


def range_loop(x, start, stop, step):
    s = 0.0
    for i in range(start, stop, step):
        s = s + x[i] * x[i] * i
    return s


def shape_bound_loop(x):
    acc = x * 1.0
    for _ in range(x.shape[0]):
        acc = np.tanh(acc) * x
    return np.sum(acc)


def rows(A, v):
    total = 0.0
    for row in A:
        total = total + np.dot(row, v) ** 2
    return total


def enumerate_rows(A):
    total = 0.0
    for i, row in enumerate(A):
        total = total + np.sum(row) * (i + 1.0)
    return total


def zipped(A, B):
    total = 0.0
    for a, b in zip(A, B):
        total = total + np.sum(a * b)
    return total


def over_tuple(W1, W2, x):
    h = x
    for W in (W1, W2):
        h = np.tanh(W @ h)
    return np.sum(h)


def until_tolerance(x):
    y = x * 4.0
    while np.max(np.abs(y)) > 0.1:
        y = y * 0.5
    return np.sum(y * y)


def with_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
        s = s + np.sin(x[i])
    return s


def with_continue(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        s = s + x[i] ** 2
    return s


def early_returns(x):
    if np.sum(x) > 1.0:
        return np.sum(x * x)
    for i in range(x.shape[0]):
        if x[i] < -0.5:
            return np.sum(np.sin(x)) * 2.0
    return np.sum(x * 3.0)


def loop_else(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 1.5:
            break
        s = s + x[i]
    else:
        s = s * 10.0
    k = 0
    while k < 3:
        s = s * x[k]
        k = k + 1
    else:
        s = s + 1.0
    return s


def rnn(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h * h)


def nested(x, W):
    s = 0.0
    for i in range(x.shape[0]):
        h = x[i] * 1.0
        for _j in range(i + 1):
            if np.sum(h) > 0:
                h = np.tanh(W @ h)
            else:
                h = h * 0.5
        s = s + np.sum(h)
    return s


def zero_iterations(x, n):
    y = x * 2.0
    for _ in range(n):
        y = np.sin(y)
    return np.sum(y)


def while_loop_counter(x, n):
    i = 0
    y = x
    while i < n:
        y = np.sin(y) + x
        i = i + 1
    return np.sum(y)


def accumulate_in_loop(x):
    total = x * 0.0
    for i in range(4):
        total = total + x ** (i + 1.0)
    return np.sum(total)


def no_needed_overwrite(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * 2.0
    return s


def over_reversed(x):
    s = 0.0
    for v in reversed(x):
        s = s + v
    return s


def over_dict_values(x, d):
    s = 0.0
    for v in d.values():
        s = s + np.sum(x) * v
    return s


def checked(x):
    if np.any(x < 0):
        raise ValueError("negative input")
    return np.sum(x * x)


def loop_over_list_argument(x, scales):
    for w in scales:
        x = np.sin(x) * w
    return np.sum(x)


def range_bound_reassigned(x, n):
    for _ in range(n):
        n = n - 1
        x = x * np.cos(x) + n
    return np.sum(x)


def while_inside_for(x):
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i] * 1.0
        while v > 1.0:
            v = v * 0.5
        total = total + v * v
    return total


def branch_uses_value_from_before(x):
    y = np.sin(x)
    for _ in range(2):
        if np.sum(y) > 0:
            y = y * y
        else:
            y = y + x
    return np.sum(y)


def self_copies_in_loop(x, y):
    b = y * 1.0
    for _ in range(3):
        b = b  # noqa: PLW0127
        b = np.sin(b) - x * 0.5
        b = b  # noqa: PLW0127
    return np.sum(b * b)


def shrink_with_sin(x):
    y = x * 4.0
    while np.max(np.abs(y)) > 0.1:
        y = np.sin(y) * 0.5
    return np.sum(y * y)


def scalar_from_loop_times_array(x, y, w):
    """Found by fuzzing: an exact gradient and a broadcast one were once added unreduced."""
    a = x * 1.0
    for i in range(2):
        b = np.tanh(np.cos(x[i]))
    if np.sum(y) > 1.07:
        return np.sum(y * w)
    else:
        c = np.sin(b)
    return np.sum((a + b * c) * w)
