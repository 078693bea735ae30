"""``srcad.jacobian``, ``srcad.hessian``, ``srcad.hvp`` and ``srcad.vjp`` written inside a
function being differentiated, written out in terms of ``srcad.jvp`` and ``srcad.grad``
(which srcad differentiates again):

- ``jacobian(f, wrt=i)`` becomes a function srcad reads that builds the Jacobian a column
  at a time, ``jvp(f, args, e_k)`` along each unit direction ``e_k`` of argument ``i``
  (as many turns as that argument has elements, known when the function runs);
- ``hessian(f, wrt=i)`` is that, of ``grad(f, wrt=i)``;
- ``hvp(f, primals, tangents)`` becomes ``jvp(grad(f), primals, tangents)[1]``;
- ``out, pullback = vjp(f, *primals)`` becomes ``out = f(*primals)``, and each call
  ``pullback(g)`` the gradient of ``sum(f(*primals) * g)`` with respect to every primal.

normalize/derivatives.py calls these (``INSIDE``, filled in by the API) on each call of
those API functions, before any other pass reads the function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from srcad.runtime.calls import Composition, JVPFunction, own_signature
from srcad.transform.nodes import Transformer
from srcad.transform.normalize.derivatives import jvp_form


def jacobian(fold: Any, node: gast.Call) -> gast.AST:
    """``srcad.jacobian(f, wrt)`` -> the name of a :class:`Composition` computing it."""
    from srcad import api

    f, options = _factory_arguments(fold, node, api.jacobian)
    _refuse_options(fold, node, "jacobian", options, ("mode",))
    indices, single = api.caller_wrt(f, api._argnums(options["wrt"], options["argnums"]))
    params = _params(fold, node, f, "jacobian")
    function = _columns(f, params, indices, single, f"jacobian_{_name(f)}")
    return _bind(fold, node, Composition(function, "jacobian"))


def hessian(fold: Any, node: gast.Call) -> gast.AST:
    """``srcad.hessian(f, wrt)`` -> the Jacobian (as above) of ``srcad.grad(f, wrt)``."""
    from srcad import api

    f, options = _factory_arguments(fold, node, api.hessian)
    _refuse_options(fold, node, "hessian", options, ())
    indices, single = api.caller_wrt(f, api._argnums(options["wrt"], options["argnums"]))
    if not single:
        raise fold.source.error(
            "srcad.hessian with a tuple wrt inside a differentiated function is not supported "
            "yet; take one srcad.hessian per argument, or srcad.jacobian of srcad.grad",
            node,
        )
    params = _params(fold, node, f, "hessian")
    gradient = api.grad(f, wrt=indices[0])
    function = _columns(gradient, params, indices, True, f"hessian_{_name(f)}")
    return _bind(fold, node, Composition(function, "hessian"))


def hvp(fold: Any, node: gast.Call) -> gast.AST:
    """``srcad.hvp(f, (x, y), (v, None))`` -> ``jvp_grad_f(x, y, v)[1]`` (one result per
    primal: None where the tangent is None; the result itself for one primal)."""
    from srcad import api

    f, primals, tangents = _jvp_form(fold, node, "hvp")
    wrt = tuple(k for k, t in enumerate(tangents) if not _is_none(t))
    if not wrt:
        raise fold.source.error("srcad.hvp needs at least one tangent that is not None", node)
    _params(fold, node, f, "hvp")
    fold.changed = True

    def product(k: int) -> gast.expr:
        """``jvp(grad(f, wrt=k), primals, tangents)[1]``: the product's part for primal k."""
        handle = JVPFunction(api.grad(f, wrt=k), wrt)
        name = fold.namer.bind_global(handle, f"jvp_grad{k}_{_name(f)}")
        fold.source.namespace[name] = handle
        args = [*primals, *(tangents[j] for j in wrt)]
        call = gast.Call(func=gast.Name(name, gast.Load(), None, None), args=args, keywords=[])
        return _item(call, 1)

    if len(primals) == 1:
        return gast.copy_location(product(0), node)
    # one jvp of a gradient per primal with a tangent (one of all the gradients would
    # return a tuple, which a jvp written inside cannot yet); None for the others
    none = gast.Constant(value=None, kind=None)
    parts = [product(k) if k in wrt else none for k in range(len(primals))]
    return gast.copy_location(gast.Tuple(elts=parts, ctx=gast.Load()), node)


