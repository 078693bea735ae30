"""Products: dot, matmul, outer, inner, einsum."""

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
