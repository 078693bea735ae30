"""Arguments given by position reach a rule's parameter of the same name as in NumPy's (or
SciPy's) own signature: a rule declared ``(x, axis, ddof)`` for ``np.var(a, axis, dtype,
out, ddof)`` once took ``dtype`` for ``ddof`` (and ``np.sum(x, 0, np.float32)`` ran forward
mode with ``keepdims=np.float32``). Checked for every registered rule."""

import inspect

import gast
import numpy as np
import pytest

import srcad
from srcad.adjoints.registry import registered, registered_tangents
from srcad.transform.templates import TemplateError, _library_signature, bind

POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _cases():
    for kind, table in (("adjoint", registered()), ("tangent", registered_tangents())):
        for op, rule in table.items():
            signature = _library_signature(op)
            if signature is None:
                continue
            params = list(signature.parameters.values())
            for k, param in enumerate(params):
                if (
                    param.kind is POSITIONAL
                    and param.default is not param.empty
                    and param.name in rule.signature.parameters
                ):
                    name = getattr(op, "__name__", repr(op))
                    yield pytest.param(rule, op, params, k, id=f"{kind}-{name}-{param.name}")


CASES = list(_cases())


def test_there_are_rules_to_check():
    assert len(CASES) > 50


@pytest.mark.parametrize("rule, op, params, k", CASES)
def test_a_positional_argument_binds_by_numpys_name(rule, op, params, k):
    args: list[gast.expr] = []
    for j, param in enumerate(params[: k + 1]):
        optional = param.kind is POSITIONAL and param.default is not param.empty
        if j < k and optional and param.name not in rule.signature.parameters:
            if param.default is not None:
                return  # cannot be written as its default here: nothing to check
            args.append(gast.Constant(value=None, kind=None))
        else:
            args.append(
                gast.Name(id=f"arg{j}", ctx=gast.Load(), annotation=None, type_comment=None)
            )
    try:
        bound = bind(rule, args, {}, op)
    except TemplateError as exc:  # the rule needs one more (multivariate_normal's cov)
        assert "missing a required argument" in str(exc)
        return
    value = bound[params[k].name]
    assert isinstance(value, gast.Name) and value.id == f"arg{k}"


def var_positional(x):
    return np.sum(np.var(x, 0, None, None, 1))


def sum_with_a_dtype(x):
    return np.sum(np.sum(x, 0, np.float32))


def max_keepdims(x):
    return np.sum(np.max(x, 1, None, True) * np.arange(1.0, 4.0)[:, None])


def test_positional_options_in_both_modes():
    x = np.arange(12.0).reshape(3, 4) / 7 + np.eye(3, 4)
    srcad.check_grad(var_positional, x, modes=("rev", "fwd"))
    srcad.check_grad(max_keepdims, x, modes=("rev", "fwd"))
    for mode in ("rev", "fwd"):
        with pytest.raises(srcad.TransformError, match="'dtype'"):
            if mode == "rev":
                srcad.grad(sum_with_a_dtype)(x)
            else:
                srcad.jvp(sum_with_a_dtype, (x,), (x,))
