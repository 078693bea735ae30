"""srcad differentiates the code that runs: edited files, rebound module attributes,
changed defaults, monkeypatched NumPy functions; the bounded transformation cache."""

import gc
import importlib
import inspect
import linecache
import math
import os
import sys
import textwrap
import traceback

import numpy as np
import pytest

import srcad
from srcad.transform import cache

X = np.array([0.3, -0.7, 1.1])
T = np.array([1.0, 0.5, -2.0])


@pytest.fixture
def load(tmp_path, monkeypatch):
    """``load(name, text)`` writes ``name.py`` and imports it; ``load.edit(module, text)``
    rewrites its file (not the module)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []

    def write(path, text):
        path.write_text(textwrap.dedent(text))
        later = os.stat(path).st_mtime + 10  # a new mtime even on coarse file systems
        os.utime(path, (later, later))

    def load_(name, text):
        write(tmp_path / f"{name}.py", text)
        importlib.invalidate_caches()
        names.append(name)
        return importlib.import_module(name)

    load_.edit = lambda module, text: write(tmp_path / f"{module.__name__}.py", text)
    yield load_
    for name in names:
        sys.modules.pop(name, None)


def grad_of(f, x=X):
    return srcad.grad(f)(x)


def jvp_of(f, x=X):
    return srcad.jvp(f, (x,), (T,))[1]


def hessian_of(f, x=X):
    return srcad.hessian(f)(x)


SQUARES = """
import numpy as np


def f(x):
    return np.sum(x * x)


def g(x):
    return np.sum(x * x * x)
"""


# source files edited after import -----------------------------------------------------------


@pytest.mark.parametrize("derivative", [grad_of, jvp_of, hessian_of])
def test_an_edited_function_is_refused_until_reloaded(load, derivative):
    module = load("stale_edited", SQUARES)
    load.edit(module, SQUARES.replace("np.sum(x * x)\n", "np.sum(np.sin(x))\n"))
    with pytest.raises(srcad.StaleSourceError) as info:
        derivative(module.f)  # Python still runs x * x: the file's sin(x) is not it
    message = str(info.value)
    assert "stale_edited.py:5:" in message and "importlib.reload" in message
    importlib.reload(module)
    expected = {grad_of: np.cos(X), jvp_of: np.cos(X) @ T, hessian_of: np.diag(-np.sin(X))}
    np.testing.assert_allclose(derivative(module.f), expected[derivative], rtol=1e-12)


@pytest.mark.parametrize("derivative", [grad_of, jvp_of])
def test_moved_lines_never_give_another_function(load, derivative):
    module = load("stale_moved", SQUARES)
    load.edit(module, "# a comment\n# another\n" + SQUARES)
    with pytest.raises(srcad.StaleSourceError):
        derivative(module.g)  # its old line now holds f's def


def test_an_edit_after_building_is_refused_when_transforming_again(load):
    module = load("stale_after", SQUARES)
    d = srcad.grad(module.f)
    np.testing.assert_allclose(d(X), 2 * X)
    load.edit(module, SQUARES.replace("x * x)\n", "x * 3.0)\n"))
    np.testing.assert_allclose(d(X), 2 * X)  # built from the code that still runs
    with pytest.raises(srcad.StaleSourceError):
        jvp_of(module.f)
    with pytest.raises(srcad.StaleSourceError):
        srcad.value_and_grad(module.f, wrt=(0,))(X)


def test_an_edited_helper_is_refused(load):
    helpers = load("stale_helpers", "def part(v):\n    return v * v\n")
    module = load(
        "stale_caller",
        """
        import numpy as np

        import stale_helpers


        def f(x):
            return np.sum(stale_helpers.part(x) + x)
        """,
    )
    load.edit(helpers, "def part(v):\n    return v * v * v\n")
    for derivative in (grad_of, jvp_of):
        with pytest.raises(srcad.StaleSourceError, match=r"stale_helpers\.py:1:.*\bpart\b"):
            derivative(module.f)


def test_edits_elsewhere_in_the_file_are_not_stale(load):
    module = load("stale_elsewhere", SQUARES)
    load.edit(module, SQUARES + "\n\ndef h(x):\n    return x\n")
    np.testing.assert_allclose(grad_of(module.f), 2 * X)
    np.testing.assert_allclose(jvp_of(module.g), 3 * X * X @ T)


def asserting(x):
    assert x.shape == (3,), "pytest rewrites this assert when it imports the test file"
    return np.sum(np.sin(x) * x)


def test_functions_with_asserts_rewritten_by_pytest_are_not_stale():
    np.testing.assert_allclose(grad_of(asserting), np.sin(X) + X * np.cos(X), rtol=1e-12)


def test_code_replaced_in_place_is_differentiated(load):
    module = load("stale_code_swap", SQUARES)
    d = srcad.grad(module.f)
    np.testing.assert_allclose(d(X), 2 * X)
    module.f.__code__ = module.g.__code__  # what IPython's autoreload does
    np.testing.assert_allclose(d(X), 3 * X * X)
    np.testing.assert_allclose(jvp_of(module.f), 3 * X * X @ T)


# callees reached through modules and objects -----------------------------------------------


HELPERS = """
def loss_part(v):
    return v * v
