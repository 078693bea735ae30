"""No API changes its inputs, tangents or cotangents, in any mode or order, and results do
not share memory with them (issue #16): every argument is compared bit for bit with a copy
taken before the call; jvp values are checked against finite differences, since a tangent
changed in place also made them wrong."""

from __future__ import annotations

import numpy as np
import pytest

import srcad


def helper(v):
    return v * 1.0


def updated_first(x):
    y = x * 1.0
    y[0] = 5.0
    return np.sum(y * y)


def updated_after_sum(x):
    y = x + 0.0
    y[1] += x[2]
    return np.sum(y**2)


def updated_in_loop(x):
    y = x * 1.0
    for i in range(3):
        y[i] = y[i] * 2.0
    return np.sum(y * y)


def updated_times(x):
    y = 1.0 * x
    y[2] *= 3.0
    return np.sum(np.sin(y))


def updated_plus(x):
    y = +x
    y[1] = 0.0
    return np.sum(y * x)


def updated_copy(x):
    y = x.copy()
    y[0] = 2.0
    return np.sum(y**2)


def updated_strided(x):
    y = np.asarray(x) * 1.0
    y[::2] = 1.0
    return np.sum(y * x)


def updated_from_helper(x):
    y = helper(x)
    y[0] = 5.0
    return np.sum(y * y)


def updated_by_division(x):
    y = x / 1.0
    y[0] = y[1] * y[2]
    return np.sum(y * y)


def added_in_place(x):
    y = x * 1.0
    y += x
    return np.sum(y * y)


def read_in_loop(x):
    y = x * 1.0
    s = 0.0
    for i in range(3):
        s = s + y[i] * y[i]
    return s + np.sum(y)


def updated_2d(x):
    y = x[:, None] * 1.0
    y[0, 0] = 2.0
    return np.sum(y * y)


def updated_in_a_branch(x):
    y = x * 1.0
    if x[0] > 0:
        y[0] = 2.0
    else:
        y[1] = 3.0
    return np.sum(y * y)


def updated_in_a_while_loop(x):
    y = x * 1.0
    i = 0
    while i < 3:
        y[i] = y[i] ** 2
        i = i + 1
    return np.sum(y)


def updated_after_reshape(x):
    y = x.reshape(3) * 1.0
    y[0] = 2.0
    return np.sum(y * y)


SCALAR = [
    read_in_loop,
    updated_2d,
    updated_in_a_branch,
    updated_in_a_while_loop,
    updated_after_reshape,
    updated_first,
    updated_after_sum,
    updated_in_loop,
    updated_times,
    updated_plus,
    updated_copy,
    updated_strided,
    updated_from_helper,
    updated_by_division,
    added_in_place,
]


def returns_updated(x):
    y = x * 1.0
    y[0] = 5.0
    return y


def returns_argument(x):
    return x


def returns_twice(x):
    return x, x * 1.0


def array_and_loop_sum(x):
    y = x * 2.0
    s = 0.0
    for i in range(3):
        s = s + y[i]
    return y * 1.0, s


def point():
    return np.array([0.3, -0.7, 1.1])


def assert_unchanged(arrays, copies):
    for array, copy in zip(arrays, copies):
        assert np.array_equal(array, copy), "an input of srcad was changed in place"


