"""Lambdas and local functions given to your own functions (``apply(lambda t: t * t, x)``),
and loops over displays of functions (``for act in (np.tanh, relu)``): refused as "lambda
expressions are not supported yet" and "no adjoint rule for act" until stop 33."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])


def apply(f, x):
    return f(x)


def iterate(f, x, n):
    for _ in range(n):
        x = f(x)
    return x


def passed_on(f, x):
    return np.sum(apply(f, x) * 2.0)


def squashed(t):
    return np.tanh(t)


def twice(x, f=None):
    return f(f(x))


def keeps(f, x):
    f = f if x is not None else None
    return f(x)


def relu(v):
    return np.maximum(v, 0.0)


def softplus(v):
    return np.log1p(np.exp(v))


def layer(x, act):
    return act(x * 1.5)


def squared(x):
    return np.sum(apply(lambda t: t * t, x))


def closing_over(x):
    w = np.sin(x)
    return np.sum(apply(lambda t: t * w, x))


def late_binding(x):
    def scaled(t):
        return t * w

    w = np.cos(x)  # read when ``scaled`` is called, as Python does
    return np.sum(apply(scaled, x))


def local_def(x):
    def sq(t):
        u = t**2
        return u + x

    return np.sum(apply(sq, x))


def passed_along(x):
    return passed_on(lambda t: np.exp(t) * t, x)


def in_a_loop(x):
    return np.sum(iterate(lambda t: np.tanh(t) + 0.5 * t, x, 3))


def by_keyword(x):
    return np.sum(twice(x, f=lambda t: np.sin(t) * x))


def calling_yours(x):
    return np.sum(apply(lambda t: squashed(t) * t, x))


def same_names(x):
    return np.sum(apply(lambda x: x * 3.0, x) * x)


def a_generator_in_the_lambda(x):
    ws = [0.5, 1.5]
    return np.sum(apply(lambda t: sum(w * t for w in ws), x))


def a_comprehension_in_the_lambda(x):
    return np.sum(apply(lambda t: np.stack([t * k for k in range(2)]), x))


def over_functions(x):
    s = 0.0
    for act in (np.tanh, relu):
        s = s + np.sum(act(x))
    return s


def over_a_named_list(x):
    acts = [np.tanh, softplus, np.sin]
    h = x
    for act in acts:
        h = act(h) * 0.9
    return np.sum(h)


def functions_passed_on(x):
    h = x
    for act in (softplus, np.cos):
        h = layer(h, act)
    return np.sum(h)


def a_comprehension_of_functions(x):
    return np.sum(np.stack([f(x) for f in (np.sin, softplus)]))


CASES = [
    squared, closing_over, late_binding, local_def, passed_along, in_a_loop, by_keyword,
    calling_yours, same_names, a_generator_in_the_lambda, a_comprehension_in_the_lambda,
    over_functions, over_a_named_list, functions_passed_on,
    a_comprehension_of_functions,
]  # fmt: skip


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_against_finite_differences(f):
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"))
    srcad.check_grad(f, X.copy(), modes=("rev", "fwd"), order=2)


def test_closed_forms():
    assert np.allclose(srcad.grad(squared)(X.copy()), 2 * X)
    assert np.allclose(srcad.grad(closing_over)(X.copy()), np.sin(X) + X * np.cos(X))
    assert np.allclose(srcad.grad(late_binding)(X.copy()), np.cos(X) - X * np.sin(X))
    assert np.allclose(srcad.grad(same_names)(X.copy()), 6 * X)
    assert np.allclose(srcad.grad(over_functions)(X.copy()), 1 - np.tanh(X) ** 2 + (X > 0))
    h = srcad.hessian(squared)(X.copy())
    assert np.allclose(h, 2 * np.eye(3))


def test_the_generated_code_reads_the_lambda_in_place():
    code = srcad.source(srcad.grad(in_a_loop))
    assert "lambda" not in code.split("# grad of")[0].split("\n", 1)[1].replace("# ", "")
    assert "xp.tanh(iterate_f_t)" in code


def test_the_loop_over_functions_is_written_out():
    code = srcad.source(srcad.grad(over_a_named_list))
    assert "xp.tanh(h)" in code and "xp.sin(h_2)" in code
    assert "acts" not in code.replace("# grad of", "")


def refused_defaults(x):
    return np.sum(apply(lambda t, s=2.0: t * s, x))


def refused_assigned(x):
    return np.sum(keeps(lambda t: t * 2, x))


def refused_sorted_key(x):
    return np.sum(sorted(list(x), key=lambda v: -v)[0])


def refused_along_axis(x):
    return np.sum(np.apply_along_axis(lambda r: r * 2, 0, x))


def refused_local_in_lambda(x):
    g = lambda t: t * 3  # noqa: E731
    return np.sum(apply(lambda t: g(t), x))


def refused_local_given_to_numpy(x):
    def doubled(r):
        return r * 2

    return np.sum(np.apply_along_axis(doubled, 0, x))


def refused_the_same_function_inside(x):
    # (the inner call is of the function being written out: taken for a recursion)
    return np.sum(apply(lambda t: apply(lambda u: u * t, t), x))


def refused_loop_variable_read_after(x):
    h = x
    for act in (np.tanh, relu):
        h = act(h)
    return np.sum(h) + np.sum(act(x))


@pytest.mark.parametrize(
    "f, message",
    [
        (refused_defaults, "a lambda with defaults"),
        (refused_assigned, "a lambda is given for 'f', which the function assigns"),
        (refused_sorted_key, "a lambda here is not supported yet"),
        (refused_along_axis, "a lambda here is not supported yet"),
        (refused_local_in_lambda, "reads the local function 'g'"),
        (refused_local_given_to_numpy, "the local function 'doubled' is given to a call"),
        (refused_loop_variable_read_after, "no adjoint rule for act"),
        (refused_the_same_function_inside, "a lambda here is not supported yet"),
    ],
    ids=lambda v: getattr(v, "__name__", "")[:40],
)
@pytest.mark.parametrize("order", [1, 2])
def test_refused_by_name(f, message, order):
    with pytest.raises(srcad.TransformError, match=message) as info:
        srcad.check_grad(f, X.copy(), modes=("rev",), order=order)
    assert "test_given_lambdas.py" in str(info.value)
