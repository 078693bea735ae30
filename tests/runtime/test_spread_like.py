"""spread_like (the adjoint of unbroadcast in second-order code) for shapes that are both
larger and smaller along different axes (a name whose shape changes in a loop, reverse
mode three times: fuzz seed 1472 broadcast (2,) to (1,) and failed)."""

import numpy as np
import pytest

from srcad.runtime.higher import spread_like

SHAPES = [((2,), (1,)), ((1, 4), (1, 1)), ((1, 4), (3, 1)), ((3, 1), (1, 4)), ((2, 3), (3,)),
          ((3,), (2, 1)), ((2, 1, 4), (3, 1)), ((), (2, 2)), ((2, 2), ())]  # fmt: skip


@pytest.mark.parametrize("g_shape, like_shape", SHAPES)
def test_spread_like_is_its_own_transpose(g_shape, like_shape):
    rng = np.random.default_rng(0)
    g, like = rng.normal(size=g_shape), rng.normal(size=like_shape)
    h = rng.normal(size=like_shape)
    out = spread_like(g, like)
    assert np.shape(out) == like_shape
    # <spread(g -> like), h> == <g, spread(h -> g)>: a linear map and its transpose
    assert np.sum(out * h) == pytest.approx(np.sum(g * spread_like(h, g)))


def test_spread_like_sums_where_the_target_is_one_and_broadcasts_where_it_is_larger():
    g = np.array([[1.0, 2.0, 3.0, 4.0]])
    np.testing.assert_array_equal(spread_like(g, np.zeros((1, 1))), [[10.0]])
    np.testing.assert_array_equal(spread_like(np.array([[1.0], [2.0]]), np.zeros((2, 3))),
                                  [[1.0] * 3, [2.0] * 3])  # fmt: skip
