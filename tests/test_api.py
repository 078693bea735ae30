"""The public API: wrt forms, decorators, dtypes, value_and_grad, vjp, input errors."""

import math

import numpy as np
import pytest

import srcad


def loss(W, b, x):
    h = np.tanh(x @ W + b)
    return np.sum(h * h) / x.shape[0]


def scalar_fn(x, y):
    return math.sin(x) * y + y


def first_only(x, y):
    return np.sum(x * 2.0)


def with_default(x, scale=3.0):
    return np.sum(x * scale)


def vector_out(x):
    return np.sin(x)


def with_int(x, n):
    return np.sum(x**2) * n


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(5, 4))


def reference(W, b, x):
    h = np.tanh(x @ W + b)
    dh = 2 * h / x.shape[0]
    da = dh * (1 - h * h)
    return x.T @ da, da.sum(axis=0)


def test_grad_tuple_wrt(data):
    dW, db = srcad.grad(loss, wrt=(0, 1))(*data)
    rW, rb = reference(*data)
    np.testing.assert_allclose(dW, rW, rtol=1e-12)
    np.testing.assert_allclose(db, rb, rtol=1e-12)


def test_grad_single_and_names(data):
    dW = srcad.grad(loss)(*data)
    assert isinstance(dW, np.ndarray) and dW.shape == (4, 3)
    db = srcad.grad(loss, wrt="b")(*data)
    np.testing.assert_allclose(db, reference(*data)[1])
    both = srcad.grad(loss, wrt=("W", -2))(*data)
    assert isinstance(both, tuple) and len(both) == 2


def test_decorator_forms(data):
    @srcad.grad
    def d1(W, b, x):
        return np.sum(np.tanh(x @ W + b) ** 2) / x.shape[0]

    @srcad.grad(wrt=(0, 1))
    def d2(W, b, x):
        return np.sum(np.tanh(x @ W + b) ** 2) / x.shape[0]

    np.testing.assert_allclose(d1(*data), reference(*data)[0])
    np.testing.assert_allclose(d2(*data)[1], reference(*data)[1])
    assert d1.__name__ == "d1"


def test_value_and_grad(data):
    value, (dW, db) = srcad.value_and_grad(loss, wrt=(0, 1))(*data)
    assert value == pytest.approx(loss(*data))
    np.testing.assert_allclose(dW, reference(*data)[0])


def test_vjp_one_cotangent_per_argument(data):
    out, pullback = srcad.vjp(loss, *data)
    assert out == pytest.approx(loss(*data))
    dW, db, dx = pullback(2.0)
    np.testing.assert_allclose(dW, 2 * reference(*data)[0])
    assert dx.shape == data[2].shape
    srcad.check_grad(loss, *data, wrt=2)


def test_vjp_vector_output_and_int_argument():
    x = np.array([0.1, 0.2, 0.3])
    out, pullback = srcad.vjp(vector_out, x)
    (dx,) = pullback(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(dx, np.cos(x) * [1, 2, 3])
    with pytest.raises(ValueError, match="cotangent has shape"):
        pullback(np.ones(4))
    out, pullback = srcad.vjp(with_int, x, 3)
    dx, dn = pullback(1.0)
    assert dn is None
    np.testing.assert_allclose(dx, 6 * x)


def test_python_floats_give_floats():
    dx, dy = srcad.grad(scalar_fn, wrt=(0, 1))(0.3, 2.0)
    assert type(dx) is float and type(dy) is float
    assert dx == pytest.approx(math.cos(0.3) * 2.0)
    assert dy == pytest.approx(math.sin(0.3) + 1.0)


def test_float32_stays_float32(data):
    args = [a.astype(np.float32) for a in data]
    dW, db = srcad.grad(loss, wrt=(0, 1))(*args)
    assert dW.dtype == np.float32 and db.dtype == np.float32
    np.testing.assert_allclose(dW, reference(*data)[0], rtol=1e-4, atol=1e-5)


def test_float32_intermediates_are_not_upcast():
    # the generated function itself (before the API's final dtype match) keeps float32
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    gen = srcad.grad(loss, wrt=(0, 1)).generated()
    _, (dW, db) = gen.function(x.T.copy(), x[:, 0].copy(), x)
    assert dW.dtype == np.float32 and db.dtype == np.float32


def test_unused_argument_gets_zero_gradient():
    x, y = np.ones(3), np.ones(2)
    dx, dy = srcad.grad(first_only, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(dy, np.zeros(2))
    np.testing.assert_array_equal(dx, 2 * np.ones(3))


def test_keyword_arguments_and_defaults():
    x = np.ones(3)
    np.testing.assert_allclose(srcad.grad(with_default)(x), 3 * np.ones(3))
    np.testing.assert_allclose(srcad.grad(with_default)(x, scale=2.0), 2 * np.ones(3))
    np.testing.assert_allclose(srcad.grad(with_default)(x=x), 3 * np.ones(3))


def test_gradients_are_fresh_writable_arrays():
    def summed(a, b):
        return np.sum(a + b)

    from opcheck import make_function

    f = make_function("np.sum(x + y)", "x, y")
    dx, dy = srcad.grad(f, wrt=(0, 1))(np.ones(3), np.ones(3))
    assert dx is not dy and dx.flags.writeable and dy.flags.writeable
    dx += 1
    np.testing.assert_array_equal(dy, np.ones(3))


@pytest.mark.parametrize(
    "wrt, error, match",
    [
        (3, ValueError, "out of range"),
        (-4, ValueError, "out of range"),
        ("z", ValueError, "names no parameter"),
        ((0, 0), ValueError, "twice"),
        ((), ValueError, "at least one"),
        (1.5, TypeError, "indices or names"),
    ],
)
def test_bad_wrt(wrt, error, match):
    with pytest.raises(error, match=match):
        srcad.grad(loss, wrt=wrt)


@pytest.mark.parametrize(
    "bad", [3, True, np.arange(3), np.array([True, False]), "text"]
)  # (complex arrays are differentiable: tests/test_complex.py)
def test_non_float_argument_is_rejected(bad):
    with pytest.raises(TypeError, match="cannot differentiate with respect to 'x'"):
        srcad.grad(vector_out)(bad)


def test_non_scalar_output_is_rejected():
    with pytest.raises(TypeError, match="scalar output"):
        srcad.grad(vector_out)(np.ones(3))


def test_not_a_function():
    with pytest.raises(TypeError, match="differentiates functions"):
        srcad.grad(42)
    with pytest.raises(srcad.TransformError, match="without a derivative rule"):
        srcad.grad(np.i0)  # a NumPy function without a rule: differentiable ones work
    with pytest.raises(srcad.TransformError, match="Python functions defined with 'def'"):
        srcad.grad(dict)


def test_source_of_a_plain_function_is_its_gradient_or_forward_source():
    assert srcad.source(loss) == srcad.source(srcad.grad(loss))
    assert srcad.source(loss, wrt=1, mode="fwd").startswith("def jvp_loss(")
    with pytest.raises(ValueError, match="mode"):
        srcad.source(loss, mode="sideways")
    with pytest.raises(TypeError, match="neither a derivative"):
        srcad.source(np.sum)


def test_float16_stays_float16(data):
    args = [a.astype(np.float16) for a in data]
    dW, db = srcad.grad(loss, wrt=(0, 1))(*args)
    assert dW.dtype == np.float16 and db.dtype == np.float16
    gen = srcad.grad(loss, wrt=(0, 1)).generated()
    _, (rW, rb) = gen.function(*args)
    assert rW.dtype == np.float16 and rb.dtype == np.float16  # no upcast inside either
