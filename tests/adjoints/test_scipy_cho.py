"""scipy.linalg.cho_factor / cho_solve in every form users write, against central finite
differences in both modes and at second order; the triangle cho_factor leaves unused
never reaches a derivative."""

import numpy as np
import pytest
from opcheck import check, check_function_second_order, rand

import srcad

pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
from scipy.linalg import cho_factor, cho_solve  # noqa: E402


def spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def sym(n, seed):
    e = np.random.default_rng(seed).normal(size=(n, n))
    return e + e.T


# ---- as one expression: the function reads one triangle of x, so FD element by element ----


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("bshape", [(3,), (3, 2)])
def test_cho_solve_of_cho_factor(lower, bshape):
    check(
        f"scipy.linalg.cho_solve(scipy.linalg.cho_factor(x, lower={lower}), y)",
        spd(3),
        rand(*bshape),
    )
    check(
        f"scipy.linalg.cho_solve(scipy.linalg.cho_factor(x, {lower}, False, False), y)",
        spd(3),
        rand(*bshape),
    )


def test_factor_picked_by_index():
    check("scipy.linalg.cho_factor(x, lower=True)[0] @ y", spd(3), rand(3, 2))
    check("np.log(np.diag(scipy.linalg.cho_factor(x)[0]))", spd(3))


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_of_a_cholesky_factor(lower):
    check(
        f"scipy.linalg.cho_solve((scipy.linalg.cholesky(x, lower={lower}), {lower}), y)",
        spd(3),
        rand(3, 2),
    )
    check("scipy.linalg.cho_solve((np.linalg.cholesky(x), True), y)", spd(3), rand(3))


# ---- the forms written as statements ----


def unpacked(A, b):
    c, low = cho_factor(A)
    return cho_solve((c, low), b)


def held(A, b):
    # the pair held by a name, keywords, and the log-determinant from its factor
    cf = cho_factor(A, lower=True, overwrite_a=False, check_finite=False)
    x = cho_solve(cf, b, overwrite_b=False, check_finite=False)
    return x * np.sum(np.log(np.diag(cf[0])))


def gp_loglik(A, y):
    # a Gaussian process's log-likelihood, as written with SciPy
    c, low = cho_factor(A, lower=True)
    alpha = cho_solve((c, low), y)
    return -0.5 * y @ alpha - np.sum(np.log(np.diag(c))) - 0.5 * len(y) * np.log(2 * np.pi)


def _quadratic(A, b):
    return b @ cho_solve(cho_factor(A), b)


def in_a_helper(A, b):
    return _quadratic(A, b) ** 2


def _solve(pair, b):
    return cho_solve(pair, b)


def pair_into_a_helper(A, b):
    # a tuple of differentiable values passed to a function of the user's: refused
    c = cho_factor(A)[0]
    return np.sum(_solve((c, False), b) ** 2)


def flag_by_name(A, b, lower):
    cf = cho_factor(A, lower)
    return cho_solve(cf, b)


FORMS = [(unpacked, 2), (held, 2), (gp_loglik, 1), (in_a_helper, 1)]


@pytest.mark.parametrize("func, bdim", FORMS)
def test_forms(func, bdim):
    b = rand(3) if bdim == 1 else rand(3, 2)
    f = func if func in (gp_loglik, in_a_helper) else _summed(func)
    srcad.check_grad(f, spd(3), b, wrt=(0, 1), modes=("rev", "fwd"), order=2)
    check_function_second_order(func, (spd(3), b))


def _summed(func):
    weights = rand(3, 2, seed=7)

    def f(A, b):
        return np.sum(weights * func(A, b))

    return f


@pytest.mark.parametrize("lower", [False, True])
def test_flag_given_by_a_variable(lower):
    weights = rand(3, 2, seed=7)

    def f(A, b):
        return np.sum(weights * flag_by_name(A, b, lower))

    srcad.check_grad(f, spd(3), rand(3, 2), wrt=(0, 1), modes=("rev", "fwd"), order=2)


# ---- symmetric perturbations of A: the derivative a user of an SPD A sees ----


