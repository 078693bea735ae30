"""List gradients as code differentiated again adds them (#17): the zero of a list adds
element by element, a zero number (the zero of a name before it held the list) is zero,
and an array stacking the elements' gradients adds to a list gradient in either order."""

import numpy as np
import pytest

from srcad.runtime.accumulate import unstack, zeros_like
from srcad.runtime.higher import GradientList
from srcad.runtime.lists import add_gradients, is_zero_gradient, scatter_element


def _pieces():
    rng = np.random.default_rng(0)
    return [rng.uniform(-1.0, 1.0, 2) for _ in range(3)]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            np.testing.assert_array_equal(g, w)


def test_the_zero_of_a_list_adds_element_by_element():
    items = _pieces()
    zero = zeros_like(items)
    assert isinstance(zero, GradientList) and list(zero) == [None] * 3
    g = scatter_element(items, 1, items[0])
    # (a plain list's ``+`` would join the two, six elements)
    _same(zero + g, [None, items[0], None])
    _same(g + zero, [None, items[0], None])


def test_a_zero_number_is_zero_in_add_gradients():
    items = _pieces()
    g = scatter_element(items, 2, items[1])
    for zero in (0.0, 0, None):
        assert is_zero_gradient(zero)
        _same(add_gradients(g, zero), g)
        _same(add_gradients(zero, g), g)
        assert add_gradients(g, zero) is not g  # a new list: drop_gradient pops in place
    assert add_gradients(0.0, 0.0) == 0.0
    _same(GradientList(g) + 0.0, g)
    _same(0.0 + GradientList(g), g)


def test_a_number_other_than_zero_is_no_list_gradient():
    assert not is_zero_gradient(1.5)
    assert not is_zero_gradient(np.zeros(3))
    with pytest.raises(TypeError):
        add_gradients([None, 1.0], 1.5)


@pytest.mark.parametrize("array_first", [False, True])
def test_an_array_of_the_stacked_gradients_adds_to_a_list_gradient(array_first):
    items = _pieces()
    stacked = np.stack(_pieces()[::-1])  # what ``xp.zeros_like(items)`` + ``[i] =`` make
    g = GradientList(scatter_element(items, 0, items[2]))
    total = stacked + g if array_first else g + stacked
    assert isinstance(total, GradientList)
    _same(total, [stacked[0] + items[2], stacked[1], stacked[2]])
    _same(unstack(stacked) + g, total)


def test_lengths_differ_only_by_elements_without_a_gradient():
    items = _pieces()
    # the zero of a list appended to in place has its final length
    _same(add_gradients([None, items[0], None], [items[1], None]), [items[1], items[0]])
    with pytest.raises(ValueError, match="3 and 2 elements"):
        add_gradients([None, None, items[0]], [items[1], None])
