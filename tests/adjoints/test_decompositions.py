"""Ops with several results (slogdet, eigh, svd, the split family), unpacked into names,
against finite differences in both modes. Loss functions use only what the decomposition
determines (eigenvector signs are not: squares of their entries are)."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(11)


def spd(n, batch=()):
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def symmetric_distinct(n):
    q, _ = np.linalg.qr(RNG.normal(size=(n, n)))
    return q @ np.diag(np.arange(1.0, n + 1) * 1.7) @ q.T + 0.1 * RNG.normal(size=(n, n))


def slogdet_loss(a):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(logdet * sign)


def eigh_loss(a, c):
    w, v = np.linalg.eigh(a)
    return np.sum(w * c) + np.sum((v * v) @ c)


def eigh_values(a):
    w, v = np.linalg.eigh(a)
    return np.sum(np.sin(w))


def eigh_upper(a, c):
    w, v = np.linalg.eigh(a, "U")
    return np.sum(w**2 * c) + np.sum(v[0] ** 2)


def svd_loss(a, c):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s * c) + np.sum((u * u) @ c) + np.sum(c @ (vh * vh))


def svd_square(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(s**2) + np.sum((u[:, 0] * vh[0]) ** 2)


def split_loss(x):
    a, b, c = np.split(x, 3, axis=1)
    return np.sum(a * b * 2.0) + np.sum(np.sin(c))


def array_split_loss(x):
    a, b = np.array_split(x, [2])
    return np.sum(a**2) - np.sum(b**3)


def hsplit_loss(x):
    a, b = np.hsplit(x, 2)
    return np.sum(a * np.cos(b))


def vsplit_loss(x):
    a, b = np.vsplit(x, [1])
    return np.sum(np.tanh(a)) + np.sum(b * b)


def dsplit_loss(x):
    a, b = np.dsplit(x, 2)
    return np.sum(a * b)


def one_piece_unused(x):
    a, b = np.split(x, 2)
    return np.sum(b**2)


CASES = [
    (slogdet_loss, (spd(3),)),
    (slogdet_loss, (spd(2, (4,)),)),
    (slogdet_loss, (-spd(3),)),
    (eigh_loss, (symmetric_distinct(4), RNG.normal(size=4))),
    (eigh_values, (symmetric_distinct(3),)),
    (eigh_upper, (symmetric_distinct(3), RNG.normal(size=3))),
    (svd_loss, (RNG.normal(size=(5, 3)), RNG.normal(size=3))),
    (svd_loss, (RNG.normal(size=(3, 5)), RNG.normal(size=3))),
    (svd_square, (RNG.normal(size=(4, 4)),)),
    (split_loss, (RNG.normal(size=(2, 6)),)),
    (array_split_loss, (RNG.normal(size=5),)),
    (hsplit_loss, (RNG.normal(size=(3, 4)),)),
    (vsplit_loss, (RNG.normal(size=(3, 2)),)),
    (dsplit_loss, (RNG.normal(size=(2, 2, 4)),)),
    (one_piece_unused, (RNG.normal(size=4),)),
]


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_both_modes_against_finite_differences(f, args):
    wrt = tuple(k for k, a in enumerate(args) if k == 0)
    assert srcad.check_grad(f, *args, wrt=wrt, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6) < 1e-4


def test_eigh_reads_one_triangle_as_numpy_does():
    a = symmetric_distinct(3)
    c = RNG.normal(size=3)
    g = srcad.grad(eigh_loss)(a, c)
    assert np.all(np.triu(g, 1) == 0)  # numpy's eigh never reads the upper triangle


def test_slogdet_gradient_is_the_inverse_transpose():
    a = spd(3)
    np.testing.assert_allclose(srcad.grad(slogdet_loss)(a), np.linalg.inv(a).T, rtol=1e-12)


def full_svd(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(s)


def single_result(x):
    pieces = np.split(x, 2)
    return np.sum(pieces[0])


def test_what_is_refused_is_refused_clearly():
    with pytest.raises(ValueError, match="reduced SVD"):
        srcad.grad(full_svd)(RNG.normal(size=(4, 3)))


def test_a_name_holding_the_pieces_read_by_index():
    # (refused until issue #17: "unpack them"): one name per piece
    np.testing.assert_allclose(srcad.grad(single_result)(np.ones(4)), [1.0, 1.0, 0.0, 0.0])
    srcad.check_grad(single_result, RNG.normal(size=4), modes=("rev", "fwd"))


# ---- equal (tied) eigenvalues and singular values, and zero singular values: the vectors'
# derivatives are undefined there, but a loss that does not read the tied vectors has a
# gradient (NaN until stop 31 in reverse mode: 0 * inf) ----

W3 = np.array([2.0, 0.5, -1.0])


def eigh_tied_values(x):
    # eigenvalues 1, 1, 1 + |x|^2 (ascending)
    return np.sum(np.linalg.eigh(np.outer(x, x) + np.eye(3))[0] * W3)


def eigh_tied_values_named(x):
    w, v = np.linalg.eigh(np.outer(x, x) + np.eye(3))
    return np.sum(w * W3)


def eigh_exact_ties(x):
    # eigenvalues x[0], x[0], x[2] exactly (x[0] < x[2] below)
    return np.sum(np.linalg.eigh(np.diag(x[np.array([0, 0, 2])]))[0] * W3)


def eigh_untied_vector(x):
    # the top eigenvector, x / |x|, is unique though the other two eigenvalues tie
    w, v = np.linalg.eigh(np.outer(x, x) + np.eye(3))
    return np.sum(v[:, 2] ** 2 * W3) + w[2]


def eigh_tied_vector(x):
    # eigenvalues x[0], x[0], x[2] exactly: any basis of the first two is one of
    # eigenvectors, so that v's derivative with respect to the matrix is undefined
    w, v = np.linalg.eigh(np.diag(x[np.array([0, 0, 2])]))
    return np.sum(v[:, 0])


def svd_tied_values(x):
    # singular values 1 + |x|^2, 1, 1 (descending)
    return np.sum(np.linalg.svd(np.outer(x, x) + np.eye(3))[1] * W3)


def svd_zero_values(x):
    # of a rank-one matrix: |x|^2, 0, 0
    u, s, vh = np.linalg.svd(np.outer(x, x))
    return np.sum(s * W3)


def eig_tied_values(x):
    w, v = np.linalg.eig(np.outer(x, x) + np.eye(3))
    return np.sum(w**2)


TIED = [
    (eigh_tied_values, lambda x: 2 * W3[2] * x),
    (eigh_tied_values_named, lambda x: 2 * W3[2] * x),
    (eigh_exact_ties, lambda x: np.array([W3[0] + W3[1], 0.0, W3[2]])),
    (svd_tied_values, lambda x: 2 * W3[0] * x),
    (svd_zero_values, lambda x: 2 * W3[0] * x),
    (eig_tied_values, lambda x: 4 * (1 + x @ x) * x),
]


@pytest.mark.parametrize("f, grad", TIED, ids=lambda v: getattr(v, "__name__", ""))
def test_values_at_ties_have_their_closed_form_gradient(f, grad):
    # (second derivatives there depend on the direction: undefined in general)
    x = np.array([0.3, -0.7, 1.1])
    for mode in ("rev", "fwd"):
        with np.errstate(all="ignore"):  # forward mode's tangents of the unread vectors
            g = srcad.grad(f)(x) if mode == "rev" else srcad.jacobian(f)(x)
        np.testing.assert_allclose(g, grad(x), rtol=1e-9, atol=1e-12, err_msg=mode)


def test_a_vector_not_tied_has_its_gradient_beside_tied_ones():
    x = np.array([0.3, -0.7, 1.1])
    assert srcad.check_grad(eigh_untied_vector, x, modes=("rev", "fwd")) < 1e-6


def test_a_tied_vector_read_gives_nan_not_a_number_made_up():
    with np.errstate(all="ignore"):
        g = srcad.grad(eigh_tied_vector)(np.array([0.3, -0.7, 1.1]))
    assert np.isnan(g[0])


# ---- a split's piece picked by a number known only at run time (#17: refused until stop
# 31), and its pieces held by a name read by any index or looped over ----


def piece_by_counter(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.split(x, 3)[k] ** 2) * (k + 1)
    return s


def piece_by_argument(x, k):
    return np.sum(np.split(x, 3)[k] * np.cos(x[:2]))


def pieces_counted_at_run_time(x, n):
    return np.sum(np.split(x, n)[-1] ** 3)


def uneven_pieces_on_an_axis(x):
    s = 0.0
    for k in range(2):
        s = s + np.sum(np.array_split(np.outer(x, x[:3]), 2, axis=1)[k] ** 2) * (k + 1)
    return s


def hsplit_and_vsplit_pieces(x):
    a = np.outer(x, x[:4])
    s = 0.0
    for k in range(2):
        s = s + np.sum(np.hsplit(a, 2)[k] * k) + np.sum(np.vsplit(a, [2])[k] ** 2)
    return s


def pieces_held_by_a_name(x):
    parts = np.split(x, 3)
    s = 0.0
    for k in range(3):
        s = s + np.sum(parts[k] ** 2) * (k + 1)
    return s


def pieces_looped_over(x):
    s = 0.0
    for k, p in enumerate(np.split(x, 3)):
        s = s + np.sum(p**2) * k
    for p, q in zip(np.split(x, 2), np.split(x * x, 2)):
        s = s + np.sum(p * q)
    return s


PIECES = [
    (piece_by_counter, ()),
    (piece_by_argument, (1,)),
    (pieces_counted_at_run_time, (2,)),
    (uneven_pieces_on_an_axis, ()),
    (hsplit_and_vsplit_pieces, ()),
    (pieces_held_by_a_name, ()),
    (pieces_looped_over, ()),
]


@pytest.mark.parametrize("f, more", PIECES, ids=lambda v: getattr(v, "__name__", ""))
def test_pieces_picked_at_run_time_against_finite_differences(f, more):
    x = np.linspace(-1.0, 1.0, 6) + 0.1
    for order in (1, 2):
        assert srcad.check_grad(f, x, *more, wrt=0, modes=("rev", "fwd"), order=order) < 1e-6


def test_the_gradient_of_a_piece_is_zero_outside_it():
    g = srcad.grad(piece_by_argument)(np.linspace(-1.0, 1.0, 6), 2)
    np.testing.assert_array_equal(g[2:4], 0.0)  # (x[:2] scales the piece x[4:])
    assert np.all(g[4:] != 0.0)