"""

CALLER = """
import numpy as np

import {helpers}


def f(x):
    return np.sum({helpers}.loss_part(x) * 2.0)


class Model:
    def act(self, v):
        return v * v


model = Model()


def uses_object(x):
    return np.sum(model.act(x))
"""


def cube(v):
    return v * v * v


def test_a_rebound_module_attribute_is_called(load):
    helpers = load("stale_attr_helpers", HELPERS)
    module = load("stale_attr_caller", CALLER.format(helpers="stale_attr_helpers"))
    d = srcad.grad(module.f)
    np.testing.assert_allclose(d(X), 4 * X)
    np.testing.assert_allclose(jvp_of(module.f), 4 * X @ T)
    helpers.loss_part = cube
    np.testing.assert_allclose(d(X), 6 * X * X, rtol=1e-12)
    np.testing.assert_allclose(jvp_of(module.f), 6 * X * X @ T, rtol=1e-12)
    helpers.loss_part = np.sin
    np.testing.assert_allclose(d(X), 2 * np.cos(X), rtol=1e-12)
    np.testing.assert_allclose(hessian_of(module.f), np.diag(-2 * np.sin(X)), atol=1e-12)


def test_a_reloaded_module_is_called(load):
    helpers = load("stale_reload_helpers", HELPERS)
    module = load("stale_reload_caller", CALLER.format(helpers="stale_reload_helpers"))
    d = srcad.grad(module.f)
    np.testing.assert_allclose(d(X), 4 * X)
    load.edit(helpers, HELPERS.replace("v * v", "v * v * v"))
    importlib.reload(helpers)
    np.testing.assert_allclose(d(X), 6 * X * X, rtol=1e-12)
    np.testing.assert_allclose(jvp_of(module.f), 6 * X * X @ T, rtol=1e-12)


def test_a_rebound_method_of_a_global_object_is_called(load):
    load("stale_obj_helpers", HELPERS)
    module = load("stale_obj_caller", CALLER.format(helpers="stale_obj_helpers"))
    d = srcad.grad(module.uses_object)
    np.testing.assert_allclose(d(X), 2 * X)
    module.Model.act = lambda self, v: v * v * v
    np.testing.assert_allclose(d(X), 3 * X * X, rtol=1e-12)
    module.model.act = cube  # an instance attribute shadows the class's
    np.testing.assert_allclose(d(X), 3 * X * X, rtol=1e-12)
    module.model.act = np.sin
    np.testing.assert_allclose(d(X), np.cos(X), rtol=1e-12)
    np.testing.assert_allclose(jvp_of(module.uses_object), np.cos(X) @ T, rtol=1e-12)


def test_plain_values_read_through_attributes_need_no_new_transform(load):
    load("stale_config", "LR = 2.0\n\n\nclass Box:\n    scale = 2.0\n\n\nbox = Box()\n")
    module = load(
        "stale_config_user",
        """
        import numpy as np

        import stale_config


        def f(x):
            return np.sum(x * stale_config.LR * stale_config.box.scale)
        """,
    )
    d = srcad.grad(module.f)
    np.testing.assert_allclose(d(X), 4 * np.ones(3))
    builds = cache.builds
    sys.modules["stale_config"].LR = 3.0
    sys.modules["stale_config"].box.scale = 5.0
    np.testing.assert_allclose(d(X), 15 * np.ones(3))  # read when the code runs
    assert cache.builds == builds


# defaults ----------------------------------------------------------------------------------

DEFAULTS = """
import numpy as np