def vjp(fold: Any, node: gast.Call) -> gast.AST:
    """``out, pullback = srcad.vjp(f, x, y)`` -> ``out, pullback = f(x, y), None``, and each
    ``pullback(g)`` a call of the gradient of ``sum(f(x, y) * g)`` with respect to ``x`` and
    ``y`` (the primals must be names the function does not assign again)."""
    from srcad import api

    if node.keywords or not node.args:
        raise fold.source.error(
            "srcad.vjp inside a differentiated function needs the form out, pullback = "
            "srcad.vjp(f, x, ...) (without has_aux)",
            node,
        )
    f = _function(fold, node.args[0], "vjp")
    primals = node.args[1:]
    params = _params(fold, node, f, "vjp")
    if len(primals) != len(params):
        raise fold.source.error(
            f"srcad.vjp inside a differentiated function needs one primal per positional "
            f"parameter of {_name(f)} ({len(params)})",
            node,
        )
    statement = _statement_of(fold.source.tree, node)
    pullback = _pullback_name(statement, node)
    if pullback is None or not all(isinstance(p, gast.Name) for p in primals):
        raise fold.source.error(
            "srcad.vjp inside a differentiated function needs the form out, pullback = "
            "srcad.vjp(f, x, ...) with names for the primals",
            node,
        )
    reassigned = _assigned(fold.source.tree) & {p.id for p in primals}
    if reassigned:
        raise fold.source.error(
            f"srcad.vjp inside a differentiated function: {sorted(reassigned)[0]} is assigned "
            "in the function; pass a name that is not (its value when the pullback is called "
            "must be the one at the vjp)",
            node,
        )
    dot = _dot(f, len(params))
    wrt = tuple(range(len(params)))
    gradient = api.grad(dot, wrt=wrt)
    name = fold.namer.bind_global(gradient, f"vjp_{_name(f)}_pullback")
    fold.source.namespace[name] = gradient
    replaced = _Pullbacks(pullback, name, [p.id for p in primals])
    replaced.visit(fold.source.tree)
    if replaced.other_use is not None:
        raise fold.source.error(
            f"the pullback '{pullback}' of srcad.vjp inside a differentiated function can only "
            "be called (pullback(g)), not passed on or stored",
            replaced.other_use,
        )
    fold.changed = True
    call = gast.Call(func=node.args[0], args=list(primals), keywords=[])
    pair = [call, gast.Constant(value=None, kind=None)]
    return gast.copy_location(gast.Tuple(elts=pair, ctx=gast.Load()), node)


def _bind(fold: Any, node: gast.Call, composition: Composition) -> gast.AST:
    """The global name of ``composition`` (which a call of it then calls, as a user's
    function: srcad reads its function)."""
    name = fold.namer.bind_global(composition, composition.__name__)
    fold.source.namespace[name] = composition
    fold.made.add(name)
    fold.changed = True
    return gast.copy_location(gast.Name(name, gast.Load(), None, None), node)


# ---- the functions written out ----------------------------------------------------------


def _columns(
    f: Callable, params: list[str], indices: tuple[int, ...], single: bool, name: str
) -> Callable:
    """``def name(p0, p1)``: the Jacobian of ``f`` with respect to the parameters
    ``indices``, a column (one ``srcad.jvp`` along a unit direction) at a time."""
    from srcad.callables import new_caller

    args = ", ".join(params)
    lines = [f"out = __srcad_f__({args})", "m = np.size(out)"]
    scope: dict[str, Any] = {"__srcad_f__": f, "np": np}
    blocks = []
    for j, k in enumerate(indices):
        x, block, jvp = params[k], f"J{j}", f"__srcad_jvp{j}__"
        scope[jvp] = JVPFunction(f, (k,))
        lines += [
            f"n{j} = np.size({x})",
            f"{block} = np.zeros((m, n{j}))",
            f"for k in range(n{j}):",
            f"    e = np.reshape(np.eye(n{j})[k], np.shape({x}))",
            f"    value, column = {jvp}({args}, e)",
            f"    {block} = {block} + np.reshape(column, (m, 1)) * np.eye(n{j})[k]",
            f"{block} = np.reshape({block}, np.shape(out) + np.shape({x}))",
        ]
        blocks.append(block)
    result = blocks[0] if single else f"({', '.join(blocks)},)"
    key = ("inside", name, id(f), indices, single)
    function = new_caller(key, f, name, args, result, scope, lines)
    function.__defaults__ = getattr(f, "__defaults__", None)
    return function


def _dot(f: Callable, count: int) -> Callable:
    """``def f_dot(p0, p1, g): return np.sum(f(p0, p1) * g)``."""
    from srcad.callables import known_caller, new_caller

    key = ("inside vjp dot", id(f), count)
    found = known_caller(key, f)
    if found is not None:
        return found
    args = ", ".join(f"p{k}" for k in range(count))
    scope = {"__srcad_f__": f, "np": np}
    name = f"{_name(f)}_dot"
    return new_caller(key, f, name, f"{args}, g", f"np.sum(__srcad_f__({args}) * g)", scope)


# ---- reading the calls --------------------------------------------------------------------


