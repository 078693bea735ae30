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

With a ``lower_limit`` ``l`` the cdf is the probability of the box ``l < X <= x`` (signed:
SciPy counts a box with an odd number of reversed sides negative), and each coordinate has
two ends at which to differentiate: at a lower end ``D_A`` changes sign and the rest's
conditional cdf is that of their box; the free coordinates' term of the identity becomes
``S_AB [D_{A+k at x} + D_{A+k at l} for k in B]`` (the integral of a derivative over the
box is the difference of its ends). A coordinate differentiated at both ends gives 0. In
``mean`` the derivative is minus the sum over both ends.
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


def mvn_ends(lower_limit: Any) -> int:
    """How many ends each coordinate has where the cdf is differentiated: 1 (``x``), or 2
    (``x`` and ``lower_limit``) when a lower limit is given."""
    return 1 if lower_limit is None else 2


def mvn_points(x: Any, n: int) -> tuple[int, ...]:
    """The shape of ``x`` as SciPy reads it in ``n`` dimensions: the points' axes, then the
    coordinates (a number or a 1-d ``x`` is one point, or in one dimension one per entry)."""
    shape = tuple(np.shape(x))
    if len(shape) == 0:
        return (1,)
    if len(shape) == 1:
        return (shape[0], 1) if n == 1 else (1, shape[0])
    return shape


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
    lower_limit: Any = None,
) -> Any:
    """The derivative of order ``order`` of ``multivariate_normal.cdf(x, mean, cov,
    lower_limit=lower_limit)`` in ``x``, shaped ``(m,) + (d,) * order`` for the cdf's ``m``
    points of ``d`` dimensions; with a ``lower_limit``, in ``x`` and ``lower_limit``
    together, shaped ``(m,) + (2 * d,) * order`` (``x``'s coordinates first). The
    lower-dimensional cdfs it needs come from SciPy with the options given (one or no
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
    center = np.asarray(mvn_mean(mean, n))
    points = mvn_points(x, n)
    limits = [np.reshape(np.asarray(x, dtype=float), points)]
    if lower_limit is not None:
        lower = np.asarray(lower_limit, dtype=float)
        if np.broadcast_shapes(points, lower.shape) != points:
            raise ValueError(
                "srcad differentiates multivariate_normal.cdf with a lower_limit that has "
                f"no more points than x (x read as {points}, lower_limit {lower.shape}): "
                "broadcast x to them first"
            )
        limits.append(np.broadcast_to(lower, points))
    ends = tuple(np.reshape(v - center, (-1, n)) for v in limits)
    options = dict(
        allow_singular=allow_singular, maxpts=maxpts, abseps=abseps, releps=releps, rng=rng
    )
    partials = _Partials(ends, s, options)
    width = n * len(ends)
    out = np.empty((ends[0].shape[0],) + (width,) * order)
    for index in itertools.combinations_with_replacement(range(width), order):
        value = partials.of(index)
        for same in set(itertools.permutations(index)):
            out[(slice(None),) + same] = value
    return out


class _Partials:
    """The partial derivatives of the cdf at the points (rows) of ``ends`` (the upper
    limits, and the lower ones if given, less the mean), each computed once. A derivative
    is indexed by ``end * n + coordinate``."""

    def __init__(self, ends: tuple[Any, ...], s: Any, options: dict[str, Any]) -> None:
        self.ends, self.s, self.options = ends, s, options
        self.n = s.shape[0]
        # an infinite coordinate i of A has D_A = 0 and so each term with z_i: keep it 0
        self.finite = [np.where(np.isfinite(z), z, 0.0) for z in ends]
        self.memo: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}

    def of(self, index: tuple[int, ...]) -> Any:
        """The derivative once in each coordinate of ``index`` (a sorted tuple)."""
        boundary = tuple(sorted(set(index)))
        if len({k % self.n for k in boundary}) < len(boundary):
            # one coordinate at both ends: the box's probability is a difference of a
            # function of each end, so its mixed derivative is 0
            return np.zeros(self.ends[0].shape[0])
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
        coords = [w % self.n for w in a]
        free = [k for k in range(self.n) if k not in coords]
        terms = []
        for w, i in zip(a, coords):
            term = -self.finite[w // self.n][:, i] * self._get(a, rest)
            if w in rest:
                fewer = list(rest)
                fewer.remove(w)
                term = term - rest.count(w) * self._get(a, tuple(fewer))
            for k in free:
                if self.s[i, k] != 0:
                    for end in range(len(self.ends)):
                        wider = tuple(sorted(a + (end * self.n + k,)))
                        term = term - self.s[i, k] * self._get(wider, rest)
            terms.append(term)
        row = np.linalg.inv(self.s[np.ix_(coords, coords)])[a.index(j)]
        return sum(w * t for w, t in zip(row, terms))

    def _boundary(self, a: tuple[int, ...]) -> Any:
        """``D_A``: the density of ``Z_A`` at ``z_A`` times the conditional cdf of the rest
        (negated once for each coordinate of ``A`` at its lower end)."""
        coords = [w % self.n for w in a]
        b = [k for k in range(self.n) if k not in coords]
        if not a:
            return self._cdf(list(self.ends), self.s)
        saa = self.s[np.ix_(coords, coords)]
        factor = np.linalg.cholesky(saa)
        sign = (-1.0) ** sum(w // self.n for w in a)
        at = np.stack([self.ends[w // self.n][:, i] for w, i in zip(a, coords)], axis=1)
        out = np.zeros(at.shape[0])
        # the density vanishes at an infinite coordinate (and where it underflows, the
        # conditional cdf is not asked for)
        rows = np.flatnonzero(np.all(np.isfinite(at), axis=1))
        za = at[rows]
        u = np.linalg.solve(saa, za.T).T
        log_density = (
            -0.5 * np.sum(za * u, axis=1)
            - np.sum(np.log(np.diag(factor)))
            - 0.5 * len(a) * _LOG_2PI
        )
        density = sign * np.exp(log_density)
        kept = density != 0
        rows, u, density = rows[kept], u[kept], density[kept]
        if not b or not rows.size:
            out[rows] = density
            return out
        sba = self.s[np.ix_(b, coords)]
        shifted = [z[np.ix_(rows, b)] - u @ sba.T for z in self.ends]
        given = self.s[np.ix_(b, b)] - sba @ np.linalg.solve(saa, sba.T)
        out[rows] = density * self._cdf(shifted, 0.5 * (given + given.T))
        return out

    def _cdf(self, limits: list[Any], c: Any) -> Any:
        """The cdf of N(0, c) at the rows of ``limits[0]`` (above the rows of ``limits[1]``
        if given), one value per row."""
        upper = limits[0]
        if c.shape[0] == 1:
            scale = math.sqrt(c[0, 0])
            if len(limits) == 1:
                return special.ndtr(upper[:, 0] / scale)
            hi, lo = upper[:, 0] / scale, limits[1][:, 0] / scale
            # above the mean, the difference of the upper tails (no cancellation near 1)
            return np.where(lo > 0, special.ndtr(-lo) - special.ndtr(-hi),
                            special.ndtr(hi) - special.ndtr(lo))  # fmt: skip
        zero = np.zeros(c.shape[0])
        lower = {} if len(limits) == 1 else {"lower_limit": limits[1]}
        value = stats.multivariate_normal.cdf(upper, zero, c, **lower, **self.options)
        return np.reshape(value, (-1,))
