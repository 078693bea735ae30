"""Adjoints of scipy.special: elementwise functions, logsumexp, softmax and log_softmax.

Loaded on first need once the user's code has imported scipy.special (see scipy_table).
"""

import math

from scipy import special

from srcad.adjoints.registry import adjoint, d, partials, tangent, xp
from srcad.runtime.accumulate import keep_reduced, unbroadcast, unreduce, weighted
from srcad.runtime.tangents import broadcast_like

_SQRT_2PI = math.sqrt(2 * math.pi)

# ---- logistic ----


@partials(special.expit, shape_preserving=True)
def expit(y, x):
    return y * (1 - y)


@partials(special.logit, shape_preserving=True)
def logit(y, x):
    return 1 / (x * (1 - x))


# ---- error function and normal distribution ----


@partials(special.erf, shape_preserving=True)
def erf(y, x):
    return (2 / math.sqrt(math.pi)) * xp.exp(-x * x)


@partials(special.erfc, shape_preserving=True)
def erfc(y, x):
    return (-2 / math.sqrt(math.pi)) * xp.exp(-x * x)


@partials(special.erfinv, shape_preserving=True)
def erfinv(y, x):
    return (math.sqrt(math.pi) / 2) * xp.exp(y * y)


@partials(special.ndtr, shape_preserving=True)
def ndtr(y, x):
    return xp.exp(-0.5 * x * x) / _SQRT_2PI


@partials(special.log_ndtr, shape_preserving=True)
def log_ndtr(y, x):
    # the density over ndtr(x), without forming ndtr(x), which underflows for x << 0
    return xp.exp(-0.5 * x * x - y) / _SQRT_2PI


# ---- gamma family ----


@partials(special.gamma, shape_preserving=True)
def gamma(y, x):
    return y * special.digamma(x)


@partials(special.gammaln, shape_preserving=True)
def gammaln(y, x):
    return special.digamma(x)


@partials(special.digamma, special.psi, shape_preserving=True)
def digamma(y, x):
    return special.polygamma(1, x)


@adjoint(special.polygamma, static=("n",))
def polygamma(y, n, x):
    d[x] = unbroadcast(d[y] * special.polygamma(n + 1, x), x)


@partials(special.betaln)
def betaln(y, a, b):
    return special.digamma(a) - special.digamma(a + b), special.digamma(b) - special.digamma(a + b)


# ---- x log y: 0 at x == 0 whatever y, and so is the derivative in y there ----


@partials(special.xlogy)
def xlogy(z, x, y):
    return xp.log(y), x / xp.where(x == 0, 1, y)


@partials(special.xlog1py)
def xlog1py(z, x, y):
    return xp.log1p(y), x / xp.where(x == 0, 1, 1 + y)


# ---- reductions over an axis ----


@adjoint(special.logsumexp)
def logsumexp(y, a, axis=None, b=None, keepdims=False):
    # the softmax weights of the terms (b * exp(a) over their sum)
    p = xp.exp(a - keep_reduced(y, a, axis, keepdims))
    g = unreduce(d[y], a, axis=axis, keepdims=keepdims)
    d[a] = unbroadcast(weighted(g * p, b), a)
    d[b] = unbroadcast(g * p, b)


@adjoint(special.softmax)
def softmax(y, x, axis=None):
    d[x] = y * (d[y] - xp.sum(d[y] * y, axis=axis, keepdims=True))


@adjoint(special.log_softmax)
def log_softmax(y, x, axis=None):
    d[x] = d[y] - xp.exp(y) * xp.sum(d[y], axis=axis, keepdims=True)


# ---- srcad's helper in the adjoint of logsumexp (for derivatives of derivatives) ----


@adjoint(weighted)
def weighted_adjoint(r, p, b):
    d[p] = unbroadcast(weighted(d[r], b), p)
    d[b] = unbroadcast(d[r] * p, b)


# ---- tangents ----


@tangent(special.polygamma, static=("n",))
def polygamma_tangent(y, n, x):
    d[y] = broadcast_like(d[x] * special.polygamma(n + 1, x), y)


@tangent(special.logsumexp)
def logsumexp_tangent(y, a, axis=None, b=None, keepdims=False):
    p = xp.exp(a - keep_reduced(y, a, axis, keepdims))
    d[y] = xp.sum(weighted(d[a] * p, b), axis=axis, keepdims=keepdims)
    d[y] = xp.sum(d[b] * p, axis=axis, keepdims=keepdims)


@tangent(special.softmax)
def softmax_tangent(y, x, axis=None):
    d[y] = y * (d[x] - xp.sum(d[x] * y, axis=axis, keepdims=True))


@tangent(special.log_softmax)
def log_softmax_tangent(y, x, axis=None):
    d[y] = d[x] - xp.sum(d[x] * xp.exp(y), axis=axis, keepdims=True)


@tangent(weighted)
def weighted_tangent(r, p, b):
    d[r] = weighted(d[p], b)
    d[r] = d[b] * p
