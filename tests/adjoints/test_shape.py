"""Shape ops: reshape, transpose, squeeze, expand_dims, concatenate, stack, broadcast_to."""

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
        ("np.stack([x, y])", (2, 3), (2, 3)),
        ("np.stack((x, y), axis=1)", (2, 3), (2, 3)),
        ("np.stack([x, y, x * y], axis=-1)", (3,), (3,)),
    ],
)
def test_joining(expr, sa, sb):
    check(expr, rand(*sa), rand(*sb, seed=1))