def _factory_arguments(fold: Any, node: gast.Call, factory: Callable) -> tuple[Any, dict]:
    """The function and the options of ``factory(f, ...)``, known when it is transformed."""
    try:
        args = [fold.constant(a) for a in node.args]
        kwargs = {k.arg: fold.constant(k.value) for k in node.keywords}
    except LookupError:
        raise fold.source.error(
            f"srcad.{factory.__name__}() inside a differentiated function needs arguments "
            "known when it is transformed (a function defined outside, constant wrt)",
            node,
        ) from None
    bound = inspect.signature(factory).bind(*args, **kwargs)
    bound.apply_defaults()
    options = dict(bound.arguments)
    f = _unwrapped(options.pop("f"))
    _check_function(fold, node, f, factory.__name__)
    return f, options


def _refuse_options(fold: Any, node: gast.Call, what: str, options: dict, ignored: tuple) -> None:
    if options.get("holomorphic"):
        raise fold.source.error(
            f"srcad.{what}(..., holomorphic=True) inside a differentiated function is not "
            "supported yet",
            node,
        )
    del ignored  # (mode: every mode gives the same values)


def _jvp_form(fold: Any, node: gast.Call, what: str) -> tuple[Any, list, list]:
    primals, tangents = jvp_form(fold.source, node, what)
    return _function(fold, node.args[0], what), primals, tangents


def _function(fold: Any, expr: gast.expr, what: str) -> Any:
    try:
        f = fold.constant(expr)
    except LookupError:
        raise fold.source.error(
            f"srcad.{what} inside a differentiated function needs a function defined outside",
            expr,
        ) from None
    f = _unwrapped(f)
    _check_function(fold, expr, f, what)
    return f


def _unwrapped(f: Any) -> Any:
    """The function of a :class:`Composition` (one of these written inside, again)."""
    return f.function if isinstance(f, Composition) else f


def _check_function(fold: Any, node: gast.AST, f: Any, what: str) -> None:
    made_by = getattr(f, "srcad_made_by", None) if callable(f) else None
    if isinstance(made_by, str) or not callable(f):
        raise fold.source.error(
            f"srcad.{what} inside a differentiated function needs a Python function (not "
            f"{f!r}); of a function made by srcad.{made_by}, differentiate that function "
            "itself",
            node,
        )


def _params(fold: Any, node: gast.AST, f: Any, what: str) -> list[str]:
    """``p0, p1, ...``: one per positional parameter of ``f`` (refused when it has others)."""
    try:
        parameters = list(own_signature(f).parameters.values())
    except (TypeError, ValueError):
        parameters = None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not parameters or any(p.kind not in kinds for p in parameters):
        raise fold.source.error(
            f"srcad.{what} inside a differentiated function needs a function of positional "
            f"parameters only (no *args, **kwargs or keyword-only ones): {_name(f)}",
            node,
        )
    return [f"p{k}" for k in range(len(parameters))]


def _name(f: Any) -> str:
    name = str(getattr(f, "__name__", None) or type(f).__name__)
    return name if name.isidentifier() else "f"


def _is_none(node: gast.expr) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _item(value: gast.expr, k: int) -> gast.Subscript:
    index = gast.Constant(value=k, kind=None)
    return gast.Subscript(value=value, slice=index, ctx=gast.Load())


def _statement_of(tree: gast.AST, node: gast.expr) -> gast.stmt | None:
    for stmt in gast.walk(tree):
        if isinstance(stmt, gast.Assign) and stmt.value is node:
            return stmt
    return None


def _pullback_name(stmt: gast.stmt | None, node: gast.Call) -> str | None:
    """``pullback`` of ``out, pullback = node``."""
    if stmt is None or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not isinstance(target, (gast.Tuple, gast.List)) or len(target.elts) != 2:
        return None
    last = target.elts[1]
    return last.id if isinstance(last, gast.Name) else None


def _assigned(tree: gast.AST) -> set[str]:
    """The names stored to anywhere in ``tree`` (parameters are not stores)."""
    return {
        n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }


class _Pullbacks(Transformer):
    """``pullback(g)`` -> ``gradient(x, y, g)``; notes any other read of ``pullback``."""

    def __init__(self, pullback: str, gradient: str, primals: list[str]) -> None:
        self.pullback = pullback
        self.gradient = gradient
        self.primals = primals
        self.other_use: gast.AST | None = None

    def visit_Call(self, node: gast.Call) -> gast.AST:
        func = node.func
        if isinstance(func, gast.Name) and func.id == self.pullback:
            if len(node.args) != 1 or node.keywords:
                self.other_use = self.other_use or node
                return node
            node.args = [self.visit(a) for a in node.args]
            args = [gast.Name(p, gast.Load(), None, None) for p in self.primals]
            gradient = gast.Name(self.gradient, gast.Load(), None, None)
            call = gast.Call(func=gradient, args=[*args, *node.args], keywords=[])
            return gast.copy_location(call, node)
        self.generic_visit(node)
        return node

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id == self.pullback and isinstance(node.ctx, gast.Load):
            self.other_use = self.other_use or node
        return node
