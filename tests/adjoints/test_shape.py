"""Shape ops: reshape, transpose, squeeze, expand_dims, concatenate, stack, broadcast_to."""

import numpy as np
import pytest
from opcheck import check, rand


@pytest.mark.parametrize(
    "expr, shape",
    [
        ("np.reshape(x, (3, 2))", (2, 3)),
        ("np.reshape(x, -1)", (2, 3)),
        ("x.reshape(3, 2)", (2, 3)),
        ("x.reshape((6,))", (2, 3)),
        ("x.reshape(-1, 1)", (2, 3)),
        ("np.ravel(x)", (2, 3)),
        ("x.ravel()", (2, 3)),
        ("x.flatten()", (2, 3)),
        ("np.transpose(x)", (2, 3)),
        ("np.transpose(x, (1, 2, 0))", (2, 3, 4)),
        ("np.transpose(x, axes=(2, 0, 1))", (2, 3, 4)),
        ("x.T", (2, 3)),
        ("x.T", (2, 3, 4)),
        ("x.transpose()", (2, 3)),
        ("x.transpose(1, 0)", (2, 3)),
        ("x.transpose((0, 2, 1))", (2, 3, 4)),
        ("np.swapaxes(x, 0, 2)", (2, 3, 4)),
        ("np.moveaxis(x, 0, -1)", (2, 3, 4)),
        ("np.squeeze(x)", (2, 1, 3)),
        ("np.squeeze(x, axis=1)", (2, 1, 3)),
        ("x.squeeze()", (1, 3)),
        ("np.expand_dims(x, 1)", (2, 3)),
        ("np.expand_dims(x, axis=(0, 2))", (2, 3)),
        ("np.broadcast_to(x, (4, 3))", (3,)),
        ("np.broadcast_to(x, (2, 4, 3))", (4, 1)),
        ("x.astype(np.float64)", (2, 3)),
        ("x.copy()", (2, 3)),
        ("np.array(x)", (2, 3)),
        ("x * np.ones_like(x) + np.zeros_like(x)", (3,)),
    ],
)
def test_shape_op(expr, shape):
    check(expr, rand(*shape))


@pytest.mark.parametrize(
    "expr, sa, sb",
    [
        ("np.concatenate([x, y])", (2, 3), (4, 3)),
        ("np.concatenate([x, y], axis=1)", (2, 3), (2, 2)),
        ("np.concatenate((x, y, x), axis=-1)", (2, 3), (2, 1)),
        ("np.concatenate([x, y], axis=1)", (2, 3), (2, 3)),
        ("np.concatenate((x, y, x), axis=-1)", (2, 3), (2, 3)),
        ("np.stack([x, y])", (2, 3), (2, 3)),
        ("np.append(x, y)", (2, 3), (4,)),
        ("np.append(x, y, axis=0)", (2, 3), (1, 3)),
        ("np.hstack([x, y])", (3,), (2,)),
        ("np.hstack((x, y, x))", (2, 3), (2, 1)),
        ("np.vstack([x, y])", (3,), (3,)),
        ("np.vstack([x, y])", (2, 3), (1, 3)),
        ("np.dstack([x, y])", (2, 3), (2, 3)),
        ("np.dstack([x, y])", (3,), (3,)),
        ("np.column_stack([x, y])", (3,), (3, 2)),
        ("np.column_stack([x, y])", (4,), (4,)),
        ("np.stack((x, y), axis=1)", (2, 3), (2, 3)),
        ("np.stack([x, y, x * y], axis=-1)", (3,), (3,)),
    ],
)
def test_joining(expr, sa, sb):
    check(expr, rand(*sa), rand(*sb, seed=1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "expr, shape",
    [
        ("np.flipud(x)", (3, 2)),
        ("np.fliplr(x)", (3, 2)),
        ("np.fliplr(x)", (2, 3, 2)),
        ("np.rot90(x)", (3, 2)),
        ("np.rot90(x, 2)", (3, 2)),
        ("np.rot90(x, 3, (1, 2))", (2, 3, 2)),
        ("np.rot90(x, k=-1, axes=(2, 0))", (2, 3, 2)),
        ("np.rollaxis(x, 2)", (2, 3, 4)),
        ("np.rollaxis(x, 0, 3)", (2, 3, 4)),
        ("np.rollaxis(x, -1, 1)", (2, 3, 4)),
        ("np.rollaxis(x, 1, -1)", (2, 3, 4)),
        ("np.atleast_1d(x)", ()),
        ("np.atleast_1d(x)", (3,)),
        ("np.atleast_2d(x)", (3,)),
        ("np.atleast_3d(x)", (3,)),
        ("np.atleast_3d(x)", (2, 3)),
        ("np.diff(x)", (5,)),
        ("np.diff(x, 2, axis=0)", (4, 3)),
        ("np.diff(x, n=3)", (2, 5)),
        ("np.partition(x, 2)", (6,)),
        ("np.partition(x, (0, 2), axis=0)", (4, 3)),
        ("np.partition(x, 1, axis=None)", (2, 3)),
        ("np.full((2, 3), x)", ()),
        ("np.full((2, 3), x)", (3,)),
        ("np.full((4, 2, 3), x)", (2, 1)),
    ],
)
def test_more_shape_ops(expr, shape, dtype):
    x = rand(*shape)
    if shape:
        x = x.astype(dtype)
    tol = {} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(expr, x, **tol)


def test_full_with_a_dtype():
    # float32 results: a wider finite-difference step
    check("np.full((2, 3), x, dtype=np.float32)", rand(), eps=1e-3, rtol=1e-3, atol=1e-4)


def test_partition_moves_entries_as_argpartition_does():
    # the rule relies on x[argpartition(x)] being partition(x), ties and all
    rng = np.random.default_rng(0)
    for n in (5, 17, 64):
        x = rng.integers(0, 4, size=(3, n)).astype(float)
        for kth in (0, n // 2, (1, n - 1)):
            order = np.argpartition(x, kth, axis=1)
            np.testing.assert_array_equal(
                np.take_along_axis(x, order, axis=1), np.partition(x, kth, axis=1)
            )


def truncates(x):
    k = x.astype(int)
    return np.sum(k * x)


def test_a_cast_to_integers_passes_no_derivative():
    import srcad

    x = np.array([1.5, 2.7, -0.3])
    np.testing.assert_array_equal(srcad.grad(truncates)(x), [1.0, 2.0, 0.0])
    assert srcad.jvp(truncates, (x,), (np.ones(3),))[1] == 3.0
    assert srcad.check_grad(truncates, x, modes=("fwd", "rev")) < 1e-6


@pytest.mark.parametrize(
    "expr",
    [
        "np.reshape(2.0 * x, (1,))",
        "np.reshape(x * x, (1, 1))",
        "np.ravel(2.0 * x)",
        "np.expand_dims(2.0 * x, 0)",
        "np.squeeze(np.sin(x))",
    ],
)
def test_shape_ops_of_a_python_float(expr):
    # the rules read the operand's shape, which a Python number does not have
    check(expr, 0.7)
