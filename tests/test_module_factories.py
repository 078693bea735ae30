"""A function of the module that returns a function it makes (a factory), called inside the
differentiated function: ``g = make_scale(x)`` then ``g(x)``. Its body is written out at
the call (normalize/local_functions.py, with the free names bound by normalize/helpers.py),
at first order in both modes and at second order; checked against central differences."""

import numpy as np
import pytest

import srcad
from tests import factories_elsewhere
from tests.factories_elsewhere import make_shifted

X = np.array([0.3, -1.2, 2.0])
SCALE = 1.5
EPS = 1e-5


def make_scale(a):
    return lambda t: a * np.sin(t)


def make_power(a, k=2.0):
    """A factory with a body, a default and a global."""
    w = np.tanh(a) * SCALE

    def power(t):
        return w * t**k

    return power


def helper_making(p):
    g = make_scale(p * 0.5)
    return g(p) + p


def scale_factory(x):
    g = make_scale(x)
    return np.sum(g(x))


def body_and_default(x):
    h = make_power(x[0], k=3.0)
    total = np.sum(h(x))
    for k in range(2):
        q = make_power(x * (k + 1.0))
        total = total + np.sum(q(x) * x)
    return total


def other_module(x):
    SCALE = x * 2.0  # a local of the same name as the factory's global  # noqa: N806
    s = make_shifted(x)
    return np.sum(s(SCALE) ** 2)


def in_a_helper(x):
    return np.sum(helper_making(x) ** 2)


def _hessian_fd(f, x):
    grad = srcad.grad(f)
    cols = [(grad(x + EPS * e) - grad(x - EPS * e)) / (2 * EPS) for e in np.eye(x.size)]
    return np.stack(cols, axis=-1)


FUNCTIONS = [scale_factory, body_and_default, other_module, in_a_helper]


@pytest.mark.parametrize("f", FUNCTIONS)
def test_first_order_both_modes(f):
    srcad.check_grad(f, X, modes=("rev", "fwd"))
    srcad.check_grad(f, -X, modes=("rev", "fwd"))


@pytest.mark.parametrize("f", FUNCTIONS)
def test_second_order(f):
    srcad.check_grad(f, X, order=2, modes=("rev", "fwd"))
    h = srcad.hessian(f)(X)
    np.testing.assert_allclose(h, _hessian_fd(f, X), rtol=1e-6, atol=1e-7)
    assert not np.allclose(h, 0.0)


def test_the_factory_reads_its_own_modules_globals_and_a_change_is_seen():
    before = srcad.grad(other_module)(X)
    h_before = srcad.hessian(other_module)(X)
    factories_elsewhere.SCALE = 5.0
    try:
        after = srcad.grad(other_module)(X)
        assert not np.allclose(after, before)
        srcad.check_grad(other_module, X, modes=("rev", "fwd"))
        assert not np.allclose(srcad.hessian(other_module)(X), h_before)
    finally:
        factories_elsewhere.SCALE = 3.0
    np.testing.assert_allclose(srcad.grad(other_module)(X), before)


def test_a_changed_factory_default_is_seen():
    before = srcad.grad(body_and_default)(X)
    defaults = make_power.__defaults__
    make_power.__defaults__ = (4.0,)
    try:
        assert not np.allclose(srcad.grad(body_and_default)(X), before)
        srcad.check_grad(body_and_default, X, modes=("rev", "fwd"))
    finally:
        make_power.__defaults__ = defaults


def make_with_kwargs(a, **options):
    return lambda t: a * t * options.get("s", 1.0)


def make_long(a):
    def long(t):
        u = np.sin(t)
        return u * a

    return long


def uses_kwargs_factory(x):
    g = make_with_kwargs(x, s=2.0)
    return np.sum(g(x))


def uses_long_factory(x):
    g = make_long(x)
    return np.sum(g(x))


def calls_what_is_made_at_once(x):
    return np.sum(make_scale(x)(x))


@pytest.mark.parametrize(
    "f, match",
    [
        (uses_kwargs_factory, "make_with_kwargs makes a function.*'\\*\\*kwargs'"),
        (uses_long_factory, "make_long makes a function srcad cannot write out"),
        (calls_what_is_made_at_once, "the function make_scale makes is used other than"),
    ],
)
def test_factories_that_cannot_be_written_out_are_refused_by_name(f, match):
    with pytest.raises(srcad.TransformError, match=match):
        srcad.grad(f)(X)
    with pytest.raises(srcad.TransformError, match=match):
        srcad.jvp(f, (X,), (X,))
