"""A function making a function, in another module than the code calling it: its free
names are this module's (tests/test_module_factories.py)."""

import numpy as np

SCALE = 3.0


def make_shifted(a, shift=0.5):
    offset = shift * SCALE

    def shifted(t):
        return np.cos(t * a) + offset * t

    return shifted
