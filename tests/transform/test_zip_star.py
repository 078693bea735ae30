"""``Ws, bs = zip(*params)`` of a pytree argument holding pairs: each name a tuple of
one element of every pair (refused as "used as a whole" until stop 32)."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(3)
PARAMS = [
    (RNG.normal(size=(3, 4)), RNG.normal(size=4)),
    (RNG.normal(size=(4, 2)), RNG.normal(size=2)),
]
X = RNG.normal(size=(5, 3))


def layers_unzipped(params):
    Ws, bs = zip(*params)
    h = X
    for W, b in zip(Ws, bs):
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def weights_penalized(params):
    weights, biases = zip(*params)
    return sum(np.sum(W**2) for W in weights) + 0.1 * np.sum(biases[-1])


def unzipped_by_index(params):
    Ws, bs = zip(*params)
    return np.sum(np.tanh(X @ Ws[0] + bs[0]) @ Ws[1])


@pytest.mark.parametrize("f", [layers_unzipped, weights_penalized, unzipped_by_index])
def test_zip_star_of_a_pytree_argument(f):
    srcad.check_grad(f, PARAMS, modes=("rev", "fwd"))
    srcad.check_grad(f, PARAMS, modes=("rev",), order=2)
    grads = srcad.grad(f)(PARAMS)
    assert [tuple(np.shape(g) for g in pair) for pair in grads] == [
        tuple(np.shape(a) for a in pair) for pair in PARAMS
    ]


def unzipped_into_three(params):
    a, b, c = zip(*params)
    return np.sum(a[0])


def test_unzipping_into_the_wrong_number_of_names_is_refused():
    with pytest.raises(srcad.TransformError) as info:
        srcad.grad(unzipped_into_three)(PARAMS)
    assert "unpacking zip() over a pytree argument into 3 names; it has 2 items" in str(info.value)
