"""Reductions' ``where=`` mask and max/min's ``initial=`` (srcad/adjoints/reductions.py):
entries outside the mask get no gradient; an initial value that is the result is one more
tie, and takes its share where it is differentiated."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(11)
X = RNG.uniform(-1.0, 1.0, size=(3, 4))
MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])


def masked_sum(x):
    return np.sum(np.sum(x * x, axis=0, where=MASK) ** 2)


def masked_sum_method(x):
    return np.sin(x).sum(where=MASK) ** 2


def masked_mean(x):
    return np.sum(np.mean(np.sin(x), axis=1, where=MASK, keepdims=True) ** 2)


def masked_mean_method(x):
    return (x * x).mean(axis=0, where=MASK).sum()


def masked_prod(x):
    return np.sum(np.prod(x, axis=0, where=MASK))


def masked_prod_whole(x):
    return np.prod(x + 2.0, where=MASK)


def masked_prod_method(x):
    return np.sum(x.prod(axis=1, where=MASK) ** 2)


def masked_max(x):
    return np.sum(np.max(x, axis=0, initial=-0.5, where=MASK) ** 2)


def masked_min(x):
    return np.sum(np.min(x * x, axis=1, initial=0.5, where=MASK))


def masked_max_method(x):
    return np.sum(x.max(axis=1, initial=0.0, where=MASK, keepdims=True) ** 3)


def max_from(x):
    return np.sum(np.max(x, axis=0, initial=0.3) ** 2)


CASES = [masked_sum, masked_sum_method, masked_mean, masked_mean_method, masked_prod,
         masked_prod_whole, masked_prod_method, masked_max, masked_min, masked_max_method,
         max_from]  # fmt: skip


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_masked_reductions(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"), order=2)


def test_closed_form_masked_entries_get_nothing():
    g = srcad.grad(lambda x: np.sum(x * x, where=MASK))(X)
    np.testing.assert_allclose(g, np.where(MASK, 2 * X, 0.0))
    g = srcad.grad(lambda x: np.mean(x, axis=0, where=MASK).sum())(X)
    np.testing.assert_allclose(g, MASK / MASK.sum(axis=0))
    x = np.array([[2.0, 3.0], [5.0, 7.0]])
    mask = np.array([[True, False], [True, True]])
    g = srcad.grad(lambda x: np.sum(np.prod(x, axis=0, where=mask)))(x)
    np.testing.assert_allclose(g, [[5.0, 0.0], [2.0, 1.0]])


def max_of(x, v):
    return np.sum(np.max(x, axis=0, initial=v, where=MASK) ** 2)


def min_of(x, v):
    return np.sum(np.sin(np.min(x, axis=1, initial=v, where=MASK)))


@pytest.mark.parametrize("f", [max_of, min_of], ids=lambda f: f.__name__)
def test_a_differentiated_initial_value(f):
    for v in (-0.2, 0.4):
        srcad.check_grad(f, X.copy(), v, wrt=(0, 1), modes=("rev", "fwd"))
        srcad.check_grad(f, X.copy(), v, wrt=(0, 1), modes=("rev", "fwd"), order=2)


def test_closed_form_initial_value_wins_and_ties():
    x = np.array([[0.2, 0.9, 0.5], [0.4, 0.1, 0.5]])
    mask = np.array([[True, True, True], [True, False, True]])

    def f(x, v):
        return np.sum(np.max(x, axis=0, initial=v, where=mask) * np.array([1.0, 2.0, 4.0]))

    dx, dv = srcad.grad(f, wrt=(0, 1))(x, 0.5)
    # column 0: the initial 0.5 wins; column 1: 0.9; column 2: a tie of three (0.5 twice
    # and the initial value), a third each
    np.testing.assert_allclose(dx, [[0.0, 2.0, 4 / 3], [0.0, 0.0, 4 / 3]])
    assert dv == pytest.approx(1.0 + 4 / 3)
    _, t = srcad.jvp(f, (x, 0.5), (np.ones_like(x), 3.0))
    assert t == pytest.approx(1.0 * 3.0 + 2.0 * 1.0 + 4.0 * (1 + 1 + 3) / 3)


def test_a_constant_initial_value_takes_its_share_nowhere():
    x = np.array([0.5, 0.2])
    g = srcad.grad(lambda x: np.max(x, initial=0.5))(x)
    np.testing.assert_allclose(g, [0.5, 0.0])
    assert srcad.grad(lambda x: np.max(x, initial=0.8))(x).tolist() == [0.0, 0.0]


def test_without_a_mask_the_generated_code_is_unchanged():
    text = srcad.source(srcad.grad(lambda x: np.sum(np.sum(x, axis=0) ** 2)))
    assert "where" not in text
    assert "where=MASK" in srcad.source(srcad.grad(masked_sum))
