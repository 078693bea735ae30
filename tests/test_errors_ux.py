"""Errors a user can act on (issue #18): tracebacks that end at the user's call with
srcad's frames hidden, "no rule" messages that say how to add one, and the habits from
Python and JAX that used to get misleading messages."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import srcad
from srcad.adjoints.registry import d
from srcad.errors import NoAdjointError, SourceUnavailableError, UnsupportedConstructError

PACKAGE = os.path.dirname(os.path.abspath(srcad.__file__)) + os.sep
X = np.array([0.3, -0.7, 1.1])
OLD_PYTHON = sys.version_info < (3, 11)  # re-raising keeps the boundary's own frame


def frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return traceback.extract_tb(exc.__traceback__)


def visible(exc: BaseException) -> list[traceback.FrameSummary]:
    """The frames, less the boundary's own on Python 3.10 (see :func:`srcad_frames`)."""
    return [f for f in frames(exc) if not (OLD_PYTHON and f.filename.startswith(PACKAGE))]


def srcad_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """srcad's frames, less the boundary's own on Python 3.10 (it cannot be dropped there)."""
    found = [f for f in frames(exc) if f.filename.startswith(PACKAGE)]
    return found[1:] if OLD_PYTHON else found


# ---- tracebacks end at the user's call ------------------------------------------------------


def with_with(x):
    with open("f"):
        y = x * 2.0
    return np.sum(y)


def pullback_with_wrong_shape():
    _, pullback = srcad.vjp(lambda x: np.sin(x), X)
    pullback(np.ones(5))


CALLS = {
    "grad": lambda: srcad.grad(with_with)(X),
    "value_and_grad": lambda: srcad.value_and_grad(with_with)(X),
    "grad, bad wrt": lambda: srcad.grad(with_with, wrt=3),
    "vjp": lambda: srcad.vjp(with_with, X),
    "pullback": pullback_with_wrong_shape,
    "jvp": lambda: srcad.jvp(with_with, (X,), (X,)),
    "jacobian": lambda: srcad.jacobian(with_with, mode="rev")(X),
    "hessian": lambda: srcad.hessian(with_with)(X),
    "hvp": lambda: srcad.hvp(with_with, (X,), (X,)),
    "check_grad": lambda: srcad.check_grad(with_with, X),
    "source": lambda: srcad.source(with_with),
    "export": lambda: srcad.export(srcad.grad(with_with), os.devnull),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_srcad_frames_are_hidden_from_errors_of_every_entry_point(name):
    with pytest.raises((srcad.TransformError, TypeError, ValueError)) as info:
        CALLS[name]()
    assert srcad_frames(info.value) == []
    assert visible(info.value)[-1].filename == __file__  # ends at the user's call


def test_a_transform_error_ends_at_the_users_call_line():
    with pytest.raises(UnsupportedConstructError, match="'with' statements") as info:
        srcad.grad(with_with)(X)
    last = visible(info.value)[-1]
    assert last.filename == __file__ and "srcad.grad(with_with)(X)" in last.line
    assert srcad_frames(info.value) == []


def test_filtering_off_shows_every_frame(monkeypatch):
    monkeypatch.setenv("SRCAD_TRACEBACK_FILTERING", "off")
    with pytest.raises(UnsupportedConstructError) as info:
        srcad.grad(with_with)(X)
    names = {f.filename for f in frames(info.value)}
    assert any(n.endswith(os.path.join("transform", "fence.py")) for n in names)


@pytest.mark.skipif(OLD_PYTHON, reason="exception notes exist from Python 3.11")
def test_the_note_says_how_to_see_every_frame():
    with pytest.raises(UnsupportedConstructError) as info:
        srcad.grad(with_with)(X)
    assert any("SRCAD_TRACEBACK_FILTERING=off" in n for n in info.value.__notes__)


def out_of_range(x):
    y = np.sin(x)
    return np.sum(y[np.array([5])])


def test_generated_code_frames_stay_and_end_the_traceback():
    with pytest.raises(IndexError) as info:
        srcad.grad(out_of_range)(X)
    last = visible(info.value)[-1]
    assert last.filename.startswith("<srcad ") and "out_of_range" in last.filename
    assert "test_errors_ux.py" in last.filename  # it names the user's file and line
    assert last.line  # its text comes from linecache
    assert srcad_frames(info.value) == []


def validate(shape):
    raise ValueError("the user's own error")


def calls_helper(x):
    y = np.sin(x)
    validate(y.shape)
    return np.sum(y)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_the_users_own_frames_are_kept(mode):
    with pytest.raises(ValueError, match="the user's own error") as info:
        if mode == "rev":
            srcad.grad(calls_helper)(X)
        else:
            srcad.jvp(calls_helper, (X,), (X,))
    assert visible(info.value)[-1].name == "validate"
    assert any(f.filename.startswith("<srcad ") for f in frames(info.value))
    assert srcad_frames(info.value) == []


def broken(x):
    return np.sin(x)


@srcad.adjoint(broken)
def broken_adjoint(y, x):
    d[x] = d[y] @ np.ones((5, 5))


def calls_broken(x):
    y = broken(x)
    return np.sum(y * y)


@pytest.mark.skipif(OLD_PYTHON, reason="exception notes exist from Python 3.11")
def test_an_error_in_backward_code_names_its_grad_of_comment():
    with pytest.raises(ValueError) as info:
        srcad.grad(calls_broken)(X)
    assert visible(info.value)[-1].filename.startswith("<srcad ")
    assert any("# grad of: y = broken(x)" in n for n in info.value.__notes__)


def test_an_uncaught_error_prints_the_generated_line(tmp_path):
    # before 3.13 the interpreter's own printing skipped lines of <...> files
    script = tmp_path / "uncaught.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import srcad

            def f(x):
                y = np.sin(x)
                return np.sum(y[np.array([5])])

            srcad.grad(f)(np.ones(3))
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.path.dirname(PACKAGE.rstrip(os.sep))}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 1
    assert "<srcad " in run.stderr
    assert "y[_t" in run.stderr or "y[np.array" in run.stderr  # the generated line itself
    assert "srcad/api.py" not in run.stderr.replace(os.sep, "/")


