"""scipy.stats.multivariate_normal.cdf and logcdf (srcad/adjoints/scipy_stats.py, the
derivatives in srcad/runtime/mvn_cdf.py) against closed forms and central finite
differences, in reverse, forward and second order.

SciPy's cdf is exact in one dimension (ndtr) and two (a bivariate routine), and randomized
quasi-Monte Carlo above: there the tests fix ``rng`` (one seed gives the same integration
points, so the estimate is a smooth function of ``x``) and allow ``abseps``, the error SciPy
integrates to: finite differences of such an estimate were seen to differ from the exact
derivative by up to 0.2 times ``abseps`` in ``x``, and 2 times along a random direction of
``cov`` (entries about 1), so the tests allow 5 times ``abseps``. srcad's derivatives in
three dimensions use two-dimensional cdfs only, so they are exact; an accurate
three-dimensional cdf (one quadrature over the exact bivariate one) checks them tightly.
"""

import itertools

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad

pytest.importorskip("scipy")
import scipy.integrate  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402

from srcad.runtime.mvn_cdf import mvn_cdf_cov, mvn_cdf_derivative  # noqa: E402

MVN = scipy.stats.multivariate_normal


def spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def near(*shape, seed=0):
    """Points where the cdf is neither close to 0 nor to 1."""
    return rand(*shape, low=-1.0, high=1.0, seed=seed)


def small_mean(n):
    return rand(n, low=-0.3, high=0.3, seed=1)


def cdf3(z, s):
    """The cdf of N(0, s) in three dimensions at ``z``, to about 1e-13: the first
    coordinate integrated against the (exact) bivariate cdf of the others given it."""
    given = s[1:, 1:] - np.outer(s[1:, 0], s[0, 1:]) / s[0, 0]

    def integrand(t):
        rest = z[1:] - s[1:, 0] * t / s[0, 0]
        return scipy.stats.norm.pdf(t, 0, np.sqrt(s[0, 0])) * MVN.cdf(rest, None, given)

    return scipy.integrate.quad(integrand, -np.inf, z[0], epsabs=1e-14, epsrel=1e-13)[0]


def central(f, z, h=1e-4):
    """Central differences of ``f`` in each coordinate of ``z``, as the last axis."""
    steps = [(f(z + h * e) - f(z - h * e)) / (2 * h) for e in np.eye(len(z))]
    return np.moveaxis(np.array(steps), 0, -1)


# ---- the derivatives themselves: closed forms, and an accurate cdf ----


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_one_dimension_is_the_normal_density_and_its_derivatives(order):
    x, mean, var = np.array([-1.3, 0.2, 0.9]), 0.4, 1.7
    z = (x - mean) / np.sqrt(var)
    # d^k/dx^k ndtr(z) = (-1)^(k-1) He_(k-1)(z) pdf(z) / sd^k (probabilists' Hermite)
    hermite = scipy.special.eval_hermitenorm(order - 1, z)
    want = (-1) ** (order - 1) * hermite * scipy.stats.norm.pdf(z) / np.sqrt(var) ** order
    got = mvn_cdf_derivative(x, np.array([mean]), var, order)
    assert got.shape == (3,) + (1,) * order
    np.testing.assert_allclose(got.reshape(3), want, rtol=1e-13, atol=1e-16)


def test_independent_coordinates_give_products_of_ndtr():
    x, sd = np.array([[0.3, -0.4, 1.1], [-0.7, 0.2, 0.5]]), np.array([0.8, 1.3, 1.1])
    z = x / sd
    cdf, pdf = scipy.special.ndtr(z), scipy.stats.norm.pdf(z) / sd
    gradient = mvn_cdf_derivative(x, np.zeros(3), sd**2, 1)  # a diagonal
    hessian = mvn_cdf_derivative(x, None, np.diag(sd**2), 2)
    for i in range(3):
        others = np.prod(np.delete(cdf, i, axis=1), axis=1)
        np.testing.assert_allclose(gradient[:, i], pdf[:, i] * others, rtol=1e-13)
        diagonal = -z[:, i] / sd[i] * pdf[:, i] * others
        np.testing.assert_allclose(hessian[:, i, i], diagonal, rtol=1e-12)
        for j in range(i + 1, 3):
            rest = cdf[:, 3 - i - j]
            np.testing.assert_allclose(hessian[:, i, j], pdf[:, i] * pdf[:, j] * rest, rtol=1e-12)
            assert np.array_equal(hessian[:, i, j], hessian[:, j, i])


