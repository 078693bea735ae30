"""Generated code depends on srcad.runtime alone (#19): every global name a generated
function reads is bound to the user's own objects, to NumPy, math or builtins, or to
something defined in srcad/runtime -- never to srcad.transform or the rest of srcad.

A corpus of functions (the golden ones, one per kind of call handle, the examples) is
differentiated in both modes and at second order while every namespace compiled for a
generated function is recorded; each name its code loads as a global is checked.
"""

from __future__ import annotations

import contextlib
import dis
import io
import runpy
import types
from pathlib import Path

import golden_functions
import golden_more_functions
import numpy as np
import pytest

import srcad
from srcad.transform import cache, pipeline
from srcad.transform.naming import Namer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: examples quick enough to run here (the others train for a while or need a cluster)
QUICK_EXAMPLES = [
    "quickstart.py",
    "custom_rules.py",
    "custom_derivatives.py",
    "gradient_controls.py",
    "checkpointing.py",
    "numpy_breadth.py",
    "higher_order.py",
]
#: values outside srcad.runtime that generated code may read, each with its reason (none)
KNOWN: set[tuple[str, str]] = set()


def origin(value: object) -> tuple[str, str]:
    """``(module, name)`` where ``value`` (a module, function, class, or an instance of a
    class) is defined."""
    if isinstance(value, types.ModuleType):
        return value.__name__, ""
    if isinstance(value, types.MethodType):
        return origin(value.__func__)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return str(getattr(value, "__module__", None) or ""), value.__qualname__
    return type(value).__module__, type(value).__qualname__


