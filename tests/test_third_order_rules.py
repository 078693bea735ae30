"""Third derivatives through every family of rules (#17): derivative code calls srcad's
runtime helpers, and a third derivative differentiates those calls again, so each helper's
own rules are checked here, in float64, against central differences of the next-lower
derivative.

For each op, ``f = sum(W * op(...) ** 3)`` (W a fixed random weighting; the cube makes the
gradient flowing into every rule vary, so that even a linear op's helpers carry varying
values) and ``srcad.jvp(srcad.hessian(f), x, v)`` is compared with differences of
``srcad.hessian(f)`` along ``v``. The hessian is forward over reverse, so this reaches the
tangent rules of what the reverse code calls (and theirs). The adjoint rules, and the
tangent terms along a helper's direction argument, are reached by
``D(x) = sum(V * jvp(grad f)(x; U * x))`` (its direction varies with ``x``): ``grad(D)``
and ``jvp(D)`` against differences of ``D``; and by ``grad(grad(grad f . V) . U)``.
The rules of srcad's einsum product-rule terms are also checked one by one, as ops.
"""

import numpy as np
import pytest
from opcheck import check_jvp, check_second_order, make_function, rand, with_returns

import srcad
from srcad.runtime.einsums import (
    einsum_replaced,
    grad_einsum_general_replacing,
    grad_einsum_replaced,
)
from srcad.runtime.higher import einsum_replacing_two, grad_einsum_replacing
from srcad.testing import numerical_grad

scipy = pytest.importorskip("scipy")

EPS = 1e-5
PARAMS = "xyzuvw"
POS = dict(low=0.5, high=2.0)


def spd(n, seed=0):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def sym_distinct(n, seed=0):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return q @ np.diag(np.arange(1.0, n + 1) * 1.7) @ q.T


