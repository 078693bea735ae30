"""srcad.elementwise (mixed mode): a scalar function with branches broadcast over arrays;
value and partials in one vectorized pass, each branch only on the elements taking it."""

import math
import shutil
import subprocess

import numpy as np
import pytest

import srcad
from srcad.kernels.cuda import kernel_parts

RNG = np.random.default_rng(2)


@srcad.elementwise
def cell(c, f, i, g, z, zb):
    if z == 1:
        return i * g  # flush
    elif zb == 0:
        return c  # copy
    else:
        return f * c + i * g  # update


def where_cell(c, f, i, g, z, zb):
    return np.where(z == 1, i * g, np.where(zb == 0, c, f * c + i * g))


@srcad.elementwise
def smooth_step(x, a):
    if x > 0.0:
        y = x * a + math.sin(x)
    else:
        y = math.exp(x) - 1.0
    if y > 0.5:
        y = y * y
    return y * 3.0


def data(n, z_rate=0.3, zb_rate=0.5):
    c, f, i, g = (RNG.normal(size=n) for _ in range(4))
    z = (RNG.random(n) < z_rate).astype(float)
    zb = (RNG.random(n) < zb_rate).astype(float)
    return c, f, i, g, z, zb


def test_values_match_the_where_formulation():
    args = data(1000)
    np.testing.assert_array_equal(cell(*args), where_cell(*args))