def global_reads(code: types.CodeType) -> set[str]:
    """The names ``code`` (and the code nested in it) loads as globals."""
    names = {
        i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= global_reads(const)
    return names


def outside_runtime(scope: dict, user_names: set[str]) -> dict[str, tuple[str, str]]:
    """The names generated functions in ``scope`` read whose values srcad put there from
    outside srcad.runtime."""
    reads: set[str] = set()
    for value in scope.values():
        if isinstance(value, types.FunctionType) and value.__globals__ is scope:
            reads |= global_reads(value.__code__)
    found = {}
    for name in sorted(reads - user_names):
        if name not in scope:
            continue  # a builtin
        module, qualname = origin(scope[name])
        if module.partition(".")[0] == "srcad" and not module.startswith("srcad.runtime"):
            if (module, qualname) not in KNOWN:
                found[name] = (module, qualname)
    return found


class Recorder:
    """Every namespace a generated function is compiled in, with the user's names in it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scopes: list[tuple[str, dict, set[str]]] = []
        self._users: dict[int, set[str]] = {}
        self._namers: list[Namer] = []  # (alive while recorded: their ids stay theirs)
        bind_user_global = Namer.bind_user_global
        compile_source = pipeline.compile_source

        def bind_user(namer: Namer, name: str, obj: object) -> None:
            self._namers.append(namer)
            self._users.setdefault(id(namer.globals), set()).add(name)
            bind_user_global(namer, name, obj)

        def compile_recorded(source: str, namespace: dict, label: str) -> dict:
            scope = compile_source(source, namespace, label)
            self.scopes.append((label, scope, set(self._users.get(id(namespace), ()))))
            return scope

        monkeypatch.setattr(Namer, "bind_user_global", bind_user)
        monkeypatch.setattr(pipeline, "compile_source", compile_recorded)
        cache.clear()  # transformed anew, under the recorder

    def problems(self) -> list[str]:
        return [
            f"{label}: {name} is {module}.{qualname}"
            for label, scope, users in self.scopes
            for name, (module, qualname) in outside_runtime(scope, users).items()
        ]

    def read_types(self) -> set[str]:
        """The qualified names of the classes of srcad's values that generated code read."""
        seen = set()
        for _, scope, users in self.scopes:
            reads: set[str] = set()
            for value in scope.values():
                if isinstance(value, types.FunctionType) and value.__globals__ is scope:
                    reads |= global_reads(value.__code__)
            for name in reads - users:
                if name in scope:
                    module, qualname = origin(scope[name])
                    if module.startswith("srcad"):
                        seen.add(f"{module}.{qualname}")
        return seen


@pytest.fixture
def recorder(monkeypatch):
    yield Recorder(monkeypatch)
    cache.clear()  # (nothing compiled under the recorder is reused by other tests)


# ---- a function for each kind of call handle ---------------------------------------------


def helper(a, b):
    return np.sin(a) * b


def calls_helper(x):
    return np.sum(helper(x, 2.0) + x)


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return np.tanh(x) * self.k


def calls_method(x, s):
    return np.sum(s.apply(x))


@srcad.custom_vjp
def clipped(x):
    return np.clip(x, -1.0, 1.0)


clipped.defvjp(lambda x: (np.clip(x, -1.0, 1.0), x), lambda x, g: (g * (np.abs(x) < 1.0),))


def calls_custom_vjp(x):
    return np.sum(clipped(x) * x)


@srcad.custom_jvp
def softplus(x, a):
    return np.log1p(np.exp(a * x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, a = primals
    dx, da = tangents
    s = 1.0 / (1.0 + np.exp(-a * x))
    return softplus(x, a), s * (a * dx + x * da)


def calls_custom_jvp(x):
    return np.sum(softplus(x, 1.5) * x)


@srcad.checkpoint
def segment(x):
    return np.sin(x) * np.cos(x)


def calls_checkpoint(x):
    return np.sum(segment(segment(x)))


def layer(params, x):
    w, b = params
    return np.tanh(x * w + b)


def calls_with_pytree(params, x):
    return np.sum(layer(params, x))


def inner_loss(x):
    return np.sum(np.sin(x) ** 2)


def calls_grad(x):
    return np.sum(srcad.grad(inner_loss)(x) * x)


def calls_jvp(x):
    _, t = srcad.jvp(inner_loss, (x,), (x,))
    _, c = srcad.jvp(inner_loss, (X,), (X,))  # (a constant: the handle itself is called)
    return t * np.sum(x) * c


def inner_vector(x):
    return np.sin(x) * x


def calls_jacobian(x):
    # (of a constant, the composition itself is called)
    return np.sum(srcad.jacobian(inner_vector)(x) @ x) * np.sum(srcad.hessian(inner_loss)(X))


def calls_vjp(x):
    out, pullback = srcad.vjp(inner_vector, x)
    (g,) = pullback(out)
    return np.sum(g)


@srcad.elementwise
def cell(a, b):
    if a > 0:
        return a * b
    return np.sin(a) + b


def calls_elementwise(x):
    return np.sum(cell(x, 2.0))


def bare_return_on_a_path(x):
    if x[0] > 10.0:
        return
    return np.sum(x * x)


def recursive_helper(x, n):
    if n == 0:
        return x
    return np.sin(recursive_helper(x, n - 1))


def calls_recursive_helper(x, n=2):
    return np.sum(recursive_helper(x, n))


def shrink(p, t):
    if np.sum(np.abs(p)) > t:
        return shrink(p * 0.5, t) + p * 0.1
    return p


def split(p, t):
    if np.sum(np.abs(p)) > t:
        a, b = split(p * 0.5, t)
        return a + p * 0.1, b * 0.9 + np.sin(p)
    return p * 1.0, np.cos(p)


def calls_data_depth_recursion(x):
    a, b = split(x, 0.4)
    return np.sum(shrink(x, 0.5) * a * b)


@srcad.custom_vjp
def soft(p, q):
    return np.tanh(p) * q


def soft_fwd(p, q):
    t = np.tanh(p)
    return t * q, (t, q)


def soft_bwd(res, g):
    t, q = res
    return g * (1.0 - t * t) * q, g * t


soft.defvjp(soft_fwd, soft_bwd)


def calls_tuple_residuals(x):
    return np.sum(soft(x, 0.75) * x)


X = np.array([0.3, -0.7, 0.5])
EVERY = ("rev", "fwd", "second")
CORPUS = [
    (calls_helper, (X,), EVERY),
    (calls_method, (X, Scaler(1.5)), ("rev", "fwd")),
    (calls_custom_vjp, (X,), ("rev", "second")),  # (forward mode refuses custom vjps)
    (calls_custom_jvp, (X,), EVERY),
    (calls_checkpoint, (X,), EVERY),
    (calls_with_pytree, ((X, X[::-1]), X * 2), EVERY),
    (calls_grad, (X,), EVERY),
    (calls_jvp, (X,), EVERY),
    (calls_jacobian, (X,), EVERY),
    (calls_vjp, (X,), EVERY),
    (calls_elementwise, (X,), ("rev", "fwd")),
    (bare_return_on_a_path, (X,), EVERY),
    (calls_recursive_helper, (X,), EVERY),
    (calls_data_depth_recursion, (X,), EVERY),
    (calls_tuple_residuals, (X,), ("rev", "second")),
]


def ones(value):
    """Ones shaped as ``value`` (a tuple of arrays: a tuple of those)."""
    if isinstance(value, tuple):
        return tuple(map(ones, value))
    return np.ones_like(value)


def differentiate(f, args, modes=EVERY) -> None:
    """Reverse mode, forward mode, and second order (checked against finite differences)."""
    tangents = (ones(args[0]), *(None,) * (len(args) - 1))
    if "rev" in modes:
        srcad.grad(f)(*args)
    if "fwd" in modes:
        srcad.jvp(f, args, tangents)
    if "second" in modes:
        srcad.hessian(f)(*args)
        srcad.hvp(f, args, tangents)
        first = tuple(m for m in ("rev", "fwd") if m in modes)
        srcad.check_grad(f, *args, order=2, modes=first)


def test_the_corpus_reads_only_runtime_values(recorder):
    for f, args, modes in CORPUS:
        differentiate(f, args, modes)
    assert not recorder.problems(), "\n".join(recorder.problems())
    # the corpus reaches each kind of handle (else the check above checks little)
    seen = recorder.read_types()
    for kind in [
        "CallVJP", "CallJVP", "MethodVJP", "MethodJVP", "CustomCall", "CustomJVPCall",
        "CheckpointCall", "JVPFunction", "TupleResultVJP", "FlatResidualsVJP", "Composition",
    ]:  # fmt: skip
        assert f"srcad.runtime.calls.{kind}" in seen, kind
    assert "srcad.runtime.mixed.MixedVJP" in seen and "srcad.runtime.mixed.MixedJVP" in seen
    assert "srcad.runtime.errors.NoOutputError" in seen


def golden_corpus() -> list[tuple]:
    """The golden functions (tests/transform), with arguments."""
    rng = np.random.default_rng(0)
    g, m = golden_functions, golden_more_functions
    return [
        (g.mlp_loss, (rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3)))),
        (g.scalar_poly, (0.3, 0.7)),
        (g.softmax_xent, (rng.normal(size=(4, 3)), np.eye(3)[[0, 1, 2, 0]])),
        (
            m.rnn_loss,
            (0.5 * rng.normal(size=(2, 2)), rng.normal(size=(2, 3)), rng.normal(size=(4, 3))),
        ),
        (m.newton_sqrt, (2.0,)),
        (m.first_crossing, (np.array([0.5, 1.0, 4.0, 0.2]),)),
    ]


def test_golden_functions_read_only_runtime_values(recorder):
    for f, args in golden_corpus():
        differentiate(f, args)
    srcad.grad(lambda x: np.sum(golden_more_functions.leaky(x, 0.1)))(X)
    assert len(recorder.scopes) >= 20
    assert not recorder.problems(), "\n".join(recorder.problems())


@pytest.mark.parametrize("name", QUICK_EXAMPLES)
def test_examples_read_only_runtime_values(recorder, name):
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    assert recorder.scopes
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_the_check_sees_a_value_from_the_transformer():
    from srcad.transform import calls as transform_calls
    from srcad.transform.calls import CustomVJP

    scope = {"custom": CustomVJP(np.sin), "np": np}
    exec(compile("def generated(x):\n    return custom(x)\n", "<test>", "exec"), scope)
    assert outside_runtime(scope, set()) == {"custom": (transform_calls.__name__, "CustomVJP")}
    assert outside_runtime(scope, {"custom"}) == {}  # the user's own global