# (id, expression of x, y, ..., arguments): one or more ops of each family of rules, and
# each op whose derivative code calls a helper of srcad.runtime (named where not obvious)
CASES = [
    # ---- arithmetic and broadcasting (unbroadcast, spread_like) ----
    ("arithmetic", "x * y / (1.5 + y * y) - x ** 3 + 2.0 ** x", (rand(3), rand(3, seed=1))),
    ("broadcast", "x * y - y / (2.0 + x)", (rand(2, 3), rand(3, seed=1))),
    ("power-both", "x ** y", (rand(3, **POS), rand(3, seed=1))),
    # ---- elementwise (partials): many in one, and the ones with helpers ----
    (
        "elementwise",
        "np.sin(x) * np.exp(-x * x) + np.log1p(x * x) + np.tanh(x) / np.cosh(x) "
        "+ np.arctan(x) + np.sqrt(2.0 + x) + np.cbrt(3.0 + x) + np.expm1(x) * np.cos(x)",
        (rand(4),),
    ),
    ("sinc", "np.sinc(x)", (rand(4),)),
    ("abs-sign", "np.abs(x) * np.sign(x) + np.abs(x) ** 1.5", (rand(4),)),
    ("arctan2-hypot", "np.arctan2(x, y) + np.hypot(x, y)", (rand(3), rand(3, seed=1))),
    ("logaddexp", "np.logaddexp(x, y)", (rand(3), rand(3, seed=1))),
    (
        "maximum-where-clip",
        "np.maximum(x, y) + np.where(x > 0, x * y, y) + np.clip(x, -1, 1)",
        (rand(4), rand(4, seed=3)),
    ),  # fmt: skip
    # ---- reductions (unreduce, reduce_like, keep_reduced, prod_others, extremum_share) ----
    ("sum-axis", "np.sum(x, axis=0)", (rand(2, 3),)),
    ("sum-axis-1d", "np.sum(x, 0)", (rand(3),)),
    ("mean-keepdims", "np.mean(x, axis=(0, 2), keepdims=True)", (rand(2, 2, 2),)),
    ("prod", "np.prod(x, axis=1)", (rand(2, 3, **POS),)),
    ("max", "np.max(x, axis=1) + np.min(x)", (rand(2, 3),)),
    ("var-std", "np.var(x, axis=1) + np.std(x)", (rand(2, 3),)),
    ("cumsum-cumprod", "np.cumsum(x * y) + np.cumprod(x)", (rand(4, **POS), rand(4, seed=1))),
    ("logsumexp", "scipy.special.logsumexp(x, axis=1)", (rand(2, 3),)),
    # ---- shape (unconcatenate, unstack, restack, unjoined, untile, unrepeat, unpad) ----
    ("reshape-transpose", "np.reshape(x, (3, 2)).T * x", (rand(2, 3),)),
    ("concatenate", "np.concatenate([x, y * x])", (rand(3), rand(3, seed=1))),
    ("stack", "np.stack([x, y, x * y], axis=-1)", (rand(3), rand(3, seed=1))),
    ("vstack", "np.vstack([x, y]) * np.hstack([y, x])[:3]", (rand(3), rand(3, seed=1))),
    ("split", "np.split(x, 2)[1] * np.split(x, 2)[0]", (rand(6),)),
    ("tile-repeat", "np.tile(x, 2) * np.repeat(x, 2)", (rand(3),)),
    ("pad-flip-roll", "np.pad(x, 1) * np.roll(np.flip(np.pad(x, 1)), 1)", (rand(3),)),
    ("broadcast_to", "np.broadcast_to(x, (2, 3)) * np.expand_dims(x, 0)", (rand(3),)),
    ("diag", "np.diag(x) @ np.diag(y)", (rand(3), rand(3, seed=1))),
    # ---- indexing (add_at, untake, unsort, along_axis_index) ----
    ("getitem", "x[1:, ::2] * x[0, 0]", (rand(3, 4),)),
    ("fancy-repeats", "x[np.array([0, 2, 2, 1])]", (rand(4),)),
    ("take", "np.take(x, [2, 0, 2])", (rand(4),)),
    (
        "take_along_axis",
        "np.take_along_axis(x, np.array([[0, 0], [1, 0]]), axis=1)",
        (rand(2, 3),),
    ),  # fmt: skip
    ("sort-partition", "np.sort(x) * np.partition(x, 2)", (rand(5),)),
    ("mask", "x[x > 0] ** 2", (rand(5, seed=2),)),
    # ---- products (grad_matmul_*, grad_dot_*, grad_inner_*, einsum helpers) ----
    ("matmul", "x @ y", (rand(2, 3), rand(3, 2, seed=1))),
    ("matmul-stacked-1d", "x @ y", (rand(2, 2, 3), rand(3, seed=1))),
    (
        "dot-inner-outer",
        "np.dot(x, y) * np.inner(y, y) + np.outer(x, y)",
        (rand(3), rand(3, seed=1)),
    ),  # fmt: skip
    ("einsum", "np.einsum('ij,jk->ik', x, y)", (rand(2, 3), rand(3, 2, seed=1))),
    (
        "einsum-three",
        "np.einsum('ij,jk,k->i', x, y, z)",
        (rand(2, 3), rand(3, 2, seed=1), rand(2, seed=2)),
    ),  # fmt: skip
    (
        "einsum-ellipsis",
        "np.einsum('...ij,jk->...ik', x, y)",
        (rand(2, 2, 3), rand(3, 2, seed=1)),
    ),  # fmt: skip
    ("einsum-diagonal", "np.einsum('ii,ij->j', x, y)", (rand(3, 3), rand(3, 2, seed=1))),
    ("einsum-broadcast", "np.einsum('ij,ij->i', x, y)", (rand(2, 3), rand(1, 3, seed=1))),
    ("multi_dot", "np.linalg.multi_dot([x, y, x.T])", (rand(2, 3), rand(3, 3, seed=1))),
    (
        "tensordot-kron-cross",
        "np.tensordot(x, y, axes=1) + np.kron(x[0], y[:, 0])[:2] + np.cross(x[0], y[:, 0])[:2]",
        (rand(2, 3), rand(3, 2, seed=1)),
    ),  # fmt: skip
    # ---- linear algebra (grad_solve_*, decompositions) ----
    ("solve", "np.linalg.solve(x, y)", (spd(3), rand(3, seed=1))),
    ("inv-det", "np.linalg.inv(x) * np.linalg.det(x)", (spd(3),)),
    ("slogdet", "np.linalg.slogdet(x)[1]", (spd(3),)),
    ("cholesky", "np.linalg.cholesky(x)", (spd(3),)),
    ("eigh", "np.linalg.eigh(x)[1] * np.linalg.eigh(x)[0]", (sym_distinct(3),)),
    (
        "svd",
        "np.linalg.svd(x, full_matrices=False)[0] * np.linalg.svdvals(x)",
        (rand(4, 3),),
    ),  # fmt: skip
    ("qr", "np.linalg.qr(x)[1]", (rand(4, 3),)),
    ("pinv", "np.linalg.pinv(x)", (rand(4, 3),)),
    ("matrix_power-trace", "np.linalg.matrix_power(x, 3) * np.trace(x @ x)", (rand(2, 2),)),
    ("norm-2-any-order", "np.linalg.norm(x, axis=0) + np.linalg.norm(x)", (rand(3, 2),)),
    (
        "norm-2-vector",
        "np.linalg.norm(x, 2) * np.linalg.norm(y, 2, axis=1)",
        (rand(3), rand(2, 3, seed=1)),
    ),
    (
        "norm-p-vector",
        "np.linalg.norm(x, 3) + np.linalg.vector_norm(y, ord=1.5, axis=1) "
        "+ np.linalg.norm(x, -0.5)",
        (rand(3), rand(2, 3, seed=1)),
    ),
    (
        "norm-matrix-1-inf",
        "np.linalg.norm(y, 1) + np.linalg.matrix_norm(y, ord=np.inf) + x",
        (rand(3), rand(3, 3, seed=1)),
    ),
    (
        "solve_triangular",
        "scipy.linalg.solve_triangular(x, y)",
        (np.triu(rand(3, 3)) + 3 * np.eye(3), rand(3, seed=1)),
    ),  # fmt: skip
    # ---- complex values inside (abs_slope and its own derivatives, fit_to, fft) ----
    ("abs-of-fft", "np.abs(np.fft.fft(x))", (rand(5),)),
    ("abs-of-complex", "np.abs(np.exp(1j * x) * x * y)", (rand(4), rand(4, seed=1))),
    ("rfft-irfft", "np.fft.irfft(np.fft.rfft(x) * y)", (rand(6), rand(4, seed=1))),
    (
        "angle-sign-real-imag",
        "np.angle(x + 1j * y) + np.real(np.sign(x + 1j * y)) + np.imag(np.sqrt(x + 1j * y))",
        (rand(3), rand(3, seed=1)),
    ),  # fmt: skip
    ("vector-norm-complex", "np.linalg.vector_norm(x + 1j * y)", (rand(3), rand(3, seed=1))),
    # ---- numeric and SciPy ----
    (
        "convolve-correlate",
        "np.convolve(x, y) + np.correlate(x, y, 'full')",
        (rand(4), rand(3, seed=1)),
    ),  # fmt: skip
    ("interp", "np.interp(x, np.array([-2.0, 0.0, 2.0]), y)", (rand(4), rand(3, seed=1))),
    ("polyval-diff", "np.polyval(y, x) * np.diff(x)[0]", (rand(4), rand(3, seed=1))),
    (
        "expit-gammaln-erf",
        "scipy.special.expit(x) * scipy.special.gammaln(2.0 + x) + scipy.special.erf(x)",
        (rand(4),),
    ),  # fmt: skip
    ("norm-logpdf", "scipy.stats.norm.logpdf(x, y, 1.5)", (rand(3), rand(3, seed=1))),
]


