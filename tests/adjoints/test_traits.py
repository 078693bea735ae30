"""Rule traits: declared with the rule, read by the analyses, never inferred from a name."""

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
        (Operator("Subscript"), {"moves"}),
        (np.sum, {"changes_shape"}),
        (Method("max"), {"changes_shape"}),
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
        assert _changes_shape("sum")
    finally:
        registry._RULES[key] = saved
