"""Products declared once (registry.bilinear) and the reshape family declared linear: the
templates read as the hand-written ones they replace, and the rules differentiate right in
both modes and at second order (against central finite differences)."""

import gast
import numpy as np
import pytest

import srcad
from srcad.adjoints import registry
from srcad.adjoints.registry import Method, Operator, d, lookup, lookup_tangent
from srcad.runtime.accumulate import grad_matmul_lhs, grad_tensordot_rhs, unreduce
from srcad.transform.codegen import to_source


def text(rule):
    """A rule's template body as source, without the refusal of complex values."""
    return to_source(gast.Module(body=rule.unchecked or rule.body, type_ignores=[])).strip()


@pytest.mark.parametrize(
    "op, tangent",
    [
        # a Python operator first among the ops: the tangent is written with it, each
        # operand in its place (the golden tests pin a * d[b], never d[b] * a)
        (Operator("Mult"), "d[y] = d[a] * b\nd[y] = a * d[b]"),
        (np.multiply, "d[y] = d[a] * b\nd[y] = a * d[b]"),
        (Operator("MatMult"), "d[y] = d[a] @ b\nd[y] = a @ d[b]"),
        (Method("dot"), "d[y] = xp.dot(d[a], b)\nd[y] = xp.dot(a, d[b])"),
        (np.vdot, "d[y] = xp.vdot(d[a], b)\nd[y] = xp.vdot(a, d[b])"),
        (np.kron, "d[y] = xp.kron(d[a], b)\nd[y] = xp.kron(a, d[b])"),
        (
            np.tensordot,
            "d[y] = xp.tensordot(d[a], b, axes=axes)\nd[y] = xp.tensordot(a, d[b], axes=axes)",
        ),
        (
            np.cross,
            "d[y] = xp.cross(d[a], b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)\n"
            "d[y] = xp.cross(a, d[b], axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)",
        ),
        # a static operand (read for its shape) gets no term
        (grad_matmul_lhs, "d[y] = grad_matmul_lhs(d[g], a, b)\nd[y] = grad_matmul_lhs(g, a, d[b])"),
        (
            grad_tensordot_rhs,
            "d[r] = grad_tensordot_rhs(d[g], a, b, axes=axes)\n"
            "d[r] = grad_tensordot_rhs(g, d[a], b, axes=axes)",
        ),
        (unreduce, "d[y] = unreduce(d[g], x, axis=axis, keepdims=keepdims, where=where)"),
        (np.reshape, "d[y] = xp.reshape(d[x], shape)"),
        (Method("flatten"), "d[y] = xp.ravel(d[x])"),
        (np.squeeze, "d[y] = xp.squeeze(d[x], axis=axis)"),
    ],
)
def test_the_tangent_a_declaration_stands_for(op, tangent):
    assert text(lookup_tangent(op)) == tangent


def test_declared_products_keep_their_names_and_adjoints():
    assert (lookup(np.matmul).name, lookup_tangent(np.matmul).name) == ("matmul", "matmul_tangent")
    assert text(lookup(Operator("Mult"))) == (
        "d[a] = unbroadcast(d[y] * b, a)\nd[b] = unbroadcast(d[y] * a, b)"
    )
    assert lookup_tangent(grad_matmul_lhs).static == frozenset({"a"})


def products(a, b):
    m = a @ b.T + np.dot(a, b.T) * np.multiply(a[:, :1], 2.0)
    v = np.vdot(a, np.sin(b)) + np.sum(np.inner(a, b) ** 2) + np.sum(np.outer(a[0], b[1]) * a[1, 0])
    k = np.sum(np.kron(a[:2, :2], b[:2, :2]) ** 2)
    t = np.sum(np.tensordot(a, b, axes=([1], [1])) * np.tensordot(a, b)) + np.sum(a.dot(b.T) ** 2)
    c = np.sum(np.cross(a, b) ** 2) + np.sum(np.cross(a.T, b.T, axis=0) * a.T)
    # vector axes apart: the adjoint calls cross with its axes moved, which the tangent of
    # that call (second order) passes on by keyword
    c = c + np.sum(np.cross(a.T, b, axisa=0, axisc=0) * np.cross(b.T, a, 0, -1, 0))
    return np.sum(np.tanh(m)) + v + k + t + c


