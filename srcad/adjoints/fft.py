"""Adjoints of np.fft: the transforms (fft, ifft, rfft, irfft and their 2-d and n-d
forms, with ``n=``/``s=``, ``axis=``/``axes=`` and every ``norm``), the shifts, and the
sample frequencies (no gradient).

The DFT matrix is symmetric, so a complex transform's adjoint is the same transform of the
cotangent (no conjugation: JAX's convention), cropped or zero-padded back to the input's
length (``fit_to``). The adjoint of rfft is not irfft: it is the real part of the complex
transform of the cotangent zero-padded to the full length. irfft reads each entry of its
half spectrum twice (itself and its conjugate) except the zero and Nyquist frequencies,
and ignores their imaginary parts: its adjoint is those weights times the conjugate rfft
of the cotangent, with the norm whose scale matches (``swapped_norm``)."""

import numpy as np

from srcad.adjoints.registry import adjoint, d, linear, nondifferentiable, tangent, xp
from srcad.runtime.complexes import fit_to, hermitian_weights
from srcad.runtime.spectral import (
    real_length,
    real_lengths,
    signal_length,
    signal_lengths,
    swapped_norm,
    transform_axes,
)

nondifferentiable(
    np.fft.fftfreq, np.fft.rfftfreq,
    real_length, real_lengths, signal_length, signal_lengths, swapped_norm, transform_axes,
)  # fmt: skip


# ---- one axis ----


@linear(np.fft.fft, static=("n", "axis", "norm"))
def fft(y, a, n=None, axis=-1, norm=None):
    d[a] = fit_to(xp.fft.fft(d[y], axis=axis, norm=norm), a, axis)


@linear(np.fft.ifft, static=("n", "axis", "norm"))
def ifft(y, a, n=None, axis=-1, norm=None):
    d[a] = fit_to(xp.fft.ifft(d[y], axis=axis, norm=norm), a, axis)


@adjoint(np.fft.rfft, static=("n", "axis", "norm"))
def rfft(y, a, n=None, axis=-1, norm=None):
    full = xp.fft.fft(d[y], n=signal_length(a, n, axis), axis=axis, norm=norm)
    d[a] = fit_to(xp.real(full), a, axis)


@linear(np.fft.irfft, static=("n", "axis", "norm"))
def irfft(y, a, n=None, axis=-1, norm=None):
    half = xp.conj(xp.fft.rfft(xp.real(d[y]), axis=axis, norm=swapped_norm(norm)))
    weights = hermitian_weights(real_length(a, n, axis), half.shape[axis], axis, half.ndim)
    d[a] = fit_to(weights * half, a, axis)


# ---- several axes ----


@linear(np.fft.fftn, static=("s", "axes", "norm"))
def fftn(y, a, s=None, axes=None, norm=None):
    over = transform_axes(a, s, axes)
    d[a] = fit_to(xp.fft.fftn(d[y], axes=over, norm=norm), a, over)


@linear(np.fft.fft2, static=("s", "axes", "norm"))
def fft2(y, a, s=None, axes=(-2, -1), norm=None):
    over = transform_axes(a, s, axes)
    d[a] = fit_to(xp.fft.fftn(d[y], axes=over, norm=norm), a, over)


@linear(np.fft.ifftn, static=("s", "axes", "norm"))
def ifftn(y, a, s=None, axes=None, norm=None):
    over = transform_axes(a, s, axes)
    d[a] = fit_to(xp.fft.ifftn(d[y], axes=over, norm=norm), a, over)


@linear(np.fft.ifft2, static=("s", "axes", "norm"))
def ifft2(y, a, s=None, axes=(-2, -1), norm=None):
    over = transform_axes(a, s, axes)
    d[a] = fit_to(xp.fft.ifftn(d[y], axes=over, norm=norm), a, over)


@adjoint(np.fft.rfftn, static=("s", "axes", "norm"))
def rfftn(y, a, s=None, axes=None, norm=None):
    over = transform_axes(a, s, axes)
    full = xp.fft.fftn(d[y], s=signal_lengths(a, s, axes), axes=over, norm=norm)
    d[a] = fit_to(xp.real(full), a, over)


@adjoint(np.fft.rfft2, static=("s", "axes", "norm"))
def rfft2(y, a, s=None, axes=(-2, -1), norm=None):
    over = transform_axes(a, s, axes)
    full = xp.fft.fftn(d[y], s=signal_lengths(a, s, axes), axes=over, norm=norm)
    d[a] = fit_to(xp.real(full), a, over)


@linear(np.fft.irfftn, static=("s", "axes", "norm"))
def irfftn(y, a, s=None, axes=None, norm=None):
    over = transform_axes(a, s, axes)
    half = xp.conj(xp.fft.rfftn(xp.real(d[y]), axes=over, norm=swapped_norm(norm)))
    last = over[-1]
    weights = hermitian_weights(real_lengths(a, s, axes)[-1], half.shape[last], last, half.ndim)
    d[a] = fit_to(weights * half, a, over)


@linear(np.fft.irfft2, static=("s", "axes", "norm"))
def irfft2(y, a, s=None, axes=(-2, -1), norm=None):
    over = transform_axes(a, s, axes)
    half = xp.conj(xp.fft.rfftn(xp.real(d[y]), axes=over, norm=swapped_norm(norm)))
    last = over[-1]
    weights = hermitian_weights(real_lengths(a, s, axes)[-1], half.shape[last], last, half.ndim)
    d[a] = fit_to(weights * half, a, over)


# ---- shifts: each the other's inverse, and a permutation's transpose is its inverse ----


@linear(np.fft.fftshift, static=("axes",), shape_preserving=True)
def fftshift(y, x, axes=None):
    d[x] = xp.fft.ifftshift(d[y], axes=axes)


@linear(np.fft.ifftshift, static=("axes",), shape_preserving=True)
def ifftshift(y, x, axes=None):
    d[x] = xp.fft.fftshift(d[y], axes=axes)


# ---- tangents of rfft and its forms, which read only the real part of a tangent (the
# other transforms are linear: their tangent is the transform of the tangent) ----


@tangent(np.fft.rfft, static=("n", "axis", "norm"))
def rfft_tangent(y, a, n=None, axis=-1, norm=None):
    d[y] = xp.fft.rfft(xp.real(d[a]), n=n, axis=axis, norm=norm)


@tangent(np.fft.rfftn, static=("s", "axes", "norm"))
def rfftn_tangent(y, a, s=None, axes=None, norm=None):
    d[y] = xp.fft.rfftn(xp.real(d[a]), s=s, axes=axes, norm=norm)


@tangent(np.fft.rfft2, static=("s", "axes", "norm"))
def rfft2_tangent(y, a, s=None, axes=(-2, -1), norm=None):
    d[y] = xp.fft.rfft2(xp.real(d[a]), s=s, axes=axes, norm=norm)
