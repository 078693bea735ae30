"""Adjoints of the methods of scipy.stats' module-level distributions (``norm.logpdf(x,
loc, scale)``): quantiles, locations, scales and shape parameters all differentiable;
counts (``k`` of poisson) are not.

Loaded on first need once the user's code has imported scipy.stats (see scipy_table).
"""

import math

from scipy import special, stats

from srcad.adjoints.registry import adjoint, d, nondifferentiable, tangent, xp
from srcad.runtime.accumulate import unbroadcast
from srcad.runtime.mvn_cdf import mvn_cdf_cov, mvn_cdf_derivative, mvn_ends, mvn_points
from srcad.runtime.statistics import mvn_cov, mvn_cov_grad, mvn_dim, mvn_mean

_SQRT_2PI = math.sqrt(2 * math.pi)

# ---- normal ----


@adjoint(stats.norm.logpdf)
def norm_logpdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d[x] = unbroadcast(-d[y] * z / scale, x)
    d[loc] = unbroadcast(d[y] * z / scale, loc)
    d[scale] = unbroadcast(d[y] * (z * z - 1) / scale, scale)


@adjoint(stats.norm.pdf)
def norm_pdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d[x] = unbroadcast(-d[y] * y * z / scale, x)
    d[loc] = unbroadcast(d[y] * y * z / scale, loc)
    d[scale] = unbroadcast(d[y] * y * (z * z - 1) / scale, scale)