def _weights(out, seed):
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=np.shape(out))


def _cubed(expr, args):
    """``f = sum(W * (expr) ** 3)`` over the arguments, W fixed for ``expr``."""
    params = ", ".join(PARAMS[: len(args)])
    weights = _weights(make_function(expr, params)(*args), len(expr))
    return make_function(f"np.sum(W3 * ({expr}) ** 3)", params, {"W3": weights})


def _cubed_function(probe, args):
    """:func:`_cubed` for a function with statements: its own source, each ``return v``
    made ``return sum(W * v ** 3)`` (what is differentiated is its statements)."""
    weights = _weights(probe(*args), 3)
    return with_returns(probe, "np.sum(W3 * ({}) ** 3)", {"W3": weights})


def _floats(args):
    return tuple(k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f")


def _directions(args, wrt, seed):
    rng = np.random.default_rng(seed)
    return tuple(
        rng.uniform(-1.0, 1.0, size=np.shape(a)) if k in wrt else None for k, a in enumerate(args)
    )


def _moved(args, v, eps):
    return tuple(a if t is None else a + eps * t for a, t in zip(args, v))


def _close(what, analytic, numeric):
    analytic, numeric = np.asarray(analytic, float), np.asarray(numeric, float)
    assert analytic.shape == numeric.shape, f"{what}: shape {analytic.shape}, {numeric.shape}"
    scale = max(1.0, float(np.max(np.abs(numeric)))) if numeric.size else 1.0
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6 * scale, err_msg=what)