def test_success_is_unchanged_and_entry_points_keep_their_signatures():
    import inspect

    assert np.allclose(srcad.grad(lambda x: np.sum(x * x))(X), 2 * X)
    assert "argnums" in inspect.signature(srcad.grad).parameters
    assert srcad.grad.__name__ == "grad" and srcad.grad.__doc__


# ---- "no rule" errors say how to add one ----------------------------------------------------


def no_rule_function(x):
    return np.sum(np.fft.hfft(x))


class FromC:
    apply = np.sin  # a method srcad cannot read: no Python source


def no_rule_method(x, obj):
    return np.sum(obj.apply(x))


@pytest.mark.parametrize(
    "call",
    [
        lambda: srcad.grad(no_rule_function)(X),
        lambda: srcad.jvp(no_rule_function, (X,), (X,)),
        lambda: srcad.grad(no_rule_method)(X, FromC()),
        lambda: srcad.jvp(no_rule_method, (X, FromC()), (X, None)),
    ],
)
def test_every_no_rule_error_names_srcad_adjoint_and_an_example(call):
    with pytest.raises(NoAdjointError) as info:
        call()
    message = str(info.value)
    assert "@srcad.adjoint" in message
    assert "examples/custom_rules.py" in message and "docs/rules.md" in message


# ---- messages at the source of the mistake --------------------------------------------------


def eig_unpacked(x):
    A = np.array([[0.0, -1.0], [1.0, 0.0]]) * x[0]  # a rotation: eigenvalues +-i x0
    w, v = np.linalg.eig(A)
    return np.sum(w.real)


def eig_result(x):
    A = np.array([[0.0, -1.0], [1.0, 0.0]]) * x[0]
    r = np.linalg.eig(A)
    return np.sum(r.eigenvalues.real)


