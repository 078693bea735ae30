"""Rule traits: declared with the rule, read by the analyses, never inferred from a name."""

import builtins

import numpy as np
import pytest

import srcad
from srcad.adjoints.registry import TRAITS, Method, Operator, d, lookup
from srcad.transform.adjoint_statements import _changes_shape
from srcad.transform.analyses.masking import is_elementwise


def _traits(op) -> set[str]:
    rule = lookup(op)
    return {t for t in TRAITS if getattr(rule, t)}


@pytest.mark.parametrize(
    "op, traits",
    [
        (np.where, {"elementwise", "selects", "broadcast_transparent"}),
        (np.fmax, {"elementwise", "selects"}),
        (Operator("Add"), {"elementwise", "broadcast_transparent"}),
        (np.multiply, {"elementwise", "broadcast_transparent"}),
        (np.hypot, {"elementwise"}),
        (Operator("MatMult"), {"broadcast_transparent", "changes_shape"}),
        (np.reshape, {"moves", "changes_shape"}),
        (np.flip, {"moves"}),
        (Operator("Subscript"), {"moves", "scatters"}),
        (Operator("SubscriptDynamic"), {"moves", "scatters"}),
        (np.sum, {"changes_shape", "reduces"}),
        (Method("max"), {"changes_shape", "reduces"}),
        (np.amin, {"changes_shape", "reduces"}),
        (np.var, set()),
        (Operator("StackList"), {"takes_lists"}),
        (builtins.sum, {"takes_lists"}),
        (Operator("Copy"), {"broadcast_transparent", "takes_lists"}),
        (np.sin, set()),
    ],
)
def test_srcads_rules_declare_their_traits(op, traits):
    assert _traits(op) == traits


def test_adjoint_expressions_calling_shape_changers_are_not_elementwise():
    for attr in ("sum", "mean", "amax", "reshape", "ravel", "flatten", "transpose", "einsum"):
        assert _changes_shape(attr), attr
    for attr in ("cos", "where", "sign", "conj", "flip", "not_a_numpy_name"):
        assert not _changes_shape(attr), attr


def _user_op(x):
    return x * 2.0


def _other_user_op(x, z):
    return x * z


def test_a_users_rule_gets_no_trait_from_its_name():
    # named like srcad's own elementwise, broadcast-transparent rule: no trait follows
    @srcad.adjoint(_user_op)
    def add(y, x):
        d[x] = d[y] * 2.0

    rule = lookup(_user_op)
    assert rule.name == "add"
    assert _traits(_user_op) == set()
    assert not is_elementwise(rule)


def test_a_users_rule_declares_traits():
    @srcad.partials(_other_user_op, elementwise=True, broadcast_transparent=True)
    def other(y, x, z):
        return z, x

    assert _traits(_other_user_op) == {"elementwise", "broadcast_transparent"}

    def f(x, z):
        return np.sum(_other_user_op(x, z) ** 2)

    # (its partials are not unbroadcast: _other_user_op is no ufunc, so same shapes)
    x, z = np.linspace(0.5, 1.5, 6).reshape(2, 3), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    srcad.check_grad(f, x, z, wrt=(0, 1), modes=("rev", "fwd"))


def test_an_unknown_trait_is_refused():
    with pytest.raises(TypeError, match="unknown rule trait 'elementwize'"):

        @srcad.adjoint(_user_op, elementwize=True)
        def typo(y, x):
            d[x] = d[y] * 2.0


def test_a_rule_replacing_a_shape_changing_ops_keeps_that_trait():
    # what np.sum does to shapes is np.sum's: a user's rule for it (which srcad's
    # registration replaces, then puts back) still makes ``a.sum()`` change shapes
    from srcad.adjoints import registry

    key = registry._key(np.sum)
    saved = registry._RULES[key]
    try:

        @srcad.adjoint(np.sum)
        def my_sum(y, x):
            d[x] = d[y] * np.ones_like(x)

        assert lookup(np.sum).name == "my_sum"
        assert lookup(np.sum).changes_shape
        assert lookup(np.sum).reduces  # np.sum's result is still one number
        assert _changes_shape("sum")
    finally:
        registry._RULES[key] = saved


# ---- reduces: a whole-array reduction is one number (analyses/shapes.py)


def _doubled(x):
    return x * 2.0