def f(x, s=2.0):
    return np.sum(x * x * s)


def k(x, *, s=2.0):
    return np.sum(x * x * s)


def helper(v, s=2.0):
    return v * v * s


def calls_helper(x):
    return np.sum(helper(x))
"""


def test_changed_defaults_take_effect(load):
    module = load("stale_defaults", DEFAULTS)
    d, dk = srcad.grad(module.f), srcad.grad(module.k)
    np.testing.assert_allclose(d(X), 4 * X)
    np.testing.assert_allclose(dk(X), 4 * X)
    module.f.__defaults__ = (5.0,)
    module.k.__kwdefaults__ = {"s": 5.0}
    np.testing.assert_allclose(d(X), 10 * X)
    np.testing.assert_allclose(dk(X), 10 * X)
    np.testing.assert_allclose(srcad.value_and_grad(module.f)(X)[1], 10 * X)
    module.k.__kwdefaults__["s"] = 7.0  # changed in place
    np.testing.assert_allclose(dk(X), 14 * X)
    np.testing.assert_allclose(dk(x=X), 14 * X)


def test_changed_defaults_of_a_helper_take_effect(load):
    module = load("stale_helper_defaults", DEFAULTS)
    d = srcad.grad(module.calls_helper)
    np.testing.assert_allclose(d(X), 4 * X)
    np.testing.assert_allclose(jvp_of(module.calls_helper), 4 * X @ T)
    module.helper.__defaults__ = (3.0,)
    np.testing.assert_allclose(d(X), 6 * X)
    np.testing.assert_allclose(jvp_of(module.calls_helper), 6 * X @ T)


# monkeypatched NumPy functions ---------------------------------------------------------------

USES_SIN = """
import math

import numpy as np


def f(x):
    return np.sum(np.sin(x) * x)


def uses_cos(x):
    return np.sum(np.cos(x))


def scalar(t):
    return math.exp(t) * t


def my_sin(v):
    return v * v * v
"""


def test_a_numpy_function_patched_before_building_is_what_is_differentiated(load, monkeypatch):
    module = load("stale_patch_before", USES_SIN)
    monkeypatch.setattr(np, "sin", module.my_sin)
    expected = 4 * X**3  # d/dx sum(x**3 * x)
    np.testing.assert_allclose(grad_of(module.f), expected, rtol=1e-12)
    np.testing.assert_allclose(jvp_of(module.f), expected @ T, rtol=1e-12)
    monkeypatch.undo()
    true = np.sin(X) + X * np.cos(X)
    np.testing.assert_allclose(grad_of(module.f), true, rtol=1e-12)
    np.testing.assert_allclose(jvp_of(module.f), true @ T, rtol=1e-12)
    hessian = np.diag(2 * np.cos(X) - X * np.sin(X))
    np.testing.assert_allclose(hessian_of(module.f), hessian, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("derivative", [grad_of, jvp_of, hessian_of])
def test_a_numpy_function_patched_after_building_is_seen(load, monkeypatch, derivative):
    module = load("stale_patch_after", USES_SIN)
    d = srcad.grad(module.f)
    d(X)
    derivative(module.f)
    monkeypatch.setattr(np, "sin", module.my_sin)
    np.testing.assert_allclose(d(X), 4 * X**3, rtol=1e-12)
    monkeypatch.setattr(np, "sin", np.cos)  # another ufunc: its rule calls np.sin by name
    with pytest.raises(srcad.TransformError, match=r"np\.sin has been replaced"):
        d(X)
    with pytest.raises(srcad.TransformError, match=r"np\.sin has been replaced"):
        derivative(module.f)
    monkeypatch.undo()
    np.testing.assert_allclose(d(X), np.sin(X) + X * np.cos(X), rtol=1e-12)


def test_a_rule_never_calls_a_patched_function(load, monkeypatch):
    module = load("stale_patch_rule", USES_SIN)
    monkeypatch.setattr(np, "sin", module.my_sin)  # the adjoint of np.cos reads np.sin
    for derivative in (grad_of, jvp_of):
        with pytest.raises(srcad.TransformError, match=r"np\.sin has been replaced") as info:
            derivative(module.uses_cos)
        assert "stale_patch_rule.py:" in str(info.value)


def test_a_patched_math_function(load, monkeypatch):
    module = load("stale_patch_math", USES_SIN)
    d = srcad.grad(module.scalar)
    assert d(0.5) == pytest.approx(math.exp(0.5) * 1.5)
    monkeypatch.setattr(math, "exp", module.my_sin)
    assert d(0.5) == pytest.approx(4 * 0.5**3)
    monkeypatch.undo()
    assert d(0.5) == pytest.approx(math.exp(0.5) * 1.5)


# the cache is bounded ----------------------------------------------------------------------

CLOSURES = """
import numpy as np


