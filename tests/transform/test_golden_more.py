"""Golden tests of the code users run: specialized code, loops, forward mode and an
elementwise kernel (the generated source, pinned; update it when the output improves)."""

import golden_functions as g
import golden_more_functions as m
import numpy as np

import srcad

# the code a call with NumPy arrays runs (srcad.source(..., example_args=...))
MLP_SPECIALIZED = """\
# for NumPy arrays and Python numbers: W 2-d, b 1-d, x 2-d
def grad_mlp_loss(W, b, x):
    h = np.tanh(x @ W + b)
    _t6 = x.shape[0]
    # grad of: return np.sum(h * h) / x.shape[0]
    dh = 1.0 / _t6 * 2 * h
    # grad of: h = np.tanh(x @ W + b)
    d_t2 = dh * (1 - h * h)
    db = d_t2.sum(axis=0)
    dW = x.T @ d_t2
    return (dW, db)
"""

# forward mode
MLP_JVP = """\
def jvp_mlp_loss(W, b, x, dW, db):
    xp = array_namespace(W, b, x)
    h = xp.tanh(x @ W + b)
    _t6 = x.shape[0]
    mlp_loss = xp.sum(h * h) / _t6
    dmlp_loss = xp.sum(2 * h * ((x @ dW + db) * (1 - h * h))) / _t6
    return (mlp_loss, dmlp_loss)
"""

# a loop whose backward pass pops one value a step
RNN_SPECIALIZED = """\
# for NumPy arrays and Python numbers: W 2-d, U 2-d, xs 2-d
def grad_rnn_loss(W, U, xs):
    tape = Tape()
    h = np.zeros(W.shape[0])
    _t4 = xs.shape[0]
    for t in range(_t4):
        _t6 = xs[t]
        _t8 = W @ h + U @ _t6
        tape.push(h)
        h = np.tanh(_t8)
    # grad of: return np.sum(h * h)
    dh = 2.0 * h
    dU = zeros_like(U)
    dW = zeros_like(W)
    for t in reversed(range(_t4)):
        # grad of: h = np.tanh(W @ h + U @ xs[t])
        d_t8 = dh * (1 - h * h)
        h = tape.pop()
        _t6 = xs[t]
        dU = dU + grad_matmul_lhs(d_t8, U, _t6)
        dW = dW + grad_matmul_lhs(d_t8, W, h)
        dh = grad_matmul_rhs(d_t8, W, h)
    return (dW, dU)
"""

# a while loop on data
NEWTON = """\
def value_and_grad_newton_sqrt(a):
    xp = array_namespace(a)
    tape = Tape()
    x = a
    _t1 = xp.abs(x * x - a) > 1e-10
    _trips = 0
    while _t1:
        _t5 = a / x
        _t6 = x + _t5
        tape.push(x)
        x = 0.5 * _t6
        _t1 = xp.abs(x * x - a) > 1e-10
        _trips = _trips + 1
    value = x
    dx = 1.0
    da = zeros_like(a)
    for _ in range(_trips):
        # grad of: x = 0.5 * (x + a / x)
        d_t6 = dx * 0.5
        x = tape.pop()
        _t5 = a / x
        dx = unbroadcast(d_t6, x)
        d_t5 = unbroadcast(d_t6, _t5)
        da = da + unbroadcast(d_t5 / x, a)
        dx = dx + unbroadcast(-d_t5 * _t5 / x, x)
    # grad of: x = a
    da = da + dx
    return (value, da)
"""

# a for loop with a break on data
FIRST_CROSSING = """\
def value_and_grad_first_crossing(x):
    xp = array_namespace(x)
    s = 0.0
    _break = False
    _t2 = x.shape[0]
    _trips = 0
    for i in range(_t2):
        _trips = _trips + 1
        _t5 = x[i] > 3.0
        if _t5:
            _break = True
            break
        _t6 = not _break
        if _t6:
            _t7 = x[i]
            _t8 = xp.sin(_t7)
            s = s + _t8 * _t7
    dx = zeros_like(x)
    for i in reversed(range(_trips)):
        _t6 = not _break
        if _t6:
            # grad of: s = s + np.sin(x[i]) * x[i]
            _t7 = x[i]
            _t8 = xp.sin(_t7)
            d_t7 = unbroadcast(_t8, _t7)
            d_t7 = d_t7 + unbroadcast(_t7, _t8) * xp.cos(_t7)
            add_at(dx, i, d_t7)
        _break = False
    return (s, dx)
"""