@pytest.mark.parametrize("z", [[0.3, 0.1, -0.2], [-1.0, 0.5, 1.2], [1.5, -2.0, 0.9]])
def test_three_dimensions_against_an_accurate_cdf(z):
    s, z = spd(3, seed=2) / 3, np.array(z)

    def f(v):
        return cdf3(v, s)

    # each derivative against differences of the one below: the cdf's are to ~1e-13 / h^2
    orders = [lambda v, k=k: mvn_cdf_derivative(v, None, s, k)[0] for k in range(1, 5)]
    np.testing.assert_allclose(orders[0](z), central(f, z), rtol=1e-8, atol=1e-10)
    for lower, higher in zip(orders, orders[1:]):
        np.testing.assert_allclose(higher(z), central(lower, z), rtol=1e-7, atol=1e-10)
    # in cov: half the Hessian, along a symmetric direction
    e = rand(3, 3, seed=5)
    e = e + e.T
    along = (cdf3(z, s + 1e-4 * e) - cdf3(z, s - 1e-4 * e)) / 2e-4
    np.testing.assert_allclose(0.5 * np.sum(orders[1](z) * e), along, rtol=1e-6, atol=1e-8)


def test_an_infinite_coordinate_is_marginalized():
    s = spd(3, seed=2)
    x = np.array([0.3, np.inf, -0.2])
    keep = [0, 2]
    marginal = mvn_cdf_derivative(x[keep], None, s[np.ix_(keep, keep)], 2)
    both = mvn_cdf_derivative(x, None, s, 2)
    np.testing.assert_allclose(both[0][np.ix_(keep, keep)], marginal[0], rtol=1e-13)
    assert np.all(both[0, 1] == 0) and np.all(both[0, :, 1] == 0)
    np.testing.assert_allclose(
        mvn_cdf_derivative(x, None, s, 1)[0, keep],
        mvn_cdf_derivative(x[keep], None, s[np.ix_(keep, keep)], 1)[0],
        rtol=1e-13,
    )


# ---- through srcad: reverse, forward and the four second orders (opcheck.check) ----

METHODS = ["cdf", "logcdf"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    "call, args",
    [
        ("(x, y, z)", (near(4), np.array([0.2]), np.array([[1.7]]))),  # 4 points
        ("(x, y, z)", (near(4, 1), 0.2, 1.7)),
        ("(x, cov=y)", (near(3), 1.7)),
        ("(x, y)", (near(3), np.array([0.2]))),
        ("(x, None, y)", (near(2), np.array([1.7]))),
    ],
)
def test_one_dimension(method, call, args):
    check(f"scipy.stats.multivariate_normal.{method}{call}", *args)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    "call, args",
    [
        ("(x, y, z)", (near(2), small_mean(2), spd(2))),
        ("(x, y, z)", (near(3, 2), small_mean(2), spd(2))),
        ("(x, y, z)", (near(2, 3, 2), small_mean(2), spd(2))),  # points in a (2, 3) grid
        ("(x, mean=y, cov=z)", (near(1, 2), small_mean(2), spd(2))),
        ("(x, y, z)", (near(2), small_mean(2), rand(2, low=0.5, high=2.0))),  # a diagonal
        ("(x, y, z)", (near(2), small_mean(2), 1.3)),  # a multiple of the identity
        ("(x, None, y)", (near(2, 2), spd(2))),
        ("(x, cov=y, maxpts=1000, abseps=1e-6, releps=1e-6)", (near(2), spd(2))),
        ("(x, y, z, True)", (near(2), small_mean(2), spd(2))),  # allow_singular
    ],
)
def test_two_dimensions(method, call, args):
    check(f"scipy.stats.multivariate_normal.{method}{call}", *args)


@pytest.mark.parametrize("method", METHODS)
def test_three_dimensions(method):
    # SciPy integrates to abseps=1e-6 here (see the module's docstring for atol); logcdf
    # divides the cdf's error by the cdf
    expr = f"scipy.stats.multivariate_normal.{method}(x, y, z, abseps=1e-6, rng=0)"
    for x, order in ((near(3), 2), (near(2, 3, seed=3), 1)):
        args = (x, small_mean(3), spd(3) / 3)
        atol = 5e-6 / (np.min(MVN.cdf(*args)) if method == "logcdf" else 1.0)
        check(expr, *args, atol=atol, order=order)


