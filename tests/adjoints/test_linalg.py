"""Products: dot, matmul, outer, inner, einsum, tensordot, kron, cross."""

import numpy as np
import pytest
from opcheck import check, rand


@pytest.mark.parametrize(
    "sa, sb",
    [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((), (3,)), ((2, 3), ())],
)
def test_dot(sa, sb):
    check("np.dot(x, y)", rand(*sa), rand(*sb, seed=1))


def test_dot_method():
    check("x.dot(y)", rand(2, 3), rand(3, 2, seed=1))


def test_outer():
    check("np.outer(x, y)", rand(3), rand(4, seed=1))
    check("np.outer(x, y)", rand(2, 2), rand(3, seed=1))


@pytest.mark.parametrize(
    "sa, sb", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 4, 3), (3,)), ((3,), (2, 3))]
)
def test_inner(sa, sb):
    check("np.inner(x, y)", rand(*sa), rand(*sb, seed=1))


@pytest.mark.parametrize(
    "spec, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("ij->i", [(2, 3)]),
        ("ij->", [(2, 3)]),
        ("i,j->ij", [(2,), (3,)]),
        ("ij,ij", [(2, 3), (2, 3)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("i,jk->ijk", [(2,), (3, 4)]),
        ("ij,k->i", [(2, 3), (4,)]),
    ],
)
def test_einsum(spec, shapes):
    args = [rand(*s, seed=k) for k, s in enumerate(shapes)]
    names = ", ".join("xyz"[: len(args)])
    check(f"np.einsum({spec!r}, {names})", *args)


def test_einsum_same_operand_twice():
    check("np.einsum('ij,ij->', x, x)", rand(2, 3))


@pytest.mark.parametrize(
    "axes, sa, sb",
    [
        (2, (2, 3, 4), (3, 4, 2)),
        (1, (2, 3), (3, 4)),
        (0, (2,), (3,)),
        (3, (2, 3, 2), (2, 3, 2)),
        (([1, 0], [0, 2]), (2, 3, 4), (3, 5, 2)),
        ((0, 1), (3, 2), (4, 3)),
        (([2], [0]), (2, 3, 4), (4,)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tensordot(axes, sa, sb, dtype):
    x, y = rand(*sa).astype(dtype), rand(*sb, seed=1).astype(dtype)
    tol = {} if dtype == np.float64 else {"rtol": 1e-2, "atol": 1e-3}
    check(f"np.tensordot(x, y, {axes!r})", x, y, **tol)


def test_tensordot_default_axes():
    check("np.tensordot(x, y)", rand(2, 3, 4), rand(3, 4, 2, seed=1))


@pytest.mark.parametrize(
    "sa, sb", [((2, 3), (3, 2)), ((3,), (2, 2)), ((2, 2), (3,)), ((2,), (3,)), ((1, 2, 2), (2, 1))]
)
def test_kron(sa, sb):
    check("np.kron(x, y)", rand(*sa), rand(*sb, seed=1))


def test_kron_float32():
    check("np.kron(x, y)", rand(2, 2).astype(np.float32), rand(2, 3, seed=1).astype(np.float32),
          rtol=1e-2, atol=1e-3)  # fmt: skip


@pytest.mark.parametrize(
    "expr, sa, sb",
    [
        ("np.cross(x, y)", (3,), (3,)),
        ("np.cross(x, y)", (4, 3), (3,)),
        ("np.cross(x, y, axis=0)", (3, 2), (3, 2)),
        ("np.cross(x, y, axisa=0, axisc=0)", (3, 2), (2, 3)),
    ],
)
def test_cross(expr, sa, sb):
    check(expr, rand(*sa), rand(*sb, seed=1))


# ---- det at singular matrices: the cofactors, through the SVD (a LinAlgError from inv
# until stop 31); second derivatives there still go through inv ----

_Q = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]
_W = np.array([2.0, 0.5, -1.0])


def _det_diagonal(x):
    return np.linalg.det(np.diag(x))


def _det_rotated(x):
    return np.linalg.det(_Q @ np.diag(x) @ _Q.T)


def _det_rank_one(x):
    return np.linalg.det(np.outer(x, _W))


def _det_stack(x):
    return np.sum(np.linalg.det(np.stack([np.diag(x), np.diag(x) + np.eye(3)])) * [1.0, 2.0])


@pytest.mark.parametrize("f", [_det_diagonal, _det_rotated, _det_rank_one, _det_stack])
def test_det_at_singular_matrices(f):
    import srcad

    x = np.array([0.3, -0.7, 0.0])  # diag(x) singular: det = x0 x1 x2, gradient (0, 0, x0 x1)
    want = {
        _det_diagonal: [0.0, 0.0, -0.21],
        _det_rotated: [0.0, 0.0, -0.21],
        _det_rank_one: [0.0, 0.0, 0.0],  # singular for every x
        # and 2 det(diag(x) + I) = 2 (1.3)(0.3)(1.0): gradient 2 (0.3, 1.3, 0.39)
        _det_stack: [0.6, 2.6, -0.21 + 0.78],
    }[f]
    np.testing.assert_allclose(srcad.grad(f)(x), want, atol=1e-12)
    np.testing.assert_allclose(srcad.jacobian(f)(x), want, atol=1e-12)
    assert srcad.check_grad(f, x, modes=("rev", "fwd")) < 1e-6
