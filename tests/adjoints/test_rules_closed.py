"""The rules are closed under differentiation: every srcad function a rule's template
calls has rules of its own in both modes (or is declared to have no derivative), so that
derivatives can be differentiated again to any order (a third derivative through abs
once met ``abs_slope_jvp`` without a tangent rule)."""

import re

import gast
import pytest

import srcad.adjoints  # noqa: F401  (registers the rules)
from srcad.adjoints.registry import (
    is_nondifferentiable,
    lookup,
    lookup_tangent,
    registered,
    registered_tangents,
)
from srcad.runtime.accumulate import add_at
from srcad.runtime.lists import drop_gradient, dropped_gradient
from srcad.runtime.updates import added_at
from srcad.transform.codegen import to_source
from srcad.transform.frontend import parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize import updates

#: helpers that update an argument in place, which code differentiated again never calls:
#: srcad/transform/normalize/updates.py first rewrites each call into one of the functional
#: form named here (checked below), and that form has rules of its own
REWRITTEN = {
    # each ``add_at(b, i, g)`` statement becomes ``b = added_at(b, i, g)``
    add_at: added_at,
    # every call of drop_gradient (lists.py, another engineer's) becomes dropped_gradient
    drop_gradient: dropped_gradient,
}


def _own(rule) -> bool:
    return rule.globals.get("__name__", "").startswith("srcad.")


def _called(rule):
    """The srcad functions the template ``rule`` calls, by name."""
    for node in gast.walk(gast.Module(body=rule.body, type_ignores=[])):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            fn = rule.globals.get(node.func.id)
            module = getattr(fn, "__module__", "") or ""
            if callable(fn) and module.startswith("srcad.runtime"):
                yield node.func.id, fn


def _missing(table_lookup) -> list[str]:
    missing = set()
    for rules in (registered(), registered_tangents()):
        for rule in rules.values():
            if not _own(rule):
                continue
            for name, fn in _called(rule):
                if fn in REWRITTEN:
                    continue
                if is_nondifferentiable(fn) or table_lookup(fn) is not None:
                    continue
                missing.add(f"{fn.__module__}.{name} (called by {rule.name})")
    return sorted(missing)


def test_every_helper_a_rule_calls_has_an_adjoint():
    missing = _missing(lookup)
    assert not missing, "no adjoint rule for: " + ", ".join(missing)


def test_every_helper_a_rule_calls_has_a_tangent():
    missing = _missing(lookup_tangent)
    assert not missing, "no tangent rule for: " + ", ".join(missing)


def _calls_of(fn):
    """``(rule, statement, call)`` for each call of ``fn`` in one of srcad's templates."""
    for rules in (registered(), registered_tangents()):
        for rule in rules.values():
            if not _own(rule):
                continue
            for stmt in gast.walk(gast.Module(body=rule.body, type_ignores=[])):
                if not isinstance(stmt, gast.stmt):
                    continue
                # its own expressions, not the statements of a body it holds
                parts = [n for n in gast.iter_child_nodes(stmt) if not isinstance(n, gast.stmt)]
                for node in parts:
                    for call in gast.walk(node):
                        if (
                            isinstance(call, gast.Call)
                            and isinstance(call.func, gast.Name)
                            and rule.globals.get(call.func.id) is fn
                        ):
                            yield rule, stmt, call


@pytest.mark.parametrize("helper", list(REWRITTEN), ids=lambda f: f.__name__)
def test_a_rewritten_helper_has_a_functional_form_with_rules(helper):
    form = REWRITTEN[helper]
    assert lookup(form) is not None and lookup_tangent(form) is not None, form.__name__


def test_add_at_is_only_called_as_the_statement_normalize_rewrites():
    # the pattern updates.functional_updates matches: a statement of its own, three
    # positional arguments, the buffer a name (anything else would reach the derivative)
    assert updates._ASSIGNED[add_at][0] is added_at
    calls = list(_calls_of(add_at))
    assert calls, "no template calls add_at: drop it from REWRITTEN"
    for rule, stmt, call in calls:
        where = f"{rule.name} calls add_at"
        assert isinstance(stmt, gast.Expr) and stmt.value is call, where + " inside an expression"
        assert len(call.args) == 3 and not call.keywords, where + " with other arguments"
        assert isinstance(call.args[0], gast.Name), where + " on a buffer that is not a name"


def _buffer_updated(b, i, g):
    add_at(b, i, g)
    return b


def _gradient_dropped(gs):
    return len(drop_gradient(gs)) + len(drop_gradient(gs)[0])


@pytest.mark.parametrize("function", [_buffer_updated, _gradient_dropped])
def test_normalize_leaves_no_call_of_a_rewritten_helper(function):
    source = parse_function(function)
    updates.functional_updates(source.tree, source, Namer.for_tree(source.tree))
    text = to_source(source.tree)
    left = [f.__name__ for f in REWRITTEN if re.search(rf"\b{f.__name__}\(", text)]
    assert not left, text
    assert any(form.__name__ in text for form in REWRITTEN.values()), text


def test_drop_gradient_is_called_by_a_template():
    assert list(_calls_of(drop_gradient)), "no template calls drop_gradient: drop it from REWRITTEN"
