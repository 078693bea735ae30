"""Pytrees in jacobian, hessian, hvp, jvp/vjp of a gradient and check_grad(order=2): the
same numbers as the flat function of the leaves, nested as JAX nests them."""

import numpy as np
import pytest

import srcad

P = {"a": np.array([0.3, -0.5]), "b": (np.array([1.2]), 0.7)}
X = np.array([0.4, 1.1])
V = np.array([0.3, -0.5, 1.2, 0.7])  # P's leaves in order


def model(p, x):
    return np.sum(np.sin(p["a"] * x) ** 2) * p["b"][1] + np.sum(p["b"][0] ** 3 * p["a"][0])


def flat(v, x):
    return np.sum(np.sin(v[:2] * x) ** 2) * v[3] + np.sum(v[2:3] ** 3 * v[0])


def test_check_grad_second_order_on_a_pytree():
    srcad.check_grad(model, P, X, order=2, modes=("rev", "fwd"))


def test_hessian_of_a_pytree_nests_blocks_like_jax():
    H = srcad.hessian(model)(P, X)
    F = srcad.hessian(flat)(V, X)
    assert set(H) == {"a", "b"} and set(H["a"]) == {"a", "b"}
    assert np.allclose(H["a"]["a"], F[:2, :2])
    assert np.allclose(H["a"]["b"][0], F[:2, 2:3])
    assert np.allclose(H["a"]["b"][1], F[:2, 3])
    assert np.allclose(H["b"][0]["a"], F[2:3, :2])
    assert np.allclose(H["b"][1]["b"][1], F[3, 3])
    assert not np.allclose(F, 0.0)


def test_hessian_with_a_pytree_and_an_array():
    table = srcad.hessian(model, wrt=(0, 1))(P, X)
    F = srcad.hessian(flat, wrt=(0, 1))(V, X)
    assert np.allclose(table[0][1]["a"], F[0][1][:2])
    assert np.allclose(table[1][0]["b"][1], F[1][0][:, 3])
    assert np.allclose(table[1][1], F[1][1])


def test_hvp_and_jvp_of_grad_on_a_pytree():
    tangent = {"a": np.array([1.0, -2.0]), "b": (np.array([0.5]), 1.5)}
    t = np.array([1.0, -2.0, 0.5, 1.5])
    hv, none = srcad.hvp(model, (P, X), (tangent, None))
    expected = srcad.hessian(flat)(V, X) @ t
    assert none is None
    assert np.allclose(hv["a"], expected[:2]) and np.allclose(hv["b"][1], expected[3])
    (value, g), (dvalue, hg) = srcad.jvp(srcad.value_and_grad(model), (P, X), (tangent, None))
    assert np.isclose(value, model(P, X)) and np.allclose(g["a"], srcad.grad(flat)(V, X)[:2])
    assert np.isclose(dvalue, srcad.grad(flat)(V, X) @ t)
    assert np.allclose(hg["b"][0], expected[2:3])


def test_vjp_of_grad_on_a_pytree():
    gradient = srcad.grad(model)
    g, pullback = srcad.vjp(gradient, P, X)
    assert np.allclose(g["a"], srcad.grad(flat)(V, X)[:2])
    cotangent = {"a": np.array([1.0, 0.0]), "b": (np.array([0.0]), 0.0)}
    dp, dx = pullback(cotangent)
    assert np.allclose(dp["a"], srcad.hessian(flat)(V, X)[0, :2])
    assert dx.shape == X.shape


def test_jacobian_with_respect_to_a_pytree():
    J = srcad.jacobian(lambda p: p["a"] * p["b"][1])(P)
    assert np.allclose(J["a"], 0.7 * np.eye(2))
    assert np.allclose(J["b"][1], P["a"]) and J["b"][0].shape == (2, 1)


def test_a_tangent_of_another_structure_is_an_error():
    with pytest.raises(ValueError, match="structure"):
        srcad.hvp(model, (P, X), ({"a": np.ones(2)}, None))
