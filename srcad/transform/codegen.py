"""Emit Python source from gast, with comments, and compile it under a linecache name."""

from __future__ import annotations

import ast
import itertools
import linecache
import re
import weakref
from typing import Any

import gast

from srcad.transform.build import COMMENT_MARKER

_COMMENT = re.compile(r"^(\s*)" + re.escape(COMMENT_MARKER) + r"\((.*)\)$")
_serial = itertools.count(1)


def to_source(tree: gast.AST) -> str:
    """Readable Python source for ``tree``; comment markers become ``#`` comments."""
    node = gast.gast_to_ast(tree)
    todo = [node]
    while todo:  # statements only: expressions hold no bodies
        part = todo.pop()
        if isinstance(part, (ast.If, ast.For, ast.While, ast.With, ast.FunctionDef)):
            if not part.body:
                part.body = [ast.Pass()]
            todo.extend(part.body)
            todo.extend(getattr(part, "orelse", ()))
        elif isinstance(part, ast.Module):
            todo.extend(part.body)
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


def compile_source(source: str, namespace: dict[str, Any], label: str) -> dict[str, Any]:
    """Compile ``source`` (one or more defs) and return the namespace that holds them.

    The text is registered in linecache under a unique file name so that ``inspect``,
    tracebacks and pdb show the generated lines, for as long as the compiled functions
    live: the entry goes when their namespace is collected (evicted from the cache).
    """
    filename = f"<srcad {next(_serial)}: {label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    scope = dict(namespace)
    scope["__srcad_lines__"] = lines = _Lines()
    weakref.finalize(lines, linecache.cache.pop, filename, None).atexit = False
    exec(code, scope)
    return scope


class _Lines:
    """Lives as long as the generated functions' namespace (their ``__globals__``)."""
