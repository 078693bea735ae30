"""``srcad.grad(f)(x)`` inside a function being differentiated: the derivative object is
made when the function is transformed, and the call becomes a call of that object (whose
generated code is differentiated like any user function's). ``srcad.jvp(f, (x,), (v,))``
becomes a call of ``f``'s forward-mode function, ``jvp_f(x, v)``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gast

from srcad.transform.analyses.aliasing import unpacked_parts
from srcad.transform.calls import JVPFunction
from srcad.transform.frontend import MISSING, Source
from srcad.transform.naming import Namer
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.objects import read_fields

#: The derivative factories (``srcad.grad``, ``srcad.value_and_grad``), filled in by the API.
FACTORIES: set[Callable] = set()
#: ``srcad.jvp``, filled in by the API.
JVPS: set[Callable] = set()
#: the API functions refused inside differentiated code, with what to write instead
REFUSED: dict[Callable, str] = {}
#: the API functions written out in terms of grad and jvp (srcad/transform/inside.py):
#: each takes the fold and the call, and returns what replaces the call
INSIDE: dict[Callable, Callable[[Any, gast.Call], gast.AST]] = {}


def fold_derivatives(source: Source, namer: Namer) -> bool:
    """Replace each factory call with constant arguments by a name bound to its result."""
    source.tree = read_fields(source.tree, source)  # (``s = getattr(np, "sin")`` too)
    folder = _Fold(source, namer)
    folder.visit(source.tree)
    return folder.changed


class _Fold(Transformer):
    def __init__(self, source: Source, namer: Namer) -> None:
        self.source = source
        self.namer = namer
        self.changed = False
        #: the globals this fold bound (derivative objects)
        self.made: set[str] = set()
        #: a local bound once to one of them (``g = srcad.grad(h)``), or to a function
        #: from outside (``s = np.sin``) -> what it holds
        self.aliases: dict[str, gast.expr] = {}
        self.local = local_names(source.tree)
        stores: dict[str, int] = {}
        for node in gast.walk(source.tree):
            if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
        self.once = {name for name, count in stores.items() if count == 1}

    def visit_Assign(self, node: gast.Assign) -> gast.AST:
        self.generic_visit(node)
        if len(node.targets) != 1:
            return node
        # (``s, c = np.sin, np.cos``: each name with its element)
        for name, value in unpacked_parts(node.targets[0], node.value):
            if name in self.once and self.held(value):
                # ``g = srcad.grad(h)`` then ``g(x)``, as JAX code writes it, or ``s =
                # np.sin``: the calls read the function itself
                self.aliases[name] = value
        return node

    def held(self, value: gast.expr) -> bool:
        """Whether ``value`` is a function a local may stand for: a derivative this fold
        made, or a function, class or callable object read from outside."""
        if isinstance(value, gast.Name) and value.id in self.made:
            return True
        if not isinstance(value, (gast.Name, gast.Attribute)):
            return False
        found = self.source.resolve(value, self.local)
        return found is not MISSING and callable(found)

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if isinstance(node.ctx, gast.Load) and node.id in self.aliases:
            self.changed = True
            return gast.copy_location(copy.deepcopy(self.aliases[node.id]), node)
        return node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        factory = self.source.resolve(node.func, set())
        if factory in JVPS:
            return self.jvp(node)
        inside = INSIDE.get(factory) if callable(factory) else None
        if inside is not None:
            return inside(self, node)
        made_by = getattr(factory, "srcad_made_by", None) if callable(factory) else None
        if isinstance(made_by, str):
            # (its value is a loop over unit directions, which has no source to transform)
            raise self.source.error(
                f"calling a function made by srcad.{made_by} inside a differentiated function "
                "is not supported yet; differentiate that function itself (srcad.jvp, "
                "srcad.jacobian, srcad.grad of it), or write srcad.jvp(srcad.grad(f), (x,), "
                "(v,)) here",
                node,
            )
        instead = REFUSED.get(factory) if callable(factory) else None
        if instead is not None:
            raise self.source.error(
                f"srcad.{factory.__name__} inside a differentiated function is not supported "
                f"yet; {instead}",
                node,
            )
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
        self.made.add(name)
        self.changed = True
        return gast.copy_location(gast.Name(name, gast.Load(), None, None), node)

    def jvp(self, node: gast.Call) -> gast.AST:
        """``jvp(f, (x, y), (v, None))`` becomes ``jvp_f(x, y, v)``."""
        args = node.args
        primals, tangents = jvp_form(self.source, node, "jvp")
        try:
            func = self.constant(args[0])
        except LookupError:
            raise self.source.error(
                "srcad.jvp inside a differentiated function needs a function defined outside",
                args[0],
            ) from None
        wrt = tuple(
            k
            for k, t in enumerate(tangents)
            if not (isinstance(t, gast.Constant) and t.value is None)
        )
        handle = JVPFunction(func, wrt)
        name = self.namer.bind_global(handle, f"jvp_{getattr(func, '__name__', 'f')}")
        self.source.namespace[name] = handle
        self.changed = True
        call = gast.Call(
            func=gast.Name(name, gast.Load(), None, None),
            args=[*primals, *(tangents[k] for k in wrt)],
            keywords=[],
        )
        return gast.copy_location(call, node)

    def constant(self, node: gast.expr) -> Any:
        """The value of a free name, a constant, or a tuple of those."""
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Tuple):
            return tuple(self.constant(e) for e in node.elts)
        if isinstance(node, gast.Name) and node.id in self.made:
            return self.source.namespace[node.id]
        value = self.source.resolve(node, local_names(self.source.tree))
        if value is MISSING:
            raise LookupError
        return value


def jvp_form(source: Source, node: gast.Call, what: str) -> tuple[list, list]:
    """The primals and tangents of ``what(f, (x, ...), (v, ...))`` written inside a
    differentiated function (``jvp``, ``hvp``): one tangent (or None) per primal."""
    args = node.args
    if (
        len(args) != 3
        or node.keywords
        or not all(isinstance(a, gast.Tuple) for a in args[1:])
        or len(args[1].elts) != len(args[2].elts)
    ):
        raise source.error(
            f"srcad.{what} inside a differentiated function needs the form "
            f"{what}(f, (x, ...), (v, ...)) with one tangent (or None) per primal",
            node,
        )
    return args[1].elts, args[2].elts
