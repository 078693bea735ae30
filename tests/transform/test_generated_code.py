"""Properties of generated code: no tape, no inactive adjoints, comments, linecache, caching."""

import inspect
import linecache
import traceback

import golden_functions as g
import numpy as np
import pytest

import srcad
from srcad.transform import cache

TAPE_WORDS = ("tape", ".append(", ".pop(", "push(", "stack_")


@pytest.mark.parametrize(
    "fn, wrt", [(g.mlp_loss, (0, 1)), (g.scalar_poly, (0, 1)), (g.softmax_xent, 0)]
)
def test_straight_line_code_has_no_tape(fn, wrt):
    src = srcad.source(srcad.grad(fn, wrt=wrt))
    for word in TAPE_WORDS:
        assert word not in src


def test_vjp_passes_intermediates_as_residuals_not_tape():
    x = np.ones((2, 3))
    _, pullback = srcad.vjp(g.softmax_xent, x, np.full((2, 3), 1 / 3))
    src = srcad.source(pullback)
    assert "def softmax_xent_fwd(logits, labels):" in src
    assert "def softmax_xent_bwd(residuals, dsoftmax_xent):" in src
    for word in TAPE_WORDS:
        assert word not in src


def test_only_requested_adjoints_are_computed():
    src = srcad.source(srcad.grad(g.softmax_xent, wrt=0))
    assert "dlabels" not in src
    assert "zeros" not in src
    src = srcad.source(srcad.grad(g.mlp_loss, wrt=1))
    assert "dW" not in src and "grad_matmul" not in src and "dx" not in src


def test_grad_comments_tie_blocks_to_source_lines():
    src = srcad.source(srcad.grad(g.mlp_loss, wrt=(0, 1)))
    assert "# grad of: h = np.tanh(x @ W + b)" in src
    assert "# grad of: return np.sum(h * h) / x.shape[0]" in src


def test_no_numpy_hard_coded():
    src = srcad.source(srcad.grad(g.softmax_xent))
    code = "\n".join(line for line in src.splitlines() if not line.strip().startswith("#"))
    assert "np." not in code and "numpy" not in code
    assert "xp = array_namespace(logits, labels)" in src


def test_inspect_and_tracebacks_see_generated_lines():
    gen = srcad.grad(g.mlp_loss, wrt=(0, 1)).generated()
    assert inspect.getsource(gen.function) == gen.source
    filename = gen.function.__code__.co_filename
    assert filename.startswith("<srcad") and "mlp_loss" in filename
    assert linecache.getline(filename, 1).startswith("def value_and_grad_mlp_loss(")
    W, b, x = np.ones((4, 3)), np.ones(3), np.ones((5, 7))  # x @ W fails inside
    with pytest.raises(ValueError) as info:
        gen.function(W, b, x)
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [f for f in frames if f.filename == filename]
    assert generated and generated[-1].line == "_t1 = x @ W"


def test_transformation_is_cached():
    srcad.grad(g.scalar_poly, wrt=1)(0.5, 2.0)
    srcad.value_and_grad(g.scalar_poly, wrt=1)(0.5, 2.0)
    before = cache.builds
    d = srcad.grad(g.scalar_poly, wrt=1)
    d(0.5, 2.0)
    d(0.7, 2.0)
    srcad.value_and_grad(g.scalar_poly, wrt=1)(0.5, 2.0)
    assert cache.builds == before
    srcad.grad(g.scalar_poly, wrt=0)(0.5, 2.0)
    assert cache.builds == before + 1


def test_generated_code_does_not_mutate_inputs():
    x = np.array([[1.0, 2.0, 3.0], [0.5, 0.1, 0.2]])
    labels = np.full((2, 3), 1 / 3)
    saved = x.copy(), labels.copy()
    srcad.grad(g.softmax_xent)(x, labels)
    np.testing.assert_array_equal(x, saved[0])
    np.testing.assert_array_equal(labels, saved[1])


SCALE = 2.0


def scaled(x):
    return np.sum(x * SCALE)


def activation(v):
    return np.tanh(v)


ACT = np.tanh


def uses_global_callable(x):
    return np.sum(ACT(x))


def test_rebinding_a_global_value_is_seen():
    global SCALE
    d = srcad.grad(scaled)
    np.testing.assert_allclose(d(np.ones(2)), [2.0, 2.0])
    SCALE = 3.0
    try:
        np.testing.assert_allclose(d(np.ones(2)), [3.0, 3.0])
        np.testing.assert_allclose(srcad.value_and_grad(scaled)(np.ones(2))[1], [3.0, 3.0])
    finally:
        SCALE = 2.0


def test_rebinding_a_global_function_is_seen():
    global ACT
    x = np.array([0.3, -0.2])
    d = srcad.grad(uses_global_callable)
    np.testing.assert_allclose(d(x), 1 - np.tanh(x) ** 2)
    ACT = np.sin
    try:
        np.testing.assert_allclose(d(x), np.cos(x))
    finally:
        ACT = np.tanh


def test_closure_values_are_seen():
    def make(scale):
        def f(x):
            return np.sum(x * scale)

        return f

    np.testing.assert_allclose(srcad.grad(make(2.0))(np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(srcad.grad(make(5.0))(np.ones(2)), [5.0, 5.0])


ACTIVATION = lambda v: np.tanh(v) * 2.0  # noqa: E731


def uses_global_lambda(x):
    return np.sum(ACTIVATION(x) ** 2)


def test_lambdas_are_differentiated_from_their_source():
    assert srcad.grad(lambda x: x * x)(3.0) == pytest.approx(6.0)
    d = srcad.grad(lambda x, y: np.sum(np.sin(x) * y), wrt=(0, 1))
    gx, gy = d(np.array([0.1, 0.2]), np.array([1.0, 2.0]))
    np.testing.assert_allclose(gx, np.cos([0.1, 0.2]) * [1.0, 2.0])
    srcad.check_grad(uses_global_lambda, np.array([0.3, -0.4]))


def test_two_lambdas_on_one_line_are_refused():
    f, _g = (lambda x: x * 2.0), (lambda x: x * 3.0)  # noqa: E731
    with pytest.raises(srcad.TransformError, match="which lambda"):
        srcad.grad(f)(1.0)
