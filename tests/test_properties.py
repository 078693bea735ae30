"""Property tests: random shapes and values, gradients against central finite differences."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes
from opcheck import check

BINARY = ["x + y", "x - y", "x * y", "x / y", "np.maximum(x, y)", "np.where(x > y, x, y * y)",
          "x ** y", "np.minimum(x * y, y)"]  # fmt: skip
# each maps positive values to positive values, so any chain stays inside every domain
UNARY = ["np.tanh", "np.exp", "np.sqrt", "np.square", "np.arctan", "np.cosh", "np.log1p",
         "np.abs", "np.expm1", "np.sinh"]  # fmt: skip
REDUCE = ["np.sum", "np.mean", "np.max", "np.prod", "np.std", "np.var"]


def values(shape, seed, low=0.5, high=1.5):
    return np.random.default_rng(seed).uniform(low, high, size=shape)


@given(
    op=st.sampled_from(BINARY),
    shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_binary_ops_broadcast(op, shapes, seed):
    sa, sb = shapes.input_shapes
    check(op, values(sa, seed), values(sb, seed + 1))


@given(
    funcs=st.lists(st.sampled_from(UNARY), min_size=1, max_size=3).filter(
        lambda fs: fs.count("np.exp") + fs.count("np.cosh") + fs.count("np.sinh") < 2
    ),
    shape=array_shapes(min_dims=0, max_dims=3, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_unary_chains(funcs, shape, seed):
    expr = "x"
    for func in funcs:
        expr = f"{func}({expr})"
    check(expr, values(shape, seed), rtol=1e-4)


@given(
    reduce=st.sampled_from(REDUCE),
    shape=array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3),
    keepdims=st.booleans(),
    data=st.data(),
)
def test_reductions_over_random_axes(reduce, shape, keepdims, data):
    axes = data.draw(
        st.none() | st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(tuple)
    )
    seed = data.draw(st.integers(0, 2**16))
    check(f"{reduce}(np.sin(x) + 2.0, axis={axes!r}, keepdims={keepdims})", values(shape, seed))


@given(
    n=st.integers(1, 4),
    k=st.integers(1, 4),
    m=st.integers(1, 4),
    batch=st.lists(st.integers(1, 3), max_size=2).map(tuple),
    seed=st.integers(0, 2**16),
)
def test_matmul_shapes(n, k, m, batch, seed):
    check("np.tanh(x @ y)", values((*batch, n, k), seed), values((k, m), seed + 1))
    check("x @ y", values((k,), seed), values((*batch, k, m), seed + 1))
