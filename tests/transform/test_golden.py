"""Golden tests: the generated source of three small functions, pinned."""

import golden_functions as g

import srcad

MLP_LOSS = """\
def value_and_grad_mlp_loss(W, b, x):
    xp = array_namespace(W, b, x)
    _t1 = x @ W
    h = xp.tanh(_t1 + b)
    _t6 = x.shape[0]
    mlp_loss = xp.sum(h * h) / _t6
    # grad of: return np.sum(h * h) / x.shape[0]
    dh = 1.0 / _t6 * 2 * h
    # grad of: h = np.tanh(x @ W + b)
    d_t2 = dh * (1 - h * h)
    db = unbroadcast(d_t2, b)
    dW = grad_matmul_rhs(unbroadcast(d_t2, _t1), x, W)
    return (mlp_loss, (dW, db))
"""

SCALAR_POLY = """\
def value_and_grad_scalar_poly(x, y):
    xm = math_namespace(x, y)
    _t1 = xm.sin(x)
    s = _t1 * y
    scalar_poly = s * s + 3.0 * x
    # grad of: return s * s + 3.0 * x
    dx = 3.0
    ds = 2.0 * s
    # grad of: s = math.sin(x) * y
    dy = ds * _t1
    dx = dx + ds * y * xm.cos(x)
    return (scalar_poly, (dx, dy))
"""

SOFTMAX_XENT = """\
def value_and_grad_softmax_xent(logits, labels):
    xp = array_namespace(logits, labels)
    _t1 = xp.max(logits, axis=1, keepdims=True)
    shifted = logits - _t1
    _t2 = xp.exp(shifted)
    _t3 = xp.sum(_t2, axis=1, keepdims=True)
    _t4 = xp.log(_t3)
    logp = shifted - _t4
    _t5 = labels * logp
    _t6 = xp.sum(_t5, axis=1)
    softmax_xent = -xp.mean(_t6)
    # grad of: return -np.mean(np.sum(labels * logp, axis=1))
    dlogp = unbroadcast(unreduce(unreduce(-1.0 / count(_t6), _t6), _t5, axis=1) * labels, logp)
    # grad of: logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    dshifted = unbroadcast(dlogp, shifted)
    dshifted = dshifted + unreduce(unbroadcast(-dlogp, _t4) / _t3, _t2, axis=1, keepdims=True) * _t2
    # grad of: shifted = logits - np.max(logits, axis=1, keepdims=True)
    dlogits = unbroadcast(dshifted, logits)
    dlogits = dlogits + unreduce(unbroadcast(-dshifted, _t1), logits, axis=1, keepdims=True) * extremum_share(logits, _t1, 1, True)
    return (softmax_xent, dlogits)
"""


def test_mlp_loss():
    assert srcad.source(srcad.grad(g.mlp_loss, wrt=(0, 1))) == MLP_LOSS


def test_scalar_poly():
    assert srcad.source(srcad.grad(g.scalar_poly, wrt=(0, 1))) == SCALAR_POLY


def test_softmax_xent():
    assert srcad.source(srcad.grad(g.softmax_xent)) == SOFTMAX_XENT
