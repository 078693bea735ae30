"""Unpacking arrays into names (``a, b, c = x``, ``for a, b in X``, ``enumerate(zip(...))``),
picking one result of an op with several (``np.linalg.slogdet(A)[1]``, ``.eigenvalues``,
``np.split(x, 3)[k]``), and ``+=`` on a name holding a Python number."""

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(17)
X3 = np.array([0.3, -0.7, 1.1])


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def spd(n):
    a = RNG.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def check(f, *args, wrt=0, order=1):
    """Reverse and forward mode against central finite differences."""
    srcad.check_grad(f, *args, wrt=wrt, modes=("fwd", "rev"), order=order)


# ---- unpacking an array into names ----


def three(x):
    a, b, c = x
    return a * b**2 + np.sin(c) * a**3


def rows(X):
    top, bottom = X
    return np.sum(top * bottom**2 + np.exp(top))


def nested(x):
    a, (b, c) = x[0], x[1:]
    return a * b * c**2


def nested_rows(X):
    a, (b, c) = X
    return np.sum(a * b * c**2)


def columns(P):
    u, v = P.T
    return np.sum(u * v**2)


def rebinds_its_value(x):
    a, x = x
    return a * x**3


def of_an_expression(x, y):
    a, b = x * y
    return a * b**2


def of_a_list(x):
    xs = [x, np.sin(x)]
    a, b = xs
    return np.sum(a * b**2)


def swapped(x, y):
    a, b = x, y
    a, b = b, a * b
    return np.sum(a * b**2)


