"""Matrix functions, cumulative sums, flips, rolls, triangles, diagonals."""

import numpy as np
import pytest
from opcheck import check, rand


def well_conditioned(n, seed=0):
    return rand(n, n, seed=seed) * 0.3 + np.eye(n) * 2.0


@pytest.mark.parametrize(
    "expr, args",
    [
        ("np.linalg.inv(x)", (well_conditioned(3),)),
        ("np.linalg.inv(x)", (np.stack([well_conditioned(2), well_conditioned(2, 1)]),)),
        ("np.linalg.solve(x, y)", (well_conditioned(3), rand(3, seed=2))),
        ("np.linalg.solve(x, y)", (well_conditioned(3), rand(3, 2, seed=2))),
        ("np.linalg.det(x)", (well_conditioned(3),)),
        ("np.linalg.det(x)", (np.stack([well_conditioned(2), well_conditioned(2, 1)]),)),
        ("np.linalg.norm(x)", (rand(4),)),
        ("np.linalg.norm(x)", (rand(2, 3),)),
        ("np.trace(x)", (rand(3, 3),)),
        ("np.trace(x)", (rand(2, 3),)),
        ("np.cumsum(x)", (rand(2, 3),)),
        ("np.cumsum(x, axis=1)", (rand(2, 3),)),
        ("x.cumsum(axis=0)", (rand(3, 2),)),
        ("np.flip(x)", (rand(2, 3),)),
        ("np.flip(x, axis=1)", (rand(2, 3),)),
        ("np.roll(x, 2)", (rand(5),)),
        ("np.roll(x, -1, axis=0)", (rand(3, 2),)),
        ("np.triu(x)", (rand(3, 3),)),
        ("np.tril(x, -1)", (rand(3, 4),)),
        ("np.diag(x)", (rand(3),)),
        ("np.diag(x)", (rand(3, 3),)),
        ("np.diag(x, 1)", (rand(3, 4),)),
    ],
)
def test_against_finite_differences(expr, args):
    check(expr, *args, rtol=1e-4)
