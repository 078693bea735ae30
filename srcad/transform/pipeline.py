"""The transformation pipeline, in order, on one screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

import srcad.adjoints  # noqa: F401  (registers the rules)
from srcad.transform.codegen import compile_function, to_source
from srcad.transform.fence import fence
from srcad.transform.frontend import MISSING, Source, parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import anf, local_names
from srcad.transform.normalize.desugar import desugar
from srcad.transform.normalize.rename import rename
from srcad.transform.optimize import optimize
from srcad.transform.rebind import rebind
from srcad.transform.reverse import reverse
from srcad.transform.snapshot import Snapshot


@dataclass
class Generated:
    """A compiled derivative function and the source it was compiled from."""

    function: Callable
    source: str
    params: list[str]
    wrt: list[str]
    snapshot: Snapshot


def normalize(source: Source, namer: Namer) -> gast.FunctionDef:
    """The function in A-normal, SSA form: one operation per statement, one name per value."""
    tree = fence(source.tree, source)
    tree = desugar(tree)
    tree = anf(tree, namer)
    return rename(tree, namer)


def reverse_mode(func: Callable, wrt: tuple[int, ...], single: bool, mode: str) -> Generated:
    """Transform ``func`` into its reverse-mode derivative function (``mode``: grad or vjp)."""
    source = parse_function(func)
    namer = Namer.for_tree(source.tree)
    params = source.params
    wrt_names = [params[i] for i in wrt]
    tree = normalize(source, namer)
    free = _free_names(tree, source)
    for name, obj in free.items():
        namer.bind_user_global(name, obj)
    tree = reverse(tree, source, namer, wrt_names, single, mode)
    tree = optimize(tree, namer)
    tree = rebind(tree, source, namer, free)
    text = to_source(tree)
    label = f"{mode} of {source.name} ({source.filename}:{source.first_line})"
    function = compile_function(text, tree.name, namer.globals, label)
    function.__defaults__ = func.__defaults__
    function.__kwdefaults__ = func.__kwdefaults__
    return Generated(function, text, params, wrt_names, Snapshot(func, free))


def _free_names(tree: gast.FunctionDef, source: Source) -> dict[str, Any]:
    local = local_names(tree)
    free = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id not in local:
            obj = source.lookup(node.id)
            if obj is MISSING:
                raise source.error(f"name '{node.id}' is not defined", node)
            free[node.id] = obj
    return free
