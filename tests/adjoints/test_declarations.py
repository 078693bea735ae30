"""One declaration for both rules (registry.partials, registry.linear): the templates they
stand for read as hand-written ones, and a user's declarations differentiate right in both
modes and at second order (against central finite differences)."""

import math

import gast
import numpy as np
import pytest

import srcad
from srcad.adjoints import registry
from srcad.adjoints.registry import d, lookup, lookup_tangent, xp
from srcad.runtime.complexes import fit_to
from srcad.transform.codegen import to_source


def text(rule):
    """A rule's template body as source, without the refusal of complex values."""
    return to_source(gast.Module(body=rule.unchecked or rule.body, type_ignores=[])).strip()


@pytest.mark.parametrize(
    "op, adjoint, tangent",
    [
        (np.sin, "d[x] = d[y] * xp.cos(x)", "d[y] = d[x] * xp.cos(x)"),
        (np.arccos, "d[x] = -d[y] / xp.sqrt(1 - x * x)", "d[y] = -d[x] / xp.sqrt(1 - x * x)"),
        (np.reciprocal, "d[x] = -d[y] * y * y", "d[y] = -d[x] * y * y"),
        (np.exp2, "d[x] = d[y] * y * math.log(2.0)", "d[y] = d[x] * y * math.log(2.0)"),
        (np.deg2rad, "d[x] = d[y] * (math.pi / 180.0)", "d[y] = d[x] * (math.pi / 180.0)"),
        (np.tanh, "d[x] = d[y] * (1 - y * y)", "d[y] = d[x] * (1 - y * y)"),
        (
            np.arctan2,
            "d[a] = unbroadcast(d[y] * b / (a * a + b * b), a)\n"
            "d[b] = unbroadcast(-d[y] * a / (a * a + b * b), b)",
            "d[y] = d[a] * b / (a * a + b * b)\nd[y] = -d[b] * a / (a * a + b * b)",
        ),
        (
            np.subtract,
            "d[a] = unbroadcast(d[y], a)\nd[b] = unbroadcast(-d[y], b)",
            # a constant partial does not broadcast a tangent to the result
            "d[y] = broadcast_like(d[a], y)\nd[y] = broadcast_like(-d[b], y)",
        ),
        (
            np.mod,
            "d[a] = unbroadcast(d[y], a)\nd[b] = unbroadcast(-d[y] * xp.floor_divide(a, b), b)",
            "d[y] = broadcast_like(d[a], y)\nd[y] = -d[b] * xp.floor_divide(a, b)",
        ),
        (
            math.pow,
            None,
            "d[y] = d[a] * b * math.pow(a, unit_if_zero(b) - 1)\n"
            "d[y] = d[b] * y * math.log(unit_if_zero(a))",
        ),
        (np.flip, "d[x] = xp.flip(d[y], axis=axis)", "d[y] = xp.flip(d[x], axis=axis)"),
        (np.triu, "d[x] = xp.triu(d[y], k)", "d[y] = xp.triu(d[x], k=k)"),
        (np.fft.fft, None, "d[y] = xp.fft.fft(d[a], n=n, axis=axis, norm=norm)"),
        (
            np.cumulative_sum,
            None,
            "d[y] = xp.cumulative_sum(d[x], axis=axis, include_initial=include_initial)",
        ),
        (np.insert, None, "d[y] = xp.insert(d[arr], obj, d[values], axis=axis)"),
        (fit_to, "d[g] = fit_to(d[r], g, axes)", "d[r] = fit_to(d[g], like, axes=axes)"),
    ],
)
def test_the_templates_a_declaration_stands_for_read_as_written_by_hand(op, adjoint, tangent):
    if adjoint is not None:
        assert text(lookup(op)) == adjoint
    assert text(lookup_tangent(op)) == tangent


def test_declared_rules_keep_their_names():
    # (the rules' names say which are right for complex values: complex_safe_rules)
    assert (lookup(np.sin).name, lookup_tangent(np.sin).name) == ("sin", "sin_tangent")
    assert lookup_tangent(fit_to).name == "fit_to_tangent"
    assert lookup(np.sin).shape_preserving and not lookup_tangent(np.sin).shape_preserving


# ---- a user's declarations ----


def shift(x, k=1):
    return np.roll(x, k)


def softplus(x):
    return np.log1p(np.exp(x))


def cube(z):
    return z * z * z