@adjoint(stats.norm.cdf)
def norm_cdf(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    q = d[y] * xp.exp(-0.5 * z * z) / (_SQRT_2PI * scale)
    d[x] = unbroadcast(q, x)
    d[loc] = unbroadcast(-q, loc)
    d[scale] = unbroadcast(-q * z, scale)


@adjoint(stats.norm.logcdf)
def norm_logcdf(y, x, loc=0.0, scale=1.0):
    # the density over the cdf, without forming the cdf (it underflows far left)
    z = (x - loc) / scale
    q = d[y] * xp.exp(-0.5 * z * z - y) / (_SQRT_2PI * scale)
    d[x] = unbroadcast(q, x)
    d[loc] = unbroadcast(-q, loc)
    d[scale] = unbroadcast(-q * z, scale)


# ---- cdfs: their derivative in a shape parameter (t's df, gamma's a, beta's a and b) has
# no closed form: a rule that writes none refuses such a parameter when it varies ----


@adjoint(stats.t.cdf)
def t_cdf(y, x, df, loc=0.0, scale=1.0):
    q = d[y] * stats.t.pdf(x, df, loc, scale)
    d[x] = unbroadcast(q, x)
    d[loc] = unbroadcast(-q, loc)
    d[scale] = unbroadcast(-q * (x - loc) / scale, scale)


@adjoint(stats.gamma.cdf)
def gamma_cdf(y, x, a, loc=0.0, scale=1.0):
    q = d[y] * stats.gamma.pdf(x, a, loc, scale)
    d[x] = unbroadcast(q, x)
    d[loc] = unbroadcast(-q, loc)
    d[scale] = unbroadcast(-q * (x - loc) / scale, scale)


@adjoint(stats.beta.cdf)
def beta_cdf(y, x, a, b, loc=0.0, scale=1.0):
    q = d[y] * stats.beta.pdf(x, a, b, loc, scale)
    d[x] = unbroadcast(q, x)
    d[loc] = unbroadcast(-q, loc)
    d[scale] = unbroadcast(-q * (x - loc) / scale, scale)


@adjoint(stats.poisson.cdf, static=("k", "loc"))
def poisson_cdf(y, k, mu, loc=0):
    # d/dmu P(K <= n) = -P(K = n), n = floor(k - loc)
    d[mu] = unbroadcast(-d[y] * stats.poisson.pmf(xp.floor(k - loc), mu), mu)


@adjoint(stats.poisson.logcdf, static=("k", "loc"))
def poisson_logcdf(y, k, mu, loc=0):
    d[mu] = unbroadcast(-d[y] * xp.exp(stats.poisson.logpmf(xp.floor(k - loc), mu) - y), mu)


# ---- Student's t: s is the derivative of the log density in z ----


@adjoint(stats.t.logpdf)
def t_logpdf(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = -(df + 1) * z / (df + z * z)
    d[x] = unbroadcast(d[y] * s / scale, x)
    d[loc] = unbroadcast(-d[y] * s / scale, loc)
    d[scale] = unbroadcast(-d[y] * (1 + z * s) / scale, scale)
    d[df] = unbroadcast(
        d[y]
        * 0.5
        * (
            special.digamma((df + 1) / 2)
            - special.digamma(df / 2)
            - 1 / df
            - xp.log1p(z * z / df)
            + (df + 1) * z * z / (df * (df + z * z))
        ),
        df,
    )


@adjoint(stats.t.pdf)
def t_pdf(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = -(df + 1) * z / (df + z * z)
    d[x] = unbroadcast(d[y] * y * s / scale, x)
    d[loc] = unbroadcast(-d[y] * y * s / scale, loc)
    d[scale] = unbroadcast(-d[y] * y * (1 + z * s) / scale, scale)
    d[df] = unbroadcast(
        d[y]
        * y
        * 0.5
        * (
            special.digamma((df + 1) / 2)
            - special.digamma(df / 2)
            - 1 / df
            - xp.log1p(z * z / df)
            + (df + 1) * z * z / (df * (df + z * z))
        ),
        df,
    )


# ---- Poisson: the count k (shifted by loc) carries no derivative ----


@adjoint(stats.poisson.logpmf, static=("k", "loc"))
def poisson_logpmf(y, k, mu, loc=0):
    d[mu] = unbroadcast(d[y] * ((k - loc) / mu - 1), mu)


@adjoint(stats.poisson.pmf, static=("k", "loc"))
def poisson_pmf(y, k, mu, loc=0):
    d[mu] = unbroadcast(d[y] * y * ((k - loc) / mu - 1), mu)


# ---- gamma and beta ----


@adjoint(stats.gamma.logpdf)
def gamma_logpdf(y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - 1
    d[x] = unbroadcast(d[y] * s / scale, x)
    d[loc] = unbroadcast(-d[y] * s / scale, loc)
    d[scale] = unbroadcast(d[y] * (z - a) / scale, scale)
    d[a] = unbroadcast(d[y] * (xp.log(z) - special.digamma(a)), a)


@adjoint(stats.gamma.pdf)
def gamma_pdf(y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - 1
    d[x] = unbroadcast(d[y] * y * s / scale, x)
    d[loc] = unbroadcast(-d[y] * y * s / scale, loc)
    d[scale] = unbroadcast(d[y] * y * (z - a) / scale, scale)
    d[a] = unbroadcast(d[y] * y * (xp.log(z) - special.digamma(a)), a)


@adjoint(stats.beta.logpdf)
def beta_logpdf(y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - (b - 1) / (1 - z)
    both = special.digamma(a + b)
    d[x] = unbroadcast(d[y] * s / scale, x)
    d[loc] = unbroadcast(-d[y] * s / scale, loc)
    d[scale] = unbroadcast(-d[y] * (1 + z * s) / scale, scale)
    d[a] = unbroadcast(d[y] * (xp.log(z) - special.digamma(a) + both), a)
    d[b] = unbroadcast(d[y] * (xp.log1p(-z) - special.digamma(b) + both), b)


@adjoint(stats.beta.pdf)
def beta_pdf(y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - (b - 1) / (1 - z)
    both = special.digamma(a + b)
    d[x] = unbroadcast(d[y] * y * s / scale, x)
    d[loc] = unbroadcast(-d[y] * y * s / scale, loc)
    d[scale] = unbroadcast(-d[y] * y * (1 + z * s) / scale, scale)
    d[a] = unbroadcast(d[y] * y * (xp.log(z) - special.digamma(a) + both), a)
    d[b] = unbroadcast(d[y] * y * (xp.log1p(-z) - special.digamma(b) + both), b)


# ---- Dirichlet: x is (k,) or (k, n) (n points, one per column), alpha is (k,) ----


@adjoint(stats.dirichlet.logpdf)
def dirichlet_logpdf(y, x, alpha):
    d[x] = ((alpha - 1) / x.T).T * d[y]
    per_alpha = (xp.log(x).T - special.digamma(alpha) + special.digamma(xp.sum(alpha))).T
    d[alpha] = xp.dot(per_alpha, d[y])


@adjoint(stats.dirichlet.pdf)
def dirichlet_pdf(y, x, alpha):
    d[x] = ((alpha - 1) / x.T).T * (d[y] * y)
    per_alpha = (xp.log(x).T - special.digamma(alpha) + special.digamma(xp.sum(alpha))).T
    d[alpha] = xp.dot(per_alpha, d[y] * y)


# ---- multivariate normal: x is (d,) or (n, d) (or (n,) in one dimension); mean given or
# None (zeros), cov a scalar (times the identity), a 1-d diagonal or a (d, d) matrix of
# which SciPy reads the lower triangle: an entry below the diagonal stands for both, and
# the derivatives of the gradient too are those of a function of the lower triangle ----


@adjoint(stats.multivariate_normal.logpdf)
def mvn_logpdf(y, x, mean=None, cov=1):
    n = mvn_dim(x, mean, cov)
    c = mvn_cov(cov, n)  # what SciPy reads
    u = xp.reshape(xp.linalg.solve(c, xp.reshape(x - mvn_mean(mean, n), (-1, n)).T).T, (-1, n))
    gu = xp.reshape(d[y], (-1, 1)) * u
    d[x] = -xp.reshape(gu, x.shape)
    d[mean] = unbroadcast(xp.reshape(gu, x.shape), mean)
    full = 0.5 * (u.T @ gu) - 0.5 * xp.sum(d[y]) * xp.linalg.inv(c)
    d[cov] = mvn_cov_grad(full, cov)


@adjoint(stats.multivariate_normal.pdf)
def mvn_pdf(y, x, mean=None, cov=1):
    n = mvn_dim(x, mean, cov)
    c = mvn_cov(cov, n)  # what SciPy reads
    u = xp.reshape(xp.linalg.solve(c, xp.reshape(x - mvn_mean(mean, n), (-1, n)).T).T, (-1, n))
    gy = d[y] * y
    gu = xp.reshape(gy, (-1, 1)) * u
    d[x] = -xp.reshape(gu, x.shape)
    d[mean] = unbroadcast(xp.reshape(gu, x.shape), mean)
    full = 0.5 * (u.T @ gu) - 0.5 * xp.sum(gy) * xp.linalg.inv(c)
    d[cov] = mvn_cov_grad(full, cov)


# ---- its cdf: SciPy integrates it numerically, so the rules call mvn_cdf_derivative for
# the derivatives in x (in mean: negated; in cov: half the second derivative in x, on the
# triangle SciPy's cdf reads, see mvn_cdf_cov); the integration options pass through. With
# a lower_limit, mvn_cdf_derivative differentiates at both ends of the box (its axes are
# (ends, d), reshaped so below): x is the first end, lower_limit the second, and mean and
# cov move both together (the ends axes summed) ----

_MVN_CDF_OPTIONS = ("allow_singular", "maxpts", "abseps", "releps", "rng")


@adjoint(stats.multivariate_normal.cdf, static=_MVN_CDF_OPTIONS)
def mvn_cdf(
    y, x, mean=None, cov=1, allow_singular=False, maxpts=None, abseps=1e-5, releps=1e-5,
    rng=None, lower_limit=None,
):  # fmt: skip
    n = mvn_dim(x, mean, cov)
    ends = mvn_ends(lower_limit)
    points = mvn_points(x, n)  # x as SciPy reads it; a lower_limit has no more points
    g = xp.reshape(d[y], (-1, 1, 1))
    slope = mvn_cdf_derivative(
        x, mean, cov, 1, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    gs = g * xp.reshape(slope, (-1, ends, n))
    d[x] = xp.reshape(gs[:, 0], x.shape)
    d[lower_limit] = unbroadcast(xp.reshape(gs[:, ends - 1], points), lower_limit)
    d[mean] = unbroadcast(-xp.reshape(xp.sum(gs, axis=1), points), mean)
    curvature = mvn_cdf_derivative(
        x, mean, cov, 2, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    both = xp.sum(xp.reshape(curvature, (-1, ends, n, ends, n)), axis=(1, 3))
    full = 0.5 * xp.sum(g * both, axis=0)
    d[cov] = mvn_cdf_cov(mvn_cov_grad(full, cov), n)


@adjoint(stats.multivariate_normal.logcdf, static=_MVN_CDF_OPTIONS)
def mvn_logcdf(
    y, x, mean=None, cov=1, allow_singular=False, maxpts=None, abseps=1e-5, releps=1e-5,
    rng=None, lower_limit=None,
):  # fmt: skip
    n = mvn_dim(x, mean, cov)
    ends = mvn_ends(lower_limit)
    points = mvn_points(x, n)  # x as SciPy reads it; a lower_limit has no more points
    g = xp.reshape(d[y] * xp.exp(-y), (-1, 1, 1))  # through the cdf, exp(y)
    slope = mvn_cdf_derivative(
        x, mean, cov, 1, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    gs = g * xp.reshape(slope, (-1, ends, n))
    d[x] = xp.reshape(gs[:, 0], x.shape)
    d[lower_limit] = unbroadcast(xp.reshape(gs[:, ends - 1], points), lower_limit)
    d[mean] = unbroadcast(-xp.reshape(xp.sum(gs, axis=1), points), mean)
    curvature = mvn_cdf_derivative(
        x, mean, cov, 2, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    both = xp.sum(xp.reshape(curvature, (-1, ends, n, ends, n)), axis=(1, 3))
    full = 0.5 * xp.sum(g * both, axis=0)
    d[cov] = mvn_cdf_cov(mvn_cov_grad(full, cov), n)


# mvn_cdf_derivative of order k: its own derivatives are those of order k + 1 (in x and
# mean) and k + 2 (in cov), so every order differentiates again; the points are its rows


@adjoint(mvn_cdf_derivative, static=("order",) + _MVN_CDF_OPTIONS)
def mvn_cdf_derivative_adjoint(
    r, x, mean=None, cov=1, order=1, allow_singular=False, maxpts=None, abseps=1e-5,
    releps=1e-5, rng=None, lower_limit=None,
):  # fmt: skip
    n = mvn_dim(x, mean, cov)
    ends = mvn_ends(lower_limit)
    points = mvn_points(x, n)  # x as SciPy reads it; a lower_limit has no more points
    g = xp.reshape(d[r], (r.shape[0], -1, 1, 1))
    slope = mvn_cdf_derivative(
        x, mean, cov, order + 1, allow_singular=allow_singular, maxpts=maxpts,
        abseps=abseps, releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    gs = xp.sum(g * xp.reshape(slope, (r.shape[0], -1, ends, n)), axis=1)
    d[x] = xp.reshape(gs[:, 0], x.shape)
    d[lower_limit] = unbroadcast(xp.reshape(gs[:, ends - 1], points), lower_limit)
    d[mean] = unbroadcast(-xp.reshape(xp.sum(gs, axis=1), points), mean)
    curvature = mvn_cdf_derivative(
        x, mean, cov, order + 2, allow_singular=allow_singular, maxpts=maxpts,
        abseps=abseps, releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    both = xp.sum(xp.reshape(curvature, (r.shape[0], -1, ends, n, ends, n)), axis=(2, 4))
    full = 0.5 * xp.sum(g * both, axis=(0, 1))
    d[cov] = mvn_cdf_cov(mvn_cov_grad(full, cov), n)


@adjoint(mvn_cdf_cov, static=("n",))
def mvn_cdf_cov_adjoint(r, cov, n):
    d[cov] = mvn_cdf_cov(d[r], n)


@tangent(mvn_cdf_cov, static=("n",))
def mvn_cdf_cov_tangent(r, cov, n):
    d[r] = mvn_cdf_cov(d[cov], n)


# the parameters' helpers: mvn_mean is the identity where differentiated (a mean given),
# mvn_cov and mvn_cov_grad linear maps, each other's adjoints

nondifferentiable(mvn_dim, mvn_ends, mvn_points)


@adjoint(mvn_mean, static=("n",))
def mvn_mean_adjoint(r, mean, n):
    d[mean] = d[r]


@tangent(mvn_mean, static=("n",))
def mvn_mean_tangent(r, mean, n):
    d[r] = d[mean]


@adjoint(mvn_cov, static=("n",))
def mvn_cov_adjoint(r, cov, n):
    d[cov] = mvn_cov_grad(d[r], cov)


@tangent(mvn_cov, static=("n",))
def mvn_cov_tangent(r, cov, n):
    d[r] = mvn_cov(d[cov], n)


@adjoint(mvn_cov_grad, static=("cov",))
def mvn_cov_grad_adjoint(r, g, cov):
    d[g] = mvn_cov(d[r], g.shape[-1])


@tangent(mvn_cov_grad, static=("cov",))
def mvn_cov_grad_tangent(r, g, cov):
    d[r] = mvn_cov_grad(d[g], cov)


# ---- tangents ----


@tangent(stats.norm.logpdf)
def norm_logpdf_tangent(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d[y] = -d[x] * z / scale
    d[y] = d[loc] * z / scale
    d[y] = d[scale] * (z * z - 1) / scale


@tangent(stats.norm.pdf)
def norm_pdf_tangent(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    d[y] = -d[x] * y * z / scale
    d[y] = d[loc] * y * z / scale
    d[y] = d[scale] * y * (z * z - 1) / scale


@tangent(stats.norm.cdf)
def norm_cdf_tangent(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    q = xp.exp(-0.5 * z * z) / (_SQRT_2PI * scale)
    d[y] = d[x] * q
    d[y] = -d[loc] * q
    d[y] = -d[scale] * q * z


@tangent(stats.norm.logcdf)
def norm_logcdf_tangent(y, x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    q = xp.exp(-0.5 * z * z - y) / (_SQRT_2PI * scale)
    d[y] = d[x] * q
    d[y] = -d[loc] * q
    d[y] = -d[scale] * q * z


@tangent(stats.t.cdf)
def t_cdf_tangent(y, x, df, loc=0.0, scale=1.0):
    q = stats.t.pdf(x, df, loc, scale)
    d[y] = d[x] * q
    d[y] = -d[loc] * q
    d[y] = -d[scale] * q * (x - loc) / scale


@tangent(stats.gamma.cdf)
def gamma_cdf_tangent(y, x, a, loc=0.0, scale=1.0):
    q = stats.gamma.pdf(x, a, loc, scale)
    d[y] = d[x] * q
    d[y] = -d[loc] * q
    d[y] = -d[scale] * q * (x - loc) / scale


@tangent(stats.beta.cdf)
def beta_cdf_tangent(y, x, a, b, loc=0.0, scale=1.0):
    q = stats.beta.pdf(x, a, b, loc, scale)
    d[y] = d[x] * q
    d[y] = -d[loc] * q
    d[y] = -d[scale] * q * (x - loc) / scale


@tangent(stats.poisson.cdf, static=("k", "loc"))
def poisson_cdf_tangent(y, k, mu, loc=0):
    d[y] = -d[mu] * stats.poisson.pmf(xp.floor(k - loc), mu)


@tangent(stats.poisson.logcdf, static=("k", "loc"))
def poisson_logcdf_tangent(y, k, mu, loc=0):
    d[y] = -d[mu] * xp.exp(stats.poisson.logpmf(xp.floor(k - loc), mu) - y)


@tangent(stats.t.logpdf)
def t_logpdf_tangent(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = -(df + 1) * z / (df + z * z)
    d[y] = d[x] * s / scale
    d[y] = -d[loc] * s / scale
    d[y] = -d[scale] * (1 + z * s) / scale
    d[y] = (
        d[df]
        * 0.5
        * (
            special.digamma((df + 1) / 2)
            - special.digamma(df / 2)
            - 1 / df
            - xp.log1p(z * z / df)
            + (df + 1) * z * z / (df * (df + z * z))
        )
    )


@tangent(stats.t.pdf)
def t_pdf_tangent(y, x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = -(df + 1) * z / (df + z * z)
    d[y] = d[x] * y * s / scale
    d[y] = -d[loc] * y * s / scale
    d[y] = -d[scale] * y * (1 + z * s) / scale
    d[y] = (
        d[df]
        * y
        * 0.5
        * (
            special.digamma((df + 1) / 2)
            - special.digamma(df / 2)
            - 1 / df
            - xp.log1p(z * z / df)
            + (df + 1) * z * z / (df * (df + z * z))
        )
    )


@tangent(stats.poisson.logpmf, static=("k", "loc"))
def poisson_logpmf_tangent(y, k, mu, loc=0):
    d[y] = d[mu] * ((k - loc) / mu - 1)


@tangent(stats.poisson.pmf, static=("k", "loc"))
def poisson_pmf_tangent(y, k, mu, loc=0):
    d[y] = d[mu] * y * ((k - loc) / mu - 1)


@tangent(stats.gamma.logpdf)
def gamma_logpdf_tangent(y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - 1
    d[y] = d[x] * s / scale
    d[y] = -d[loc] * s / scale
    d[y] = d[scale] * (z - a) / scale
    d[y] = d[a] * (xp.log(z) - special.digamma(a))


@tangent(stats.gamma.pdf)
def gamma_pdf_tangent(y, x, a, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - 1
    d[y] = d[x] * y * s / scale
    d[y] = -d[loc] * y * s / scale
    d[y] = d[scale] * y * (z - a) / scale
    d[y] = d[a] * y * (xp.log(z) - special.digamma(a))


@tangent(stats.beta.logpdf)
def beta_logpdf_tangent(y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - (b - 1) / (1 - z)
    both = special.digamma(a + b)
    d[y] = d[x] * s / scale
    d[y] = -d[loc] * s / scale
    d[y] = -d[scale] * (1 + z * s) / scale
    d[y] = d[a] * (xp.log(z) - special.digamma(a) + both)
    d[y] = d[b] * (xp.log1p(-z) - special.digamma(b) + both)


@tangent(stats.beta.pdf)
def beta_pdf_tangent(y, x, a, b, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    s = (a - 1) / z - (b - 1) / (1 - z)
    both = special.digamma(a + b)
    d[y] = d[x] * y * s / scale
    d[y] = -d[loc] * y * s / scale
    d[y] = -d[scale] * y * (1 + z * s) / scale
    d[y] = d[a] * y * (xp.log(z) - special.digamma(a) + both)
    d[y] = d[b] * y * (xp.log1p(-z) - special.digamma(b) + both)


@tangent(stats.dirichlet.logpdf)
def dirichlet_logpdf_tangent(y, x, alpha):
    d[y] = xp.dot(alpha - 1, d[x] / x)
    per_alpha = (xp.log(x).T - special.digamma(alpha) + special.digamma(xp.sum(alpha))).T
    d[y] = xp.dot(d[alpha], per_alpha)


@tangent(stats.dirichlet.pdf)
def dirichlet_pdf_tangent(y, x, alpha):
    d[y] = xp.dot(alpha - 1, d[x] / x) * y
    per_alpha = (xp.log(x).T - special.digamma(alpha) + special.digamma(xp.sum(alpha))).T
    d[y] = xp.dot(d[alpha], per_alpha) * y


@tangent(stats.multivariate_normal.logpdf)
def mvn_logpdf_tangent(y, x, mean=None, cov=1):
    n = mvn_dim(x, mean, cov)
    c = mvn_cov(cov, n)  # what SciPy reads
    u = xp.reshape(xp.linalg.solve(c, xp.reshape(x - mvn_mean(mean, n), (-1, n)).T).T, (-1, n))
    d[y] = -xp.reshape(xp.sum(xp.reshape(d[x], u.shape) * u, axis=1), y.shape)
    d[y] = xp.reshape(xp.sum(d[mean] * u, axis=-1), y.shape)
    sym = mvn_cov(d[cov], n)
    d[y] = xp.reshape(
        0.5 * xp.sum((u @ sym) * u, axis=1) - 0.5 * xp.trace(xp.linalg.solve(c, sym)), y.shape
    )


@tangent(stats.multivariate_normal.pdf)
def mvn_pdf_tangent(y, x, mean=None, cov=1):
    n = mvn_dim(x, mean, cov)
    c = mvn_cov(cov, n)  # what SciPy reads
    u = xp.reshape(xp.linalg.solve(c, xp.reshape(x - mvn_mean(mean, n), (-1, n)).T).T, (-1, n))
    d[y] = -xp.reshape(xp.sum(xp.reshape(d[x], u.shape) * u, axis=1), y.shape) * y
    d[y] = xp.reshape(xp.sum(d[mean] * u, axis=-1), y.shape) * y
    sym = mvn_cov(d[cov], n)
    d[y] = (
        xp.reshape(
            0.5 * xp.sum((u @ sym) * u, axis=1) - 0.5 * xp.trace(xp.linalg.solve(c, sym)),
            y.shape,
        )
        * y
    )


@tangent(stats.multivariate_normal.cdf, static=_MVN_CDF_OPTIONS)
def mvn_cdf_tangent(
    y, x, mean=None, cov=1, allow_singular=False, maxpts=None, abseps=1e-5, releps=1e-5,
    rng=None, lower_limit=None,
):  # fmt: skip
    n = mvn_dim(x, mean, cov)
    ends = mvn_ends(lower_limit)
    slope = mvn_cdf_derivative(
        x, mean, cov, 1, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    at = xp.reshape(slope, (-1, ends, n))
    d[y] = xp.reshape(xp.sum(xp.reshape(d[x], (-1, n)) * at[:, 0], axis=1), y.shape)
    d[y] = xp.reshape(
        xp.sum(
            xp.reshape(xp.broadcast_to(d[lower_limit], mvn_points(x, n)), (-1, n))
            * at[:, ends - 1],
            axis=1,
        ),
        y.shape,
    )
    moved = xp.sum(at, axis=1)  # both ends, as the mean moves them
    d[y] = -xp.reshape(xp.sum(xp.reshape(d[mean], (1, n)) * moved, axis=1), y.shape)
    curvature = mvn_cdf_derivative(
        x, mean, cov, 2, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    both = xp.sum(xp.reshape(curvature, (-1, ends, n, ends, n)), axis=(1, 3))
    sym = mvn_cov(mvn_cdf_cov(d[cov], n), n)
    d[y] = xp.reshape(0.5 * xp.sum(both * sym, axis=(1, 2)), y.shape)


@tangent(stats.multivariate_normal.logcdf, static=_MVN_CDF_OPTIONS)
def mvn_logcdf_tangent(
    y, x, mean=None, cov=1, allow_singular=False, maxpts=None, abseps=1e-5, releps=1e-5,
    rng=None, lower_limit=None,
):  # fmt: skip
    n = mvn_dim(x, mean, cov)
    ends = mvn_ends(lower_limit)
    slope = mvn_cdf_derivative(
        x, mean, cov, 1, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    at = xp.reshape(slope, (-1, ends, n))
    d[y] = xp.reshape(xp.sum(xp.reshape(d[x], (-1, n)) * at[:, 0], axis=1), y.shape) * xp.exp(-y)
    d[y] = xp.reshape(
        xp.sum(
            xp.reshape(xp.broadcast_to(d[lower_limit], mvn_points(x, n)), (-1, n))
            * at[:, ends - 1],
            axis=1,
        ),
        y.shape,
    ) * xp.exp(-y)
    moved = xp.sum(at, axis=1)  # both ends, as the mean moves them
    d[y] = -xp.reshape(xp.sum(xp.reshape(d[mean], (1, n)) * moved, axis=1), y.shape) * xp.exp(-y)
    curvature = mvn_cdf_derivative(
        x, mean, cov, 2, allow_singular=allow_singular, maxpts=maxpts, abseps=abseps,
        releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    both = xp.sum(xp.reshape(curvature, (-1, ends, n, ends, n)), axis=(1, 3))
    sym = mvn_cov(mvn_cdf_cov(d[cov], n), n)
    d[y] = xp.reshape(0.5 * xp.sum(both * sym, axis=(1, 2)), y.shape) * xp.exp(-y)


@tangent(mvn_cdf_derivative, static=("order",) + _MVN_CDF_OPTIONS)
def mvn_cdf_derivative_tangent(
    r, x, mean=None, cov=1, order=1, allow_singular=False, maxpts=None, abseps=1e-5,
    releps=1e-5, rng=None, lower_limit=None,
):  # fmt: skip
    n = mvn_dim(x, mean, cov)
    ends = mvn_ends(lower_limit)
    slope = mvn_cdf_derivative(
        x, mean, cov, order + 1, allow_singular=allow_singular, maxpts=maxpts,
        abseps=abseps, releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    rows = xp.reshape(slope, (r.shape[0], -1, ends, n))
    d[r] = xp.reshape(xp.sum(rows[:, :, 0] * xp.reshape(d[x], (-1, 1, n)), axis=2), r.shape)
    d[r] = xp.reshape(
        xp.sum(
            rows[:, :, ends - 1]
            * xp.reshape(xp.broadcast_to(d[lower_limit], mvn_points(x, n)), (-1, 1, n)),
            axis=2,
        ),
        r.shape,
    )
    d[r] = -xp.reshape(
        xp.sum(xp.sum(rows, axis=2) * xp.reshape(d[mean], (1, 1, n)), axis=2), r.shape
    )
    curvature = mvn_cdf_derivative(
        x, mean, cov, order + 2, allow_singular=allow_singular, maxpts=maxpts,
        abseps=abseps, releps=releps, rng=rng, lower_limit=lower_limit,
    )  # fmt: skip
    both = xp.sum(xp.reshape(curvature, (r.shape[0], -1, ends, n, ends, n)), axis=(2, 4))
    sym = xp.reshape(mvn_cov(mvn_cdf_cov(d[cov], n), n), (1, 1, n * n))
    d[r] = xp.reshape(
        0.5 * xp.sum(xp.reshape(both, (r.shape[0], -1, n * n)) * sym, axis=2), r.shape
    )
