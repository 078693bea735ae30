"""What a rule's adjoint reads of the primal, from its template (analyses/residuals.py),
against the code the sweep generates from it."""

import numpy as np
import pytest

from srcad.adjoints.registry import Operator, lookup
from srcad.transform.analyses.residuals import template_reads


def reads(op):
    parts = template_reads(lookup(op))
    return (
        {p.into: p.values for p in parts},
        {p.into: p.shapes for p in parts},
        {p.into: p.products for p in parts},
    )


def test_sin_reads_its_operand_by_value():
    values, shapes, _ = reads(np.sin)
    assert set().union(*values.values()) == {"x"}
    assert not set().union(*shapes.values())


def test_tanh_reads_its_result():
    values, _, _ = reads(np.tanh)
    assert set().union(*values.values()) == {"y"}


def test_add_reads_its_operands_only_for_their_shapes():
    values, shapes, _ = reads(Operator("Add"))
    assert not set().union(*values.values())
    assert shapes == {"a": {"a"}, "b": {"b"}}


def test_a_product_term_reads_the_other_operand_by_value():
    # (a term for an operand that does not vary is never written: its reads do not count)
    values, shapes, _ = reads(Operator("Mult"))
    assert values == {"a": {"b"}, "b": {"a"}}
    assert shapes == {"a": {"a"}, "b": {"b"}}


def test_a_matrix_product_reads_through_its_helpers():
    _, _, products = reads(Operator("MatMult"))
    assert products == {"a": ((True, "a", "b"),), "b": ((False, "a", "b"),)}


def test_reads_are_computed_once_per_rule():
    rule = lookup(np.sin)
    assert template_reads(rule) is template_reads(rule)


@pytest.mark.parametrize("op", [np.sin, np.exp, Operator("Div"), np.maximum, np.sum])
def test_reads_are_within_the_rules_declared_residuals(op):
    rule = lookup(op)
    read = set()
    for part in template_reads(rule):
        read |= part.values | part.shapes
        read |= {name for product in part.products for name in product[1:]}
    assert read <= rule.residuals


def test_a_loop_over_an_operand_list_reads_as_its_unrolled_body():
    # (``for i, x in enumerate(arrays): d[x] = pieces[i]`` is unrolled when instantiated:
    # it adds to every array's adjoint and reads none of them)
    values, _, _ = reads(np.stack)
    assert "arrays" in values and not values["arrays"]
    einsum, _, _ = reads(np.einsum)
    assert einsum == {"operands": {"subscripts", "operands"}}