def check_jvp_of_hessian(f, args):
    """``jvp(hessian(f))`` along a random ``v`` against differences of the hessian."""
    wrt = _floats(args)
    v = _directions(args, wrt, 5)
    hessian = srcad.hessian(f, wrt=wrt)
    _, third = srcad.jvp(hessian, args, v)
    up, down = hessian(*_moved(args, v, EPS)), hessian(*_moved(args, v, -EPS))
    blocks = zip(*(srcad.pytree.flatten(t)[0] for t in (third, up, down)))
    for k, (analytic, a, b) in enumerate(blocks):
        _close(
            f"third derivative, block {k}", analytic, (np.asarray(a) - np.asarray(b)) / (2 * EPS)
        )


def _names(args, wrt):
    params = PARAMS[: len(args)]
    return ", ".join(params), [params[k] for k in wrt]


def check_along_varying_directions(f, args):
    """``grad`` and ``jvp`` of ``D(x) = sum_k V_k * jvp(grad_k f)(x; U * x)``."""
    wrt = _floats(args)
    params, names = _names(args, wrt)
    rng = np.random.default_rng(7)
    space = {"srcad": srcad}
    lines, terms = [], []
    tangents = ", ".join(f"U{k} * {PARAMS[k]}" if k in wrt else "None" for k in range(len(args)))
    for k in wrt:
        space[f"U{k}"] = rng.uniform(-1.0, 1.0, size=np.shape(args[k]))
        space[f"V{k}"] = rng.uniform(-1.0, 1.0, size=np.shape(args[k]))
        space[f"GRAD{k}"] = srcad.grad(f, wrt=k)
        lines.append(f"G{k}, T{k} = srcad.jvp(GRAD{k}, ({params},), ({tangents},))")
        terms.append(f"np.sum(V{k} * T{k})")
    d = make_function(" + ".join(terms), params, space, before="; ".join(lines))
    by_reverse = srcad.grad(d, wrt=wrt)(*args)
    for j, k in enumerate(wrt):
        _close(f"reverse over forward over reverse, argument {k}", by_reverse[j],
               numerical_grad(d, args, k, 1e-6))  # fmt: skip
    v = _directions(args, wrt, 11)
    _, by_forward = srcad.jvp(d, args, v)
    numeric = (d(*_moved(args, v, EPS)) - d(*_moved(args, v, -EPS))) / (2 * EPS)
    _close("forward over forward over reverse", by_forward, numeric)