@pytest.mark.parametrize("func", [eig_unpacked, eig_result])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_eig_says_where_its_rule_ends(func, mode):
    # eig has a rule for real distinct eigenvalues; complex ones are refused by name
    with pytest.raises(Exception, match="complex"):
        if mode == "rev":
            srcad.grad(func)(X)
        else:
            srcad.jvp(func, (X,), (X,))


def two_missing(x):
    a = np.i0(x)
    b = np.fft.hfft(a)
    return np.sum(b)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_the_first_statement_without_a_rule_is_the_one_reported(mode):
    # reverse mode meets statements last to first: it still names the earliest
    with pytest.raises(NoAdjointError, match=r"np\.i0|numpy\.i0") as info:
        if mode == "rev":
            srcad.grad(two_missing)(X)
        else:
            srcad.jvp(two_missing, (X,), (X,))
    assert info.value.lineno == two_missing.__code__.co_firstlineno + 1


class Model:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.sum(self.w * np.sin(x))


MODEL = Model(2.0)


def calls_object(x):
    return MODEL(x)


def calls_method(x):
    return MODEL.__call__(x)


def test_a_callable_object_as_the_function_is_its_method():
    assert np.allclose(srcad.grad(MODEL)(X), 2.0 * np.cos(X))
    assert np.allclose(srcad.grad(MODEL.__call__)(X), 2.0 * np.cos(X))


