"""Dict comprehensions (normalize/comprehensions.py): ``{k: f(v) for k, v in d.items() if
...}`` over a dict the function builds, a literal tuple of keys or a pytree argument
becomes a loop filling the dict, unrolled with the keys written in (a filter on the keys
decided there), so the dict has constant keys; ``sum(d.values())`` adds its values.
Checked against finite differences in both modes and at second order."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -1.2, 2.0])
PARAMS = {"W": np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2]]), "b": np.array([0.1, -0.2])}


def over_items(x):
    d = {"a": x, "b": np.sin(x)}
    e = {k: v * 2.0 + 1.0 for k, v in d.items()}
    return np.sum(e["a"] * e["b"])


def filtered_keys(x):
    d = {"a": x, "b": x**2}
    kept = {k: np.tanh(d[k]) for k in ("a", "b", "c") if k != "c"}
    only = {k: v for k, v in d.items() if k == "b"}
    return np.sum(kept["a"] * kept["b"]) + np.sum(only["b"]) + len(only)


def added_values(x):
    parts = {"a": x, "b": np.cos(x)}
    losses = {name: np.sum(v**2) for name, v in parts.items()}
    return sum(losses.values())


def updated_after(x):
    d = {k: x * (i + 1.0) for i, k in enumerate(("a", "b"))}
    d["a"] = d["a"] + np.sin(d["b"])
    return np.sum(d["a"] * d["b"])


def values_passed(x):
    # the values written out where a call takes them (refused until stop 27: only loops)
    d = {"a": x, "b": np.sin(x)}
    stacked = np.stack(list(d.values()))
    return np.sum(stacked[1] * stacked[0]) + np.sum(np.mean(tuple(d.values()), axis=0) ** 2)


def over_a_display(x):
    # a dict written out where it is iterated (refused until stop 28: "needs a constant key")
    scaled = {k: v * 2.0 for k, v in {"a": x, "b": np.sin(x)}.items() if k != "c"}
    total = 0.0
    for name, v in {"p": x**2, "q": np.cos(x)}.items():
        total = total + np.sum(v) * (2.0 if name == "p" else 1.0)
    return np.sum(scaled["a"] * scaled["b"]) + total


@pytest.mark.parametrize(
    "f", [over_items, filtered_keys, added_values, updated_after, values_passed, over_a_display]
)
def test_dict_comprehensions_in_both_modes(f):
    srcad.check_grad(f, X, modes=("rev", "fwd"), order=2)


def decayed(params, x):
    scaled = {k: v * 0.9 for k, v in params.items() if k != "b"}
    penalty = {k: np.sum(v**2) for k, v in params.items()}
    return np.sum(np.tanh(x @ scaled["W"])) + 0.1 * sum(penalty.values())


def in_a_loop(params, x):
    total = 0.0
    for t in range(2):
        step = {k: v * (t + 1.0) for k, v in params.items()}
        total = total + np.sum(x @ step["W"] + step["b"])
    return total


@pytest.mark.parametrize("f", [decayed, in_a_loop])
def test_comprehensions_over_a_pytree_argument(f):
    grads = srcad.grad(f)(PARAMS, X)
    assert set(grads) == {"W", "b"}
    srcad.check_grad(f, PARAMS, X, modes=("rev", "fwd"))
    srcad.check_grad(f, PARAMS, X, modes=("rev",), order=2)


def test_the_dict_becomes_one_name_per_key():
    text = srcad.source(over_items)
    assert "{" not in text.split("# grad of")[0]  # no dict left in the forward code
    assert "e_a" in text and "e_b" in text


def doubled(x):
    return {"a": x, "b": 2 * x}


def reads_a_helpers_dict(x):
    d = doubled(x)
    return np.sum(d["a"] * d["b"])


def test_a_dict_returned_by_a_helper_is_one_name_per_key():
    # (refused by name at stop 27; tests/transform/test_helper_dicts.py has more)
    srcad.check_grad(reads_a_helpers_dict, X, modes=("rev", "fwd"), order=2)
