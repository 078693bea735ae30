"""The gradient of a whole-array sum is one number until a rule needs its shape."""

import numpy as np
import pytest

import srcad

X = np.array([0.5, 1.0, 2.0])


def conj_then_cumsum(x):
    return np.sum(np.conj(np.cumsum(x)))


def real_part_then_cumsum(x):
    return np.sum(np.cumsum(x).real)


def real_part_of_fft(x):
    return np.sum(np.fft.fft(x).real)


@pytest.mark.parametrize("f", [conj_then_cumsum, real_part_then_cumsum])
def test_a_rule_that_cannot_spread_the_number_reads_the_broadcast_gradient(f):
    # conj/real of the number alone is a number; cumsum's adjoint needs the array (it
    # used to receive the number, the template having been rewritten in place)
    np.testing.assert_allclose(srcad.grad(f)(X), [3.0, 2.0, 1.0])
    assert srcad.check_grad(f, X, modes=("rev", "fwd")) < 1e-6


def test_the_same_before_a_transform():
    # d/dx sum(Re fft(x)) = Re of the sum of each column of the DFT matrix: n at 0, else 0
    np.testing.assert_allclose(srcad.grad(real_part_of_fft)(np.ones(4)), [4.0, 0, 0, 0], atol=1e-12)
    assert srcad.check_grad(real_part_of_fft, X, modes=("rev", "fwd")) < 1e-6