def test_a_callable_object_called_inside_is_called_through_its_method():
    # (it used to be refused, pointing to obj.__call__(...); srcad now writes that itself)
    np.testing.assert_allclose(srcad.grad(calls_object)(X), 2.0 * np.cos(X))
    assert srcad.check_grad(calls_object, X, modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(calls_method, X, modes=("rev", "fwd")) < 1e-6


class Plain:
    def __init__(self, w):
        self.w = w


@dataclasses.dataclass
class Params:
    w: np.ndarray


def uses_params(p, x):
    return np.sum(p.w * np.sin(x))


@pytest.mark.parametrize(
    "call",
    [
        lambda: srcad.grad(uses_params)(Plain(X.copy()), X),
        lambda: srcad.value_and_grad(uses_params)(Plain(X.copy()), X),
        lambda: srcad.jvp(uses_params, (Plain(X.copy()), X), (Plain(X.copy()), None)),
        lambda: srcad.grad(lambda ps, x: uses_params(ps["a"], x))({"a": Plain(X.copy())}, X),
        lambda: srcad.hessian(uses_params)(Plain(X.copy()), X),
        lambda: srcad.jacobian(uses_params)(Plain(X.copy()), X),
        lambda: srcad.check_grad(uses_params, Plain(X.copy()), X),
    ],
)
def test_an_object_of_a_plain_class_as_a_parameter_says_make_it_a_dataclass(call):
    with pytest.raises(TypeError, match=r"Plain.*@dataclass"):
        call()


def test_the_dataclass_advice_works():
    g = srcad.grad(uses_params)(Params(X.copy()), X)
    assert np.allclose(g.w, np.sin(X))


def test_an_attribute_of_an_opaque_value_says_make_it_a_dataclass():
    # with no arguments to look at, the transformation meets the attribute itself
    with pytest.raises(NoAdjointError, match=r"attribute \.w.*@dataclass"):
        srcad.source(uses_params)


def builtin_max(x):
    return np.sum(max(x, 2.0 * x))


def builtin_min(x):
    return np.sum(min(np.sum(x), 0.5) * x)


def builtin_pow(x):
    return pow(np.sum(x), 2)


def builtin_max_of_three(x):
    return np.sum(max(np.sum(x), 0.5, np.sum(x**2)) * x)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_builtins_that_mean_something_else_on_arrays_name_numpys(mode):
    # max(a, b), min(a, b) and pow(a, b) of numbers have rules since stop 27; Python's max
    # of arrays fails as it does without srcad, and max of three values names NumPy's
    srcad.check_grad(builtin_min, X, modes=(mode,))
    srcad.check_grad(builtin_pow, X, modes=(mode,))
    with pytest.raises(ValueError, match="truth value of an array"):
        builtin_max(X)
    with pytest.raises(ValueError, match="truth value of an array"):
        srcad.grad(builtin_max)(X) if mode == "rev" else srcad.jvp(builtin_max, (X,), (X,))
    with pytest.raises(srcad.TransformError, match=r"np\.maximum\(a, b\).*np\.max\(x\)"):
        if mode == "rev":
            srcad.grad(builtin_max_of_three)(X)
        else:
            srcad.jvp(builtin_max_of_three, (X,), (X,))


def with_item(x):
    s = np.sum(x * x)
    return s.item()


def with_float(x):
    s = np.sum(x * x)
    return float(s)


def with_tolist(x):
    return sum(x.tolist())


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_item_says_what_to_do(mode):
    with pytest.raises(NoAdjointError, match=r"\.item\(\).*Python number.*float\(x\)"):
        if mode == "rev":
            srcad.grad(with_item)(X)
        else:
            srcad.jvp(with_item, (X,), (X,))
    assert np.allclose(srcad.grad(with_float)(X), 2 * X)  # the advice works
    with pytest.raises(NoAdjointError, match=r"\.tolist\(\).*keep the array"):
        srcad.grad(with_tolist)(X)


def test_a_repl_function_says_which_repls_keep_the_source():
    namespace = {"np": np}
    exec(compile("def typed(x):\n    return x * 2.0\n", "<stdin>", "exec"), namespace)
    with pytest.raises(SourceUnavailableError) as info:
        srcad.grad(namespace["typed"])(1.0)
    message = str(info.value)
    assert all(word in message for word in ("IPython", "Jupyter", "3.13"))


# ---- argnums, JAX's name for wrt -----------------------------------------------------------


def two_args(x, y):
    return np.sum(np.sin(x) * y * y)


def test_argnums_is_an_alias_of_wrt():
    y = X[::-1].copy()
    assert np.allclose(srcad.grad(two_args, argnums=1)(X, y), 2 * np.sin(X) * y)
    value, g = srcad.value_and_grad(two_args, argnums=(0, 1))(X, y)
    assert np.isclose(value, two_args(X, y)) and np.allclose(g[1], 2 * np.sin(X) * y)
    assert np.allclose(srcad.grad(argnums=1)(two_args)(X, y), 2 * np.sin(X) * y)
    assert np.allclose(srcad.jacobian(two_args, argnums=1)(X, y), 2 * np.sin(X) * y)
    assert np.allclose(srcad.hessian(two_args, argnums=1)(X, y), np.diag(2 * np.sin(X)))


def test_argnums_inside_a_differentiated_function():
    def inner(x, y):
        return srcad.grad(two_args, argnums=1)(x, y).sum()

    srcad.check_grad(inner, X, X[::-1].copy(), wrt=(0, 1))


@pytest.mark.parametrize(
    "make",
    [
        lambda: srcad.grad(two_args, wrt=0, argnums=1),
        lambda: srcad.value_and_grad(two_args, 0, argnums=0),
        lambda: srcad.jacobian(two_args, wrt=1, argnums=1),
        lambda: srcad.hessian(two_args, wrt=0, argnums=1),
    ],
)
def test_wrt_and_argnums_together_are_refused(make):
    with pytest.raises(TypeError, match="not both"):
        make()


def call_of_a_made_function(x):
    return np.sum(np.vectorize(np.sin)(x))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_a_function_made_on_the_line_is_not_named_by_srcads_temporary(mode):
    # was: "no adjoint rule for _t1", srcad's own name for np.vectorize(np.sin)
    x = np.ones(3)
    with pytest.raises(NoAdjointError, match="for a function made on this line") as info:
        if mode == "rev":
            srcad.grad(call_of_a_made_function)(x)
        else:
            srcad.jvp(call_of_a_made_function, (x,), (x,))
    assert "_t1" not in str(info.value)
