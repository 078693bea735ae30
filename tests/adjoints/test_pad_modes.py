"""np.pad's modes (srcad/adjoints/shape.py): constant (with constant_values), edge, reflect,
symmetric and wrap fold the padding's gradient back onto the entries it copied; the other
modes are refused by name."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opcheck import check

import srcad

X = np.random.default_rng(5).uniform(-1.0, 1.0, size=(3, 4))
PADDED = np.arange(1.0, 43.0).reshape(6, 7)


def default(x):
    return np.sum(np.sin(np.pad(x, 1)) * np.arange(30.0).reshape(5, 6))


def constant(x):
    return np.sum(np.pad(x * x, ((1, 2), (0, 1)), mode="constant", constant_values=0.5) ** 2)


def edge(x):
    return np.sum(np.pad(x, ((1, 2), (2, 1)), mode="edge") * PADDED)


def reflect(x):
    return np.sum(np.pad(x, 2, "reflect") ** 3)


def symmetric(x):
    return np.sum(np.pad(x, ((2, 1), (1, 2)), mode="symmetric") ** 3)


def wrap(x):
    return np.sum(np.pad(x, ((4, 1), (2, 9)), mode="wrap") ** 3)


def one_axis(x):
    return np.sum(np.pad(np.sin(x), ((0, 0), (3, 3)), mode="reflect") ** 2)


@pytest.mark.parametrize(
    "f", [default, constant, edge, reflect, symmetric, wrap, one_axis], ids=lambda f: f.__name__
)
def test_pad_modes(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"), order=2)


def test_closed_form_edge_folds_the_copies_back():
    g = srcad.grad(lambda x: np.sum(np.pad(x, 2, mode="edge")))(np.zeros(3))
    np.testing.assert_allclose(g, [3.0, 1.0, 3.0])  # each end copied twice
    g = srcad.grad(lambda x: np.sum(np.pad(x, (1, 2), mode="wrap") * np.arange(6.0)))(np.zeros(3))
    # padded = [x2, x0, x1, x2, x0, x1]
    np.testing.assert_allclose(g, [1.0 + 4.0, 2.0 + 5.0, 0.0 + 3.0])


def test_the_tangent_pads_the_tangent():
    _, t = srcad.jvp(lambda x: np.pad(x, (2, 1), mode="reflect"), (np.zeros(3),), (np.arange(3.0),))
    np.testing.assert_allclose(t, np.pad(np.arange(3.0), (2, 1), mode="reflect"))


@settings(max_examples=15)
@given(
    mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]),
    widths=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=2),
    seed=st.integers(0, 2**16),
)
def test_pad_widths(mode, widths, seed):
    x = np.random.default_rng(seed).uniform(0.5, 1.5, (2, 3))
    check(f"np.pad(x * x, {tuple(widths)!r}, mode={mode!r})", x)


def linear_ramp(x):
    return np.sum(np.pad(x, 1, mode="linear_ramp"))


def maximum(x):
    return np.sum(np.pad(x, 1, "maximum"))


def mode_at_run_time(x, mode):
    return np.sum(np.pad(x, 1, mode=mode))


def varying_constant(x, c):
    return np.sum(np.pad(x, 1, constant_values=c) ** 2)


@pytest.mark.parametrize("f, mode", [(linear_ramp, "linear_ramp"), (maximum, "maximum")])
def test_other_modes_are_refused_by_name(f, mode):
    for derivative in (srcad.grad(f), lambda x: srcad.jvp(f, (x,), (x,))):
        with pytest.raises(srcad.TransformError, match=f"np.pad with mode='{mode}' cannot be"):
            derivative(X.copy())


def test_a_mode_computed_at_run_time_is_refused():
    with pytest.raises(srcad.TransformError, match="mode computed at run time"):
        srcad.grad(mode_at_run_time)(X.copy(), "edge")


def test_a_varying_constant_value_is_refused_by_name():
    with pytest.raises(srcad.TransformError, match="'constant_values' is not implemented"):
        srcad.grad(varying_constant, wrt=(0, 1))(X.copy(), 0.3)
    # a constant one pads with that constant, and gets no gradient of its own
    g = srcad.grad(varying_constant)(X.copy(), 0.3)
    np.testing.assert_allclose(g, 2 * X)
