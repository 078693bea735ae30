"""SciPy's functions with rules (srcad/adjoints/scipy_*.py) against central finite
differences, in reverse, forward and second order; those without a rule are refused."""

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from opcheck import check, make_function, rand

import srcad

pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats  # noqa: E402


def spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


POSITIVE = dict(low=0.5, high=2.5)
UNIT = dict(low=0.1, high=0.9)

SPECIAL_UNARY = [
    ("expit", {}),
    ("logit", UNIT),
    ("erf", {}),
    ("erfc", {}),
    ("erfinv", dict(low=-0.8, high=0.8)),
    ("gammaln", POSITIVE),
    ("gammaln", dict(low=-2.9, high=-2.1)),  # log |gamma| where gamma is negative
    ("digamma", POSITIVE),
    ("psi", POSITIVE),
    ("gamma", POSITIVE),
    ("ndtr", {}),
    ("log_ndtr", {}),
    ("log_ndtr", dict(low=-30.0, high=-20.0)),  # where ndtr itself underflows
]


@pytest.mark.parametrize("func, domain", SPECIAL_UNARY)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_special_unary(func, domain, shape):
    x = rand(*shape, **domain)
    check(f"scipy.special.{func}(x)", np.float64(x) if shape == () else x)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_polygamma(n):
    check(f"scipy.special.polygamma({n}, x)", rand(2, 3, **POSITIVE))


@pytest.mark.parametrize("func", ["betaln", "xlogy", "xlog1py"])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((), (2, 2))])
def test_special_binary(func, shapes):
    x, y = (rand(*s, **POSITIVE, seed=k) for k, s in enumerate(shapes))
    check(f"scipy.special.{func}(x, y)", x, y)


@pytest.mark.parametrize("func", ["xlogy", "xlog1py"])
def test_xlogy_at_x_zero_has_derivative_zero_in_y(func):
    x = np.array([0.0, 1.5])
    y = np.array([0.0 if func == "xlogy" else -1.0, 0.7])
    grads = srcad.grad(lambda_of(f"np.sum(scipy.special.{func}(x, y))"), wrt=1)(x, y)
    assert grads[0] == 0.0 and np.isfinite(grads).all()


def lambda_of(expr, namespace=None):
    return make_function(expr, "x, y", namespace)


AXES = [((4,), None), ((2, 3), None), ((2, 3), 0), ((2, 3), 1), ((2, 3, 2), (0, 2))]


