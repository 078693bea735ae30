"""Complex numbers, JAX's convention: a real f's gradient is df/dx - i df/dy, a rule is the
plain transpose of the op's tangent map, a real input's gradient is real, and a complex
output needs holomorphic=True. Everything against finite differences in both directions."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(3)
Z = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
W = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
X = RNG.standard_normal(4)
A = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))


def check(f, *args, order=1, wrt=0):
    return srcad.check_grad(f, *args, order=order, wrt=wrt, modes=("rev", "fwd"))


def abs_squared(z):
    return np.sum(np.abs(z) ** 2)


def test_closed_form_abs_squared():
    assert abs(srcad.grad(abs_squared)(np.complex128(3 + 4j)) - (6 - 8j)) < 1e-12
    np.testing.assert_allclose(srcad.grad(abs_squared)(Z), 2 * np.conj(Z))
    g = srcad.grad(lambda z: abs(z) ** 2)(3 + 4j)
    assert isinstance(g, complex) and abs(g - (6 - 8j)) < 1e-12


def real_part(z):
    return np.sum(np.real(z) * np.arange(4.0) + z.real**2)


def imag_part(z):
    return np.sum(np.imag(z) ** 3 + z.imag * np.arange(4.0))


def conjugates(z):
    return np.real(np.sum(np.conj(z) * z * (1 + 2j) + z.conj() ** 2 + np.conjugate(z) * 1j))


def magnitudes(z):
    return np.sum(np.abs(z) * np.real(z) + np.absolute(z * z))


def angles(z):
    return np.sum(np.angle(z) ** 2 + np.angle(z, deg=True) * np.arange(4.0))


def vdots(z, w):
    return np.real(np.vdot(z, w) * (2 - 1j)) + np.imag(np.vdot(w, z * z))


def holomorphic_parts(z, w):
    y = np.exp(z) * np.sin(w) / (1 + z * z) + np.sqrt(w) - np.log(z) ** 2 + z**3
    return np.sum(np.abs(y) ** 2 + np.real(np.sum(y)))


def products(a, z):
    y = a @ z + np.linalg.inv(a) @ np.conj(z) + np.dot(a, a) @ z
    return np.sum(np.abs(y) ** 2) + np.real(np.linalg.det(a)) + np.imag(np.trace(a @ a))


def reductions(z):
    return np.real(np.sum(z**2) * np.mean(z) + np.prod(z)) + np.imag(np.cumsum(z)[2])


@pytest.mark.parametrize(
    "f", [real_part, imag_part, conjugates, magnitudes, angles, reductions, abs_squared]
)
def test_each_op_against_finite_differences(f):
    check(f, Z)


@pytest.mark.parametrize("f", [vdots, holomorphic_parts])
def test_two_complex_arguments(f):
    check(f, Z, W, wrt=(0, 1))


def test_linear_algebra_plain_transposes():
    check(products, A, Z[:3], wrt=(0, 1))


def test_abs_at_zero_is_the_zero_subgradient():
    z = np.array([0j, 1 + 1j, 2j, -1.0 + 0j])
    np.testing.assert_allclose(srcad.grad(magnitudes)(z)[0], 0)
    assert np.all(np.isfinite(srcad.grad(angles)(z)))


def mixes(x):
    y = x * (1 + 2j) + np.exp(1j * x) + np.fft.fft(x)
    return np.sum(np.abs(y) ** 3) + np.real(np.sum(y * y))


def test_real_input_complex_intermediate_gives_real_gradient():
    g = srcad.grad(mixes)(X)
    assert g.dtype == np.float64
    check(mixes, X)
    g32 = srcad.grad(mixes)(X.astype(np.float32))
    assert g32.dtype == np.float32
    assert isinstance(srcad.grad(lambda t: abs(t * 1j + 2.0) ** 2)(1.5), float)


def mixes_abs(x):
    # a real value fed back through abs and real from a complex intermediate
    r = np.abs(x * (1 + 1j))
    return np.sum(np.real(r * 1j * (2 - 1j)) + np.abs(r * 1j + x) ** 2)


def test_real_intermediate_of_complex_values():
    check(mixes_abs, X)
    check(lambda z: np.sum(np.abs(np.abs(z) * 1j + z) ** 2), Z)


def test_second_order():
    check(abs_squared, Z, order=2)
    check(magnitudes, Z, order=2)
    check(angles, Z, order=2)
    check(mixes, X, order=2)
    check(holomorphic_parts, Z, W, wrt=(0, 1), order=2)
    h = srcad.hessian(mixes)(X)
    assert h.dtype == np.float64
    np.testing.assert_allclose(h, h.T, atol=1e-8)


def square(z):
    return z * z + 3 * z


def sums(z):
    return np.sum(np.sin(z) * z)


def test_holomorphic():
    z = np.complex128(1 + 2j)
    assert srcad.grad(square, holomorphic=True)(z) == 2 * z + 3
    v, g = srcad.value_and_grad(sums, holomorphic=True)(Z)
    np.testing.assert_allclose(g, np.cos(Z) * Z + np.sin(Z))
    np.testing.assert_allclose(v, sums(Z))
    jac = srcad.jacobian(np.exp, holomorphic=True)
    for mode in ("fwd", "rev"):
        np.testing.assert_allclose(
            srcad.jacobian(lambda z: np.exp(z), mode=mode, holomorphic=True)(Z), np.diag(np.exp(Z))
        )
    np.testing.assert_allclose(jac(Z), np.diag(np.exp(Z)))
    h = srcad.hessian(sums, holomorphic=True)(Z)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(Z) - Z * np.sin(Z)))


def test_refusals():
    with pytest.raises(TypeError, match="requires real-valued outputs.*holomorphic=True"):
        srcad.grad(square)(np.complex128(1 + 1j))
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        srcad.value_and_grad(lambda x: np.sum(x * 1j))(X)
    with pytest.raises(TypeError, match="holomorphic=True requires complex inputs"):
        srcad.grad(square, holomorphic=True)(np.float64(1.0))
    with pytest.raises(TypeError, match="holomorphic=True requires complex outputs"):
        srcad.grad(abs_squared, holomorphic=True)(Z)
    with pytest.raises(TypeError, match="needs holomorphic=True"):
        srcad.hessian(abs_squared)(Z)
    with pytest.raises(TypeError, match="mode='fwd'"):
        srcad.jacobian(np.abs, mode="fwd")(Z)
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        srcad.jacobian(np.exp)(Z)


def test_vjp_and_jvp_with_complex_values():
    out, pullback = srcad.vjp(np.exp, Z)
    (ct,) = pullback(W)
    np.testing.assert_allclose(ct, W * np.exp(Z))  # no conjugation (JAX's transpose)
    out, tangent = srcad.jvp(np.exp, (Z,), (W,))
    np.testing.assert_allclose(tangent, W * np.exp(Z))
    out, tangent = srcad.jvp(abs_squared, (Z,), (W,))
    np.testing.assert_allclose(tangent, np.sum(2 * np.real(np.conj(Z) * W)))
    # the derivative of the gradient along a direction (JAX's jvp of grad)
    _, hw = srcad.jvp(srcad.grad(abs_squared), (Z,), (W,))
    np.testing.assert_allclose(hw, 2 * np.conj(W))


def test_norm_of_complex_values():
    # np.linalg.norm of a complex vector: sqrt(sum |z|^2), gradient conj(z) / norm
    def f(z):
        return np.linalg.norm(z)

    np.testing.assert_allclose(srcad.grad(f)(Z), np.conj(Z) / np.linalg.norm(Z))
    check(f, Z)
    check(lambda a: np.linalg.norm(a @ a), A, order=2)


def test_grad_refuses_a_complex_output_of_real_arguments_on_every_call():
    # code returning the gradients alone cannot see the output: the first call of each
    # kind of argument takes the checked path, which refuses it (it used to return the
    # gradient of the real part silently)
    def f(x):
        return np.sum(x * 1j)  # its gradient code returns [0, 0] for the real part

    d = srcad.grad(f)
    for args in [(np.array([0.5, 1.0]),), (np.array([0.5, 1.0]),), (0.5,), (0.5,)]:
        with pytest.raises(TypeError, match="real-valued outputs"):
            d(*args)


# ---- every rule declared complex-safe, against finite differences along real and
# imaginary directions; every other rule refuses complex values (never a wrong value) ----

H = A @ A.conj().T + 3 * np.eye(3)  # Hermitian positive definite
S = np.array([1.5 - 0.5j, -0.3 + 2.0j, 0.7 + 0.1j, -1.2 - 0.8j])  # no ties in either part


def sq(y):
    return np.sum(np.abs(y) ** 2) + np.real(np.sum(y * (1 + 0.5j)))


def ops_holomorphic(z):
    y = np.tan(z) + np.tanh(z) + np.arcsin(z / 4) + np.arccos(z / 4) + np.arctan(z / 3)
    y = y + np.arcsinh(z) + np.arccosh(z + 3) + np.arctanh(z / 3) + np.expm1(z) + np.exp2(z)
    y = y + np.log1p(z) + np.log2(z) + np.log10(z) + np.reciprocal(z) + np.square(z)
    y = y + np.cosh(z) * np.sinh(z) + np.power(z, 2.5) + z ** (1 + 1j) + (2 - 1j) ** z
    return sq(y + np.sinc(z / 3))


def ops_selections(z, w):
    y = np.maximum(z, w) + np.minimum(z, w) * 2 + np.fmax(z, w) * 3 + np.fmin(z, w) * 1j
    y = y + np.where(np.real(z) > 0, z, w) + np.sort(z) + np.max(z) + np.min(w)
    y = y + np.clip(z, w[0], w[1]) + np.select([np.imag(z) > 0], [z], w) + np.nanmax(z)
    return sq(y + np.nan_to_num(z) + np.real_if_close(w) + np.partition(z, 1) + np.nanmin(w))


def ops_creation(z):
    y = np.linspace(z[0], z[1], 4) + np.full_like(z, z[2]) + np.r_[z[:2], z[2:]]
    return sq(y) + sq(np.nanmean(z) * np.nanprod(z) + np.c_[z, z][:, 1])


def ops_shapes(z):
    m = np.reshape(z, (2, 2))
    y = np.concatenate([m.T.ravel(), np.flip(z), np.roll(z, 1), np.diff(z), z[::2], z[[3, 0]]])
    y = np.append(y, np.stack([z, z * 1j]).sum(axis=0)) + np.tile(z[:2], 13)[:23]
    return sq(y) + sq(np.pad(z, 1)) + sq(np.take(z, [1, 2])) + sq(np.triu(np.outer(z, z)))


def ops_reductions(z):
    m = np.reshape(z, (2, 2))
    y = np.cumsum(z) + np.cumprod(z) + np.mean(m, axis=0).sum() + np.prod(m, axis=1)[0]
    v = np.var(z) + np.std(m, axis=1) + np.nanvar(z) + np.nanstd(m, axis=0, ddof=1)
    return sq(y) + np.sum(v**2) + sq(np.average(z, weights=np.arange(1.0, 5.0)) + np.nansum(z))


def ops_linalg(a, z):
    y = np.linalg.solve(a, z) + np.linalg.inv(a) @ z + np.dot(a, z) + np.einsum("ij,j->i", a, z)
    y = y + np.linalg.det(a) * np.trace(a) + np.inner(z, z) + np.kron(z[:1], z) + np.diag(a)
    y = y + np.linalg.matrix_power(a, 2) @ z + np.tensordot(a, z, axes=1) + np.cross(z, y)
    n = np.linalg.norm(a) + np.linalg.norm(z) + np.linalg.vector_norm(z)
    return sq(y) + n + np.linalg.matrix_norm(a) + np.real(np.vdot(z, y))


def ops_numeric(z):
    y = np.convolve(z, z[:2] * 1j) + np.polyval(z, z[0]) + np.correlate(z, z[:2] * 2j, "full")
    w = np.einsum("i,j,j->i", z, z, z[::-1]) + np.einsum("ij,j->i", np.outer(z, z), z)
    return sq(y) + sq(np.vander(z, 3)) + sq(np.trapezoid(z)) + sq(np.gradient(z)) + sq(w)


def ops_sign(z):
    return sq(np.sign(z) * z[::-1])


def test_declared_complex_safe_rules():
    check(ops_holomorphic, Z)
    check(ops_selections, S, W, wrt=(0, 1))
    check(ops_shapes, Z)
    check(ops_reductions, Z)
    check(ops_linalg, A, Z[:3], wrt=(0, 1))
    check(ops_numeric, Z)
    check(ops_sign, Z)
    check(ops_creation, Z)


def mixed_real_operands(x, z):
    # a real x meeting complex values in products whose rules do not unbroadcast: the
    # real gradient's own derivative (jvp of grad) must be real too
    y = np.vdot(x, z) * z + np.dot(x, z) * z + np.inner(z, x) * z + np.polyval(x, z)
    return sq(y) + sq(np.tensordot(A, x[:3], axes=1)) + sq(np.einsum("ij,j->i", A, x[:3]))


def test_declared_complex_safe_rules_second_order():
    check(ops_numeric, Z, order=2)
    check(mixed_real_operands, X, Z, wrt=(0, 1), order=2)
    check(ops_reductions, Z, order=2)
    check(ops_sign, Z, order=2)
    check(ops_selections, S, W, wrt=(0, 1), order=2)
    check(lambda a: np.linalg.norm(a) + np.linalg.vector_norm(a[0]) ** 3, A, order=2)


def test_sign_of_real_values_is_still_flat():
    x = np.array([-2.0, 0.0, 3.0])
    g = srcad.grad(lambda x: np.sum(np.sign(x) * x**2))(x)
    np.testing.assert_array_equal(g, 2 * x * np.sign(x))
    np.testing.assert_array_equal(srcad.grad(lambda x: np.sum(np.sign(x)))(x), 0)
    assert srcad.grad(lambda z: np.real(np.sign(z)))(0j) == 0


def refused_eigh(h):
    return np.sum(np.linalg.eigh(h)[0])


def refused_cholesky(h):
    return np.sum(np.abs(np.linalg.cholesky(h)) ** 2)


def refused_svdvals(a):
    return np.sum(np.linalg.svdvals(a))


def refused_slogdet(a):
    return np.linalg.slogdet(a)[1]


def refused_pinv(a):
    return np.sum(np.abs(np.linalg.pinv(a)))


def refused_norm_ord(z):
    return np.linalg.norm(z, ord=1)


def refused_vector_norm_ord(z):
    return np.linalg.vector_norm(z, ord=3)


def refused_cov(z):
    return np.real(np.sum(np.cov(np.stack([z, z * z]))))


def refused_qr(a):
    return np.real(np.sum(np.linalg.qr(a)[1]))


def refused_svd(a):
    return np.sum(np.linalg.svd(a)[1])


@pytest.mark.parametrize(
    "f, arg, label",
    [
        (refused_eigh, H, "np.linalg.eigh"),
        (refused_cholesky, H, "np.linalg.cholesky"),
        (refused_svdvals, A, "np.linalg.svdvals"),
        (refused_slogdet, A, "np.linalg.slogdet"),
        (refused_pinv, A, "np.linalg.pinv"),
        (refused_norm_ord, Z, "np.linalg.norm with an ord"),
        (refused_vector_norm_ord, Z, "np.linalg.vector_norm with an ord"),
        (refused_cov, Z, "np.cov"),
        (refused_qr, A, "np.linalg.qr"),
        (refused_svd, A, "np.linalg.svd"),
    ],
)
def test_rules_not_right_for_complex_values_refuse_them(f, arg, label):
    for run in (
        lambda: srcad.grad(f)(arg),
        lambda: srcad.jvp(f, (arg,), (arg,)),
    ):
        with pytest.raises(srcad.NoAdjointError, match=f"{label}.*complex"):
            run()


def test_refusals_cost_nothing_for_real_values():
    x = np.abs(A) + 3 * np.eye(3)
    srcad.check_grad(refused_slogdet, x, modes=("rev", "fwd"), order=2)
    srcad.check_grad(refused_norm_ord, X, modes=("rev", "fwd"))


def real_intermediate_meets_complex(z):
    # abs(z) is real; stacked, concatenated or vdot-ed with complex values its cotangent
    # carries an imaginary part, which abs's rule must drop (it used to turn it into a
    # wrong real part of the gradient)
    r = np.abs(z)
    y = np.stack([r, z]).sum(axis=0) + np.concatenate([r, z])[:4] + np.vdot(r, z) * z
    return sq(y) + sq(np.outer(r, z)) + sq(np.sign(z) @ A[:, :1].repeat(4, axis=0)[:4])


def test_a_real_intermediate_meeting_complex_values():
    check(real_intermediate_meets_complex, Z)
    check(real_intermediate_meets_complex, Z, order=2)
