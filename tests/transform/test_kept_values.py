"""Values a derivative cannot follow are refused by name, never a zero gradient: a
differentiated value given to a call made for its effect (which may keep it: ``seen.add(v)``,
``box.keep(v)``), or joined into a union of dicts or sets (``d1 | d2``). Until stop 28
reverse mode gave zero gradients for both. Calls that only report or check (``print``,
``logging``, ``warnings``, NumPy's) are differentiated through, and sets of constants
(``kind in {"tanh", "relu"}``, refused as sets until stop 28) are Python's. An element
update of a global is refused by name (an UnboundLocalError before)."""

import logging
import warnings

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.5, 0.9])
LOG = logging.getLogger("srcad.tests.kept_values")


class Box:
    def __init__(self):
        self.items = []

    def keep(self, v):
        self.items.append(v)

    def total(self):
        return sum(self.items)


def kept_by_a_method(x):
    box = Box()
    box.keep(np.sum(np.sin(x)))
    return box.total() * 2.0


def kept_with_its_result_dropped(x):
    # the call's result bound to a name nothing reads (both modes gave zero until stop 28)
    box = Box()
    _ = box.keep(np.sin(x))
    return np.sum(box.total())


def kept_by_a_set(x):
    seen = set()
    seen.add(float(np.sum(x)))
    return sum(seen)


def union_of_dicts(x):
    d = {"a": np.sin(x)} | {"b": x * 2.0}
    return np.sum(d["a"] * d["b"])


def union_of_sets(x):
    s = set()
    s = s | {np.sum(x)}
    return sum(s)


def set_comprehension_of_values(x):
    s = {v * 2.0 for v in (np.sum(x), np.sum(x * x))}
    return sum(s)


@pytest.mark.parametrize(
    "f, refusal",
    [
        (kept_by_a_method, "'box.keep' is called for its effect with a differentiated value"),
        (kept_with_its_result_dropped, "'box.keep' is called for its effect"),
        (kept_by_a_set, "'seen.add' is called for its effect"),
        (union_of_dicts, "'|' of differentiated values"),
        (union_of_sets, "'|' of differentiated values"),
        (set_comprehension_of_values, "'|' of differentiated values.*set comprehension"),
    ],
)
def test_values_a_derivative_cannot_follow_are_refused_in_both_modes(f, refusal):
    with pytest.raises(srcad.TransformError, match=refusal):
        srcad.grad(f)(X)
    with pytest.raises(srcad.TransformError, match=refusal):
        srcad.jvp(f, (X,), (X,))


def a_set_of_values(x):
    return sum({np.sum(x), np.max(x)})


def test_a_set_display_of_values_is_refused_naming_sets():
    with pytest.raises(srcad.TransformError, match="a set of differentiated values"):
        srcad.grad(a_set_of_values)(X)


def reported(x):
    y = np.sin(x)
    print("y:", y)
    LOG.debug("y %s", y)
    logging.debug("%s", y)
    if np.any(y > 10.0):
        warnings.warn(f"large {y}", stacklevel=2)
    np.testing.assert_array_less(y, 10.0)
    return np.sum(y * x)


def test_reporting_calls_are_differentiated_through(capsys):
    srcad.check_grad(reported, X, modes=("rev", "fwd"), order=2)
    assert "y:" in capsys.readouterr().out


def activation(x, kind):
    if kind in {"tanh", "sigmoid"}:
        return np.sum(np.tanh(x))
    return np.sum(np.maximum(x, 0.0))


def constant_sets(x):
    names = {"a", "b"}
    seen = {k for k in ("a", "b", "a")}
    total = np.sum(x)
    for k in ("a", "c"):
        if k in names:
            total = total + np.sum(np.sin(x)) * len(seen)
    return total


@pytest.mark.parametrize("f, args", [(activation, (X, "tanh")), (constant_sets, (X,))])
def test_sets_of_constants_are_pythons(f, args):
    srcad.check_grad(f, *args, modes=("rev", "fwd"), order=2)


CACHE = {}


def writes_a_global(x):
    CACHE["a"] = np.sin(x)
    return np.sum(CACHE["a"])


def test_an_element_update_of_a_global_is_refused_by_name():
    # (before: an UnboundLocalError from the generated code, which made CACHE a local)
    for mode in ("rev", "fwd"):
        with pytest.raises(srcad.TransformError, match="'CACHE' is changed here but not made"):
            srcad.check_grad(writes_a_global, X, modes=(mode,))


HISTORY = []


def check_finite(v):
    if not np.all(np.isfinite(v)):
        raise ValueError("not finite")
    print("checked", np.sum(v))


def record(v):
    HISTORY.append(v)


def checked(x):
    y = np.sin(x)
    check_finite(y)
    return np.sum(y * y)


def recorded(x):
    y = np.sin(x)
    record(y)
    return np.sum(HISTORY[-1] * y)


def test_a_helper_of_yours_called_for_its_effect():
    # one that changes only its own locals keeps nothing: differentiated through; one that
    # stores its argument elsewhere is refused (reverse mode ignored the store until stop 28)
    srcad.check_grad(checked, X, modes=("rev", "fwd"), order=2)
    for mode in ("rev", "fwd"):
        with pytest.raises(srcad.TransformError, match="'record' is called for its effect"):
            srcad.check_grad(recorded, X, modes=(mode,))