def make(c):
    def g(x):
        return np.sum(np.sin(x) * c)

    return g
"""


@pytest.fixture
def small_cache():
    old = srcad.set_cache_size(4)
    yield
    srcad.set_cache_size(old)


def generated_files():
    return {name for name in linecache.cache if name.startswith("<srcad ")}


def test_the_cache_keeps_at_most_its_bound(load, small_cache):
    module = load("stale_bound", CLOSURES)
    closures = [module.make(float(k)) for k in range(30)]  # all alive
    for k, g in enumerate(closures):
        np.testing.assert_allclose(srcad.grad(g)(X), k * np.cos(X))
        assert cache.size() <= 4
    gc.collect()
    before = generated_files()
    for g in closures:
        srcad.jvp(g, (X,), (T,))
    gc.collect()
    assert len(generated_files() - before) <= 4  # evicted code takes its lines along


def test_dead_functions_leave_the_cache(load):
    module = load("stale_dead", CLOSURES)
    gc.collect()
    entries, files = cache.size(), generated_files()
    for k in range(40):
        np.testing.assert_allclose(srcad.grad(module.make(float(k)))(X), k * np.cos(X))
    gc.collect()
    assert cache.size() <= entries + 1
    # the evicted code's namespace is a cycle (functions <-> their globals): collected now
    gc.collect()
    assert len(generated_files() - files) <= 1


def test_live_generated_code_keeps_its_lines(load, small_cache):
    module = load("stale_lines", CLOSURES)
    g = module.make(2.0)
    gen = srcad.grad(g).generated()
    for k in range(20):  # evict it from the cache
        srcad.grad(module.make(float(k)))(X)
    gc.collect()
    assert inspect.getsource(gen.function) == gen.source
    with pytest.raises(TypeError) as info:
        gen.function("not an array")
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(f.filename == gen.function.__code__.co_filename and f.line for f in frames)


def test_the_cache_size_is_checked():
    with pytest.raises(TypeError):
        srcad.set_cache_size(2.5)
    with pytest.raises(ValueError):
        srcad.set_cache_size(0)


GLOBAL_FACTOR = """
import numpy as np

FACTOR = 1.5


def plain(t):
    return np.sin(t) * FACTOR * t


def by_factor(x, n):
    if np.sum(x * x) < 1.0:
        return np.sum(np.sin(x)) * n * FACTOR
    return by_factor(x / 2.0, n) * FACTOR + np.sum(x**3) * 0.01


def recursive(t):
    return by_factor(np.array([t, 0.5 * t]) * 4.0, 2.0)
"""


@pytest.mark.parametrize("name", ["plain", "recursive"])
@pytest.mark.parametrize(
    "make",
    [
        lambda f: srcad.grad(srcad.grad(f)),
        lambda f: srcad.grad(srcad.grad(srcad.grad(f))),
        lambda f: srcad.hessian(f),
        lambda f: srcad.jacobian(srcad.grad(f)),
    ],
    ids=["grad of grad", "grad three times", "hessian", "jacobian of grad"],
)
def test_a_held_higher_derivative_sees_a_changed_global(load, name, make):
    # grad(grad(f)) held across a change of a global f reads kept the old value: the
    # outer code's snapshot checked the inner derivative's generated code (whose
    # namespace holds the global as it was), not the inner derivative's own snapshot
    module = load("global_factor", GLOBAL_FACTOR)
    f = getattr(module, name)
    held = make(f)
    before = held(1.3)
    module.FACTOR = 2.5
    now = held(1.3)
    np.testing.assert_allclose(now, make(f)(1.3), rtol=1e-12)
    assert not np.allclose(now, before)
