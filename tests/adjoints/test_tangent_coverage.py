"""Every op srcad differentiates in reverse mode has a forward-mode (tangent) rule too."""

import srcad.adjoints  # noqa: F401  (registers the rules)
from srcad.adjoints.registry import Operator, registered, registered_tangents

# Ops whose tangents the forward transformation computes itself, without a rule.
BUILT_INTO_FORWARD = {
    Operator("List"): "a list literal's tangent is the list of its elements' tangents",
}
# Ops with an adjoint that cannot have a tangent rule, each with the reason. Empty.
NO_TANGENT: dict = {}


def _own(rule):
    """Whether ``rule`` is one of srcad's own (not registered by a user or a test)."""
    return rule.globals.get("__name__", "").startswith("srcad.")


def test_every_adjoint_has_a_tangent_rule():
    tangents = registered_tangents()
    missing = [
        f"{key!r} ({rule.name})"
        for key, rule in registered().items()
        if _own(rule)
        and key not in tangents
        and key not in BUILT_INTO_FORWARD
        and key not in NO_TANGENT
    ]
    assert not missing, "no tangent rule for: " + ", ".join(missing)


def test_exceptions_are_still_needed():
    tangents = registered_tangents()
    for key in [*BUILT_INTO_FORWARD, *NO_TANGENT]:
        assert key in registered() and key not in tangents, key


def test_tangent_rules_are_named_after_their_adjoints():
    adjoints = registered()
    for key, rule in registered_tangents().items():
        if _own(rule) and key in adjoints:
            assert rule.name.endswith("_tangent"), rule.name
            assert rule.globals["__name__"] == adjoints[key].globals["__name__"], rule.name


def test_ops_table_shows_both_modes():
    from srcad.__main__ import op_table

    modes = {op: gradient for op, _, gradient in op_table()}
    assert modes["np.tanh"] == "reverse, forward"
    assert modes["[a, b, ...]"] == "reverse, forward"
    assert modes["np.argmax"].startswith("none")
