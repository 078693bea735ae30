"""The annotation schema: every key the passes use is declared, with its type."""

import re
from pathlib import Path

import gast
import pytest

from srcad.transform.anno import SCHEMA, getanno, setanno

SRCAD = Path(__file__).resolve().parents[2] / "srcad"


def test_every_key_the_passes_use_is_in_the_schema():
    used = set()
    for path in SRCAD.rglob("*.py"):
        used |= set(re.findall(r"(?:set|get)anno\([^,()]+, \"(\w+)\"", path.read_text()))
    assert used, "no annotation found: the pattern is wrong"
    assert used <= set(SCHEMA), used - set(SCHEMA)


def test_an_unknown_key_is_refused():
    node = gast.Pass()
    with pytest.raises(KeyError, match="not in srcad.transform.anno.SCHEMA"):
        setanno(node, "purity", True)
    with pytest.raises(KeyError, match="not in srcad.transform.anno.SCHEMA"):
        getanno(node, "purity")


def test_a_value_of_another_type_is_refused():
    node = gast.Pass()
    with pytest.raises(TypeError, match="'pure' holds"):
        setanno(node, "pure", "yes")
    setanno(node, "pure", True)
    assert getanno(node, "pure") is True
    assert getanno(gast.Pass(), "pure", False) is False
