"""Emit Python source from gast, with comments, and compile it under a linecache name."""

from __future__ import annotations

import ast
import itertools
import linecache
import re
from collections.abc import Callable
from typing import Any

import gast

from srcad.transform.build import COMMENT_MARKER

_COMMENT = re.compile(r"^(\s*)" + re.escape(COMMENT_MARKER) + r"\((.*)\)$")
_serial = itertools.count(1)


def to_source(tree: gast.AST) -> str:
    """Readable Python source for ``tree``; comment markers become ``#`` comments."""
    node = gast.gast_to_ast(tree)
    ast.fix_missing_locations(node)
    lines = []
    for line in ast.unparse(node).splitlines():
        match = _COMMENT.match(line)
        if match:
            text = ast.literal_eval(match.group(2)).replace("\n", " ")
            lines.append(f"{match.group(1)}# {text}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def compile_function(source: str, name: str, namespace: dict[str, Any], label: str) -> Callable:
    """Compile ``source`` (one def named ``name``) and return the function.

    The text is registered in linecache under a unique file name so that ``inspect``,
    tracebacks and pdb show the generated lines.
    """
    filename = f"<srcad {next(_serial)}: {label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    scope = dict(namespace)
    exec(code, scope)
    return scope[name]