@pytest.mark.parametrize("lower", [False, True])
def test_symmetric_perturbations(lower):
    def f(A, y):
        c, low = cho_factor(A, lower=lower)
        return y @ cho_solve((c, low), y) + 2 * np.sum(np.log(np.diag(c)))

    A, y, eps = spd(4), rand(4), 1e-5
    e, u = sym(4, 1), sym(4, 2)
    g = srcad.grad(f)(A, y)
    fd = (f(A + eps * e, y) - f(A - eps * e, y)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * e), fd, rtol=1e-7)
    np.testing.assert_allclose(srcad.jvp(f, (A, y), (e, np.zeros(4)))[1], fd, rtol=1e-7)
    # the gradient lies in the triangle read, as scipy.linalg.cholesky's: its symmetric
    # part is the gradient over symmetric matrices, (G + G^T) / 2
    other = np.triu(g, 1) if lower else np.tril(g, -1)
    assert np.all(other == 0)
    exact = np.linalg.inv(A) - np.outer(*[np.linalg.solve(A, y)] * 2)
    np.testing.assert_allclose((g + g.T) / 2, exact, rtol=1e-9, atol=1e-12)
    # second order along symmetric directions: hessian and jvp-of-grad
    gradient = srcad.grad(f)
    fd2 = (gradient(A + eps * u, y) - gradient(A - eps * u, y)) / (2 * eps)
    np.testing.assert_allclose(
        srcad.jvp(gradient, (A, y), (u, np.zeros(4)))[1], fd2, rtol=1e-5, atol=1e-8
    )
    h = srcad.hessian(f)(A, y)
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", h, u), fd2, rtol=1e-5, atol=1e-8)


# ---- what cho_factor leaves in the other triangle never counts ----


@pytest.mark.parametrize("lower", [False, True])
def test_garbage_triangle_of_the_factor_gets_no_gradient(lower):
    def f(c, b):
        return np.sum(cho_solve((c, lower), b) ** 2)

    factor = scipy.linalg.cholesky(spd(3), lower=lower)
    junk = rand(3, 3, seed=5, low=5.0, high=9.0)
    dirty = factor + (np.triu(junk, 1) if lower else np.tril(junk, -1))
    g = srcad.grad(f, wrt=(0, 1))
    clean, messy = g(factor, rand(3)), g(dirty, rand(3))
    for a, b in zip(clean, messy):
        np.testing.assert_array_equal(a, b)
    other = np.triu(messy[0], 1) if lower else np.tril(messy[0], -1)
    assert np.all(other == 0)
    srcad.check_grad(f, dirty, rand(3), wrt=(0, 1), modes=("rev", "fwd"), order=2)


def test_garbage_of_the_input_matrix_gets_no_gradient():
    # cho_factor reads one triangle of A: anything in the other changes nothing
    A = spd(3)
    dirty = np.tril(A) + np.triu(rand(3, 3, seed=3), 1)
    f = lambda a, b: np.sum(cho_solve(cho_factor(a, lower=True), b) ** 2)  # noqa: E731
    g = srcad.grad(f)(dirty, rand(3))
    np.testing.assert_array_equal(g, srcad.grad(f)(A, rand(3)))
    assert np.all(np.triu(g, 1) == 0)


# ---- refused, by name ----


def _overwritten(A, b):
    return np.sum(cho_solve(cho_factor(A, overwrite_a=True), b))


def _overwritten_b(A, b):
    return np.sum(cho_solve(cho_factor(A), b, True))


@pytest.mark.parametrize("func", [_overwritten, _overwritten_b])
def test_overwrite_is_refused(func):
    with pytest.raises(srcad.TransformError, match="overwrite_"):
        srcad.grad(func)(spd(3), rand(3))


def test_stacks_are_refused():
    a = np.stack([spd(3), spd(3, seed=1)])
    f = lambda a, b: np.sum(cho_solve(cho_factor(a), b))  # noqa: E731
    with pytest.raises(NotImplementedError, match="cho_solve of one factor"):
        srcad.grad(f)(a, rand(2, 3, 3))


def test_pair_passed_to_a_helper_is_refused():
    with pytest.raises(srcad.TransformError, match="flows into a list or expression"):
        srcad.grad(pair_into_a_helper)(spd(3), rand(3))


def _banded(ab, b):
    return np.sum(scipy.linalg.cho_solve_banded((ab, False), b))


def test_banded_has_no_rule():
    with pytest.raises(srcad.NoAdjointError, match="scipy.linalg.cho_solve_banded"):
        srcad.grad(_banded)(np.ones((2, 3)), rand(3))
