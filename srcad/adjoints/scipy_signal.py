"""Adjoint of scipy.signal.convolve (any mode, any number of dimensions), and of the
helpers its derivative code calls (for derivatives of derivatives).

Loaded on first need once the user's code has imported scipy.signal (see scipy_table).
"""

from scipy import signal

from srcad.adjoints.registry import adjoint, d, tangent
from srcad.runtime.convolution import convolve_as, grad_convolve


@adjoint(signal.convolve)
def convolve(y, in1, in2, mode="full", method="auto"):
    d[in1] = grad_convolve(d[y], in1, in2, mode, True)
    d[in2] = grad_convolve(d[y], in2, in1, mode, False)


# the gradient is linear in g and in other; <r', grad_convolve(g, x, other)> is
# <g, convolve_as(r', other)>, whose gradient for other is again a grad_convolve


@adjoint(convolve_as)
def convolve_as_adjoint(r, x, other, mode="full", first=True):
    d[x] = grad_convolve(d[r], x, other, mode, first)
    d[other] = grad_convolve(d[r], other, x, mode, not first)


@adjoint(grad_convolve, static=("x",))
def grad_convolve_adjoint(r, g, x, other, mode="full", first=True):
    d[g] = convolve_as(d[r], other, mode, first)
    d[other] = grad_convolve(g, other, d[r], mode, not first)


# ---- tangents ----


@tangent(signal.convolve)
def convolve_tangent(y, in1, in2, mode="full", method="auto"):
    d[y] = signal.convolve(d[in1], in2, mode)
    d[y] = signal.convolve(in1, d[in2], mode)


@tangent(convolve_as)
def convolve_as_tangent(r, x, other, mode="full", first=True):
    d[r] = convolve_as(d[x], other, mode, first)
    d[r] = convolve_as(x, d[other], mode, first)


@tangent(grad_convolve, static=("x",))
def grad_convolve_tangent(r, g, x, other, mode="full", first=True):
    d[r] = grad_convolve(d[g], x, other, mode, first)
    d[r] = grad_convolve(g, x, d[other], mode, first)