@pytest.mark.parametrize(
    "f, args",
    [
        (three, (X3,)),
        (rows, (vec(2, 3),)),
        (nested, (X3,)),
        (nested_rows, (vec(2, 2, 3),)),
        (columns, (vec(4, 2),)),
        (rebinds_its_value, (np.array([0.4, -1.3]),)),
        (of_an_expression, (vec(2), vec(2))),
        (of_a_list, (vec(3),)),
        (swapped, (vec(3), vec(3))),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unpacking_is_differentiated_by_index(f, args):
    check(f, *args)


def test_each_name_gets_its_own_element():
    # d/dx of a*b**2 + sin(c)*a**3 at (0.3, -0.7, 1.1), by hand: a wrong pick would differ
    a, b, c = X3
    expected = [b**2 + 3 * a**2 * np.sin(c), 2 * a * b, np.cos(c) * a**3]
    np.testing.assert_allclose(srcad.grad(three)(X3), expected, rtol=1e-12)
    _, tangent = srcad.jvp(three, (X3,), (np.array([0.0, 0.0, 1.0]),))
    np.testing.assert_allclose(tangent, expected[2], rtol=1e-12)


def test_second_order():
    check(three, X3, order=2)
    check(rows, vec(2, 3), order=2)


def loop_rows(X):
    s = 0.0
    for row in X:
        a, b = row
        s = s + a * b**2
    return s


def loop_target(X):
    s = 0.0
    for a, b in X:
        s = s + a * np.cos(b)
    return s


def loop_enumerate_zip(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s = s + (i + 1.0) * a * b**2
    return s


def loop_enumerate_rows(X):
    s = 0.0
    for i, (a, b) in enumerate(X):
        s = s + (i + 2.0) * a**2 * b
    return s


def loop_zip_nested(X, y):
    s = 0.0
    for (a, b), c in zip(X, y):
        s = s + a * b**2 * c
    return s


@pytest.mark.parametrize(
    "f, args",
    [
        (loop_rows, (vec(4, 2),)),
        (loop_target, (vec(4, 2),)),
        (loop_enumerate_zip, (vec(4), vec(5))),
        (loop_enumerate_rows, (vec(3, 2),)),
        (loop_zip_nested, (vec(3, 2), vec(3))),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_unpacking_in_loops(f, args):
    check(f, *args, wrt=tuple(range(len(args))))


@pytest.mark.parametrize(
    "f, arg, count",
    [(three, np.ones(4), 3), (three, np.ones(2), 3), (loop_target, np.ones((3, 3)), 2)],
)
def test_a_wrong_length_raises_as_python_does(f, arg, count):
    with pytest.raises(ValueError):
        f(arg)  # Python's own error
    expected = rf"values to unpack \(expected {count}\)"
    with pytest.raises(ValueError, match=expected):
        srcad.grad(f)(arg)
    with pytest.raises(ValueError, match=expected):
        srcad.vjp(f, arg)
    with pytest.raises(ValueError, match=expected):
        srcad.jvp(f, (arg,), (np.ones_like(arg),))


def test_generated_code_indexes_after_a_length_check():
    text = srcad.source(srcad.grad(three))
    assert "len(x) != 3" in text and "raise ValueError(" in text
    assert "a = x[0]" in text and "c = x[2]" in text


def shape_only(X):
    n, m = X.shape
    return np.sum(X) * n / m


def test_unpacking_what_is_not_differentiated_stays_as_written():
    check(shape_only, vec(2, 3))
    assert "n, m = X.shape" in srcad.source(srcad.grad(shape_only))


def dict_keys(x):
    d = {"a": x, "b": 2.0 * x}
    k1, k2 = d
    return np.sum(x) * len(k1 + k2)


def test_a_dict_still_unpacks_into_its_keys():
    np.testing.assert_allclose(srcad.grad(dict_keys)(X3), np.full(3, 2.0))


def view_updated(X):
    U = X * 1.0
    a, b = U
    U[0] = U[0] * 3.0
    return np.sum(a * b)


def view_updated_in_loop(X):
    U = X * 1.0
    s = 0.0
    for a, b in U:
        U[0, 0] = U[0, 0] * 3.0
        s = s + np.sum(a * b)
    return s


@pytest.mark.parametrize("f", [view_updated, view_updated_in_loop])
def test_unpacked_rows_are_views(f):
    # rows of a 2-d array share its memory: an update shows through them in NumPy
    with pytest.raises(srcad.TransformError, match="shares memory with 'a', 'b'"):
        srcad.grad(f)(vec(2, 2, 2))


def starred(x):
    a, *rest = x
    return a * np.sum(rest)


def enumerate_zip_whole(x, y):
    s = 0.0
    for i, pair in enumerate(zip(x, y)):
        s = s + pair[0] * i
    return s


def test_what_stays_refused():
    # (a list built in the function unpacks with a star: tests/test_unpacking_lists.py)
    with pytest.raises(srcad.TransformError, match=r"starred unpacking \('a, \*rest = x'\)"):
        srcad.grad(starred)(X3)


def test_zip_item_bound_whole():
    # was refused: "'for i, (a, b) in enumerate(zip(...))' needs one target per sequence"
    srcad.check_grad(enumerate_zip_whole, X3, X3 + 0.5, wrt=(0, 1), modes=("fwd", "rev"))


# ---- one result of an op with several ----


def logdet_index(A):
    return np.linalg.slogdet(A)[1] * 2.0


def logdet_negative_index(A):
    return np.linalg.slogdet(A)[-1]


def logdet_field(A):
    return np.linalg.slogdet(A).logabsdet


def eigenvalues_index(A):
    return np.sum(np.linalg.eigh(A)[0] ** 2 * np.arange(1.0, 4.0))


def eigenvalues_field(A):
    return np.sum(np.linalg.eigh(A).eigenvalues * np.arange(1.0, 4.0))


def eigenvectors_field(A):
    return np.sum(np.linalg.eigh(A).eigenvectors[:, -1] ** 4)


def singular_values(A):
    return np.sum(np.linalg.svd(A)[1] ** 3)


def singular_values_field(A):
    return np.sum(np.linalg.svd(A, full_matrices=False).S * np.arange(1.0, 4.0))


def nested_picks(A):
    return np.linalg.slogdet(np.linalg.eigh(A)[1] * 2.0 + A)[1]


@pytest.mark.parametrize(
    "f",
    [
        logdet_index,
        logdet_negative_index,
        logdet_field,
        eigenvalues_index,
        eigenvalues_field,
        eigenvectors_field,
        singular_values,
        nested_picks,
    ],
)
def test_one_result_of_a_decomposition(f):
    check(f, spd(3))


def test_one_result_of_a_rectangular_svd():
    check(singular_values_field, vec(4, 3))


def first_piece(x):
    return np.sum(np.split(x, 3)[0] ** 2 * np.arange(1.0, 3.0))


def middle_piece(x):
    return np.sum(np.split(x, 3)[1] ** 2 * np.arange(1.0, 3.0))


def last_piece(x):
    return np.sum(np.split(x, 3)[2] ** 2 * np.arange(1.0, 3.0))


def last_piece_from_the_end(x):
    return np.sum(np.split(x, 3)[-1] ** 2 * np.arange(1.0, 3.0))


@pytest.mark.parametrize(
    "f, piece",
    [(first_piece, 0), (middle_piece, 1), (last_piece, 2), (last_piece_from_the_end, 2)],
)
def test_one_piece_of_a_split(f, piece):
    check(f, vec(6))
    # the gradient is nonzero on the piece picked only
    g = srcad.grad(f)(np.arange(1.0, 7.0))
    assert np.count_nonzero(g) == 2 and np.all(g[2 * piece : 2 * piece + 2] != 0)


def array_split_last(x):
    return np.sum(np.array_split(x, 3)[-1] ** 3)


def split_at_indices(x):
    return np.sum(np.split(x, [2, 4])[1] ** 3)


def hsplit_columns(X):
    return np.sum(np.hsplit(X, 2)[1] ** 2 * X[:, :2])


def vsplit_rows(X):
    return np.sum(np.vsplit(X, 2)[0] * np.vsplit(X, 2)[1] ** 2)


@pytest.mark.parametrize(
    "f, arg",
    [
        (array_split_last, vec(7)),
        (split_at_indices, vec(6)),
        (hsplit_columns, vec(3, 4)),
        (vsplit_rows, vec(4, 3)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_one_piece_of_the_split_family(f, arg):
    check(f, arg)


def test_generated_code_names_the_results():
    text = srcad.source(srcad.grad(logdet_index))
    assert "sign, logdet = " in text
    text = srcad.source(srcad.grad(array_split_last))
    assert "piece0, piece1, piece2 = " in text


def split_by_count(x, n):
    return np.sum(np.split(x, n)[0] ** 3)


def named_result(A):
    result = np.linalg.slogdet(A)
    return result[1]


def named_fields(A):
    r = np.linalg.eigh(A)
    return np.sum(r.eigenvalues**2) + np.sum(r[1][:, 0] ** 4)


def named_and_used_whole(A):
    result = np.linalg.slogdet(A)
    return np.sum(np.stack(result))


def test_a_result_held_by_a_name_and_read_by_index_or_field():
    # (refused until issue #17: "unpack them into as many names")
    check(named_result, spd(3))
    check(named_result, spd(3), order=2)
    check(named_fields, spd(3))
    A = spd(3)
    np.testing.assert_allclose(srcad.grad(named_result)(A), np.linalg.inv(A).T)


def split_by_count_named(x, n):
    parts = np.split(x, n)
    return np.sum(parts[0] ** 3)


def test_picks_that_stay_refused():
    # (np.split(x, n)[0] with n known only at run time works since stop 31: split_piece)
    assert srcad.check_grad(split_by_count, vec(6), 3, wrt=0, modes=("rev", "fwd")) < 1e-6
    with pytest.raises(srcad.TransformError, match=r"needs their number written in the call"):
        srcad.grad(split_by_count_named)(vec(6), 3)
    with pytest.raises(srcad.TransformError, match="np.stack: 'arrays' must be a list"):
        srcad.grad(named_and_used_whole)(spd(3))  # used whole: not split into names


def not_differentiated_split(x, n):
    return np.sum(x) * np.sum(np.split(np.arange(6.0), n)[0])


def test_a_split_nobody_differentiates_may_count_at_run_time():
    np.testing.assert_allclose(srcad.grad(not_differentiated_split)(X3, 3), np.full(3, 1.0))


# ---- += on a name holding a Python number ----


def number_literal(y):
    x = 0.5
    z = x
    z += y
    return np.sum(z * x + z * z)


def number_updated(y):
    z = 0.5
    z += y
    return z * z


def number_parameter(x, y):
    z = x
    z += y
    return z * x


def number_then_array(y):
    x = 0.5
    for _ in range(2):
        x = x * y
    z = x
    z += y
    return np.sum(z * x)


def test_a_number_literal_shares_no_memory():
    check(number_literal, 0.7)
    check(number_literal, vec(3))
    check(number_updated, 0.7)
    assert srcad.grad(number_updated)(0.7) == pytest.approx(2 * 1.2)


def test_a_parameter_may_be_a_0d_array_so_a_number_is_required_there():
    # x = np.array(0.5) would change with z: srcad cannot tell a float from it beforehand,
    # so it differentiates for a number and refuses an array at the call
    x = np.array(0.5)
    z = x
    z += 1.0
    assert x == 1.5
    assert srcad.grad(number_parameter)(0.5, 0.7) == pytest.approx(1.2 + 0.5)
    check(number_parameter, 0.5, 0.7)
    with pytest.raises(srcad.TransformError, match="'x' holds an array in this call"):
        srcad.grad(number_parameter)(np.array(0.5), 0.7)
    with pytest.raises(srcad.TransformError, match="may share memory with 'x'"):
        srcad.grad(number_then_array)(vec(3))  # x is a local name here


def unpack_constant_pair(x, d):
    a, b = d
    return x * a + b


def test_unpacking_a_dict_argument_is_an_error_not_its_values():
    # Python unpacks a dict into its keys; indexing d[0], d[1] would read its values
    with pytest.raises(TypeError, match="unpacks into its keys"):
        srcad.grad(unpack_constant_pair)(1.0, {0: 2.0, 1: 3.0})
    assert srcad.grad(unpack_constant_pair)(1.0, (2.0, 3.0)) == 2.0