def check_reverse_three_times(f, args):
    """``grad(x -> sum(U * grad(x -> sum(V * grad(f)(x)))(x)))`` against differences."""
    wrt = _floats(args)
    params, names = _names(args, wrt)
    rng = np.random.default_rng(9)
    space = {f"{c}{k}": rng.uniform(-1.0, 1.0, size=np.shape(args[k])) for k in wrt for c in "UV"}
    single = wrt[0] if len(wrt) == 1 else wrt
    results = ", ".join(f"T{k}" for k in wrt)
    space["GRAD"] = srcad.grad(f, wrt=single)
    h = make_function(" + ".join(f"np.sum(V{k} * T{k})" for k in wrt), params, space,
                      before=f"{results} = GRAD({params})")  # fmt: skip
    space["GRAD2"] = srcad.grad(h, wrt=single)
    k3 = make_function(" + ".join(f"np.sum(U{k} * T{k})" for k in wrt), params, space,
                       before=f"{results} = GRAD2({params})")  # fmt: skip
    by_reverse = srcad.grad(k3, wrt=wrt)(*args)
    for j, k in enumerate(wrt):
        _close(f"reverse over reverse over reverse, argument {k}", by_reverse[j],
               numerical_grad(k3, args, k, 1e-6))  # fmt: skip


@pytest.mark.parametrize("expr, args", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_jvp_of_hessian(expr, args):
    check_jvp_of_hessian(_cubed(expr, args), args)


# the other two orders for every fourth case (deterministic, for time), and the cases
# whose helpers had wrong or missing rules
ONCE_WRONG = ("sum-axis", "stack", "einsum-three", "abs-of-fft", "abs-of-complex")
VARYING = [c for k, c in enumerate(CASES) if k % 4 == 0 and c[0] not in ONCE_WRONG] + [
    c for c in CASES if c[0] in ONCE_WRONG
]


@pytest.mark.parametrize("expr, args", [c[1:] for c in VARYING], ids=[c[0] for c in VARYING])
def test_along_varying_directions_and_reverse_three_times(expr, args):
    f = _cubed(expr, args)
    check_along_varying_directions(f, args)
    check_reverse_three_times(f, args)


# ---- statements: in-place updates (saved, zeroed, surviving, scatter), loops, lists ----


def set_element(x, v):
    y = x * 2.0
    y[0] = v * 3.0
    return y * y


def add_to_slice(x, v):
    y = np.sin(x)
    y[1:3] += v
    return y


def overwritten(x):
    y = np.tanh(x)
    y[0] = 5.0
    return y * x


def repeated_index(x):
    y = x * 1.0
    y[np.array([0, 2, 0])] = x[:3] ** 2
    return y * x


def loop_with_updates(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * (i + 1.0)
    return out * x


def while_loop(x):
    y = x * 1.0
    k = 0
    while np.sum(y * y) < 40.0:
        y = y * 1.5 + np.sin(y)
        k = k + 1
    return y


def appended(x, y):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0) + y)
    return np.stack(parts, axis=1)


def list_items(x, y):
    items = [x, np.sin(y), x * y]
    return items[0] * items[2] + items[-2]


def list_read_in_a_loop(x):
    items = []
    for i in range(3):
        items.append(np.sin(x * (i + 1.0)))
    s = x * 0.0
    for i in range(3):
        s = s + items[i] * items[i][0]
    return s


def put_and_add_at(x):
    y = np.zeros(5)
    np.put(y, [0, 3], x[:2] * x[1:3])
    np.add.at(y, [1, 1, 4], x[:3])
    return y * np.sum(x)


STATEMENTS = [
    (set_element, (rand(4), 0.7)),
    (add_to_slice, (rand(4), rand(2, seed=1))),
    (overwritten, (rand(3),)),
    (repeated_index, (rand(4),)),
    (loop_with_updates, (rand(4),)),
    (while_loop, (rand(3) + 1.0,)),
    (appended, (rand(3), rand(3, seed=1))),
    (list_items, (rand(3), rand(3, seed=1))),
    (list_read_in_a_loop, (rand(3),)),
    (put_and_add_at, (rand(4),)),
]


@pytest.mark.parametrize("probe, args", STATEMENTS, ids=[p.__name__ for p, _ in STATEMENTS])
def test_jvp_of_hessian_of_statements(probe, args):
    check_jvp_of_hessian(_cubed_function(probe, args), args)


@pytest.mark.parametrize("probe, args", STATEMENTS, ids=[p.__name__ for p, _ in STATEMENTS])
def test_statements_along_varying_directions(probe, args):
    check_along_varying_directions(_cubed_function(probe, args), args)


