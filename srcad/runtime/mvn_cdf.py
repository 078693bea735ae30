"""Derivatives in ``x`` of ``scipy.stats.multivariate_normal.cdf``, from lower-dimensional
cdfs: SciPy integrates the cdf numerically (Genz's randomized quasi-Monte Carlo above two
dimensions), so its derivatives are derived, not traced.

With ``z = x - mean`` and ``S`` the covariance, the derivative of ``F(z) = P(Z <= z)`` once
in each distinct coordinate of a set ``A`` is the density of ``Z_A`` at ``z_A`` times the
cdf of the rest given ``Z_A = z_A``::

    D_A = phi_A(z_A) * F_{B|A}(z_B - S_BA S_AA^-1 z_A; S_BB - S_BA S_AA^-1 S_AB)

Derivatives repeating a coordinate of ``A`` follow from the Gaussian identity
``S grad(p) = -z p`` integrated over the free coordinates ``B``::

    S_AA grad_A(D_A) = -z_A D_A - S_AB [D_{A+k} for k in B]

differentiated again as often as needed. Derivatives in ``mean`` are those in ``x`` negated;
in ``cov`` half the second derivative in ``x`` (the heat equation of the Gaussian).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np
from scipy import special, stats

from srcad.runtime.backend import array_namespace
from srcad.runtime.statistics import mvn_cov, mvn_dim, mvn_mean

_LOG_2PI = math.log(2 * math.pi)


def mvn_cdf_cov(cov: Any, n: int) -> Any:
    """``cov`` oriented so that its lower triangle is the one SciPy's cdf reads in ``n``
    dimensions: ``cov`` itself, or its transpose where the cdf reads the upper triangle (its
    bivariate routine reads ``cov[0, 1]``, its Genz integration the lower triangle). Linear,
    and its own adjoint."""
    if getattr(cov, "ndim", 0) < 2 or not _reads_upper(n):
        return cov
    return array_namespace(cov).swapaxes(cov, -1, -2)


@functools.cache
def _reads_upper(n: int) -> bool:
    """Whether SciPy's cdf in ``n`` dimensions reads ``cov``'s upper triangle: asked of
    SciPy itself once (for 3 dimensions standing for more: one code path), since the
    triangle it reads changed with its integration routines."""
    k = min(n, 3)
    if k < 2:
        return False
    both = 0.5 * np.eye(k) + 0.5
    at = np.full(k, 0.3)
    want = _scipy_cdf(at, both)
    # a triangle other than the one read holds zeros: the value is unchanged
    if abs(_scipy_cdf(at, np.tril(both)) - want) < 1e-9:
        return False
    if abs(_scipy_cdf(at, np.triu(both)) - want) < 1e-9:
        return True
    raise NotImplementedError(
        "srcad cannot tell which triangle of cov this SciPy's multivariate_normal.cdf reads"
    )


def _scipy_cdf(at: Any, cov: Any) -> float:
    # a fixed rng: the same triangle read gives the same integration points, the same value
    return float(stats.multivariate_normal.cdf(at, None, cov, rng=0))


def mvn_cdf_derivative(
    x: Any,
    mean: Any = None,
    cov: Any = 1,
    order: int = 1,
    allow_singular: bool = False,
    maxpts: Any = None,
    abseps: float = 1e-5,
    releps: float = 1e-5,
    rng: Any = None,
) -> Any:
    """The derivative of order ``order`` of ``multivariate_normal.cdf(x, mean, cov)`` in
    ``x``, shaped ``(m,) + (d,) * order`` for the cdf's ``m`` points of ``d`` dimensions.
    The lower-dimensional cdfs it needs come from SciPy with the options given (one or no
    dimension left: exact)."""
    n = mvn_dim(x, mean, cov)
    s = np.asarray(mvn_cov(mvn_cdf_cov(np.asarray(cov, dtype=float), n), n), dtype=float)
    try:
        np.linalg.cholesky(s)
    except np.linalg.LinAlgError:
        raise ValueError(
            "srcad differentiates multivariate_normal.cdf at a positive definite cov only "
            "(a singular one has no density on its boundary)"
        ) from None
    z = np.reshape(np.asarray(x, dtype=float) - np.asarray(mvn_mean(mean, n)), (-1, n))
    options = dict(
        allow_singular=allow_singular, maxpts=maxpts, abseps=abseps, releps=releps, rng=rng
    )
    partials = _Partials(z, s, options)
    out = np.empty((z.shape[0],) + (n,) * order)
    for index in itertools.combinations_with_replacement(range(n), order):
        value = partials.of(index)
        for same in set(itertools.permutations(index)):
            out[(slice(None),) + same] = value
    return out


class _Partials:
    """The partial derivatives of the cdf at the points ``z`` (rows), each computed once."""

    def __init__(self, z: Any, s: Any, options: dict[str, Any]) -> None:
        self.z, self.s, self.options = z, s, options
        self.n = s.shape[0]
        # an infinite coordinate i of A has D_A = 0 and so each term with z_i: keep it 0
        self.finite = np.where(np.isfinite(z), z, 0.0)
        self.memo: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}

    def of(self, index: tuple[int, ...]) -> Any:
        """The derivative once in each coordinate of ``index`` (a sorted tuple)."""
        boundary = tuple(sorted(set(index)))
        extra = list(index)
        for k in boundary:
            extra.remove(k)
        return self._get(boundary, tuple(extra))

    def _get(self, a: tuple[int, ...], extra: tuple[int, ...]) -> Any:
        """``D_A`` differentiated once more in each coordinate of ``extra`` (all in ``a``)."""
        key = (a, extra)
        if key not in self.memo:
            self.memo[key] = self._compute(a, extra)
        return self.memo[key]

    def _compute(self, a: tuple[int, ...], extra: tuple[int, ...]) -> Any:
        if not extra:
            return self._boundary(a)
        # d/dz_j of D_A, then the rest of ``extra`` through each term (z_i is linear in z)
        j, rest = extra[-1], extra[:-1]
        free = [k for k in range(self.n) if k not in a]
        terms = []
        for i in a:
            term = -self.finite[:, i] * self._get(a, rest)
            if i in rest:
                fewer = list(rest)
                fewer.remove(i)
                term = term - rest.count(i) * self._get(a, tuple(fewer))
            for k in free:
                if self.s[i, k] != 0:
                    wider = tuple(sorted(a + (k,)))
                    term = term - self.s[i, k] * self._get(wider, rest)
            terms.append(term)
        row = np.linalg.inv(self.s[np.ix_(a, a)])[a.index(j)]
        return sum(w * t for w, t in zip(row, terms))

    def _boundary(self, a: tuple[int, ...]) -> Any:
        """``D_A``: the density of ``Z_A`` at ``z_A`` times the conditional cdf of the rest."""
        b = [k for k in range(self.n) if k not in a]
        if not a:
            return self._cdf(self.z, self.s)
        saa = self.s[np.ix_(a, a)]
        factor = np.linalg.cholesky(saa)
        out = np.zeros(self.z.shape[0])
        # the density vanishes at an infinite coordinate (and where it underflows, the
        # conditional cdf is not asked for)
        rows = np.flatnonzero(np.all(np.isfinite(self.z[:, a]), axis=1))
        za = self.z[np.ix_(rows, a)]
        u = np.linalg.solve(saa, za.T).T
        log_density = (
            -0.5 * np.sum(za * u, axis=1)
            - np.sum(np.log(np.diag(factor)))
            - 0.5 * len(a) * _LOG_2PI
        )
        density = np.exp(log_density)
        kept = density > 0
        rows, u, density = rows[kept], u[kept], density[kept]
        if not b or not rows.size:
            out[rows] = density
            return out
        sba = self.s[np.ix_(b, a)]
        shifted = self.z[np.ix_(rows, b)] - u @ sba.T
        given = self.s[np.ix_(b, b)] - sba @ np.linalg.solve(saa, sba.T)
        out[rows] = density * self._cdf(shifted, 0.5 * (given + given.T))
        return out

    def _cdf(self, w: Any, c: Any) -> Any:
        """The cdf of N(0, c) at the rows of ``w``, one value per row."""
        if c.shape[0] == 1:
            return special.ndtr(w[:, 0] / math.sqrt(c[0, 0]))
        zero = np.zeros(c.shape[0])
        value = stats.multivariate_normal.cdf(w, zero, c, **self.options)
        return np.reshape(value, (-1,))
