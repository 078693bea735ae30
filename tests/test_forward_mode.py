"""Forward mode (srcad.jvp), jacobian, hessian, hvp and check_grad's second order."""

import math

import numpy as np
import pytest

import srcad
from srcad.transform.cache import cached

RNG = np.random.default_rng(7)


def numeric_directional(f, args, tangents, eps=1e-6):
    up = [a if t is None else a + eps * t for a, t in zip(args, tangents)]
    down = [a if t is None else a - eps * t for a, t in zip(args, tangents)]
    return (np.asarray(f(*up)) - np.asarray(f(*down))) / (2 * eps)


def looped(x, W):
    h = x
    for _t in range(3):
        h = np.tanh(W @ h)
        if np.sum(h) > 0:
            h = h * 2.0
    return np.sum(h**2)


def while_loop(x, W):
    h = x
    i = 0
    while np.sum(h) < 10.0 and i < 5:
        h = np.tanh(W @ h) + h
        i += 1
    return np.sum(h * h)


def helper(a, b):
    return np.exp(a) * b


def calls_helper(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(helper(x, x[i]))
    return s


def pair(x):
    return np.sin(x), np.cos(x)


def unpacks(x):
    a, b = pair(x)
    return np.sum(a * b)


def vector_out(x, A):
    return np.tanh(A @ x)


def scalar_math(t):
    return math.sin(t) * math.exp(-0.5 * t)


def breaks(x):
    total = 0.0
    for k in range(x.shape[0]):
        if x[k] > 1.5:
            break
        total = total + x[k] ** 2
    return total


@pytest.mark.parametrize(
    "f, args",
    [
        (looped, (RNG.normal(size=3), RNG.normal(size=(3, 3)))),
        (while_loop, (RNG.normal(size=3), 0.3 * RNG.normal(size=(3, 3)))),
        (calls_helper, (RNG.normal(size=3),)),
        (unpacks, (RNG.normal(size=3),)),
        (vector_out, (RNG.normal(size=4), RNG.normal(size=(3, 4)))),
        (scalar_math, (0.4,)),
        (breaks, (np.array([0.5, 1.0, 2.0, 0.3]),)),
    ],
)
def test_jvp_matches_finite_differences(f, args):
    tangents = [RNG.normal(size=np.shape(a)) if np.ndim(a) else 0.7 for a in args]
    out, tangent = srcad.jvp(f, args, tangents)
    np.testing.assert_allclose(out, f(*args))
    np.testing.assert_allclose(
        tangent, numeric_directional(f, args, tangents), rtol=1e-6, atol=1e-7
    )


def test_jvp_with_some_tangents_none_and_has_aux():
    def with_aux(x, y):
        return np.sum(np.sin(x) * y), x.shape[0]

    x, y = RNG.normal(size=3), RNG.normal(size=3)
    out, tangent, aux = srcad.jvp(with_aux, (x, y), (np.ones(3), None), has_aux=True)
    assert aux == 3
    np.testing.assert_allclose(tangent, np.sum(np.cos(x) * y))


def test_jvp_rejects_bad_tangents():
    with pytest.raises(ValueError, match="one tangent per primal"):
        srcad.jvp(unpacks, (np.ones(3),), ())
    with pytest.raises(ValueError, match="shape"):
        srcad.jvp(unpacks, (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError, match="floating-point"):
        srcad.jvp(unpacks, (np.arange(3),), (np.ones(3),))


def test_forward_source_is_generated_python_without_a_tape():
    text = srcad.source(looped, wrt=(0, 1), mode="fwd")
    assert text.startswith("def jvp_looped(x, W, dx, dW):")
    assert "Tape" not in text and "push" not in text
    assert "for _t in range(3):" in text


def test_tangents_of_constants_are_not_computed():
    text = srcad.source(vector_out, wrt=0, mode="fwd")
    assert "dA" not in text  # A does not vary


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosen_hessian(x):
    H = np.diag(-400 * x[:-1], 1) - np.diag(400 * x[:-1], -1)
    diagonal = np.zeros_like(x)
    diagonal[0] = 1200 * x[0] ** 2 - 400 * x[1] + 2
    diagonal[-1] = 200
    diagonal[1:-1] = 202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]
    return H + np.diag(diagonal)


def quadratic(x, A):
    return x @ A @ x


def test_hessian_of_rosenbrock_matches_closed_form():
    x = np.array([0.3, -0.2, 1.1, 0.7, -0.5])
    np.testing.assert_allclose(srcad.hessian(rosen)(x), rosen_hessian(x), rtol=1e-12, atol=1e-10)


def test_hessian_and_hvp_of_a_quadratic_form():
    x, A = RNG.normal(size=4), RNG.normal(size=(4, 4))
    np.testing.assert_allclose(srcad.hessian(quadratic)(x, A), A + A.T, atol=1e-12)
    v = RNG.normal(size=4)
    np.testing.assert_allclose(srcad.hvp(quadratic, (x, A), (v, None))[0], (A + A.T) @ v)


def test_hessian_with_several_arguments_is_a_table():
    x, A = RNG.normal(size=3), RNG.normal(size=(3, 3))
    table = srcad.hessian(quadratic, wrt=(0, 1))(x, A)
    assert table[0][0].shape == (3, 3) and table[0][1].shape == (3, 3, 3)
    assert table[1][0].shape == (3, 3, 3) and table[1][1].shape == (3, 3, 3, 3)
    # d/dA_jk of d/dx_i (x A x) = delta_ij x_k + delta_ik x_j
    expected = np.einsum("ij,k->ijk", np.eye(3), x) + np.einsum("ik,j->ijk", np.eye(3), x)
    np.testing.assert_allclose(table[0][1], expected, atol=1e-12)


def test_hvp_matches_hessian_times_vector():
    x, v = np.array([0.3, -0.2, 1.1, 0.7]), RNG.normal(size=4)
    np.testing.assert_allclose(srcad.hvp(rosen, (x,), (v,)), rosen_hessian(x) @ v, rtol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev", "auto"])
def test_jacobian_modes_agree_with_closed_form(mode):
    x, A = RNG.normal(size=4), RNG.normal(size=(3, 4))
    J = srcad.jacobian(vector_out, mode=mode)(x, A)
    np.testing.assert_allclose(J, (1 - np.tanh(A @ x) ** 2)[:, None] * A, atol=1e-12)
    JA = srcad.jacobian(vector_out, wrt=1, mode=mode)(x, A)
    assert JA.shape == (3, 3, 4)


def test_jacobian_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="mode"):
        srcad.jacobian(vector_out, mode="sideways")


@pytest.mark.parametrize(
    "f, args",
    [
        (rosen, (np.array([0.3, -0.2, 1.1]),)),
        (looped, (RNG.normal(size=3), RNG.normal(size=(3, 3)))),
    ],
)
def test_check_grad_second_order_in_both_modes(f, args):
    assert srcad.check_grad(f, *args, order=2, modes=("fwd", "rev")) < 1e-4


def wrong(x):
    return np.sum(x**3)


def test_check_grad_forward_mode_catches_a_wrong_tangent_rule():
    @srcad.tangent(wrong_kernel)
    def wrong_kernel_tangent(y, x):
        d[y] = d[x] * 2.0 * x  # noqa: F821  (a deliberately wrong rule: should be 3 x^2)

    with pytest.raises(AssertionError, match="forward-mode derivative"):
        srcad.check_grad(uses_kernel, np.array([0.5, 1.5]), modes=("fwd",))


def wrong_kernel(x):
    return x**3


def uses_kernel(x):
    return np.sum(wrong_kernel(x))


@srcad.adjoint(wrong_kernel)
def _wrong_kernel_adjoint(y, x):
    from srcad.adjoints.registry import d

    d[x] = d[y] * 3 * x * x


def test_forward_mode_is_cached():
    before = srcad.transform.cache.builds
    srcad.jvp(rosen, (np.ones(3),), (np.ones(3),))
    after_first = srcad.transform.cache.builds
    srcad.jvp(rosen, (np.ones(3),), (np.ones(3),))
    assert srcad.transform.cache.builds == after_first >= before
    assert cached(rosen, (0,), False, "jvp") is cached(rosen, (0,), False, "jvp")


def sum_of_literal(x, y):
    return sum([x, y])


def transposed_literal(x, y):
    return np.transpose([x, y])


def test_a_list_written_in_the_call_is_stacked_not_a_zero_tangent():
    # (a clear error until stop 27; now stacked, as NumPy converts it: the tangents stack)
    u, v = np.arange(3.0), -np.arange(3.0) * 2
    _, tangent = srcad.jvp(transposed_literal, (np.ones(3), np.ones(3)), (u, v))
    assert np.allclose(tangent, np.transpose([u, v]))
    # Python's sum of a list written out adds its elements: their tangents add too
    _, tangent = srcad.jvp(sum_of_literal, (np.ones(3), np.ones(3)), (np.ones(3), 2 * np.ones(3)))
    assert np.allclose(tangent, 3.0)


def filled(x):
    out = np.zeros(x.shape[0])
    for k in range(x.shape[0]):
        out[k] = x[k] * x[k]
    return out


def test_updates_in_place_write_into_the_tangent_without_copying_it():
    text = srcad.source(filled, mode="fwd")
    assert "copied(" not in text
    x, v = RNG.normal(size=4), RNG.normal(size=4)
    np.testing.assert_allclose(srcad.jvp(filled, (x,), (v,))[1], 2 * x * v)


GOLDEN_ROSEN = """\
def jvp_rosen(x, dx):
    xp = array_namespace(x)
    _t2 = x[:-1]
    d_t2 = dx[:-1]
    _t4 = x[1:] - _t2 ** 2
    _t7 = 1 - _t2
    rosen = xp.sum(100.0 * _t4 ** 2 + _t7 ** 2)
    drosen = xp.sum(100.0 * ((dx[1:] - d_t2 * 2 * _t2) * 2 * _t4) + -d_t2 * 2 * _t7)
    return (rosen, drosen)
"""


def test_golden_forward_source():
    # the README shows this source: keep both in step
    assert srcad.source(rosen, mode="fwd") == GOLDEN_ROSEN


def array_of_a_tuple(x):
    # the tangent of tuple(x) is a tuple: np.array of it was the tuple itself, which
    # ``* 2`` repeated (a shape error; an unsummed result of one element came out twice)
    return np.array(tuple(x)) ** 2 * 0.5 + np.asarray(list(x)) * x


def test_an_array_made_of_a_sequence_has_the_sequences_tangent():
    x = np.array([0.3, -0.5, 0.9])
    value, tangent = srcad.jvp(array_of_a_tuple, (x,), (np.ones(3),))
    np.testing.assert_allclose(tangent, x + 2 * x, rtol=1e-6)
    one = np.array([0.7])
    value, tangent = srcad.jvp(array_of_a_tuple, (one,), (np.ones(1),))
    assert tangent.shape == (1,)
    np.testing.assert_allclose(tangent, 3 * one, rtol=1e-6)


def test_primals_must_be_a_tuple_of_arguments():
    # a dict or an array given for the primals (a confusing "wrt=1 is out of range" or
    # "too many positional arguments" until stop 33)
    p = {"a": np.ones(2), "b": 1.0}
    with pytest.raises(TypeError, match=r"jvp takes primals as a tuple .* got dict"):
        srcad.jvp(unpacks, p, p)
    with pytest.raises(TypeError, match=r"hvp takes tangents as a tuple .* got ndarray"):
        srcad.hvp(unpacks, (np.ones(3),), np.ones(3))
    assert srcad.jvp(np.sin, [0.5], [1.0])[1] == pytest.approx(np.cos(0.5))