# an elementwise function: the vectorized NumPy code and the CUDA kernel
LEAKY_KERNEL = """\
def leaky_vectorized(x, a):
    shape_1, (x, a) = flat_broadcast(x, a)
    size_2 = x.shape[0]
    _returned = False
    _result = None
    d_result__0 = 0.0
    d_result__1 = 0.0
    _t1 = x > 0
    taken_3, others_4 = split(_t1, size_2)
    x_10 = take(x, taken_3)
    _result_6 = x_10
    d_result__0_7 = 1.0
    d_result__1_8 = 0.0
    _returned_9 = True
    _result = merge(size_2, taken_3, _result_6, others_4, take(_result, others_4))
    d_result__0 = merge(size_2, taken_3, d_result__0_7, others_4, take(d_result__0, others_4))
    d_result__1 = merge(size_2, taken_3, d_result__1_8, others_4, take(d_result__1, others_4))
    _returned = merge(size_2, taken_3, _returned_9, others_4, take(_returned, others_4))
    _t2 = negated(_returned)
    taken_11, others_12 = split(_t2, size_2)
    a_17 = take(a, taken_11)
    x_18 = take(x, taken_11)
    _result_14 = a_17 * x_18
    d_result__0_15 = a_17
    d_result__1_16 = x_18
    _result = merge(size_2, taken_11, _result_14, others_12, take(_result, others_12))
    d_result__0 = merge(size_2, taken_11, d_result__0_15, others_12, take(d_result__0, others_12))
    d_result__1 = merge(size_2, taken_11, d_result__1_16, others_12, take(d_result__1, others_12))
    return (finish(_result, shape_1), finish_partials(shape_1, d_result__0, d_result__1))

# CUDA (cupy.ElementwiseKernel 'leaky_kernel')
# in:  T x, T a
# out: T out, T partial_0, T partial_1
# T _returned = 0;
# T _result = 0;
# T d_result__0 = 0;
# T d_result__1 = 0;
# T _t1 = 0;
# T _t2 = 0;
# _returned = false;
# _result = 0.0;
# d_result__0 = 0.0;
# d_result__1 = 0.0;
# _t1 = (x > 0.0);
# if (_t1) {
#     _result = x;
#     d_result__0 = 1.0;
#     d_result__1 = 0.0;
#     _returned = true;
# }
# _t2 = (!_returned);
# if (_t2) {
#     _result = (a * x);
#     d_result__0 = a;
#     d_result__1 = x;
# }
# out = _result;
# partial_0 = d_result__0;
# partial_1 = d_result__1;
"""


def test_mlp_specialized():
    assert (
        srcad.source(
            srcad.grad(g.mlp_loss, wrt=(0, 1)),
            example_args=(np.ones((3, 4)), np.ones(4), np.ones((5, 3))),
        )
        == MLP_SPECIALIZED
    )


def test_mlp_jvp():
    assert srcad.source(g.mlp_loss, wrt=(0, 1), mode="fwd") == MLP_JVP


def test_rnn_specialized():
    assert (
        srcad.source(
            srcad.grad(m.rnn_loss, wrt=(0, 1)),
            example_args=(np.ones((3, 3)), np.ones((3, 2)), np.ones((4, 2))),
        )
        == RNN_SPECIALIZED
    )


def test_newton():
    assert srcad.source(m.newton_sqrt) == NEWTON


def test_first_crossing():
    assert srcad.source(m.first_crossing) == FIRST_CROSSING


def test_leaky_kernel():
    assert srcad.source(m.leaky) == LEAKY_KERNEL
