"""``srcad.export``: a function and the derivatives it calls, written as one standalone
module that imports only NumPy and the standard library."""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srcad import api
from srcad.errors import ExportError
from srcad.standalone import sites, wrappers
from srcad.standalone.module import ModuleWriter, display_path, namespace_lookup, user_source
from srcad.tracebacks import boundary


@boundary
def export(
    func: Callable,
    path: str | os.PathLike,
    *,
    example_args: tuple | None = None,
    example_kwargs: dict[str, Any] | None = None,
) -> Path:
    """Compile ``func`` with the derivatives it calls into a standalone module at ``path``.

    ``func`` is a function that calls ``srcad.grad(f)(...)`` or ``srcad.value_and_grad(f)(...)``
    (a training step), or a derivative itself (``srcad.grad(f)``). With ``example_args``
    (and ``example_kwargs``), ``func`` runs once on them, like ``jax.jit(f).lower(*args)``,
    and each derivative is specialized to the structure of the arguments it received
    (dicts, lists and tuples of arrays); without them every argument is taken to be an
    array or a number. The file is written atomically, and not at all on error.
    """
    text = export_source(func, example_args=example_args, example_kwargs=example_kwargs)
    path = Path(path)
    write_atomically(path, text)
    return path


def export_source(
    func: Callable, *, example_args: tuple | None = None, example_kwargs: dict | None = None
) -> str:
    """The text :func:`export` writes."""
    made_by = getattr(func, "srcad_made_by", None)
    if isinstance(made_by, str):
        raise ExportError(
            f"a function made by srcad.{made_by} cannot be exported yet; export a function "
            "that calls srcad.jvp(srcad.grad(f), (x,), (v,)) or srcad.grad(f) instead"
        )
    writer = ModuleWriter()
    writer.prepare_user_source = _refuse_derivative_calls
    call = None
    if example_args is not None or example_kwargs is not None:
        call = (tuple(example_args or ()), dict(example_kwargs or {}))
    if isinstance(func, api.Derivative):
        origin = func._func
        where = f"{origin.__qualname__} ({display_path(origin.__code__.co_filename)})"
        main = wrappers.reverse(writer, func, call, where)
        kind = "value_and_grad" if func._with_value else "grad"
        described = f"srcad.{kind}({origin.__code__.co_name})"
    elif inspect.isfunction(func):
        origin = func
        main = _main_function(writer, func, call)
        described = func.__code__.co_name
    else:
        raise TypeError(
            f"srcad.export takes a Python function or a derivative made by srcad, got "
            f"{type(func).__name__} {func!r}"
        )
    return _header(described, origin, writer) + writer.render() + f"\n\n__all__ = [{main!r}]\n"


def _main_function(writer: ModuleWriter, func: Callable, call: tuple | None) -> str:
    filename = display_path(func.__code__.co_filename)
    label = f"{func.__qualname__} ({filename}:{func.__code__.co_firstlineno})"
    text = user_source(func, label)
    writer.sources[label] = text
    first_line = inspect.getsourcelines(func)[1]
    lookup = namespace_lookup(func)
    probed = None
    if call is not None:
        # the function's globals, with closure values as globals (the probe is a copy)
        closure = {name: lookup(name) for name in func.__code__.co_freevars}
        scope = {**func.__globals__, **closure}
        probed = sites.probe(
            func, text, first_line, func.__code__.co_filename, scope, call[0], call[1]
        )
    # the name the def in the source has (a __name__ set at run time may be any string)
    defined = func.__code__.co_name
    name = writer.claim(("object", id(func)), defined)
    text = sites.rewrite(writer, func, text, first_line, lookup, probed)
    writer.add(text, {defined: name}, lookup, "main", label)
    return name


def _refuse_derivative_calls(func: Callable, text: str) -> str:
    """Refuse a copied function of the user's that makes a derivative call itself."""
    tree = ast.parse(text).body[0]
    found = sites.find_sites(tree, namespace_lookup(func), func.__code__.co_firstlineno)
    if found:
        where = f"{display_path(func.__code__.co_filename)}:{found[0].lineno}"
        raise ExportError(
            f"{where}: {func.__qualname__} makes a derivative call; export compiles derivative "
            "calls made by the exported function itself (move the call there)"
        )
    return text


def _header(described: str, origin: Callable, writer: ModuleWriter) -> str:
    import srcad

    digest = hashlib.sha256()
    for label in sorted(writer.sources):
        digest.update(writer.sources[label].encode())
    # one line each, no quotes: a file or function name never becomes code
    filename = _one_line(display_path(origin.__code__.co_filename))
    described = _one_line(described)
    return (
        f"# Generated by srcad {srcad.__version__} from {described} in {filename} "
        f"(sha256 of source: {digest.hexdigest()[:16]}). Do not edit.\n"
        "# Standalone: imports only the array library and the standard library.\n"
        f'"""{described}, compiled ahead of time by srcad."""\n\n'
    )


def _one_line(text: str) -> str:
    """``text`` with line breaks, other unprintable characters, quotes and backslashes
    escaped, for a comment or a docstring of the written module."""
    out = []
    for c in text:
        if c in "\"'":
            out.append(f"\\x{ord(c):02x}")
        elif c == "\\" or not c.isprintable():
            out.append(c.encode("unicode_escape").decode("ascii"))
        else:
            out.append(c)
    return "".join(out)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, so a reader
    never sees half a module and an error leaves nothing behind."""
    folder = path.parent
    if path.is_dir():
        raise ExportError(f"cannot write {path}: it is a folder")
    if folder.exists() and not folder.is_dir():
        raise ExportError(f"cannot write {path}: {folder} is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644)  # mkstemp makes the file private
        os.replace(temporary, path)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