@pytest.mark.parametrize("shape, axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(shape, axis, keepdims):
    check(f"scipy.special.logsumexp(x, axis={axis!r}, keepdims={keepdims})", rand(*shape))


@pytest.mark.parametrize("shape, axis", AXES)
def test_logsumexp_with_weights(shape, axis):
    a, b = rand(*shape), rand(*shape, **POSITIVE, seed=1)
    check(f"scipy.special.logsumexp(x, axis={axis!r}, b=y)", a, b)
    check(f"scipy.special.logsumexp(x, {axis!r}, y, True)", a, b)
    check(f"scipy.special.logsumexp(x, axis={axis!r}, b=2.5)", a)


def test_logsumexp_with_broadcast_weights():
    check("scipy.special.logsumexp(x, axis=1, b=y)", rand(2, 3), rand(3, **POSITIVE))


@pytest.mark.parametrize("func", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, axis", AXES)  # axis None and a tuple of axes too
def test_softmax(func, shape, axis):
    check(f"scipy.special.{func}(x, axis={axis!r})", rand(*shape))


def test_import_srcad_does_not_import_scipy():
    code = "import sys, srcad; print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_srcad_works_without_scipy():
    # None in sys.modules makes `import scipy` fail, as where SciPy is not installed
    code = (
        "import sys; sys.modules['scipy'] = None\n"
        "import numpy as np, srcad\n"
        "from srcad.__main__ import op_table\n"
        "from srcad.adjoints.registry import lookup\n"
        "assert lookup(np.tanh) is not None and lookup(len) is None\n"
        "assert not any(op.startswith('scipy') for op, _, _ in op_table())\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def _zeta(x):
    return np.sum(scipy.special.zeta(x, 2.0))


def _logsumexp_sign(x):
    return scipy.special.logsumexp(x, return_sign=True)[0]


def test_special_function_without_rule_is_refused_at_its_line():
    with pytest.raises(srcad.NoAdjointError, match=r"no rule for scipy\.special\.zeta") as info:
        srcad.grad(_zeta)(rand(3, **POSITIVE))
    assert info.value.filename == __file__ and "scipy.special.zeta(x, 2.0)" in str(info.value)
    with pytest.raises(srcad.NoAdjointError, match=r"no rule for scipy\.special\.zeta"):
        srcad.jvp(_zeta, (rand(3, **POSITIVE),), (np.ones(3),))


def test_scipy_python_functions_without_rules_are_never_transformed():
    # scipy.special.logsumexp is Python source: an argument its rule does not take must
    # not send srcad into SciPy's own code
    with pytest.raises(srcad.TransformError, match="logsumexp") as info:
        srcad.grad(_logsumexp_sign)(rand(3))
    assert info.value.filename == __file__ and "return_sign" in str(info.value)
    with pytest.raises(srcad.TransformError, match="logsumexp.*return_sign"):
        srcad.jvp(_logsumexp_sign, (rand(3),), (np.ones(3),))


# ---- scipy.stats ----

LOCATION_SCALE = [
    # (distribution, method, number of shape parameters, where x lies)
    ("norm", "logpdf", 0, dict(low=-2.0, high=2.0)),
    ("norm", "pdf", 0, dict(low=-2.0, high=2.0)),
    ("norm", "cdf", 0, dict(low=-2.0, high=2.0)),
    ("norm", "logcdf", 0, dict(low=-2.0, high=2.0)),
    ("t", "logpdf", 1, dict(low=-2.0, high=2.0)),
    ("t", "pdf", 1, dict(low=-2.0, high=2.0)),
    ("gamma", "logpdf", 1, dict(low=2.5, high=4.0)),
    ("gamma", "pdf", 1, dict(low=2.5, high=4.0)),
    ("beta", "logpdf", 2, dict(low=0.35, high=0.55)),
    ("beta", "pdf", 2, dict(low=0.35, high=0.55)),
]


@pytest.mark.parametrize("dist, method, count, domain", LOCATION_SCALE)
def test_location_scale_distributions(dist, method, count, domain):
    # x, loc (y), scale (z) and the shape parameters (u, v), all differentiated
    x = rand(2, 3, **domain)
    loc, scale = rand(3, low=-0.2, high=0.2, seed=1), rand(3, low=0.9, high=1.3, seed=2)
    params = [rand(3, low=1.5, high=3.0, seed=3 + k) for k in range(count)]
    shapes = tuple(range(3, 3 + count))
    expr = f"scipy.stats.{dist}.{method}"
    names = "".join(p + ", " for p in "uv"[:count])
    check(f"{expr}(x, {names}y, z)", x, loc, scale, *params)
    check(f"{expr}(x, {names}loc=y, scale=z)", x, loc, scale, *params)
    check(f"{expr}(x, {names}scale=z)", x, loc, 1.1, *params, wrt=(0, 2, *shapes))
    check(f"{expr}(x, {names})", x, loc, scale, *params, wrt=(0, *shapes))


@pytest.mark.parametrize("dist, domain", [(d, dom) for d, m, _, dom in LOCATION_SCALE
                                          if m == "pdf" and d != "norm"])  # fmt: skip
def test_cdf_in_x_loc_and_scale(dist, domain):
    # the shape parameters are constants (literals: the checks differentiate every argument)
    x = rand(2, 3, **domain)
    loc, scale = rand(3, low=-0.2, high=0.2, seed=1), rand(3, low=0.9, high=1.3, seed=2)
    shapes = {"t": "2.5, ", "gamma": "2.0, ", "beta": "2.0, 3.0, "}[dist]
    check(f"scipy.stats.{dist}.cdf(x, {shapes}y, z)", x, loc, scale)


@pytest.mark.parametrize("dist, params", [("t", "x"), ("gamma", "x"), ("beta", "x, 2.0")])
def test_cdf_refuses_a_varying_shape_parameter(dist, params):
    f = make_function(f"np.sum(scipy.stats.{dist}.cdf(y, {params}))", "x, y")
    x, y = 2.0, np.array([0.3, 0.6])
    with pytest.raises(srcad.TransformError, match="'a'|'df'"):
        srcad.grad(f)(x, y)
    with pytest.raises(srcad.TransformError, match="'a'|'df'"):
        srcad.jvp(f, (x, y), (1.0, np.zeros(2)))


def test_norm_logcdf_far_left():
    check("scipy.stats.norm.logcdf(x, y)", rand(4, low=-40.0, high=-30.0), 0.5)


@pytest.mark.parametrize("method", ["logpmf", "pmf", "cdf", "logcdf"])
def test_poisson(method):
    k = np.array([0.0, 1.0, 3.0, 7.0])
    mu = rand(4, low=0.5, high=4.0)
    check(f"scipy.stats.poisson.{method}(x, y)", k, mu, wrt=(1,))
    check(f"scipy.stats.poisson.{method}(x, y, loc=1)", k + 1, mu, wrt=(1,))
    check(f"scipy.stats.poisson.{method}(x, mu=y)", k, mu, wrt=(1,))


@pytest.mark.parametrize("method", ["logpdf", "pdf"])
@pytest.mark.parametrize("points", [None, 3])
def test_dirichlet_concentration(method, points):
    rng = np.random.default_rng(0)
    x = rng.dirichlet([2.0, 3.0, 4.0], size=points).T  # (3,) or (3, points)
    check(f"scipy.stats.dirichlet.{method}(x, y)", x, rand(3, low=1.5, high=3.0), wrt=(1,))


@pytest.mark.parametrize("method", ["logpdf", "pdf"])
def test_dirichlet_quantiles_closed_form(method):
    # SciPy checks that x sums to 1, so finite differences cannot move x alone
    rng = np.random.default_rng(1)
    x, alpha = rng.dirichlet([2.0, 3.0, 4.0], size=2).T, np.array([2.0, 3.0, 4.0])
    f = lambda_of(f"scipy.stats.dirichlet.{method}(x, y) * np.array([1.5, -0.5])")
    grad = srcad.grad(lambda_of(f"np.sum(scipy.stats.dirichlet.{method}(x, y) * W)",
                                {"W": np.array([1.5, -0.5])}))(x, alpha)  # fmt: skip
    value = scipy.stats.dirichlet.__getattribute__(method)(x, alpha)
    weight = np.array([1.5, -0.5]) * (value if method == "pdf" else 1.0)
    np.testing.assert_allclose(grad, (alpha - 1)[:, None] / x * weight, rtol=1e-12)
    tangent = rng.normal(size=x.shape)
    _, out = srcad.jvp(f, (x, alpha), (tangent, np.zeros(3)))
    np.testing.assert_allclose(out, np.array([1.5, -0.5]) * (weight / np.array([1.5, -0.5]))
                               * np.sum((alpha - 1)[:, None] * tangent / x, axis=0))  # fmt: skip


@pytest.mark.parametrize("method", ["logpdf", "pdf"])
@pytest.mark.parametrize("xshape", [(3,), (4, 3), (1, 3)])
def test_multivariate_normal(method, xshape):
    x, mean = rand(*xshape, low=-1.0, high=1.0), rand(3, low=-0.3, high=0.3, seed=1)
    check(f"scipy.stats.multivariate_normal.{method}(x, y, z)", x, mean, spd(3))
    check(f"scipy.stats.multivariate_normal.{method}(x, mean=y, cov=z)", x, mean, spd(3))


def test_multivariate_normal_reads_the_lower_triangle_of_cov_as_scipy_does():
    f = lambda_of("scipy.stats.multivariate_normal.logpdf(np.array([0.3, -0.2, 0.5]), x, y)")
    g = srcad.grad(f, wrt=1)(np.zeros(3), spd(3))
    assert np.all(np.triu(g, 1) == 0) and np.all(g[np.tril_indices(3, -1)] != 0)


# ---- scipy.linalg ----


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky(lower):
    check(f"scipy.linalg.cholesky(x, lower={lower})", spd(3))
    check(f"scipy.linalg.cholesky(x, {lower}) @ y", spd(3), rand(3, 2))


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_reads_one_triangle_as_scipy_does(lower):
    f = lambda_of(f"np.sum(scipy.linalg.cholesky(x, lower={lower}) * y)")
    g = srcad.grad(f)(spd(3), rand(3, 3))
    other = np.triu(g, 1) if lower else np.tril(g, -1)
    assert np.all(other == 0) and np.all(np.diag(g) != 0)


def triangular(n, seed=0):
    return rand(n, n, seed=seed) + n * np.eye(n)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("bshape", [(3,), (3, 2)])
def test_solve_triangular(lower, unit, bshape):
    # the whole of a is random: the other triangle is never read
    a, b = triangular(3), rand(*bshape, seed=1)
    check(f"scipy.linalg.solve_triangular(x, y, lower={lower}, unit_diagonal={unit})", a, b)


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular_trans(trans):
    a, b = triangular(3), rand(3, 2, seed=1)
    check(f"scipy.linalg.solve_triangular(x, y, trans={trans!r})", a, b)
    check(f"scipy.linalg.solve_triangular(x, y, {trans!r}, True, True)", a, b)


# ---- what has no rule: refused at the user's line, SciPy's source never transformed ----


def _frozen(x):
    dist = scipy.stats.norm(0.0, 2.0)
    return np.sum(dist.logpdf(x))


def _survival(x):
    return np.sum(scipy.stats.norm.sf(x))


def _logm(x):
    return np.sum(scipy.linalg.logm(x))


def _cho_solve_banded(x, b):
    return np.sum(scipy.linalg.cho_solve_banded((x, False), b))


@pytest.mark.parametrize(
    "func, args, name",
    [
        (_survival, (rand(3),), "scipy.stats.norm.sf"),
        (_logm, (spd(2),), "scipy.linalg.logm"),
        (_cho_solve_banded, (spd(2), rand(2)), "scipy.linalg.cho_solve_banded"),
        (_frozen, (rand(3),), "scipy.stats._distn_infrastructure.rv_continuous_frozen.logpdf"),
    ],
)
def test_scipy_without_rule_is_refused_in_both_modes(func, args, name):
    with pytest.raises(srcad.NoAdjointError, match=f"no rule for {name}") as info:
        srcad.grad(func, wrt=tuple(range(len(args))))(*args)
    assert info.value.filename == __file__ and info.value.lineno is not None
    tangents = tuple(np.ones_like(a) for a in args)
    with pytest.raises(srcad.NoAdjointError, match=f"no rule for {name}") as info:
        srcad.jvp(func, args, tangents)
    assert info.value.filename == __file__ and info.value.lineno is not None


def test_every_name_in_the_table_has_both_rules():
    from srcad.adjoints.registry import lookup, lookup_tangent
    from srcad.adjoints.scipy_table import RULE_MODULES, resolve

    for name in RULE_MODULES:
        obj = resolve(name)
        assert lookup(obj) is not None and lookup_tangent(obj) is not None, name


def test_sqrtm():
    check("scipy.linalg.sqrtm(x)", spd(3))
    check("scipy.linalg.sqrtm(x)", spd(3) + 0.3 * rand(3, 3, seed=4))  # not symmetric


def test_solve_sylvester():
    check("scipy.linalg.solve_sylvester(x, y, z)", spd(3), spd(2, seed=1), rand(3, 2))


# ---- scipy.signal ----

CONVOLVE_SHAPES = [((5,), (3,)), ((3,), (5,)), ((4,), (4,)), ((4, 5), (2, 3)), ((2, 3), (4, 3))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", CONVOLVE_SHAPES)
def test_convolve(mode, shapes):
    # (for 'valid' SciPy needs one input at least as large in every dimension: each is)
    a, v = rand(*shapes[0]), rand(*shapes[1], seed=1)
    check(f"scipy.signal.convolve(x, y, mode={mode!r})", a, v)
    check(f"scipy.signal.convolve(x, y, {mode!r}, 'direct')", a, v)


def test_a_users_rule_for_a_scipy_function_wins_over_srcads():
    code = "import scipy.special, numpy as np, srcad\n" + (
        "from srcad.adjoints.registry import d\n"
        "@srcad.adjoint(scipy.special.erf)\n"
        "def erf_rule(y, x):\n"
        "    d[x] = 3.0 * d[y]\n"
        "def f(x):\n"
        "    return np.sum(scipy.special.erf(x) + scipy.special.expit(x))\n"
        "print(srcad.grad(f)(np.zeros(2)).tolist())\n"
    )
    # in a fresh process, where srcad's SciPy rules are not loaded yet when the user's is
    # registered (expit's lookup loads them)
    path = Path(tempfile.mkdtemp()) / "user_rule.py"
    path.write_text(code)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[3.25, 3.25]"  # (expit's rule is srcad's)


def test_srcad_imported_after_scipy_has_its_rules():
    code = (
        "import scipy.special, scipy.stats, numpy as np, srcad\n"
        "f = lambda x: np.sum(scipy.stats.norm.logpdf(x) + scipy.special.expit(x))\n"
    )
    path = Path(tempfile.mkdtemp()) / "after.py"
    path.write_text(code + "print(srcad.check_grad(f, np.array([0.5, -1.0])) < 1e-6)\n")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_a_module_whose_name_starts_with_scipy_is_the_users(tmp_path, monkeypatch):
    (tmp_path / "scipyish_helpers.py").write_text(
        "import numpy as np\n\n\ndef helper(x):\n    return np.sin(x) * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import scipyish_helpers

    f = make_function("np.sum(H.helper(x))", "x", {"H": scipyish_helpers})
    x = rand(3)
    np.testing.assert_allclose(srcad.grad(f)(x), np.cos(x) * x + np.sin(x))
