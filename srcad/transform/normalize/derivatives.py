"""``srcad.grad(f)(x)`` inside a function being differentiated: the derivative object is
made when the function is transformed, and the call becomes a call of that object (whose
generated code is differentiated like any user function's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from srcad.transform.frontend import MISSING, Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names

#: The derivative factories (``srcad.grad``, ``srcad.value_and_grad``), filled in by the API.
FACTORIES: set[Callable] = set()


def fold_derivatives(source: Source, namer: Namer) -> bool:
    """Replace each factory call with constant arguments by a name bound to its result."""
    folder = _Fold(source, namer)
    folder.visit(source.tree)
    return folder.changed


class _Fold(gast.NodeTransformer):
    def __init__(self, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer
        self.changed = False

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        factory = self.source.resolve(node.func, set())
        if factory not in FACTORIES:
            return node
        try:
            args = [self.constant(a) for a in node.args]
            kwargs = {k.arg: self.constant(k.value) for k in node.keywords}
        except LookupError:
            raise self.source.error(
                f"{getattr(factory, '__name__', 'derivative')}() inside a differentiated "
                "function needs arguments known when it is transformed (a function defined "
                "outside, constant wrt)",
                node,
            ) from None
        derivative = factory(*args, **kwargs)
        target = getattr(args[0], "__name__", "f") if args else "f"
        name = self.namer.bind_global(derivative, f"{factory.__name__}_{target}")
        self.source.namespace[name] = derivative
        self.changed = True
        return gast.copy_location(gast.Name(name, gast.Load(), None, None), node)

    def constant(self, node: gast.expr) -> Any:
        """The value of a free name, a constant, or a tuple of those."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Tuple):
            return tuple(self.constant(e) for e in node.elts)
        value = self.source.resolve(node, local_names(self.source.tree))
        if value is MISSING:
            raise LookupError
        return value
