"""``path/to/model.py:name`` on the command line: import the file, find the function."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


class LoadError(Exception):
    """A target that does not name a file and a function in it."""


def load_module(path: str) -> Any:
    """Import the Python file at ``path`` (its folder first on ``sys.path``, as a script)."""
    file = Path(path)
    if not file.is_file():
        raise LoadError(f"no such file: {path}" if not file.exists() else f"not a file: {path}")
    name = file.stem if file.stem.isidentifier() else "srcad_target"
    spec = importlib.util.spec_from_file_location(name, file.resolve())
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect and dataclasses find the module through it
    sys.path.insert(0, str(file.resolve().parent))
    spec.loader.exec_module(module)
    return module


def load_target(target: str) -> tuple[Any, Any]:
    """``(module, object)`` for ``FILE.py:NAME`` (``NAME`` may be dotted, ``Class.method``)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise LoadError(f"expected FILE.py:FUNCTION, got {target!r}")
    module = load_module(path)
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            functions = sorted(
                k
                for k, v in vars(module).items()
                if callable(v)
                and not k.startswith("_")
                and getattr(v, "__module__", None) == module.__name__
            )
            hint = f" (it defines: {', '.join(functions)})" if functions else ""
            raise LoadError(f"{path} has no function '{name}'{hint}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise LoadError(f"{path}:{name} is a {type(obj).__name__}, not a function")
    return module, obj
