"""Read a function's source, parse it with gast, and resolve the names it reads."""

from __future__ import annotations

import builtins
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import gast

from srcad.errors import SourceUnavailableError, TransformError, UnsupportedConstructError
from srcad.transform.freshness import check_source
from srcad.transform.naming import Namer
from srcad.transform.snapshot import stored

_MISSING = object()


@dataclass
class Source:
    """A parsed user function with what is needed to locate and resolve its parts."""

    func: Callable
    tree: gast.FunctionDef
    filename: str
    first_line: int
    indent: int
    lines: list[str]
    namespace: dict[str, Any] = field(default_factory=dict)
    #: names of lists the function builds (set by normalization, read by classification)
    lists: set[str] = field(default_factory=set)
    #: where each attribute the transformation resolved is stored (``helpers.loss``,
    #: ``np.sin``), by ``(id(base), attr)``: the snapshot checks them on every call
    reads: dict[tuple[int, str], list] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The function's name."""
        return self.tree.name

    @property
    def params(self) -> list[str]:
        """Positional parameter names, in order."""
        args = self.tree.args
        return [a.id for a in args.posonlyargs + args.args]

    def location(self, node: gast.AST) -> tuple[str, int | None, int | None, str | None]:
        """File, line, column and line text of ``node`` in the user's file."""
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return self.filename, None, None, None
        col = getattr(node, "col_offset", 0) + self.indent
        text = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else None
        return self.filename, self.first_line + lineno - 1, col, text

    def error(
        self, message: str, node: gast.AST, kind: type[TransformError] = UnsupportedConstructError
    ) -> TransformError:
        """An error of ``kind`` located at ``node``."""
        filename, lineno, col, text = self.location(node)
        if lineno is None:
            return kind(message, filename=filename, lineno=self.first_line)
        return kind(message, filename=filename, lineno=lineno, col=col, source_line=text)

    def line_text(self, node: gast.AST) -> str:
        """The stripped source line ``node`` starts on."""
        text = self.location(node)[3]
        return text.strip() if text else ""

    def bind(self, namer: Namer, obj: Any, preferred: str) -> str:
        """A global name for ``obj`` in the generated code, which this source resolves too
        (a helper a pass writes calls of: later passes classify those calls)."""
        name = namer.bind_global(obj, preferred)
        self.namespace[name] = obj
        return name

    def lookup(self, name: str) -> Any:
        """The object a free name refers to: closure, then globals, then builtins."""
        if name in self.namespace:
            return self.namespace[name]
        return getattr(builtins, name, _MISSING)

    def resolve(self, expr: gast.expr, local_names: set[str]) -> Any:
        """The Python object a Name/Attribute chain denotes, or MISSING for locals/unknowns."""
        if isinstance(expr, gast.Name):
            if expr.id in local_names:
                return _MISSING
            return self.lookup(expr.id)
        if isinstance(expr, gast.Attribute):
            base = self.resolve(expr.value, local_names)
            if base is _MISSING:
                return _MISSING
            value = getattr(base, expr.attr, _MISSING)
            key = (id(base), expr.attr)
            if key not in self.reads and (callable(value) or isinstance(value, ModuleType)):
                # what is called or reached through is bound when transforming; plain
                # values (``config.SCALE``) are read by the generated code when it runs
                self.reads[key] = stored(base, expr.attr)
            return value
        return _MISSING


MISSING = _MISSING


def _lambda_as_def(
    module: gast.Module, func: Callable, filename: str, first_line: int
) -> gast.FunctionDef:
    """The lambda ``func`` in its statement's source, as ``def lambda_(...): return ...``."""
    code = func.__code__
    params = list(code.co_varnames[: code.co_argcount])
    line = code.co_firstlineno - first_line + 1
    found = [
        node
        for node in gast.walk(module)
        if isinstance(node, gast.Lambda)
        and getattr(node, "lineno", None) == line
        and [a.id for a in node.args.args] == params
    ]
    if len(found) != 1:
        raise SourceUnavailableError(
            "cannot tell which lambda on this line is being differentiated"
            if found
            else "the lambda's source cannot be found; write the function with 'def'",
            filename=filename,
            lineno=code.co_firstlineno,
        )
    node = found[0]
    body = gast.copy_location(gast.Return(value=node.body), node.body)
    fdef = gast.FunctionDef(
        name="lambda_",
        args=node.args,
        body=[body],
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )
    return gast.copy_location(fdef, node)


def _parsed(text: str, func: Callable, filename: str, lineno: int) -> gast.Module:
    """``text`` (the source of ``func``, or its whole file) parsed."""
    try:
        return gast.parse(text)
    except SyntaxError as exc:
        raise SourceUnavailableError(
            f"cannot parse the source of {func.__qualname__}: {exc.msg}",
            filename=filename,
            lineno=lineno,
        ) from None


def parse_function(func: Callable) -> Source:
    """Parse ``func``'s source into a :class:`Source`."""
    if not inspect.isfunction(func):
        what = type(func).__name__
        raise SourceUnavailableError(
            f"srcad differentiates Python functions defined with 'def'; got {what} {func!r}"
        )
    code = func.__code__
    try:
        # the code's own source: inspect follows __wrapped__ for a function, which would
        # give the undecorated function's source for a functools.wraps wrapper
        every_line, start = inspect.findsource(code)
        lines, first_line = inspect.getblock(every_line[start:]), start + 1
        filename = inspect.getsourcefile(code) or code.co_filename
    except (OSError, TypeError) as exc:
        where = (
            "it was typed at the REPL, and Python's own REPL keeps no source before 3.13"
            if code.co_filename == "<stdin>"
            else "functions typed at the REPL or built by exec have none"
        )
        raise SourceUnavailableError(
            f"the source of {func.__qualname__} is unavailable ({exc}); srcad needs the "
            f"function's source ({where}). Put it in a file, or use IPython, Jupyter or the "
            "Python 3.13+ REPL, which keep the source of what is typed",
            filename=code.co_filename,
            lineno=code.co_firstlineno,
        ) from None
    check_source(func, filename, every_line)  # the text read is the code that runs
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    first = next((ln for ln in lines if ln.strip()), "")
    indent = len(first) - len(first.lstrip())
    if func.__name__ != "<lambda>":
        module = _parsed(dedented, func, filename, first_line)
        tree = module.body[0] if module.body else None
    else:
        try:
            tree = _lambda_as_def(gast.parse(dedented), func, filename, first_line)
        except (SyntaxError, SourceUnavailableError):
            # the lambda's line starts no statement of its own (``"k": (lambda x: ...),``
            # in a display written over several lines): found in its whole file
            module = _parsed("".join(every_line), func, filename, code.co_firstlineno)
            lines, first_line, indent = every_line, 1, 0
            tree = _lambda_as_def(module, func, filename, first_line)
    if isinstance(tree, gast.AsyncFunctionDef):
        source = Source(func, tree, filename, first_line, indent, lines)
        raise source.error("async functions cannot be differentiated", tree)
    if not isinstance(tree, gast.FunctionDef):
        raise SourceUnavailableError(
            f"{func.__qualname__} is not defined by a 'def' statement or a lambda srcad "
            "can find in its source",
            filename=filename,
            lineno=first_line,
        )
    tree.decorator_list = []
    namespace = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(code.co_freevars, func.__closure__):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:
                pass
    return Source(func, tree, filename, first_line, indent, lines, namespace)
