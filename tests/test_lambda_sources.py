"""Lambdas wherever Python lets one be written: srcad finds each one's source (a lambda
whose line starts no statement of its own, inside a display or a call written over several
lines, gave SourceUnavailableError "cannot parse the source of <lambda>" until stop 33)."""

import importlib.util
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import srcad

#: lambdas with their gradients at x
BODIES = [
    ("lambda x: np.sum(x ** 2)", lambda x: 2 * x),
    ("lambda x: np.sum(np.sin(x) * x)", lambda x: np.cos(x) * x + np.sin(x)),
    ("lambda v: np.sum(np.tanh(v))", lambda x: 1 - np.tanh(x) ** 2),
    ("lambda w: np.sum(w * w * w)", lambda x: 3 * x * x),
]

#: how the lambdas are held: one ``{}`` per lambda, line breaks where Python allows them
LAYOUTS = [
    "TABLE = {{\n    'a': ({}, 1),\n    'b': (\n        {},\n        2,\n    ),\n}}\n"
    "HELD = [TABLE['a'][0], TABLE['b'][0]]\n",
    "HELD = [\n    {},\n    {},\n]\n",
    "HELD = (\n    {}, {})\n",
    "HELD = list(\n    map(lambda f: f, [\n        {},\n        {}]))\n",
    "def make(*fs):\n    return list(fs)\n\n\nHELD = make(\n    {},\n    {},\n)\n",
    "HELD = dict(\n    first={},\n    second={}).values()\nHELD = list(HELD)\n",
]


def _load(text: str, path) -> list:
    path.write_text("import numpy as np\n\n" + text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.HELD


@settings(max_examples=30, deadline=None, database=None)
@given(
    layout=st.sampled_from(LAYOUTS),
    pair=st.sampled_from(list(itertools.permutations(range(len(BODIES)), 2))),
    x=st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=4).map(np.array),
)
def test_lambdas_found_in_any_layout(tmp_path_factory, layout, pair, x):
    path = tmp_path_factory.mktemp("lambdas") / "held.py"
    held = _load(layout.format(*(BODIES[k][0] for k in pair)), path)
    for f, k in zip(held, pair):
        assert np.allclose(srcad.grad(f)(x.copy()), BODIES[k][1](x))
