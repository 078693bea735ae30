"""Norms of singular values (``ord`` 'nuc', 2, -2 of ``np.linalg.norm`` and
``np.linalg.matrix_norm``): their slope ``singular_slope`` (srcad/runtime/norms.py) and its
rules written with svd (srcad/adjoints/linalg.py), at first and second order in both modes
against central differences (opcheck.check). Third order: tests/test_third_order_rules.py.
"""

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad
from srcad.runtime.norms import singular_slope, singular_weights


def separated(*shape, seed=0):
    """Matrices (the last two axes) with singular values 1.5, 2.5, ... times a random
    rotation on each side."""
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    k = min(m, n)
    out = np.empty(shape)
    for index in np.ndindex(*shape[:-2]):
        u, _ = np.linalg.qr(rng.normal(size=(m, m)))
        v, _ = np.linalg.qr(rng.normal(size=(n, n)))
        out[index] = (u[:, :k] * (np.arange(k, 0, -1) + 0.5)) @ v[:, :k].T
    return out


@pytest.mark.parametrize(
    "expr, x",
    [
        ("np.linalg.norm(x, 'nuc')", separated(3, 3)),
        ("np.linalg.norm(x, 2)", separated(4, 3, seed=1)),
        ("np.linalg.norm(x, -2)", separated(3, 5, seed=2)),
        ("np.linalg.norm(x, 'nuc', axis=(2, 0))", np.moveaxis(separated(2, 3, 4, seed=3), 0, 1)),
        ("np.linalg.norm(x, -2, axis=(0, 1), keepdims=True)", separated(3, 3, seed=4)),
        ("np.linalg.matrix_norm(x, ord='nuc')", separated(2, 3, 4, seed=5)),
        ("np.linalg.matrix_norm(x, keepdims=True, ord=2)", separated(2, 4, 2, seed=6)),
        (
            "np.linalg.matrix_norm(x, ord=-2, keepdims=True) * np.sin(x)",
            separated(2, 2, 3, 3, seed=7),
        ),
    ],
)
def test_first_and_second_order_in_both_modes(expr, x):
    check(expr, x)


def test_the_slope_is_the_gradient_of_each_norm():
    x = separated(2, 3, 4, seed=8)
    for ord in ("nuc", 2, -2):
        s = np.linalg.svd(x, compute_uv=False)
        want = np.sum(singular_weights(s, ord) * s, axis=-1)
        np.testing.assert_allclose(want, np.linalg.matrix_norm(x, ord=ord), rtol=1e-14)
        g = srcad.grad(make_function(f"np.sum(np.linalg.matrix_norm(x, ord={ord!r}))", "x"))(x)
        np.testing.assert_allclose(g, singular_slope(x, ord, (1, 2)), rtol=1e-14)


def test_the_nuclear_norm_at_tied_singular_values():
    # its Hessian exists where singular values tie (full rank), and the rule divides by
    # their sums there, not by their differences
    q, _ = np.linalg.qr(rand(3, 3))
    f = make_function("np.linalg.norm(x, 'nuc') ** 2 + np.linalg.norm(x, 2) ** 2", "x")
    x = q * 2.0 + np.diag([0.0, 0.0, 1.0]) @ q  # singular values 2, 2, 3
    check("np.linalg.norm(x, 'nuc') + np.linalg.norm(x, 2)", x)
    assert np.all(np.isfinite(srcad.hessian(f)(x)))
