"""np.fft: every transform against finite differences (real and imaginary directions), at
first order in both modes and at second order; n/s padding and cropping, every norm."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(7)
X = RNG.standard_normal(6)
Z = RNG.standard_normal(5) + 1j * RNG.standard_normal(5)
X2 = RNG.standard_normal((4, 5))
Z2 = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
NORMS = [None, "backward", "ortho", "forward"]


def check(f, *args, order=1):
    return srcad.check_grad(f, *args, order=order, modes=("rev", "fwd"))


def weights(shape):
    """Fixed weights: a loss that is not symmetric in the output's entries."""
    return np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 3, 5, 8, 9])
@pytest.mark.parametrize("arg", ["real", "complex"])
def test_fft_and_ifft(norm, n, arg):
    a = X if arg == "real" else Z
    length = n or a.shape[0]

    def f(a):
        y = np.fft.fft(a, n=n, norm=norm)
        return np.sum(np.abs(y) ** 2 * weights(length)) + np.real(np.sum(y * 1j))

    def g(a):
        y = np.fft.ifft(a, n=n, norm=norm)
        return np.sum(np.real(y) ** 3 + np.imag(y) * weights(length))

    check(f, a)
    check(g, a)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 5, 9, 10])
def test_rfft_odd_even_padded_cropped(norm, n):
    length = (n or X.shape[0]) // 2 + 1

    def f(x):
        y = np.fft.rfft(x, n=n, norm=norm)
        return np.sum(np.real(y) * weights(length) + np.imag(y) ** 2)

    assert srcad.grad(f)(X).dtype == np.float64
    check(f, X)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 4, 5, 7, 8, 12, 13])
def test_irfft_hermitian_weights(norm, n):
    # the zero and (even n) Nyquist entries read once, their imaginary parts ignored
    length = n or 2 * (Z.shape[0] - 1)

    def f(z):
        return np.sum(np.sin(np.fft.irfft(z, n=n, norm=norm)) * weights(length))

    check(f, Z)


@pytest.mark.parametrize("norm", NORMS)
def test_fft2_fftn_ifftn(norm):
    def f(z):
        y = np.fft.fft2(z, norm=norm)
        return np.sum(np.abs(y) ** 2 * weights(y.shape))

    def g(z):
        y = np.fft.ifftn(z, s=(3, 5), axes=(0, 1), norm=norm)
        return np.sum(np.real(y * np.conj(y)) * weights(y.shape))

    def h(x):
        y = np.fft.fftn(x, s=(6, 3), axes=(0, 1), norm=norm)
        return np.sum(np.imag(y) ** 2 * weights(y.shape))

    def k(z):
        y = np.fft.ifft2(z, norm=norm)
        return np.sum(np.real(y) ** 2)

    check(f, Z2)
    check(g, Z2)
    check(h, X2)
    check(k, Z2)


@pytest.mark.parametrize("norm", NORMS)
def test_rfftn_irfftn(norm):
    def f(x):
        y = np.fft.rfft2(x, s=(3, 7), norm=norm)
        return np.sum(np.abs(y) ** 2 * weights(y.shape))

    def g(z):
        y = np.fft.irfftn(z, s=(5, 4), axes=(0, 1), norm=norm)
        return np.sum(np.cos(y) * weights(y.shape))

    def h(z):
        y = np.fft.irfft2(z, norm=norm)
        return np.sum(y**3)

    def k(x):
        y = np.fft.rfftn(x, axes=(0,), norm=norm)
        return np.sum(np.real(y) * np.imag(y))

    check(f, X2)
    check(g, Z2)
    check(h, Z2)
    check(k, X2)


def test_axis_and_axes():
    def f(x):
        y = np.fft.fft(x, n=3, axis=0)
        return np.sum(np.abs(y) ** 2 * weights(y.shape))

    def g(z):
        y = np.fft.irfft(z, n=5, axis=0, norm="ortho")
        return np.sum(y * weights(y.shape))

    check(f, X2)
    check(g, Z2)


def test_shifts():
    def f(z):
        y = np.fft.fftshift(np.fft.fft(z))
        return np.sum(np.abs(y) ** 2 * weights(y.shape))

    def g(x):
        return np.sum(np.fft.ifftshift(x, axes=1) * weights(x.shape))

    check(f, Z)
    check(g, X2)


def test_frequencies_carry_no_gradient():
    def f(x):
        k = np.fft.fftfreq(x.shape[0], d=0.5) + np.fft.rfftfreq(2 * x.shape[0] - 1)[: x.shape[0]]
        return np.sum(k * x)

    expected = np.fft.fftfreq(6, d=0.5) + np.fft.rfftfreq(11)[:6]
    np.testing.assert_allclose(srcad.grad(f)(X), expected)


def power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


def test_closed_form_parseval():
    # sum |rfft(x)|^2 weighs each frequency but 0 (and Nyquist, n even) twice in the full
    # spectrum: for n odd, 2 * power = n |x|^2 + (sum x)^2, so grad = n x + sum(x)
    x = RNG.standard_normal(7)
    np.testing.assert_allclose(srcad.grad(power)(x), 7 * x + np.sum(x))


def spectral_loss(z):
    y = np.fft.fft(z * np.exp(1j * np.real(z)))
    return np.sum(np.abs(y) ** 2 * weights(y.shape)) + np.sum(np.fft.irfft(y, n=6) ** 2)


def real_spectral_loss(x):
    return np.sum(np.abs(np.fft.rfft(np.sin(x), n=9, norm="ortho")) ** 3)


def test_second_order():
    check(spectral_loss, Z, order=2)
    check(real_spectral_loss, X, order=2)
    h = srcad.hessian(real_spectral_loss)(X)
    assert h.dtype == np.float64 and h.shape == (6, 6)
    np.testing.assert_allclose(h, h.T, atol=1e-10)


def test_float32_input_keeps_its_dtype():
    x = X.astype(np.float32)
    assert srcad.grad(power)(x).dtype == np.float32
    z = Z.astype(np.complex64)
    assert srcad.grad(lambda z: np.sum(np.abs(np.fft.fft(z)) ** 2))(z).dtype == np.complex64