def test_three_dimensions_at_scipys_default_tolerance():
    # abseps=1e-5, SciPy's default (see the module's docstring for atol)
    f = make_function("scipy.stats.multivariate_normal.cdf(x, y, z, rng=7)", "x, y, z")
    args = (near(3, seed=4), small_mean(3), spd(3, seed=4) / 3)
    srcad.check_grad(f, *args, wrt=(0, 1, 2), modes=("rev", "fwd"), atol=5e-5)


def test_four_dimensions_first_order():
    # the gradient integrates in three dimensions (to the same abseps, with the same rng)
    f = make_function("scipy.stats.multivariate_normal.cdf(x, y, z, abseps=1e-6, rng=3)", "x, y, z")
    args = (near(4, seed=6), small_mean(4), spd(4, seed=6) / 4)
    srcad.check_grad(f, *args, wrt=(0, 1, 2), modes=("rev", "fwd"), atol=5e-6)


def test_the_hessian_in_x_against_differences_of_the_exact_gradient():
    s = spd(3, seed=2) / 3
    f = make_function("scipy.stats.multivariate_normal.cdf(x, None, S)", "x", {"S": s})
    x = near(3, seed=8)
    want = central(lambda v: mvn_cdf_derivative(v, None, s, 1)[0], x, h=1e-5)
    np.testing.assert_allclose(srcad.hessian(f)(x), want, rtol=1e-8, atol=1e-11)
    np.testing.assert_allclose(srcad.hessian(f)(x), mvn_cdf_derivative(x, None, s, 2)[0])


def test_third_order_in_x():
    s = spd(2) / 2
    f = make_function("scipy.stats.multivariate_normal.logcdf(x, None, S)", "x", {"S": s})
    x = near(2)
    third = srcad.jacobian(srcad.hessian(f))(x)
    np.testing.assert_allclose(third, central(srcad.hessian(f), x, h=1e-5), atol=1e-9)


# ---- cov: the triangle SciPy's cdf reads ----


@pytest.mark.parametrize("n", [2, 3])
def test_the_cov_gradient_lies_in_the_triangle_scipys_cdf_reads(n):
    s = spd(n) / n
    tri = mvn_cdf_cov(np.tril(np.ones((n, n))), n)  # ones where the cdf reads
    f = make_function("scipy.stats.multivariate_normal.cdf(X, None, x, rng=0)", "x", {"X": near(n)})
    g = srcad.grad(f)(s)
    assert np.all(g[tri == 0] == 0) and np.all(g[tri == 1] != 0)
    # the other triangle is not read: changing it changes nothing
    other = s + 0.1 * (tri == 0)
    assert f(other) == f(s)
    # along a symmetric direction, the derivative is the heat equation's
    e = rand(n, n, seed=5)
    e = e + e.T
    hessian = mvn_cdf_derivative(near(n), None, s, 2)[0]
    np.testing.assert_allclose(np.sum(g * e), 0.5 * np.sum(hessian * e), rtol=1e-12)


# ---- lower_limit: the box between two corners, differentiated at both ends ----


def below(*shape, seed=0):
    """Lower limits below :func:`near`'s points."""
    return rand(*shape, low=-2.0, high=-1.2, seed=seed)


def box_differences(f, x, lower, h=1e-4):
    """Central differences of ``f(x, lower)`` in ``x``'s and then ``lower``'s coordinates."""
    n = len(x)

    def g(w):
        return f(w[:n], w[n:])

    return central(g, np.concatenate([x, lower]), h)


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("order", [1, 2, 3])
def test_box_derivatives_against_differences_of_scipys_box(n, order):
    # SciPy's box probability is exact in one and two dimensions; reversed sides count
    # negative (in both SciPy and the derivatives)
    s, mean = spd(n) / n, small_mean(n)
    for x, lower in ((near(n), below(n, seed=1)), (below(n, seed=2), near(n, seed=3))):
        if order == 1:
            want = box_differences(lambda u, v: MVN.cdf(u, mean, s, lower_limit=v), x, lower)
        else:
            want = box_differences(
                lambda u, v: mvn_cdf_derivative(u, mean, s, order - 1, lower_limit=v)[0],
                x, lower, h=1e-5,
            )  # fmt: skip
        got = mvn_cdf_derivative(x, mean, s, order, lower_limit=lower)[0]
        assert got.shape == (2 * n,) * order
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
        assert np.max(np.abs(got)) > 1e-2


