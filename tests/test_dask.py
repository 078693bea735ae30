"""Gradients over chunked dask.array data, on a dask.distributed LocalCluster.

NumPy parameters, dask data: the gradients come back lazy (dask arrays whose graphs reduce
over the chunks), equal NumPy's to 1e-10 once computed, and their tasks run on both workers.
"""

import logging
import subprocess
import sys
import warnings

import numpy as np
import pytest

import srcad
from srcad.runtime.backend import array_namespace
from srcad.runtime.lazy import ComputeWarning

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

RNG = np.random.default_rng(11)
ROWS, CHUNK, FEATURES, HIDDEN = 240, 30, 5, 4


def chunked_loss(W, b, v, X, y, chunk):
    """Reductions, broadcasting, and a Python loop over row blocks of the data."""
    total = 0.0
    for k in range(X.shape[0] // chunk):
        Xk = X[k * chunk : (k + 1) * chunk]
        h = np.tanh(Xk @ W + b)
        r = h @ v - y[k * chunk : (k + 1) * chunk]
        total = total + np.sum(r * r) + np.mean(np.max(h, axis=1))
    return total / X.shape[0] + 0.01 * np.sum(W * W)


def logistic(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def branchy(w, X):
    s = np.sum(X @ w)
    if s > 0:
        return s * 2.0
    return -s


def lazy_branch(w, X):
    z = X @ w
    return np.sum(np.where(z > 0, z, 0.1 * z) ** 2)


def masked(w, X):
    z = X @ w
    return np.sum(z[z > 0])


def gathered(W, X, rows, cols, keep):
    """Gradients scattered back into dask arrays: repeated rows and columns, np.take, and a
    NumPy mask."""
    Z = np.tanh(X @ W)
    picked = Z[rows, 1] + np.take(Z[:, 0], rows)
    return np.sum(picked**2) + np.sum(Z[:, cols] ** 2) + np.sum(Z[keep] * 3.0)


def problem():
    X = RNG.normal(size=(ROWS, FEATURES))
    y = RNG.normal(size=ROWS)
    params = (
        RNG.normal(size=(FEATURES, HIDDEN)),
        RNG.normal(size=HIDDEN),
        RNG.normal(size=HIDDEN),
    )
    return params, X, y


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_gradient_on_the_cluster_matches_numpy_and_uses_both_workers(client):
    from distributed import get_task_stream, wait

    params, X, y = problem()
    expected = srcad.grad(chunked_loss, wrt=(0, 1, 2))(*params, X, y, CHUNK)
    Xd = da.from_array(X, chunks=(CHUNK, FEATURES)).persist()
    yd = da.from_array(y, chunks=CHUNK).persist()
    wait([Xd, yd])
    with get_task_stream(client) as building, warnings.catch_warnings():
        warnings.simplefilter("error", ComputeWarning)
        grads = srcad.grad(chunked_loss, wrt=(0, 1, 2))(*params, Xd, yd, CHUNK)
    assert building.data == []  # lazy: building the gradient ran nothing
    assert all(isinstance(g, da.Array) for g in grads)
    assert [g.shape for g in grads] == [p.shape for p in params]
    with get_task_stream(client) as running:
        computed = dask.compute(*grads)
    for g, e in zip(computed, expected):
        assert isinstance(g, np.ndarray)
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    workers = {task["worker"] for task in running.data}
    assert len(workers) == 2, workers


def test_value_and_grad_of_a_float_and_a_pytree_stay_lazy(client):
    X = RNG.normal(size=(200, 3))
    y = (RNG.random(200) > 0.5).astype(float)
    w, b = RNG.normal(size=3), 0.3
    step = srcad.value_and_grad(logistic, wrt=(0, 1))
    value, grads = step(w, b, X, y)
    Xd, yd = da.from_array(X, chunks=50), da.from_array(y, chunks=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComputeWarning)
        for _ in range(2):  # transformed by the NumPy call, then called again: nothing computed
            lazy_value, (gw, gb) = step(w, b, Xd, yd)
    assert isinstance(gb, da.Array) and gb.shape == ()  # a float parameter: a 0-d dask array
    lazy_value, (gw, gb) = dask.compute(lazy_value, (gw, gb))  # one pass for all of them
    assert float(lazy_value) == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(gw, grads[0], rtol=1e-10, atol=1e-12)
    assert float(gb) == pytest.approx(grads[1], rel=1e-10, abs=1e-12)


def test_params_as_a_dict(client):
    params, X, y = problem()
    tree = {"W": params[0], "b": params[1], "v": params[2]}

    def via_dict(p, X, y):
        return chunked_loss(p["W"], p["b"], p["v"], X, y, CHUNK)

    expected = srcad.grad(via_dict)(tree, X, y)
    Xd, yd = da.from_array(X, chunks=(CHUNK, FEATURES)), da.from_array(y, chunks=CHUNK)
    (computed,) = dask.compute(srcad.grad(via_dict)(tree, Xd, yd))
    for key in tree:
        np.testing.assert_allclose(computed[key], expected[key], rtol=1e-10, atol=1e-12)


def test_a_data_dependent_branch_computes_and_warns_once_per_line(client):
    w, X = RNG.normal(size=3), RNG.normal(size=(90, 3))
    expected = srcad.grad(branchy)(w, X)
    Xd = da.from_array(X, chunks=30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = srcad.grad(branchy)(w, Xd)
    messages = [str(c.message) for c in caught if c.category is ComputeWarning]
    assert messages, [str(c.message) for c in caught]
    assert "derivative of branchy" in messages[0] and "np.where" in messages[0]
    assert "`if " in messages[0]  # the line of generated code that asked for the value
    np.testing.assert_allclose(g.compute(), expected, rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComputeWarning)  # how to forbid it
        with pytest.raises(ComputeWarning):
            srcad.grad(branchy)(w, Xd)


def test_np_where_keeps_it_lazy(client):
    w, X = RNG.normal(size=3), RNG.normal(size=(90, 3))
    expected = srcad.grad(lazy_branch)(w, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComputeWarning)
        g = srcad.grad(lazy_branch)(w, da.from_array(X, chunks=30))
    np.testing.assert_allclose(g.compute(), expected, rtol=1e-10)


def test_the_scheduler_setting_is_restored():
    before = dask.config.get("scheduler", None)
    Xd = da.from_array(RNG.normal(size=(20, 3)), chunks=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ComputeWarning)
        srcad.grad(branchy)(np.ones(3), Xd)
        with pytest.raises(NotImplementedError):
            srcad.grad(masked)(np.ones(3), Xd)
    assert dask.config.get("scheduler", None) == before


def test_gradients_of_gathers_with_repeated_indices(client):
    W, X = RNG.normal(size=(4, 3)), RNG.normal(size=(60, 4))
    rows, cols = np.array([0, 7, 7, 33, 59, 7, 2]), np.array([2, 0, 2])
    keep = RNG.random(60) > 0.5
    expected = srcad.grad(gathered, wrt=(0, 1))(W, X, rows, cols, keep)
    Xd = da.from_array(X, chunks=(15, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ComputeWarning)
        grads = srcad.grad(gathered, wrt=(0, 1))(W, Xd, rows, cols, keep)
    assert isinstance(grads[1], da.Array) and grads[1].shape == X.shape
    for g, e in zip(dask.compute(*grads), expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_boolean_masks_need_a_scatter_add_dask_lacks():
    Xd = da.from_array(RNG.normal(size=(20, 3)), chunks=10)
    with pytest.raises(NotImplementedError, match="dask index.*np.where"):
        srcad.grad(masked)(np.ones(3), Xd)


def test_numpy_arrays_join_dask_arrays():
    Xd = da.ones((4, 2), chunks=2)
    xp = array_namespace(np.ones(2), Xd, 1.0)
    assert xp is array_namespace(Xd) is array_namespace(Xd, np.ones(3))
    assert xp is not np


def test_import_srcad_does_not_import_dask():
    code = "import sys, srcad; print(sorted(m for m in sys.modules if m.startswith('dask')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_broadcast_gradients_keep_the_chunks_of_their_array():
    from srcad.runtime.accumulate import unbroadcast, unreduce

    X = da.ones((400, 6), chunks=(100, 3))
    assert unreduce(0.5, X).chunks == X.chunks  # not one chunk to split again later
    assert unreduce(X.sum(axis=0), X, axis=0).chunks == X.chunks
    assert unreduce(X.sum(axis=1), X, axis=1).chunks == X.chunks
    assert unbroadcast(da.ones(6, chunks=3), X).chunks == X.chunks
    np.testing.assert_array_equal(unreduce(0.5, X).compute(), np.full((400, 6), 0.5))