# (Reverse mode three times over a list gradient carried through a loop failed: the zero
# of a list name before its first assignment, ``zeros_like(None)``, is 0.0, which went on a
# tape that add_gradients then read as a list; a zero number is zero there now (#17).
# Reverse three times over an update in place was
# silently wrong: a restore of a written-out callee, ``_t9 = scatter_1(y, 0, v)``, updated
# ``y`` in place under a second name; restores differentiated again are now ``scattered``,
# a new value.)
KNOWN_BAD: dict[str, str] = {}


@pytest.mark.parametrize(
    "probe, args",
    [
        pytest.param(
            p, a, id=p.__name__, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BAD[p.__name__])
        )
        if p.__name__ in KNOWN_BAD
        else pytest.param(p, a, id=p.__name__)
        for p, a in STATEMENTS
    ],
)
def test_statements_reverse_three_times(probe, args):
    check_reverse_three_times(_cubed_function(probe, args), args)


# ---- the einsum product-rule terms, as ops: first and second order in both modes ----

EINSUM_HELPERS = {
    "einsum_replaced": einsum_replaced,
    "grad_einsum_replaced": grad_einsum_replaced,
    "grad_einsum_general_replacing": grad_einsum_general_replacing,
    "grad_einsum_replacing": grad_einsum_replacing,
    "einsum_replacing_two": einsum_replacing_two,
}

HELPER_CASES = [
    ("grad_einsum_replacing('ij,jk->ik', x, (y, z), 0, 1, u)",
     (rand(2, 2), rand(2, 3, seed=1), rand(3, 2, seed=2), rand(3, 2, seed=3))),
    ("grad_einsum_replacing('ij,jk->ik', x, (y, z), 1, 0, u)",
     (rand(2, 2), rand(2, 3, seed=1), rand(3, 2, seed=2), rand(2, 3, seed=3))),
    ("grad_einsum_general_replacing('...j,jk->...k', x, (y, z), 0, 1, u)",
     (rand(4, 2, 2), rand(4, 2, 3, seed=1), rand(3, 2, seed=2), rand(3, 2, seed=3))),
    ("grad_einsum_general_replacing('ii,ij->j', x, (y, z), 0, 1, u)",
     (rand(3), rand(3, 3, seed=1), rand(3, 3, seed=2), rand(3, 3, seed=3))),
    ("einsum_replacing_two('ij,jk,k->i', (x, y, z), 0, u, 2, v)",
     (rand(2, 3), rand(3, 2, seed=1), rand(2, seed=2), rand(2, 3, seed=3), rand(2, seed=4))),
    ("einsum_replaced('ij,jk,k->i', (0, 3, 1), x, y, z, u, v, w)",
     (rand(2, 3), rand(3, 2, seed=1), rand(2, seed=2), rand(2, 3, seed=3),
      rand(2, 3, seed=4), rand(3, 2, seed=5))),
    ("grad_einsum_replaced('ij,jk,k->i', x, 1, (0, 2), y, z, u, v, w)",
     (rand(2), rand(2, 3, seed=1), rand(3, 2, seed=2), rand(2, seed=3),
      rand(2, 3, seed=4), rand(2, seed=5))),
    ("grad_einsum_replaced('ij,jk,k->i', x, 4, (0, 2), y, z, u, v, w)",
     (rand(2), rand(2, 3, seed=1), rand(3, 2, seed=2), rand(2, seed=3),
      rand(2, 3, seed=4), rand(2, seed=5))),
]  # fmt: skip


@pytest.mark.parametrize("expr, args", HELPER_CASES, ids=[e.split("(")[0] for e, _ in HELPER_CASES])
def test_einsum_helper_rules(expr, args):
    params = ", ".join(PARAMS[: len(args)])
    probe = make_function(expr, params, EINSUM_HELPERS)
    wrt = tuple(range(len(args)))
    check_jvp(probe, args, wrt)
    weights = _weights(probe(*args), 3)
    f = make_function(f"np.sum(W * ({expr}))", params, {**EINSUM_HELPERS, "W": weights})
    srcad.check_grad(f, *args, wrt=wrt, modes=("rev", "fwd"))
    square = make_function(f"np.sum(W * ({expr}) ** 2)", params, {**EINSUM_HELPERS, "W": weights})
    check_second_order(square, probe, weights, args, wrt)


