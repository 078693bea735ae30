"""SciPy's functions with rules (srcad/adjoints/scipy_*.py) against central finite
differences, in reverse, forward and second order; those without a rule are refused."""

import subprocess
import sys

import numpy as np
import pytest
from opcheck import check, rand

import srcad

pytest.importorskip("scipy")
import scipy.special  # noqa: E402

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


def lambda_of(expr):
    from opcheck import make_function

    return make_function(expr, "x, y")


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
@pytest.mark.parametrize("shape, axis", AXES[:4])
def test_softmax(func, shape, axis):
    check(f"scipy.special.{func}(x, axis={axis!r})", rand(*shape))


def test_import_srcad_does_not_import_scipy():
    code = "import sys, srcad; print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


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
    assert info.value.filename == __file__