def test_a_users_rule_named_sum_is_no_reduction():
    @srcad.partials(_doubled)
    def sum(y, x):  # named like np.sum's rule, but _doubled keeps its operand's shape
        return 2.0

    assert lookup(_doubled).name == "sum"
    assert not lookup(_doubled).reduces

    def f(x, b):
        t = _doubled(x)
        z = t * b
        return np.sum(z * z)

    # taken for np.sum, ``t`` was a number and ``dt`` the sum of ``dz * b`` over all of it:
    # every element of the gradient the same, silently wrong
    x, b = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.5, -2.0])
    assert np.allclose(srcad.grad(f)(x, b), 8.0 * x * b * b)
    srcad.check_grad(f, x, b, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(f, x, b, wrt=(0, 1), modes=("rev", "fwd"), order=2)


def _reductions_in_a_loop(x, y):
    s = 0.0
    t = 0.0
    for _ in range(3):
        s = s + np.sum(x * y)
        t = t + np.sum(x, axis=0)
    return s * np.sum(t * y)


def test_a_reduction_over_one_axis_is_not_taken_for_a_number():
    from srcad.transform.analyses.shapes import _always_scalar
    from srcad.transform.frontend import parse_function
    from srcad.transform.naming import Namer
    from srcad.transform.normalize.anf import local_names
    from srcad.transform.pipeline import normalize

    source = parse_function(_reductions_in_a_loop)
    tree = normalize(source, Namer(set()))
    numbers = _always_scalar(tree.body, source, local_names(tree), None)
    # a whole-array sum is one number; np.sum(x, axis=0) keeps an axis (it was taken for
    # one number too while any falsy axis counted)
    assert "s" in numbers
    assert "t" not in numbers


def test_a_reduction_in_a_loop_adds_up_numbers_only_over_every_axis():
    f = _reductions_in_a_loop
    x = np.linspace(0.2, 1.4, 6).reshape(2, 3)
    y = np.linspace(-1.0, 0.8, 6).reshape(2, 3)
    srcad.check_grad(f, x, y, wrt=(0, 1), modes=("rev", "fwd"))
    srcad.check_grad(f, x, y, wrt=(0, 1), modes=("rev", "fwd"), order=2)


# ---- takes_lists: a list built in the function reaches only rules declared for lists


def _weighted(xs):
    return xs[0] * 2.0 + xs[1]


def _lists_function(a, b):
    xs = [a * a, b]
    return np.sum(np.sin(_weighted(xs)))


def test_a_users_rule_named_like_a_list_rule_is_given_no_list():
    @srcad.adjoint(_weighted)
    def builtin_sum(y, xs):  # the name of builtin sum's rule, which takes lists
        d[xs] = [d[y] * 2.0, d[y]]

    assert not lookup(_weighted).takes_lists
    a, b = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.5, -2.0])
    with pytest.raises(srcad.TransformError, match="receives the list 'xs'"):
        srcad.grad(_lists_function, wrt=(0, 1))(a, b)


def test_a_users_rule_declared_to_take_lists_gets_the_list():
    @srcad.adjoint(_weighted, takes_lists=True)
    def weighted(y, xs):
        d[xs] = [d[y] * 2.0, d[y]]

    assert _traits(_weighted) == {"takes_lists"}
    a, b = np.array([0.3, -0.7, 1.1]), np.array([1.5, 0.5, -2.0])
    srcad.check_grad(_lists_function, a, b, wrt=(0, 1), modes=("rev",))


def _tripled_at(x, index):
    return 3.0 * x[index]


def _spread_tripled(x, index, g):
    out = np.zeros_like(x)
    out[index] = 3.0 * g
    return out


def test_a_users_rule_named_getitem_keeps_its_own_template():
    @srcad.adjoint(_tripled_at, static=("index",))
    def getitem(y, x, index):  # named like srcad's rule for x[i]
        d[x] = _spread_tripled(x, index, d[y])

    assert not lookup(_tripled_at).scatters

    def f(x):
        u = x * 2.0
        t = _tripled_at(u, 1)
        return np.sum(u * u) + t * t

    # taken for x[i] by its name, the gradient was added in place as ``du[1] += dt``,
    # the rule's factor 3 lost: -22.4 where the derivative is -56.0 (silently wrong)
    x = np.array([0.3, -0.7, 1.1])
    assert np.allclose(srcad.grad(f)(x), 8.0 * x + np.array([0.0, 72.0 * x[1], 0.0]))
    srcad.check_grad(f, x, modes=("rev",))


def _row_sums(x):
    return np.sum(x, axis=1)


@pytest.mark.parametrize("name", ["add", "mul_self"])
def test_a_users_rule_named_like_arithmetic_is_not_taken_for_it(name):
    def template(y, x):
        d[x] = np.broadcast_to(d[y][:, None], x.shape) * 1.0

    template.__name__ = name
    srcad.adjoint(_row_sums)(template)
    assert lookup(_row_sums).name == name

    def f(x, b):
        t = _row_sums(x * x)
        s = t * b
        return np.sum(s * s)

    x, b = np.array([[0.3, -0.7], [1.1, 0.4]]), np.array([1.5, -2.0])
    srcad.check_grad(f, x, b, wrt=(0, 1), modes=("rev",))
    srcad.check_grad(f, x, b, wrt=(0, 1), modes=("rev",), order=2)
