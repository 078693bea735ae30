"""The same generated code on NumPy, array-api-strict, dask.array and (with a GPU) CuPy."""

import backend_functions as fns
import numpy as np
import pytest

import srcad
from srcad.runtime.backend import NumpyNames, array_namespace

RNG = np.random.default_rng(19)


def data():
    return {
        "mlp": (RNG.normal(size=(4, 5)), RNG.normal(size=5), RNG.normal(size=(5, 2)),
                RNG.normal(size=(3, 4))),
        "rnn": (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3, 2)), RNG.normal(size=(4, 2)),
                RNG.normal(size=3)),
        "indexing_and_updates": (RNG.normal(size=4) * 0.5, RNG.normal(size=3)),
    }  # fmt: skip


CASES = [(fns.mlp, "mlp", (0, 1, 2, 3)), (fns.rnn, "rnn", (0, 1, 2, 3)),
         (fns.indexing_and_updates, "indexing_and_updates", (0, 1))]  # fmt: skip


def reference(fn, args, wrt):
    return srcad.grad(fn, wrt=wrt)(*args)


@pytest.mark.parametrize("fn, key, wrt", CASES, ids=[c[1] for c in CASES])
def test_array_api_strict(fn, key, wrt):
    xps = pytest.importorskip("array_api_strict")
    args = data()[key]
    expected = reference(fn, args, wrt)
    grads = srcad.grad(fn, wrt=wrt)(*[xps.asarray(a) for a in args])
    for g, e in zip(grads, expected):
        assert type(g) is type(xps.ones(1))
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, key, wrt", CASES, ids=[c[1] for c in CASES])
def test_array_api_strict_float32(fn, key, wrt):
    xps = pytest.importorskip("array_api_strict")
    args = [xps.asarray(a, dtype=xps.float32) for a in data()[key]]
    grads = srcad.grad(fn, wrt=wrt)(*args)
    for g in grads:
        assert g.dtype == xps.float32


@pytest.mark.parametrize("fn, key, wrt", CASES, ids=[c[1] for c in CASES])
def test_dask_array(fn, key, wrt):
    da = pytest.importorskip("dask.array")
    args = data()[key]
    expected = reference(fn, args, wrt)
    grads = srcad.grad(fn, wrt=wrt)(*[da.from_array(a, chunks=2) for a in args])
    for g, e in zip(grads, expected):
        assert isinstance(g, da.Array)
        np.testing.assert_allclose(g.compute(), e, rtol=1e-10, atol=1e-12)


def test_mixed_libraries_are_refused():
    xps = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="different libraries"):
        array_namespace(np.ones(2), xps.ones(2))
    with pytest.raises(TypeError, match="different libraries"):
        srcad.grad(fns.mlp)(np.ones((4, 5)), xps.ones(5), np.ones((5, 2)), np.ones((3, 4)))


def test_missing_operation_is_named():
    xps = pytest.importorskip("array_api_strict")
    names = array_namespace(xps.ones(2))
    assert isinstance(names, NumpyNames)
    assert names.concatenate is xps.concat
    with pytest.raises(AttributeError, match="has no 'einsum'"):
        names.einsum  # noqa: B018


def test_numpy_and_scalars_stay_numpy():
    assert array_namespace(np.ones(2), 1.0, "text", None) is np
    assert array_namespace(2.0) is np


def _cupy_available():
    try:
        import cupy

        return bool(cupy.is_available())
    except Exception:  # no CuPy, or CuPy without a GPU
        return False


@pytest.mark.skipif(not _cupy_available(), reason="needs CuPy and a GPU")
@pytest.mark.parametrize("fn, key, wrt", CASES, ids=[c[1] for c in CASES])
def test_cupy(fn, key, wrt):
    import cupy

    args = data()[key]
    expected = reference(fn, args, wrt)
    grads = srcad.grad(fn, wrt=wrt)(*[cupy.asarray(a) for a in args])
    for g, e in zip(grads, expected):
        assert isinstance(g, cupy.ndarray)
        np.testing.assert_allclose(cupy.asnumpy(g), e, rtol=1e-10, atol=1e-12)


def test_math_calls_follow_the_arrays():
    from srcad.runtime.backend import math_namespace

    xps = pytest.importorskip("array_api_strict")
    import math

    assert math_namespace(0.5, 2.0) is math
    assert math_namespace(np.float64(0.5), np.ones(2)) is math
    x, y = xps.asarray(0.3), xps.asarray(0.7)
    gx, gy = srcad.grad(fns.with_math, wrt=(0, 1))(x, y)
    assert type(gx) is type(x)
    np.testing.assert_allclose(float(gx), math.cos(0.3) * 0.7)
    np.testing.assert_allclose(float(gy), math.sin(0.3) + math.exp(0.7))


def test_shape_rules_on_array_api_strict():
    # xp.shape in the rules: array-api-strict has no shape function (NumpyNames gives it)
    xps = pytest.importorskip("array_api_strict")
    w, x = np.array([0.5, -1.5]), np.array([0.7, 0.2])
    expected = srcad.grad(fns.reshaped, wrt=(0, 1))(w, x)
    grads = srcad.grad(fns.reshaped, wrt=(0, 1))(xps.asarray(w), xps.asarray(x))
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12)
    strict = (xps.asarray(w), xps.asarray(x))
    _, t = srcad.jvp(fns.reshaped, strict, strict)
    _, e = srcad.jvp(fns.reshaped, (w, x), (w, x))
    np.testing.assert_allclose(float(t), e, rtol=1e-12)
    assert NumpyNames(xps).shape(2.0) == () and NumpyNames(xps).shape(xps.ones((2, 3))) == (2, 3)