def reshapes(x, w):
    a = np.reshape(x * x, (3, 4)) @ w
    b = np.ravel(np.sin(x)) * x.flatten() * x.ravel()
    c = np.squeeze(np.expand_dims(x, 1), axis=1) * x.squeeze() + np.expand_dims(x, 0)[0]
    return np.sum(a**2) + np.sum(b) + np.sum(np.cos(c))


@pytest.mark.parametrize("order", [1, 2])
def test_products_in_both_modes(order):
    a = np.linspace(-1.2, 0.9, 12).reshape(4, 3)
    b = np.cos(np.arange(12.0)).reshape(4, 3)
    assert srcad.check_grad(products, a, b, wrt=(0, 1), modes=("rev", "fwd"), order=order) < 1e-6


@pytest.mark.parametrize("order", [1, 2])
def test_the_reshape_family_in_both_modes(order):
    x = np.linspace(-1.1, 0.8, 12).reshape(6, 2)
    w = np.sin(np.arange(8.0)).reshape(4, 2)
    assert srcad.check_grad(reshapes, x, w, wrt=(0, 1), modes=("rev", "fwd"), order=order) < 1e-6


def test_the_product_rule_has_one_term_per_operand():
    a, b = np.array([[1.0, 2.0], [3.0, 5.0]]), np.array([[0.5, -1.0], [2.0, 0.25]])
    da, db = np.array([[0.1, 0.0], [-0.3, 1.0]]), np.array([[2.0, 1.0], [0.0, -1.0]])
    _, tangent = srcad.jvp(lambda p, q: p @ q, (a, b), (da, db))
    np.testing.assert_allclose(tangent, da @ b + a @ db, rtol=1e-15)
    _, tangent = srcad.jvp(lambda p, q: np.kron(p, q), (a, b), (da, None))
    np.testing.assert_allclose(tangent, np.kron(da, b), rtol=1e-15)


# ---- a user's product ----


def weighted(a, b, scale=1.0):
    return scale * (a @ b.T)


@pytest.fixture
def user_product():
    @srcad.bilinear(weighted)
    def weighted_adjoint(y, a, b, scale=1.0):
        d[a] = scale * (d[y] @ b)
        d[b] = scale * (d[y].T @ a)

    yield
    registry._RULES.pop(weighted, None)
    registry._TANGENTS.pop(weighted, None)


def uses_weighted(a, b):
    return np.sum(np.sin(weighted(a, b, scale=1.5)) * weighted(b, a))


def test_a_users_product_in_both_modes_and_at_second_order(user_product):
    a = np.linspace(-0.7, 1.1, 6).reshape(3, 2)
    b = np.cos(np.arange(6.0)).reshape(3, 2)
    for order in (1, 2):
        error = srcad.check_grad(uses_weighted, a, b, wrt=(0, 1), modes=("rev", "fwd"), order=order)
        assert error < 1e-6
    assert text(lookup_tangent(weighted)) == (
        "d[y] = weighted(d[a], b, scale=scale)\nd[y] = weighted(a, d[b], scale=scale)"
    )
    # not declared complex_safe: complex values are refused, not differentiated wrongly
    z = a + 0.5j * b
    with pytest.raises(srcad.NoAdjointError, match="weighted"):
        srcad.jvp(lambda p: np.real(np.sum(weighted(p, p))), (z,), (np.ones_like(z),))


def test_wrong_products_are_refused():
    with pytest.raises(TypeError, match="bilinear.*gradients"):

        @srcad.bilinear(weighted)
        def no_gradients(y, a, b, scale=1.0):
            pass

    with pytest.raises(TypeError, match="bilinear.*not the op's default"):

        @srcad.bilinear(weighted)
        def other_default(y, a, b, scale=2.0):
            d[a] = scale * (d[y] @ b)

    with pytest.raises(TypeError, match="bilinear.*not supported"):

        @srcad.bilinear(weighted)
        def starred(y, a, *b):
            d[a] = d[y]

    with pytest.raises(TypeError, match="two operands"):

        @srcad.bilinear(Operator("Mult"))
        def three(y, a, b, c):
            d[a] = d[y]

    registry._RULES.pop(weighted, None)
    registry._TANGENTS.pop(weighted, None)