@pytest.mark.parametrize(
    "expr",
    [
        "grad_einsum_replacing('ij,jk->ik', x, (y, z), 0, 0, u)",  # i == j: no such term
        "einsum_replacing_two('ij,jk->ik', (y, z), 0, u, 0, u)",
        "einsum_replaced('ij,jk->ik', (0, 0), y, z, u, u)",  # operand 0 replaced already
        "grad_einsum_replaced('ij,jk->ik', x, 2, (0, 2), y, z, u, u)",
    ],
)
def test_einsum_terms_that_do_not_exist_are_zeros_of_their_shape(expr):
    args = (rand(2, 2), rand(2, 3, seed=1), rand(3, 2, seed=2), rand(2, 3, seed=3))
    probe = make_function(expr, "x, y, z, u", EINSUM_HELPERS)
    out = probe(*args)
    assert np.all(out == 0) and np.shape(out) in ((2, 2), (2, 3), (3, 2))


def einsum_three(a, b, c):
    return np.sum(np.sin(np.einsum("ij,jk,k->i", a, b, c)))


def test_fourth_derivative_of_an_einsum():
    # a fourth level differentiates einsum_replaced's rules again (jacobian of jacobian of
    # hessian), along a direction, against differences of the third derivative
    args = (rand(2, 3), rand(3, 2, seed=1), rand(2, seed=2))
    third = srcad.jacobian(srcad.hessian(einsum_three, wrt=1), wrt=1)
    fourth = srcad.jacobian(third, wrt=1)(*args)
    v = np.random.default_rng(4).uniform(-1.0, 1.0, size=(3, 2))
    up = third(args[0], args[1] + 1e-4 * v, args[2])
    down = third(args[0], args[1] - 1e-4 * v, args[2])
    _close("fourth derivative", np.tensordot(fourth, v, axes=2), (up - down) / 2e-4)
    assert np.max(np.abs(fourth)) > 0.1


# ---- norms of singular values (singular_slope, its rules written with svd): all three
# checks, on matrices whose singular values are well apart (the norms' second derivatives
# divide by their differences) ----


def separated(*shape, seed=0):
    """Matrices (the last two axes) with singular values 1.5, 2.5, ... times a random
    rotation on each side."""
    rng = np.random.default_rng(seed)
    m, n = shape[-2:]
    k = min(m, n)
    out = np.empty(shape)
    for index in np.ndindex(*shape[:-2]):
        u, _ = np.linalg.qr(rng.normal(size=(m, m)))
        v, _ = np.linalg.qr(rng.normal(size=(n, n)))
        out[index] = (u[:, :k] * (np.arange(k, 0, -1) + 0.5)) @ v[:, :k].T
    return out


SINGULAR_NORMS = [
    ("nuc-2", "np.linalg.norm(x, 'nuc') * np.linalg.norm(x, 2)", (separated(3, 3),)),
    ("tall-minus-2", "np.linalg.norm(x, -2) + np.linalg.norm(x, 'nuc')", (separated(4, 3),)),
    (
        "matrix_norm-stacked-wide",
        "np.linalg.matrix_norm(x, ord=-2) * np.linalg.matrix_norm(x, ord=2) + y",
        (separated(2, 2, 3, seed=1), rand(2, seed=2)),
    ),
    (
        "norm-axes",
        "np.linalg.norm(x, 'nuc', axis=(0, 2))",
        (np.moveaxis(separated(2, 3, 3, seed=3), 0, 1),),
    ),
]


@pytest.mark.parametrize(
    "expr, args", [c[1:] for c in SINGULAR_NORMS], ids=[c[0] for c in SINGULAR_NORMS]
)
def test_third_derivatives_of_singular_value_norms(expr, args):
    f = _cubed(expr, args)
    check_jvp_of_hessian(f, args)
    check_along_varying_directions(f, args)
    check_reverse_three_times(f, args)