@pytest.fixture
def user_rules():
    """Declarations of a user's (removed afterwards, with whatever else a test adds)."""

    @srcad.linear(shift)
    def shift_adjoint(y, x, k=1):
        d[x] = shift(d[y], -k)

    @srcad.partials(softplus, shape_preserving=True)
    def softplus_rule(y, x):
        return 1 / (1 + xp.exp(-x))

    # a ufunc of two operands (they broadcast), holomorphic as np.power is
    @srcad.partials(np.float_power, complex_safe=True, cuda="pow")
    def float_power(y, a, b):
        return b * xp.float_power(a, b - 1), y * xp.log(a)

    @srcad.partials(cube, shape_preserving=True, complex_safe=True)
    def cube_rule(y, z):
        return 3 * z * z

    yield
    for op in (shift, softplus, np.float_power, cube):
        registry._RULES.pop(op, None)
        registry._TANGENTS.pop(op, None)
    registry._CUDA.pop("float_power", None)


def with_declared_ops(x):
    return np.sum(shift(x, 2) * np.sin(x) + softplus(x) ** 2 + shift(x) * x)


def powers(a, b):
    return np.sum(np.float_power(a, b) * np.cos(a))


def test_a_users_declarations_in_both_modes_and_at_second_order(user_rules):
    x = np.linspace(-0.9, 1.3, 7)
    for order in (1, 2):
        assert srcad.check_grad(with_declared_ops, x, modes=("rev", "fwd"), order=order) < 1e-6
    a, b = np.linspace(0.5, 1.5, 12).reshape(3, 4), np.linspace(0.7, 2.0, 4)
    for order in (1, 2):
        error = srcad.check_grad(powers, a, b, wrt=(0, 1), modes=("rev", "fwd"), order=order)
        assert error < 1e-5
    # the tangent of the linear op is the op itself, a default left out where the call does
    forward = srcad.source(with_declared_ops, mode="fwd")
    assert "shift(dx, k=2)" in forward and "shift(dx)" in forward


def powers_of_b(b, a):
    return np.float_power(a, b)


def mod_plus(b, a):
    return np.mod(b, a) + b


@pytest.mark.parametrize("f", [powers_of_b, mod_plus])
def test_the_tangent_of_a_broadcast_operand_has_the_results_shape(f, user_rules):
    # b (4,) broadcast against a (3, 4): through partials reading the result or the other
    # operand (float_power), and through constant ones (mod's and add's, broadcast_like)
    a, b, t = np.linspace(2.5, 5.5, 12).reshape(3, 4), np.linspace(0.7, 2.0, 4), np.ones(4)
    value, tangent = srcad.jvp(f, (b, a), (t, None))
    eps = 1e-7
    expected = (f(b + eps * t, a) - f(b - eps * t, a)) / (2 * eps)
    assert tangent.shape == value.shape == (3, 4)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)


def cubed_size(z):
    c = cube(z)
    return np.sum(np.real(c * np.conj(c)))


def softplus_size(z):
    s = softplus(z)
    return np.sum(np.real(s * np.conj(s)))


def test_complex_values_need_complex_safe(user_rules):
    z = np.array([0.3 + 0.4j, -0.7 + 0.1j, 1.2 - 0.5j])
    assert srcad.check_grad(cubed_size, z, modes=("rev", "fwd"), order=2) < 1e-6
    with pytest.raises(srcad.NoAdjointError, match="softplus"):
        srcad.grad(softplus_size)(z)
    with pytest.raises(srcad.NoAdjointError, match="softplus"):
        srcad.jvp(softplus_size, (z,), (np.ones(3),))


def test_the_cuda_function_comes_with_the_declaration(user_rules):
    @srcad.elementwise
    def kernel_ops(x, a):
        return np.arcsin(x) * np.arctan2(x, a) + np.float_power(a, x)

    assert registry.cuda_functions()["arcsin"] == "asin"
    operation = kernel_ops.compiled((0, 1)).kernel["operation"]
    assert "asin(x)" in operation and "atan2(x, a)" in operation and "pow(a, x)" in operation


# ---- declarations that cannot stand for right templates are refused when made ----


def test_wrong_declarations_are_refused():
    def two(x, y):
        return x * y

    with pytest.raises(TypeError, match="one partial derivative per operand"):

        @srcad.partials(two)
        def two_rule(r, x, y):
            return y

    with pytest.raises(TypeError, match="not the op's default"):

        @srcad.linear(shift)
        def shift_other_default(y, x, k=2):
            d[x] = shift(d[y], -k)

    with pytest.raises(TypeError, match="linear"):

        @srcad.linear(shift)
        def shift_other_name(y, x, steps=1):
            d[x] = shift(d[y], -steps)

    with pytest.raises(TypeError, match="not supported"):

        @srcad.linear(shift)
        def shift_star(y, x, *k):
            d[x] = shift(d[y], *k)

    with pytest.raises(TypeError, match="must be a function"):

        @srcad.linear(registry.Method("my_shift"))
        def method_shift(y, x, k=1):
            d[x] = shift(d[y], -k)

    for op in (two, shift, registry.Method("my_shift")):
        registry._RULES.pop(op, None)
        registry._TANGENTS.pop(op, None)
