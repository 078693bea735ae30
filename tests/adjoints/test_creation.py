"""Arrays made from values: np.full_like, np.linspace, np.r_/np.c_; np.arange refuses."""

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad

X = np.array([0.3, -0.7, 1.1])


def test_full_like_fill_value():
    check("np.full_like(y, x[0]) * y", rand(3), rand(2, 3))


def test_linspace_ends():
    check("np.linspace(x[0], x[1], 5)", X)
    check("np.linspace(x, y, 4)", rand(3), rand(3))
    check("np.linspace(x, y, 4, endpoint=False, axis=-1)", rand(2, 3), rand(3))
    check("np.linspace(0.0, x, 3, axis=1)", rand(2))
    check("np.linspace(x[0], 2.0, 1)", X)


def test_logspace_and_geomspace_ends():
    check("np.logspace(x[0], x[1], 4)", X)
    check("np.logspace(x, 1.0, 3, base=2.0, axis=-1)", rand(2))
    check("np.logspace(x, y, 3, endpoint=False)", rand(2), rand(2))
    check("np.geomspace(x[0] + 3.0, x[2], 5)", X)
    check("np.geomspace(-x - 3.0, -1.0, 3, axis=1)", np.abs(rand(2)))
    check("np.geomspace(x, y, 4, endpoint=False)", np.abs(rand(2)) + 0.5, np.abs(rand(2)) + 1.0)


def test_linspace_value_from_the_issue():
    f = make_function("np.sum(np.linspace(x[0], x[1], 5) ** 2)", "x")
    t = np.linspace(0, 1, 5)
    samples = X[0] + (X[1] - X[0]) * t
    expected = [np.sum(2 * samples * (1 - t)), np.sum(2 * samples * t), 0.0]
    np.testing.assert_allclose(srcad.grad(f)(X), expected)


def test_r_and_c_joins():
    check("np.r_[x, x]", X)
    check("np.r_[x[0], x * 2.0, 3.0]", X)
    check("np.r_[x, y]", rand(2, 3), rand(1, 3))
    check("np.c_[x, x]", X)
    check("np.c_[x, y]", rand(2, 3), rand(2))
    f = make_function("np.sum(np.r_[x, x] ** 2)", "x")
    np.testing.assert_allclose(srcad.grad(f)(X), 4 * X)
    g = make_function("np.sum(np.c_[x, x] ** 2)", "x")
    np.testing.assert_allclose(srcad.jvp(g, (X,), (np.ones(3),))[1], 4 * np.sum(X))


def test_einsum_sublists():
    check("np.einsum(x, [0], x, [0], [])", X)
    check("np.einsum(x, [0, 1], y, [1], [0])", rand(2, 3), rand(3))
    check("np.einsum(x, [0, 1], y, [1, 2])", rand(2, 3), rand(3, 2))
    check("np.einsum(x, (0, 1), x, (0, 1), ())", rand(2, 3))
    f = make_function("np.einsum(x, [0], x, [0], [])", "x")
    assert srcad.jvp(f, (X,), (np.ones(3),))[1] == pytest.approx(2 * np.sum(X))


@pytest.mark.parametrize(
    "expr, message",
    [
        ("np.arange(x[0], 3.0, 0.5)", "np.arange with respect to its argument 'start'"),
        ("np.arange(0.0, 3.0, x[0])", "np.arange with respect to its argument 'step'"),
        ("np.mgrid[x[0]:x[1]:3j]", "np.mgrid"),
        ("np.ogrid[x[0]:x[1]:3j]", "np.ogrid"),
        ("np.r_[x, 0:3]", r"np.r_\[...\] with slices or a directive"),
        ("np.r_['0,2', x, x]", r"np.r_\[...\] with slices or a directive"),
        ("np.linspace(x[0], x[1], 5, retstep=True)[0]", "np.linspace with retstep"),
        ("np.logspace(0.0, 1.0, 3, base=x[2])", "np.logspace with respect to its argument 'base'"),
        ("np.einsum(x, [...], x, [...])", "np.einsum with sublists"),
        ("np.einsum(x, [0], x, [0], [-1])", "np.einsum with sublists"),
    ],
)
def test_refused_with_the_op_named(expr, message):
    f = make_function(f"np.sum({expr})", "x")
    for derivative in (
        lambda: srcad.grad(f)(X),
        lambda: srcad.jvp(f, (X,), (np.ones(3),)),
        lambda: srcad.hessian(f)(X),
    ):
        with pytest.raises(srcad.TransformError, match=message):
            derivative()


def test_constant_arguments_still_run():
    f = make_function(
        "np.sum(np.arange(0.0, 3.0, 0.5) * x[0]) + np.sum(np.linspace(0, 1, 3) * x[1])", "x"
    )
    np.testing.assert_allclose(srcad.grad(f)(X), [7.5, 1.5, 0.0])
    g = make_function("np.sum(x[np.s_[0:2]] * np.r_[1.0, 2.0])", "x")
    np.testing.assert_allclose(srcad.grad(g)(X), [1.0, 2.0, 0.0])
