"""Reverse mode three times over lists and arrays stacked in loops (#17), against central
differences with the helpers of test_third_order_rules.py, and each program at first and
second order in both modes.

They once failed in add_gradients or ``+`` of a list gradient: the zero of a list was a
plain list (whose ``+`` joins), and the zero of a list name before its first assignment is
the number 0.0 (``zeros_like(None)``), which went on a tape and met a list gradient; or were
refused: a list's index taken for a value that varies, a tangent list made afresh in each
turn taken for one still being appended to.
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


def stack_numbers_in_a_loop(x):
    # (fuzz seed 160, shrunk): generated code indexes the list ``unstack`` gives, making
    # its gradient an array, which code differentiated again added to a list's zero
    a = x * 1.0
    for _i in range(1):
        a = np.array([np.sum(a**3), 0.5, 1.0]) ** 2
    return a


def stack_numbers_in_a_loop_twice(x):
    a = x * 1.0
    for _i in range(2):
        a = np.array([np.sum(np.sin(a)), np.max(a), 1.0]) * a[0]
    return a


def list_stacked_in_nested_loops(x):
    # a list made afresh in each outer turn: its zero before the first turn went on a tape;
    # forward over reverse reads its tangent list, made afresh by ``zero_tangent`` (once
    # refused as a list read while it is still being appended to)
    out = x * 1.0
    for _j in range(2):
        parts = []
        for i in range(2):
            parts.append(out * (i + 1.0) + np.sin(out))
        out = np.stack(parts)[1] * parts[0]
    return out


def ragged_pieces_in_a_loop(x):
    a = x * 1.0
    for _i in range(2):
        c = np.concatenate([a * a, np.sin(a[:2])])
        a = c[:4] * c[2:]
    return a


def list_read_backwards_in_a_loop(x):
    # the index ``2 - i`` of the code differentiated again comes off a tape: once taken for
    # a value that varies, so that reverse mode three times was refused
    items = []
    for i in range(3):
        items.append(x * (i + 1.0) + np.cos(x))
    s = x * 1.0
    for i in range(3):
        s = s * items[i] + items[2 - i][1]
    return s


def list_read_in_a_branch(x):
    items = [x, x * x]
    if np.sum(x) > 0:
        items.append(np.sin(x))
    else:
        items.append(np.cos(x))
    return items[2] * items[1] + items[0]


PROGRAMS = [
    stack_numbers_in_a_loop,
    stack_numbers_in_a_loop_twice,
    list_stacked_in_nested_loops,
    ragged_pieces_in_a_loop,
    list_read_backwards_in_a_loop,
    list_read_in_a_branch,
]
ARGS = (rand(4, low=-1.0, high=1.0) + 0.3,)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("probe", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_reverse_three_times(probe):
    check_reverse_three_times(_cubed_function(probe, ARGS), ARGS)


@pytest.mark.parametrize("probe", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_forward_over_reverse_three_times(probe):
    f = _cubed_function(probe, ARGS)
    check_jvp_of_hessian(f, ARGS)
    check_along_varying_directions(f, ARGS)


@pytest.mark.parametrize("probe", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_first_and_second_order(probe):
    srcad.check_grad(_cubed_function(probe, ARGS), *ARGS, order=2, modes=("fwd", "rev"))
