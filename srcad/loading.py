"""``path/to/model.py:name`` or ``package.module:name`` on the command line: import the file
or module, find the function."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
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
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise LoadError(f"cannot import {path}: {_one_line(exc, file.resolve())}") from None
    return module


def import_module(name: str) -> Any:
    """Import the module named ``name`` (``package.module``), as ``import`` would."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise LoadError(f"no such file or module: {name}") from None
        raise LoadError(f"cannot import {name}: {_one_line(exc)}") from None
    except Exception as exc:
        raise LoadError(f"cannot import {name}: {_one_line(exc)}") from None


def _one_line(exc: BaseException, file: Path | None = None) -> str:
    """``Error: message (file:line)``: where in the imported code ``exc`` was raised."""
    where = ""
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f" ({exc.filename}:{exc.lineno})"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        # the imported file's own line if the error came from it, else the deepest frame
        own = [f for f in frames if file is not None and Path(f.filename) == file]
        frame = (own or frames or [None])[-1]
        if frame is not None:
            where = f" ({frame.filename}:{frame.lineno})"
    text = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    message = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {message}{where}" if message else type(exc).__name__ + where


def load_target(target: str) -> tuple[Any, Any]:
    """``(module, object)`` for ``FILE.py:NAME`` or ``package.module:NAME`` (``NAME`` may be
    dotted, ``Class.method``)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise LoadError(f"expected FILE.py:FUNCTION or MODULE:FUNCTION, got {target!r}")
    is_module_name = all(part.isidentifier() for part in path.split("."))
    if is_module_name and not path.endswith(".py") and not Path(path).exists():
        module = import_module(path)
    else:
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