def run_unchanged(call, *arrays):
    """``call()`` leaves ``arrays`` as they were (srcad may refuse it with a clear error)."""
    copies = [np.array(a, copy=True) for a in arrays]
    try:
        result = call()
    except srcad.TransformError:
        result = None
    assert_unchanged(arrays, copies)
    return result


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.__name__)
def test_jvp_leaves_the_tangent_alone_and_is_right(f):
    x, t = point(), np.array([1.0, -2.0, 0.5])
    _, tangent = run_unchanged(lambda: srcad.jvp(f, (x,), (t,)), x, t)
    eps = 1e-6
    numeric = (f(x + eps * t) - f(x - eps * t)) / (2 * eps)
    assert np.isclose(tangent, numeric, rtol=1e-6, atol=1e-8)
    srcad.check_grad(f, point(), modes=("fwd", "rev"))


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "api",
    [
        lambda f, x, t: srcad.grad(f)(x),
        lambda f, x, t: srcad.value_and_grad(f)(x),
        lambda f, x, t: srcad.jacobian(f, mode="fwd")(x),
        lambda f, x, t: srcad.jacobian(f, mode="rev")(x),
        lambda f, x, t: srcad.hessian(f)(x),
        lambda f, x, t: srcad.hvp(f, (x,), (t,)),
        lambda f, x, t: srcad.grad(lambda v: np.sum(srcad.grad(f)(v) ** 2))(x),
        lambda f, x, t: srcad.jvp(srcad.grad(f), (x,), (t,)),
    ],
    ids=["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "hvp", "grad_grad", "jvp_grad"],
)
def test_every_api_leaves_its_arguments_alone(f, api):
    x, t = point(), np.array([1.0, -2.0, 0.5])
    run_unchanged(lambda: api(f, x, t), x, t)


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.__name__)
def test_check_grad_leaves_its_arguments_alone(f):
    x = point()
    run_unchanged(lambda: srcad.check_grad(f, x, modes=("fwd", "rev"), order=2), x)


@pytest.mark.parametrize("f", [returns_updated, returns_argument, updated_first])
def test_a_pullback_called_twice_with_one_cotangent(f):
    x = point()
    out, pullback = srcad.vjp(f, x)
    ct = np.ones_like(out) if np.ndim(out) else np.float64(1.0)
    ct = ct * np.array(2.0)
    (first,) = run_unchanged(lambda: pullback(ct), x, ct)
    first_copy = first.copy()
    (second,) = run_unchanged(lambda: pullback(ct), x, ct)
    assert np.array_equal(first, first_copy) and np.array_equal(first, second)
    assert first is not ct and second is not ct and first is not second


def test_a_cotangent_the_backward_pass_updates_in_place_stays_unchanged():
    # the adjoint of y started as the cotangent of ``y * 1.0`` (folded to it), then the
    # loop's reads of y[i] were added into it in place
    x = point()
    _, pullback = srcad.vjp(array_and_loop_sum, x)
    ct = (np.array([1.0, 2.0, 3.0]), 0.5)
    ct_copy = ct[0].copy()
    first = pullback(ct)[0].copy()
    second = pullback(ct)[0]
    assert np.array_equal(ct[0], ct_copy)
    expected = 2.0 * ct[0] + 2.0 * 0.5
    assert np.allclose(first, expected) and np.allclose(second, expected)


def test_one_tangent_array_for_two_primals():
    def g2(x, y):
        z = x * 1.0
        z[0] = 5.0
        return np.sum(z * y)

    x, y, t = point(), point() + 1.0, np.ones(3)
    value, tangent = run_unchanged(lambda: srcad.jvp(g2, (x, y), (t, t)), x, y, t)
    # d/de of sum(z(x + e t) * (y + e t)), z's first entry fixed at 5
    z = x.copy()
    z[0] = 5.0
    expected = np.sum(t[1:] * y[1:]) + np.sum(z * t)
    assert np.isclose(tangent, expected)


def test_jvp_results_never_are_the_callers_tangents():
    x, t = point(), np.ones(3)
    _, tangent = srcad.jvp(returns_argument, (x,), (t,))
    assert tangent is not t and np.array_equal(tangent, t)
    _, (t1, t2) = srcad.jvp(returns_twice, (x,), (t,))
    assert t1 is not t and t2 is not t and t1 is not t2
    t1[0] = 99.0
    assert t[0] == 1.0 and t2[0] == 1.0


