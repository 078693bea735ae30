"""Whether the source text srcad reads is the code Python runs.

``inspect`` reads a function's file as it is now; Python runs the code compiled at import.
After an edit the two differ (another body, or another function once lines moved), so the
file's current text is compiled again and the function's code object must be found in it,
equal (same bytecode, constants, names, line and column table) to the one that runs.
"""

from __future__ import annotations
import __future__

import ast
import functools
import operator
import threading
from collections import OrderedDict
from types import CodeType

from srcad.errors import StaleSourceError

#: compiler flags of ``from __future__`` imports: the code's own are compiled with again
_FUTURE = functools.reduce(
    operator.or_, (getattr(__future__, n).compiler_flag for n in __future__.all_feature_names)
)
_FLAGS = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)  # notebook cells may await
_COMPILED: OrderedDict[str, tuple[list[str], int, CodeType | None]] = OrderedDict()
_FILES = 16  # compiled files kept (a module's functions are often transformed together)
_LOCK = threading.Lock()


def check_source(func, filename: str, lines: list[str]) -> None:
    """Raise :class:`StaleSourceError` unless ``lines`` (the whole file ``inspect`` read)
    compiles to the code ``func`` runs."""
    code = func.__code__
    module = _compiled(code, lines, "@py_builtins" in func.__globals__)
    qualname = getattr(code, "co_qualname", code.co_name)
    if module is not None:
        todo = [module]
        while todo:
            found = todo.pop()
            if found.co_firstlineno == code.co_firstlineno and found == code:
                if getattr(found, "co_qualname", found.co_name) == qualname:
                    return
            todo.extend(c for c in found.co_consts if isinstance(c, CodeType))
    raise StaleSourceError(
        f"the source of {func.__qualname__} has changed since it was compiled: srcad reads "
        "the file as it is now, Python runs the code from import time (or an import hook "
        "rewrote it). Reload the module (importlib.reload(module)) or restart, then "
        "differentiate the reloaded function",
        filename=filename,
        lineno=code.co_firstlineno,
    )


def _compiled(code: CodeType, lines: list[str], pytest_asserts: bool) -> CodeType | None:
    """The code of the whole file ``lines``, compiled as ``code`` was (None if it no longer
    compiles). Kept per file while linecache returns the same lines."""
    flags = code.co_flags & _FUTURE
    filename = code.co_filename
    with _LOCK:
        entry = _COMPILED.get(filename)
        if entry is not None and entry[0] is lines and entry[1] == flags:
            _COMPILED.move_to_end(filename)
            return entry[2]
    text = "".join(lines)
    try:
        tree: ast.Module | str = text
        if pytest_asserts:  # a module pytest imported with its asserts rewritten
            tree = _pytest_rewritten(text, filename)
        module = compile(tree, filename, "exec", flags=flags | _FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        module = None
    with _LOCK:
        _COMPILED[filename] = (lines, flags, module)
        while len(_COMPILED) > _FILES:
            _COMPILED.popitem(last=False)
    return module


def _pytest_rewritten(text: str, filename: str) -> ast.Module | str:
    """``text`` with its asserts rewritten as pytest does on import."""
    try:
        from _pytest.assertion.rewrite import rewrite_asserts
    except ImportError:
        return text
    tree = ast.parse(text, filename)
    rewrite_asserts(tree, text.encode(), filename, None)
    return tree
