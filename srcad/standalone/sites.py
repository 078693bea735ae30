"""Derivative calls inside an exported function: ``srcad.value_and_grad(f)(params, x)``,
``srcad.grad(f, wrt=1)(x, y)``, or ``dloss(x)`` where ``dloss = srcad.grad(loss)`` is a
global. Each such call is compiled into the module and the call site rewritten to call it.

The table :data:`ENTRY_POINTS` says which of srcad's functions make derivatives and how
each is compiled; a new kind of derivative (forward mode) is one more entry.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from srcad import api
from srcad.errors import ExportError, TransformError
from srcad.standalone import names, wrappers
from srcad.standalone.module import MISSING, ModuleWriter, display_path


@dataclass(frozen=True)
class EntryPoint:
    """How calls made with one of srcad's functions are compiled.

    ``curried``: the site is ``srcad.grad(f, ...)(args)`` (the derivative is made, then
    called); otherwise it is ``srcad.jvp(f, primals, tangents)``. ``emit`` writes what the
    call site will call and returns its module-level name.
    """

    curried: bool
    emit: Callable[[ModuleWriter, Any, tuple | None, str], str]


ENTRY_POINTS = {
    "grad": EntryPoint(curried=True, emit=wrappers.reverse),
    "value_and_grad": EntryPoint(curried=True, emit=wrappers.reverse),
    "jvp": EntryPoint(curried=False, emit=wrappers.forward),
}


@dataclass
class Site:
    """One derivative call: ``node.func`` is what the rewritten source replaces."""

    node: ast.Call
    entry: EntryPoint
    lineno: int  # in the user's file
    #: ``(callee, args, kwargs)`` of each time the call ran with the example arguments
    calls: list[tuple[Any, tuple, dict]] = field(default_factory=list)


def _entry_point(obj: Any) -> EntryPoint | None:
    if isinstance(obj, api.Derivative):
        return ENTRY_POINTS["grad"]  # a derivative made elsewhere, called here
    for name, entry in ENTRY_POINTS.items():
        if obj is not None and getattr(api, name, None) is obj and not entry.curried:
            return entry
    return None


def _maker(obj: Any) -> EntryPoint | None:
    for name, entry in ENTRY_POINTS.items():
        if obj is not None and getattr(api, name, None) is obj and entry.curried:
            return entry
    return None


def find_sites(tree: ast.FunctionDef, lookup: Callable[[str], Any], first_line: int) -> list[Site]:
    """Every derivative call in ``tree`` (parsed from the function's dedented source)."""
    local = _local_names(tree)

    def resolve(expr: ast.expr) -> Any:
        if isinstance(expr, ast.Name):
            return MISSING if expr.id in local else lookup(expr.id)
        if isinstance(expr, ast.Attribute):
            base = resolve(expr.value)
            return MISSING if base is MISSING else getattr(base, expr.attr, MISSING)
        return MISSING

    sites = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        entry = None
        if isinstance(node.func, ast.Call):
            entry = _maker(resolve(node.func.func))
        if entry is None:
            entry = _entry_point(resolve(node.func))
        if entry is not None:
            sites.append(Site(node, entry, first_line + node.lineno - 1))
    return sorted(sites, key=lambda s: (s.node.lineno, s.node.col_offset))


def _local_names(tree: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
    return names


def probe(
    func: Callable,
    text: str,
    first_line: int,
    filename: str,
    scope: dict[str, Any],
    args: tuple,
    kwargs: dict,
) -> list[Site]:
    """Run ``func`` once on the example arguments, recording what each derivative call
    received (the structure of its arguments decides the code compiled for it)."""
    tree = ast.parse(text)
    fdef = tree.body[0]
    sites = find_sites(fdef, lambda n: scope.get(n, MISSING), first_line)
    if not sites:
        return sites

    def recorder(k: int, callee: Any) -> Callable:
        def record(*a: Any, **kw: Any) -> Any:
            sites[k].calls.append((callee, a, kw))
            return callee(*a, **kw)

        return record

    probe_name = "__srcad_probe__"
    for k, site in enumerate(sites):
        site.node.func = ast.Call(
            ast.Name(probe_name, ast.Load()), [ast.Constant(k), site.node.func], []
        )
    fdef.decorator_list = []
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)  # tracebacks show the user's lines
    namespace = {**scope, probe_name: recorder}
    exec(compile(tree, filename, "exec"), namespace)
    try:
        namespace[fdef.name](*args, **kwargs)
    except TransformError:
        raise  # it names the user's file and line already
    except Exception as exc:
        raise ExportError(
            f"running {func.__qualname__} on the example arguments failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return sites


def rewrite(
    writer: ModuleWriter,
    func: Callable,
    text: str,
    first_line: int,
    lookup: Callable[[str], Any],
    probed: list[Site] | None,
) -> str:
    """``text`` (the dedented source of ``func``) with each derivative call's callee
    replaced by the name of what the module compiled for it."""
    fdef = ast.parse(text).body[0]
    sites = find_sites(fdef, lookup, first_line)
    if probed is not None:
        for site, seen in zip(sites, probed):
            site.calls = seen.calls
    filename = display_path(func.__code__.co_filename)
    edits = []
    for site in sites:
        where = f"{filename}:{site.lineno}"
        callee, call = _callee(site, lookup, where)
        name = site.entry.emit(writer, callee, call, where)
        edits.append((site.node.func, name))
    return names.splice(text, edits)


def _callee(site: Site, lookup: Callable[[str], Any], where: str) -> tuple[Any, tuple | None]:
    """What the site calls and, if it ran with the example arguments, with what."""
    if site.calls:
        callee, args, kwargs = site.calls[0]
        for other, more, named in site.calls[1:]:
            if _structure(other, more, named) != _structure(callee, args, kwargs):
                raise ExportError(
                    f"{where}: the derivative call ran with arguments of different structures "
                    "(pytree keys or lengths); export compiles one structure per call site"
                )
        return callee, (args, kwargs)
    # not run with example arguments: evaluate what it calls from the function's globals
    code = compile(ast.unparse(site.node.func), "<export>", "eval")
    scope = {name: lookup(name) for name in code.co_names}
    try:
        callee = eval(code, {k: v for k, v in scope.items() if v is not MISSING})
    except Exception as exc:
        raise ExportError(
            f"{where}: cannot tell what this derivative call differentiates without running it "
            f"({type(exc).__name__}: {exc}); pass example arguments to export"
        ) from None
    return callee, None


def _structure(callee: Any, args: tuple, kwargs: dict) -> Any:
    if isinstance(callee, api.Derivative):
        bound = callee._bound(args, kwargs) if kwargs else list(args)
        return (callee._func, callee._wrt, api._structures(bound, callee._wrt))
    return (callee, len(args), tuple(kwargs))