def test_pullback_of_a_pytree_never_returns_the_cotangent_leaves():
    def fp(p):
        return {"a": p["a"], "b": p["b"] * 2.0}

    p = {"a": point(), "b": point()}
    _, pullback = srcad.vjp(fp, p)
    ct = {"a": np.ones(3), "b": np.ones(3)}
    (g,) = run_unchanged(lambda: pullback(ct), ct["a"], ct["b"])
    assert g["a"] is not ct["a"]
    g["a"][0] = 7.0
    assert ct["a"][0] == 1.0


def test_pytree_leaves_updated_in_place_in_every_mode():
    def fp(p):
        w = p["w"] * 1.0
        w[0] = 0.5
        return np.sum(w * p["b"])

    p = {"w": point(), "b": point() + 2.0}
    t = {"w": np.ones(3), "b": np.ones(3)}
    leaves = [p["w"], p["b"], t["w"], t["b"]]
    run_unchanged(lambda: srcad.grad(fp)(p), *leaves)
    _, tangent = run_unchanged(lambda: srcad.jvp(fp, (p,), (t,)), *leaves)
    w = p["w"].copy()
    w[0] = 0.5
    assert np.isclose(tangent, np.sum(t["w"][1:] * p["b"][1:]) + np.sum(w * t["b"]))


def chained_in_place(x):
    y = x * 1.0
    for i in range(1, 3):
        y[i] = y[i - 1] * y[i]
    return y


def chained_pair(x):
    y = chained_in_place(x) * 1.0
    for i in range(1, 3):
        y[i] = y[i] * y[i - 1]
    return y, np.sum(y)


@pytest.mark.parametrize("f", [chained_in_place, chained_pair])
def test_the_value_vjp_returns_is_its_own(f):
    # the backward pass restores arrays updated in place: not the one the caller holds
    x = point()
    out, pullback = srcad.vjp(f, x)
    leaves = [np.array(o, copy=True) for o in (out if isinstance(out, tuple) else (out,))]
    ct = (np.ones(3), 0.5) if isinstance(out, tuple) else np.ones(3)
    first = pullback(ct)[0].copy()
    for o, saved in zip(out if isinstance(out, tuple) else (out,), leaves):
        assert np.array_equal(o, saved)
        if isinstance(o, np.ndarray):
            o[...] = 100.0  # the caller's to change
    assert np.allclose(pullback(ct)[0], first)
    jacobian = srcad.jacobian(f, mode="fwd")(x)
    if isinstance(out, tuple):
        expected = jacobian[0].T @ ct[0] + ct[1] * jacobian[1]
    else:
        expected = jacobian.T @ ct
    assert np.allclose(first, expected)


# ---- a pullback whose backward pass puts arrays back in place, called again ------------
# (fuzz seeds 400017 and 400530, minimized: the first call restored the tape's arrays to
# their values before the updates, so the second call, and a reverse-mode jacobian, which
# calls the pullback once per output element, read the wrong ones)


def updated_then_squared(x, y):
    u = x * y
    u[-2] += 0.5
    u *= u
    return u


def updated_in_a_loop(x, y):
    u = x * y
    for i in range(2):
        u[i] = 0.3
        u *= x
    return u


@pytest.mark.parametrize("f", [updated_then_squared, updated_in_a_loop])
def test_a_pullback_that_restores_arrays_gives_the_same_result_every_time(f):
    x, y = np.array([0.7, -0.4, 0.3]), np.array([0.5, 1.5, 2.0])
    ct = np.array([1.0, 2.0, 0.5])
    expected = [
        srcad.testing.numerical_grad(lambda a, b: np.sum(f(a, b) * ct), [x, y], k) for k in (0, 1)
    ]
    _, pullback = srcad.vjp(f, x, y)
    for _ in range(3):
        dx, dy = pullback(ct)
        np.testing.assert_allclose(dx, expected[0], rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dy, expected[1], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [updated_then_squared, updated_in_a_loop])
def test_a_reverse_mode_jacobian_through_in_place_updates(f):
    x, y = np.array([0.7, -0.4, 0.3]), np.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose(
        srcad.jacobian(f, mode="rev")(x, y), srcad.jacobian(f, mode="fwd")(x, y), atol=1e-12
    )
