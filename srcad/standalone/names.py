"""Names in a piece of module source: what it defines, what it reads from outside, and
renaming one of them (when two pieces want the same module-level name)."""

from __future__ import annotations

import ast
import symtable


def defined_names(text: str) -> list[str]:
    """Names the top-level statements of ``text`` bind, in order."""
    names: list[str] = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.extend(t.id for t in targets if isinstance(t, ast.Name))
    return names


def free_names(text: str) -> set[str]:
    """Names ``text`` reads that nothing in it binds (globals and builtins), annotations
    aside: exported modules never evaluate annotations."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        elif isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)
    table = symtable.symtable(ast.unparse(tree), "<export>", "exec")
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    found = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    stack = list(table.get_children())
    while stack:
        scope = stack.pop()
        found |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
        stack.extend(scope.get_children())
    return found - bound


def annotation_names(text: str) -> set[str]:
    """Names read in the annotations of ``text`` (of parameters, returns and variables)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        parts = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(node.returns)
        elif isinstance(node, ast.arg):
            parts.append(node.annotation)
        elif isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        for part in parts:
            if part is not None:
                found |= {n.id for n in ast.walk(part) if isinstance(n, ast.Name)}
    return found


def rename(text: str, old: str, new: str) -> str:
    """``text`` with the module-level name ``old`` spelled ``new`` wherever it is read or
    defined; a ValueError if ``old`` is also a local name somewhere (it would be ambiguous)."""
    tree = ast.parse(text)
    spots: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == old:
                if node not in tree.body:
                    raise ValueError(f"'{old}' is also a local name")
                spots.append(_def_name_spot(text, node))
            for arg in ast.walk(node.args) if not isinstance(node, ast.ClassDef) else ():
                if isinstance(arg, ast.arg) and arg.arg == old:
                    raise ValueError(f"'{old}' is also a parameter name")
        elif isinstance(node, ast.Name) and node.id == old:
            spots.append((node.lineno, node.col_offset))
        elif isinstance(node, ast.Lambda) and old in {a.arg for a in ast.walk(node.args)}:
            raise ValueError(f"'{old}' is also a parameter name")
    for node in ast.walk(tree):
        inner = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        for stmt in inner:
            for sub in ast.walk(stmt):
                if (
                    isinstance(sub, ast.Name)
                    and sub.id == old
                    and not isinstance(sub.ctx, ast.Load)
                ):
                    raise ValueError(f"'{old}' is also a local name")
    lines = text.splitlines(keepends=True)
    for lineno, col in sorted(spots, reverse=True):
        raw = lines[lineno - 1].encode()  # ast columns count UTF-8 bytes
        lines[lineno - 1] = (raw[:col] + new.encode() + raw[col + len(old.encode()) :]).decode()
    return "".join(lines)


def _def_name_spot(text: str, node: ast.AST) -> tuple[int, int]:
    """Line and byte column of the name in a ``def``/``class`` statement's header."""
    raw = text.splitlines()[node.lineno - 1].encode()
    keyword = b"class" if isinstance(node, ast.ClassDef) else b"def"
    at = raw.index(keyword, node.col_offset) + len(keyword)
    while raw[at : at + 1].isspace():
        at += 1
    return node.lineno, at


def splice(text: str, edits: list[tuple[ast.expr, str]]) -> str:
    """``text`` with each node's source replaced by a string, last first so that the
    positions of the others stay valid (nodes from ``ast.parse(text)``)."""
    lines = [line.encode() for line in text.splitlines(keepends=True)]  # columns are bytes
    order = sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True)
    for node, name in order:
        start, end = node.lineno - 1, node.end_lineno - 1
        head = lines[start][: node.col_offset]
        tail = lines[end][node.end_col_offset :]
        lines[start : end + 1] = [head + name.encode() + tail]
    return b"".join(lines).decode()