@pytest.mark.parametrize(
    "z_rate, zb_rate", [(1.0, 0.5), (0.0, 0.0), (0.0, 1.0), (0.3, 0.5)], ids=str
)
def test_gradient_per_branch_and_mixed_in_both_modes(z_rate, zb_rate):
    c, f, i, g, z, zb = data(40, z_rate, zb_rate)

    def loss(c, f, i, g):
        return np.sum(np.tanh(cell(c, f, i, g, z, zb)) ** 2)

    def reference(c, f, i, g):
        return np.sum(np.tanh(where_cell(c, f, i, g, z, zb)) ** 2)

    args = (c, f, i, g)
    assert srcad.check_grad(loss, *args, wrt=(0, 1, 2, 3), modes=("fwd", "rev")) < 1e-6
    for a, b in zip(
        srcad.grad(loss, wrt=(0, 1, 2, 3))(*args), srcad.grad(reference, wrt=(0, 1, 2, 3))(*args)
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_broadcasting_and_math_functions_in_branches():
    x = RNG.normal(size=(5, 1)) * 2
    a = RNG.normal(size=(1, 4))

    def loss(x, a):
        return np.sum(smooth_step(x, a) * np.arange(4.0))

    assert smooth_step(x, a).shape == (5, 4)
    assert srcad.check_grad(loss, x, a, wrt=(0, 1), modes=("fwd", "rev")) < 1e-6
    assert isinstance(smooth_step(0.3, 2.0), np.ndarray)  # numbers broadcast too
    value, partials = smooth_step.value_and_partials(x, a)
    assert value.shape == (5, 4) and len(partials) == 2 and partials[0].shape == (5, 4)


@srcad.elementwise
def guarded_log(x):
    if x > 0.0:
        return math.log(x)
    else:
        return x


def test_each_branch_runs_only_on_the_elements_that_take_it():
    x = np.array([-1.0, 2.0, -3.0, 0.5])
    with np.errstate(all="raise"):  # log of a negative number would raise
        value, (slope,) = guarded_log.value_and_partials(x)
    np.testing.assert_allclose(value, [-1.0, math.log(2.0), -3.0, math.log(0.5)])
    np.testing.assert_allclose(slope, [1.0, 0.5, 1.0, 2.0])


def test_source_shows_the_vectorized_code_and_the_kernel():
    text = srcad.source(cell)
    assert text.startswith("def cell_vectorized(c, f, i, g, z, zb):")
    assert "split(" in text and "merge(" in text and "take(" in text
    assert "cupy.ElementwiseKernel 'cell_kernel'" in text and "_result = c;" in text


def sums(x):
    return np.sum(x)


def test_what_a_scalar_kernel_cannot_contain_is_a_clear_error():
    def reduces(x):
        return np.sum(x) * 2.0

    def loops(x):
        while x > 1.0:
            x = x / 2.0
        return x

    def indexes(x):
        return x[0]

    with pytest.raises(srcad.TransformError, match="np.sum is not an elementwise"):
        srcad.elementwise(reduces)
    with pytest.raises(srcad.TransformError, match="while"):
        srcad.elementwise(loops)
    with pytest.raises(srcad.TransformError, match="not an elementwise operation"):
        srcad.elementwise(indexes)


def test_cuda_kernel_source():
    parts = cell.compiled((0, 1, 2, 3)).kernel
    # (``i`` is CuPy's element index: the parameter is ``i_v`` in the kernel; CuPy refused
    # ``T i`` with "Can not use 'i' as a parameter name", seen on an H100 at stop 32)
    assert parts["in_params"] == "T c, T f, T i_v, T g, T z, T zb"
    assert parts["out_params"] == "T out, T partial_0, T partial_1, T partial_2, T partial_3"
    operation = parts["operation"]
    assert "if (_t1) {" in operation and "} else {" in operation
    assert "out = _result;" in operation and "partial_3 = d_result__3;" in operation
    assert "template <typename T>\n__device__ void cell_kernel(" in parts["device"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_kernel_compiles_with_nvcc():
    source = cell.compiled((0, 1, 2, 3)).kernel["device"]
    done = subprocess.run(
        ["nvcc", "-x", "cu", "-c", "-o", "/dev/null", "-"],
        input=source,
        text=True,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr


def _gpu() -> bool:
    """Whether CuPy is installed and sees a GPU."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.mark.skipif(not _gpu(), reason="no GPU (CuPy with a CUDA device)")
def test_cupy_kernel_matches_numpy():
    import cupy

    args = data(1000)
    value, partials = cell.compiled((0, 1, 2, 3))(*map(cupy.asarray, args))
    ref_value, ref_partials = cell.compiled((0, 1, 2, 3))(*args)
    np.testing.assert_allclose(cupy.asnumpy(value), ref_value)
    np.testing.assert_allclose(cupy.asnumpy(partials), ref_partials)


def test_kernel_parts_of_math_and_nested_branches():
    parts = smooth_step.compiled((0, 1)).kernel
    assert "exp(x)" in parts["operation"] and "sin(x)" in parts["operation"]
    assert parts["operation"].count("if (") == 2
    assert kernel_parts  # imported for the device-function form used above


@srcad.elementwise
def conditions_and_loops(x, y):
    total = 0.0
    for k in range(3):
        if x > 0.0 and not y > 1.0:
            total = total + x * y * k
        else:
            total = total - np.exp(-x * x)
    return total


def test_conditions_with_and_not_and_constant_loops():
    x = np.array([-0.5, 0.3, 1.2, 0.8])
    y = np.array([0.5, 2.0, 0.7, -0.1])

    def loss(x, y):
        return np.sum(conditions_and_loops(x, y) ** 2)

    expected = np.where((x > 0) & ~(y > 1), 3 * x * y, -3 * np.exp(-x * x))
    np.testing.assert_allclose(conditions_and_loops(x, y), expected)
    assert srcad.check_grad(loss, x, y, wrt=(0, 1), modes=("fwd", "rev")) < 1e-6
    parts = conditions_and_loops.compiled((0, 1)).kernel
    assert "for (int k = (int)0; k < (int)3.0; k += (int)1) {" in parts["operation"]


@srcad.elementwise
def early_return(x):
    if x > 0:
        return x * x
    return -x * 0.5


def summed_early_return(x):
    return np.sum(early_return(x))


def test_an_early_return_then_a_return():
    # the vectorized code dropped the `_result = None` the early return starts from, as if
    # it were a merge made dead (UnboundLocalError)
    x = np.array([0.5, -1.0, 2.0, -0.25])
    np.testing.assert_allclose(early_return(x), np.where(x > 0, x * x, -x * 0.5))
    np.testing.assert_allclose(srcad.grad(summed_early_return)(x), np.where(x > 0, 2 * x, -0.5))
    srcad.check_grad(summed_early_return, x, modes=("rev", "fwd"))


@srcad.elementwise
def three_way(x, y):
    if y > -0.9:
        return np.tanh(x) * y
    if x < 0.4:
        t = np.sin(x)
    elif x > 0.9:
        t = np.exp(0.3 * y)
    else:
        t = x / (1.5 + x * x)
    return np.cos(t + y)


@srcad.elementwise
def nested_return(x, y):
    if y < -0.2:
        if x < 0.8:
            return x * x - x
    return y * y


def _elementwise_reference(f, x, y):
    return np.array([f.fun(a, b) for a, b in np.broadcast(x, y)])


@pytest.mark.parametrize("n", [1, 2, 5])
def test_one_element_per_selection_is_not_taken_for_a_uniform_value(n):
    # a length-1 array was read as "the same for every element": with one element in a
    # selection, a nested selection of none still gathered it (wrong positions, values)
    rng = np.random.default_rng(n)
    x = np.concatenate([[1.13], rng.uniform(-1.5, 1.5, n - 1)])
    y = np.concatenate([[-1.19], rng.uniform(-1.5, 1.5, n - 1)])
    for f in (three_way, nested_return):
        np.testing.assert_allclose(f(x, y), _elementwise_reference(f, x, y), rtol=1e-12)
    srcad.check_grad(lambda a, b: np.sum(three_way(a, b)), x, y, wrt=(0, 1), modes=("rev", "fwd"))


# ---- parameters bound again, Python's own functions, augmented assignments (stop 31) ----


def param_in_branch(x, y):
    x = x * 2
    if x > 0:
        y = y + x  # y's tangent changes here: dropped until stop 31 (its seed stayed 1, 0)
    return x * y


def param_in_loop(x, y):
    for i in range(3):
        if y > 0.1 * i:
            x = x * y
    return x


def param_on_both_sides(x, y):
    if x > 0:
        x = x * y
    else:
        y = y * x
    return x + y


def param_after_an_early_return(x, y):
    # y bound again inside the scope the early return opens, then read by a later branch:
    # the later branch gathered the old y until stop 31 (wrong values too)
    if x < 0.08:
        return x * x
    if x > 0.61:
        if y < -0.64:
            y = x + 0.5
        x = y * x
    if x < 0.45:
        t = y + x
    else:
        t = y * 2.0
    return t


def pythons_own(x, y):
    return float(x) * y + min(x, y) * 2.0 + max(x, 0.3)


def augmented(x, y):
    s = x
    s += y
    s *= x
    s -= 1.0
    s /= y * y + 1
    return s


def chained_comparison(x, y):
    if -0.5 < x < 0.5:  # (a ValueError on arrays until stop 31)
        return x * y
    return y


def python_mod(x, y):
    # Python's % and //, the sign of the divisor (the kernel's fmod kept the dividend's)
    return (x * 3) % 1.0 * y + (x * 3) // 1.0 * y


def math_without_numpy_twins(x, y):
    # math.erf has no NumPy function: SciPy's on arrays (no rule for math.atan2 before)
    return math.erf(x) * y + math.atan2(y, 2.0) + math.log1p(x * x)


REBOUND = [
    chained_comparison,
    python_mod,
    math_without_numpy_twins,
    param_in_branch,
    param_in_loop,
    param_on_both_sides,
    param_after_an_early_return,
    pythons_own,
    augmented,
]


def _partials_by_differences(f, x, y, h=1e-6):
    # (Python floats: an augmented assignment on a 0-d array would change it in place)
    dx = [(f(a + h, b) - f(a - h, b)) / (2 * h) for a, b in zip(x.tolist(), y.tolist())]
    dy = [(f(a, b + h) - f(a, b - h)) / (2 * h) for a, b in zip(x.tolist(), y.tolist())]
    return np.array(dx), np.array(dy)


@pytest.mark.parametrize("f", REBOUND, ids=lambda f: f.__name__)
def test_parameters_bound_again_and_pythons_own_functions(f):
    rng = np.random.default_rng(31)
    x, y = rng.uniform(-1.5, 1.5, 300), rng.uniform(-1.5, 1.5, 300)
    kernel = srcad.elementwise(f)
    value, partials = kernel.value_and_partials(x, y)
    expected = [f(a, b) for a, b in zip(x.tolist(), y.tolist())]
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    for got, want in zip(partials, _partials_by_differences(f, x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    g = srcad.grad(lambda x, y: np.sum(kernel(x, y) ** 2), wrt=(0, 1))(x, y)
    for k in range(2):
        np.testing.assert_allclose(g[k], 2 * value * partials[k], rtol=1e-12)


def test_kernel_of_a_parameter_bound_again_and_of_pythons_min_and_max():
    # CuPy's in_params are const: a parameter the code assigns is a local copy
    parts = srcad.elementwise(param_in_branch).compiled((0, 1)).kernel
    assert parts["in_params"] == "T x, T y_in"
    assert parts["operation"].startswith("T y = y_in;")
    assert "dy__1 = 1.0;" in parts["operation"]
    assert "const T y_in" in parts["device"]
    ops = srcad.elementwise(pythons_own).compiled((0, 1)).kernel["operation"]
    assert "fmin(x, y)" in ops and "fmax(x, 0.3)" in ops
    ops = srcad.elementwise(augmented).compiled((0, 1)).kernel["operation"]
    assert "kept_dtype" not in ops


def test_kernel_of_chained_comparisons_pythons_mod_and_numpys_other_functions():
    ops = srcad.elementwise(chained_comparison).compiled((0, 1)).kernel["operation"]
    assert "(((-0.5) < x) && (x < 0.5))" in ops
    ops = srcad.elementwise(python_mod).compiled((0, 1)).kernel["operation"]
    # Python's % and // by CPython's algorithm (the kernel's preamble), exact where
    # a - floor(a / b) * b is not: 8.0 % 0.4 (seen wrong on an H100 at stop 32)
    assert "srcad_mod(" in ops and "fmod" not in ops
    ops = srcad.elementwise(math_without_numpy_twins).compiled((0, 1)).kernel["operation"]
    assert "erf(x)" in ops and "atan2(y, 2.0)" in ops


@srcad.elementwise
def reserved_names(i, n, T, out, _x):
    exp = n * 0.5
    partial_0 = exp + i * T
    if out > 0:
        return partial_0 * out + _x
    return partial_0 - _x


RESERVED_ARGS = tuple(np.linspace(-1.0, 1.0, 7) + k * 0.1 for k in range(5))


def test_names_the_kernel_reserves_are_renamed():
    # CuPy keeps i, n and parameters starting with _; T is its type placeholder, out and
    # partial_k its outputs, exp a C function: each variable gets a name of its own
    parts = reserved_names.compiled((0, 1, 2, 3, 4)).kernel
    assert parts["in_params"] == "T i_v, T n_v, T T_v, T out_v, T x_v"
    assert "T exp_v = 0;" in parts["operation"] and "T partial_0_v = 0;" in parts["operation"]
    value, partials = reserved_names.compiled((0, 1, 2, 3, 4))(*RESERVED_ARGS)
    expected = [reserved_names.fun(*a) for a in zip(*RESERVED_ARGS)]
    np.testing.assert_allclose(value, expected)


@srcad.elementwise
def reassigned_beside_its_copy(x, y):
    x_in = y * 2.0
    if x > 0:
        x = x * x_in
    else:
        x = x - y
    return x + x_in


def test_the_copy_of_a_reassigned_parameter_has_a_name_of_its_own():
    # a parameter the kernel reassigns is a const parameter copied into a variable: its
    # name (x_in) was the user's variable too, a C redeclaration, until stop 33
    parts = reassigned_beside_its_copy.compiled((0, 1)).kernel
    assert parts["in_params"] == "T x_in1, T y"
    assert "T x = x_in1;" in parts["operation"] and "T x_in = 0;" in parts["operation"]
    assert "T x_in1 " in parts["device"] or "const T x_in1" in parts["device"]


@pytest.mark.skipif(not _gpu(), reason="no GPU (CuPy with a CUDA device)")
def test_reserved_names_on_the_gpu():
    import cupy

    for f, args in [
        (reserved_names.compiled((0, 1, 2, 3, 4)), RESERVED_ARGS),
        (reassigned_beside_its_copy.compiled((0, 1)), RESERVED_ARGS[:2]),
    ]:
        value, partials = f(*map(cupy.asarray, args))
        ref_value, ref_partials = f(*args)
        np.testing.assert_allclose(cupy.asnumpy(value), ref_value)
        for got, ref in zip(partials, ref_partials):
            np.testing.assert_allclose(cupy.asnumpy(got), ref)


@srcad.elementwise
def python_division(x, y):
    return (x % 0.4) * y + (x // 0.4) + (y % -0.7) + (y // -0.7)


DIVISION_ARGS = (
    np.array([8.0, 0.8, -8.0, 2.4, 1.3086, -0.3, 0.0, 7.9999999999]),
    np.array([1.4, -1.4, 0.7, -2.1, 0.35, 3.5, -0.0, 2.8]),
)


def test_python_division_in_numpy_form():
    expected = [python_division.fun(a, b) for a, b in zip(*DIVISION_ARGS)]
    np.testing.assert_array_equal(python_division(*DIVISION_ARGS), expected)


@pytest.mark.skipif(not _gpu(), reason="no GPU (CuPy with a CUDA device)")
def test_python_division_on_the_gpu():
    import cupy

    expected = [python_division.fun(a, b) for a, b in zip(*DIVISION_ARGS)]
    got = python_division(*map(cupy.asarray, DIVISION_ARGS))
    np.testing.assert_array_equal(cupy.asnumpy(got), expected)
