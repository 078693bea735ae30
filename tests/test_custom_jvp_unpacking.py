"""custom_jvp rules that unpack primals and tangents together, ``(p,), (dp,) = primals,
tangents``: the pytree pass binds each part statically, in reverse mode as in forward mode
(issue #17)."""

import numpy as np
import pytest

import srcad


@srcad.custom_jvp
def soft(x):
    return np.log1p(np.exp(x))


@soft.defjvp
def soft_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    return soft(p), dp / (1 + np.exp(-p))


@srcad.custom_jvp
def product(a, b):
    return a * b


@product.defjvp
def product_jvp(primals, tangents):
    (a, b), (da, db) = primals, tangents
    return a * b, da * b + a * db


@srcad.custom_jvp
def shifted(a, b):
    return np.sin(a) + b


@shifted.defjvp
def shifted_jvp(primals, tangents):
    # with a plain value that Python evaluates before any name is assigned (``scale``
    # reads the old ``a``)
    a = 3.0
    (a, b), (da, db), scale = primals, tangents, a
    return np.sin(a) + b, scale / 3.0 * (np.cos(a) * da + db)


@srcad.custom_jvp
def aliased(a, b):
    return np.sin(a) + b


@aliased.defjvp
def aliased_jvp(primals, tangents):
    (a, b), dt = primals, tangents  # a whole tuple bound to a name
    (da, db) = dt
    return np.sin(a) + b, np.cos(a) * da + db


@srcad.custom_jvp
def odd(a, b):
    return a * b


@odd.defjvp
def odd_jvp(primals, tangents):
    (a, b), (da, db) = primals, tangents
    return a * b, da * b + 2.0 * db * a  # deliberately not d(ab)/db, so its use shows


def uses_soft(x):
    return np.sum(soft(x) ** 2)


def uses_product(x):
    return np.sum(np.tanh(product(x, x[::-1] * 2.0)))


def uses_shifted(x):
    return np.sum(shifted(x * x, np.cos(x)) ** 2)


def uses_aliased(x):
    return np.sum(aliased(x * x, np.cos(x)) ** 2)


X = np.array([-0.7, 0.3, 1.2])


@pytest.mark.parametrize("f", [uses_soft, uses_product, uses_shifted])
def test_unpacked_rules_match_finite_differences(f):
    assert srcad.check_grad(f, X, modes=("rev", "fwd")) < 1e-6
    # (reverse over reverse of a rule of two arguments needs calls.py's srcad_results)
    assert srcad.check_grad(f, X, order=2, modes=("rev", "fwd")) < 1e-5


def test_a_whole_tuple_bound_to_a_name_at_first_order():
    # (at second order ``dt = tangents`` is refused, unpacked or not: see the report)
    assert srcad.check_grad(uses_aliased, X, modes=("rev", "fwd")) < 1e-6


def test_the_unpacked_rule_is_the_one_used():
    a, b = np.array([0.3, -1.2]), np.array([2.0, 0.5])

    def loss(a, b):
        return np.sum(np.sin(odd(a, b)))

    c = np.cos(a * b)
    da, db = srcad.grad(loss, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(da, c * b, rtol=1e-12)
    np.testing.assert_allclose(db, c * 2.0 * a, rtol=1e-12)
    _, t = srcad.jvp(loss, (a, b), (np.ones(2), np.ones(2)))
    np.testing.assert_allclose(t, np.sum(c * (b + 2.0 * a)), rtol=1e-12)


def test_a_length_mismatch_stays_an_error():
    @srcad.custom_jvp
    def bad(x):
        return x * 2.0

    @bad.defjvp
    def bad_jvp(primals, tangents):
        (p, _q), (dp,) = primals, tangents
        return p * 2.0, dp * 2.0

    def loss(x):
        return np.sum(bad(x))

    with pytest.raises(ValueError, match="values to unpack"):
        srcad.grad(loss)(X)
    with pytest.raises(ValueError, match="values to unpack"):
        srcad.jvp(loss, (X,), (X,))
