"""Reverse over reverse through a srcad.custom_vjp function whose ``fwd`` returns its
residuals as a pytree (``return out, (t, q)``, the usual JAX style) (#17): ``fwd`` and
``bwd`` are what is differentiated again (as in JAX), so the second derivative is checked
against central differences of the first, and, with a ``bwd`` that is deliberately not
the derivative of ``fun``, against the rule's own derivative."""

import numpy as np
import pytest

import srcad

X = np.array([0.4, -1.1, 1.7])
Y = np.array([0.9, 0.3, -0.6])
W = np.array([1.0, -2.0, 0.5])
EPS = 1e-6


@srcad.custom_vjp
def soft(p, q):
    return np.tanh(p) * q


def soft_fwd(p, q):
    t = np.tanh(p)
    return t * q, (t, q)


def soft_bwd(res, g):
    t, q = res
    return g * (1.0 - t * t) * q, g * t


soft.defvjp(soft_fwd, soft_bwd)


@srcad.custom_vjp
def nested(p, q):
    return np.sin(p) * q


def nested_fwd(p, q):
    # a dict holding a tuple and a number that is no residual to differentiate
    return np.sin(p) * q, {"s": np.sin(p), "more": (np.cos(p), q), "n": 2}


def nested_bwd(res, g):
    c, q = res["more"]
    return g * c * q * (res["n"] - 1), g * res["s"]


nested.defvjp(nested_fwd, nested_bwd)


@srcad.custom_vjp
def two(p):
    return np.tanh(p), p * p


def two_fwd(p):
    t = np.tanh(p)
    return (t, p * p), (t, (p,))


def two_bwd(res, g):
    t, (p,) = res
    gt, gs = g
    return (gt * (1 - t * t) + gs * 2.0 * p,)


two.defvjp(two_fwd, two_bwd)


def one_argument(x, y):
    return np.sum(soft(x * y, 0.75) * W)


def both_arguments(x, y):
    return np.sum(soft(x * y, y * W + 1.0) ** 2 * W)


def dict_residuals(x, y):
    return np.sum(nested(x * y, y + W) * x)


def two_outputs(x, y):
    a, b = two(x * y)
    return np.sum(a * b * W)


CASES = [one_argument, both_arguments, dict_residuals, two_outputs]


def _gradient_fd(f, x, y, k):
    """Central differences of ``srcad.grad(f, wrt=(0, 1))`` along argument ``k``: the
    hessian blocks ``[j][k]``."""
    grad = srcad.grad(f, wrt=(0, 1))
    blocks: list[list] = [[], []]
    for e in np.eye(3):
        moved = [(x, y), (x, y)]
        moved[0] = tuple(a + EPS * e if i == k else a for i, a in enumerate((x, y)))
        moved[1] = tuple(a - EPS * e if i == k else a for i, a in enumerate((x, y)))
        up, down = grad(*moved[0]), grad(*moved[1])
        for j in range(2):
            blocks[j].append((up[j] - down[j]) / (2 * EPS))
    return [np.stack(b, axis=-1) for b in blocks]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_reverse_over_reverse_through_pytree_residuals(f):
    def along(x, y):
        gx, gy = srcad.grad(f, wrt=(0, 1))(x, y)
        return np.sum(gx * W) + np.sum(gy * Y)

    by_reverse = srcad.grad(along, wrt=(0, 1))(X, Y)
    numeric = [_gradient_fd(f, X, Y, k) for k in range(2)]
    for k in range(2):
        expected = numeric[k][0].T @ W + numeric[k][1].T @ Y
        assert not np.allclose(expected, 0.0)
        np.testing.assert_allclose(by_reverse[k], expected, rtol=1e-6, atol=1e-8)
    # and check_grad's own second-order reverse check, element by element
    srcad.check_grad(f, X, Y, wrt=(0, 1), order=2, modes=("rev",))
    # forward over reverse (hessian) agrees with reverse over reverse
    table = srcad.hessian(f, wrt=(0, 1))(X, Y)
    for k in range(2):
        np.testing.assert_allclose(
            by_reverse[k], table[0][k].T @ W + table[1][k].T @ Y, rtol=1e-9, atol=1e-12
        )


@srcad.custom_vjp
def odd(p, q):
    return np.tanh(p) * q


def odd_fwd(p, q):
    t = np.tanh(p)
    return t * q, (t, q)


def odd_bwd(res, g):
    t, q = res
    # not the derivative in q (that is g t): the rule, not fun, must be differentiated
    return g * (1.0 - t * t) * q, 2.0 * g * t * q


odd.defvjp(odd_fwd, odd_bwd)


def odd_loss(a, b):
    return np.sum(odd(a, b) * W)


def odd_gradient_in_q(x, q):
    return srcad.grad(odd_loss, wrt=1)(x, q)


def odd_along(x, q):
    return np.sum(odd_gradient_in_q(x, q) * Y)


def test_the_rule_is_what_is_differentiated_again():
    # by the rule, the gradient in q is 2 W t q (t = tanh(x)); its derivative in q,
    # through the rule again, is 2 W t (fun's own second derivative in q is zero)
    q = np.array([0.5, 1.5, -0.5])
    t = np.tanh(X)
    np.testing.assert_allclose(odd_gradient_in_q(X, q), 2.0 * W * t * q, rtol=1e-12)
    by_reverse = srcad.grad(odd_along, wrt=(0, 1))(X, q)
    np.testing.assert_allclose(by_reverse[1], 2.0 * W * t * Y, rtol=1e-12)
    np.testing.assert_allclose(by_reverse[0], 2.0 * W * (1 - t * t) * q * Y, rtol=1e-12)


@srcad.custom_vjp
def untupled(p, q):
    return p * q


def untupled_fwd(p, q):
    return p * q, (p, q)


def untupled_bwd(res, g):
    p, q = res
    return g * np.stack([q, p])  # an array, not a tuple: refused, not unpacked by rows


untupled.defvjp(untupled_fwd, untupled_bwd)


def test_a_bwd_returning_no_tuple_is_refused_at_second_order():
    def f(x):
        return np.sum(untupled(x, 2.0 * x))

    def along(x):
        return np.sum(srcad.grad(f)(x) * W)

    with pytest.raises(srcad.TransformError, match="untupled_bwd returns 1 values"):
        srcad.grad(along)(X)  # reverse over reverse: by the count bwd returns
    with pytest.raises(TypeError, match="must return a tuple"):
        srcad.hessian(f)(X)  # forward over reverse: where it first runs
