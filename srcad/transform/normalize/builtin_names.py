"""A variable of the function named as a Python builtin (``len = 0.5``, ``slice = 2.0``) is
renamed (``len_``): the generated code calls builtins by name (``len(tape)``,
``slice(1, None, None)``), which such a variable would shadow. Parameters keep their names
(a caller may pass them by keyword)."""

from __future__ import annotations

import builtins

import gast

from srcad.transform.naming import Namer


def rename_builtin_variables(tree: gast.FunctionDef, namer: Namer) -> gast.FunctionDef:
    """``tree`` with each variable it assigns under a builtin's name renamed throughout."""
    args = tree.args
    params = {a.id for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    params |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    stored = {
        node.id
        for stmt in tree.body
        for node in gast.walk(stmt)
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)
    }
    # (not ``_``, which is a builtin only where an interactive session has set it)
    shadowing = sorted(n for n in stored - params if hasattr(builtins, n) and n[0] != "_")
    if not shadowing:
        return tree
    new = {name: namer.fresh(f"{name}_") for name in shadowing}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id in new:
            node.id = new[node.id]
    return tree