def test_an_infinite_lower_limit_is_no_lower_limit():
    s, x = spd(3, seed=2), near(2, 3)
    lower = np.array([-np.inf, -1.5, -np.inf])
    both = mvn_cdf_derivative(x, None, s, 2, lower_limit=np.full(3, -np.inf))
    np.testing.assert_allclose(both[:, :3, :3], mvn_cdf_derivative(x, None, s, 2), rtol=1e-13)
    assert np.all(both[:, 3:] == 0) and np.all(both[:, :, 3:] == 0)
    partly = mvn_cdf_derivative(x, None, s, 1, lower_limit=lower)
    assert np.all(partly[:, [3, 5]] == 0) and np.all(partly[:, 4] < 0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(
    "call, args",
    [
        ("(x, y, z, lower_limit=u)", (near(3), np.array([0.2]), np.array([[1.7]]), below(3, 1))),
        ("(x, y, z, lower_limit=u)", (near(3), 0.2, 1.7, below(1))),
        ("(x, lower_limit=y)", (near(1), below(1))),
        ("(x, y, z, lower_limit=u)", (near(2), small_mean(2), spd(2), below(2))),
        ("(x, y, z, lower_limit=u)", (near(3, 2), small_mean(2), spd(2), below(2))),  # broadcast
        ("(x, y, z, lower_limit=u)", (near(2, 3, 2), small_mean(2), spd(2), below(3, 2))),
        ("(x, None, y, lower_limit=z)", (near(2, 2), spd(2), below(2, 2))),
        ("(x, y, z, lower_limit=u)", (near(2), small_mean(2), rand(2, low=0.5, high=2.0),
                                      below(2))),  # a diagonal
    ],
)  # fmt: skip
def test_lower_limit_in_one_and_two_dimensions(method, call, args):
    check(f"scipy.stats.multivariate_normal.{method}{call}", *args)


@pytest.mark.parametrize("method", METHODS)
def test_lower_limit_in_three_dimensions(method):
    # SciPy integrates to abseps=1e-6 (see the module's docstring for atol)
    expr = f"scipy.stats.multivariate_normal.{method}(x, y, z, abseps=1e-6, rng=0, lower_limit=u)"
    args = (near(3), small_mean(3), spd(3) / 3, below(3))
    value = MVN.cdf(*args[:3], lower_limit=args[3])
    check(expr, *args, atol=5e-6 / (value if method == "logcdf" else 1.0), order=2)


def test_lower_limit_third_order():
    # in both ends at once: w holds x, then lower_limit
    s = spd(2) / 2
    f = make_function(
        "scipy.stats.multivariate_normal.logcdf(x[:2], None, S, lower_limit=x[2:])", "x", {"S": s}
    )
    w = np.concatenate([near(2), below(2)])
    third = srcad.jacobian(srcad.hessian(f))(w)
    np.testing.assert_allclose(third, central(srcad.hessian(f), w, h=1e-5), atol=1e-9)
    assert np.max(np.abs(third)) > 1e-2


def test_a_lower_limit_with_more_points_than_x_is_refused():
    f = make_function("np.sum(scipy.stats.multivariate_normal.cdf(X, None, S, lower_limit=x))", "x",
                      {"X": near(2), "S": spd(2)})  # fmt: skip
    with pytest.raises(ValueError, match="no more points than x"):
        srcad.grad(f)(below(3, 2))


# ---- what is refused, by name ----


def frozen(x):
    return scipy.stats.multivariate_normal(np.zeros(2), np.eye(2)).cdf(x)


def singular(x):
    return scipy.stats.multivariate_normal.logcdf(x, None, np.ones((2, 2)), allow_singular=True)


def run(f, mode):
    x = np.array([0.3, -0.2])
    return srcad.grad(f)(x) if mode == "rev" else srcad.jvp(f, (x,), (np.ones(2),))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_frozen_distribution_is_refused_by_name(mode):
    with pytest.raises(srcad.NoAdjointError, match="multivariate_normal_frozen.cdf"):
        run(frozen, mode)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_singular_cov_is_refused_when_differentiating(mode):
    assert np.isfinite(singular(np.array([0.3, -0.2])))  # SciPy's value exists
    with pytest.raises(ValueError, match="positive definite cov"):
        run(singular, mode)


def test_every_derivative_tensor_is_symmetric():
    t = mvn_cdf_derivative(near(2, 3), small_mean(3), spd(3), 3)
    for axes in itertools.permutations(range(1, 4)):
        assert np.array_equal(t, np.transpose(t, (0,) + axes))
