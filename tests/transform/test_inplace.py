"""In-place updates on arrays made inside the function: y[i] = v, y[i] += v, masks, loops."""

import numpy as np
import pytest

import srcad
from srcad.runtime.tape import counting_pushes

RNG = np.random.default_rng(13)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def set_element(x, v):
    y = x * 2.0
    y[0] = v * 3.0
    return np.sum(y * y)


def add_to_slice(x, v):
    y = np.sin(x)
    y[1:3] += v
    return np.sum(y**3)


def masked(x):
    y = x * x
    y[y > 0.25] = 0.0
    return np.sum(y * x)


def read_then_overwrite(x):
    y = np.tanh(x)
    z = y * y  # the backward pass of this needs y before the update below
    y[0] = 5.0
    return np.sum(z) + np.sum(y * x)


def view_then_overwrite(x):
    y = np.exp(x * 0.5)
    head = y[0:2]
    z = np.sin(head)  # reads the view before the update changes its memory
    y[0] = 1.0
    return np.sum(z) + np.sum(y)


def fill_in_loop(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * (i + 1.0)
    return np.sum(out * out)


def cumulative_in_loop(x):
    acc = x * 1.0
    for i in range(1, x.shape[0]):
        acc[i] = acc[i] + acc[i - 1] * 0.5
    return np.sum(acc**2)


def columns(x):
    y = np.ones((x.shape[0], 3))
    y[:, 1] = x
    y[:, 2] = x * x
    return np.sum(np.tanh(y))


def update_argument(x):
    x[0] = 1.0
    return np.sum(x)


def update_view_of_argument(x):
    head = x[0:2]
    head[0] = 1.0
    return np.sum(x)


CASES = [
    (set_element, (vec(4), 0.7), (0, 1)),
    (add_to_slice, (vec(4), vec(2)), (0, 1)),
    (masked, (vec(5),), (0,)),
    (read_then_overwrite, (vec(3),), (0,)),
    (view_then_overwrite, (vec(3),), (0,)),
    (fill_in_loop, (vec(4),), (0,)),
    (cumulative_in_loop, (vec(4),), (0,)),
    (columns, (vec(3),), (0,)),
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_against_finite_differences(fn, args, wrt):
    srcad.check_grad(fn, *args, wrt=wrt)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_inputs_are_never_mutated(fn, args, wrt):
    saved = [np.array(a, copy=True) for a in args]
    srcad.grad(fn, wrt=wrt)(*args)
    out, pullback = srcad.vjp(fn, *args)
    pullback(1.0)
    pullback(1.0)
    for before, after in zip(saved, args):
        np.testing.assert_array_equal(before, after)


def test_overwrite_of_a_needed_value_saves_only_the_overwritten_part():
    with counting_pushes() as pushed:
        srcad.grad(read_then_overwrite)(vec(3))
    assert len(pushed) == 1 and np.shape(pushed[0]) == ()


def test_filling_a_fresh_array_records_nothing():
    with counting_pushes() as pushed:
        srcad.grad(fill_in_loop)(vec(4))
    assert pushed == []


def update_view_of_argument_then_read_it(x):
    head = x[0:2]
    head[0] = 1.0
    return np.sum(head * head)


@pytest.mark.parametrize("fn", [update_argument, update_view_of_argument_then_read_it])
def test_updating_an_argument_works_on_a_copy(fn):
    # (refused until issue #17): the function starts from a copy of the argument, so the
    # caller's array stays as it is, in every API
    x = vec(3)
    before = x.copy()
    assert srcad.check_grad(fn, x, modes=("rev", "fwd")) < 1e-6
    srcad.grad(fn)(x)
    out, pullback = srcad.vjp(fn, x)
    pullback(np.ones_like(out) if np.ndim(out) else 1.0)
    srcad.jvp(fn, (x,), (x,))
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(srcad.value_and_grad(fn)(x)[0], fn(x.copy()))


def test_a_view_of_an_argument_changed_under_it_is_refused_as_any_view():
    with pytest.raises(srcad.TransformError, match="shares memory with 'x' read later"):
        srcad.grad(update_view_of_argument)(vec(3))
