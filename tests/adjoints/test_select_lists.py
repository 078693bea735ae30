"""np.select's lists held by names: refused with advice that fits np.select."""

import numpy as np
import pytest

import srcad


def _select_of_names(x):
    conds = [x > 0, x < -0.5]
    choices = [x**2, 2 * x]
    return np.sum(np.select(conds, choices))


def _select_written_out(x):
    return np.sum(np.select([x > 0, x < -0.5], [x**2, 2 * x]))


def test_lists_held_by_names_are_refused_with_the_advice_for_select():
    with pytest.raises(srcad.TransformError, match=r"write its elements out in the call") as info:
        srcad.grad(_select_of_names)(np.linspace(-1.0, 1.0, 5))
    assert "np.stack" not in str(info.value)


def test_lists_written_out_differentiate():
    x = np.array([-0.9, -0.2, 0.3, 0.8])
    srcad.check_grad(_select_written_out, x, modes=("rev", "fwd"))
