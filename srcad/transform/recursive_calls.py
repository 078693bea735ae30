"""Calls of a recursive function whose depth depends on data, in code whose derivative is
differentiated again (the inliner, normalize/helpers.py, cannot write them out).

Such a call becomes a call of a :class:`RecursiveCall`. In reverse mode its handle calls
Python functions srcad reads, so that the next transformation follows the recursion as
JAX's tracing would: the forward pass calls the function and keeps its arguments (a list
of them, read back by ``residual``); the backward pass is ``srcad.grad`` of
``sum(f(*args) * g)``, the call's vjp, recomputing the call. The inliner writes that
call out one level deep when the gradient is differentiated again, its own recursive call
a :class:`RecursiveCall` again: each level is differentiated in turn, recomputing the
levels below it (work quadratic in the depth).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from srcad.runtime.lists import residual
from srcad.transform.calls import CallJVP, own_signature


class RecursiveCall:
    """``fun`` called where the call could not be written out (see module doc)."""

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args: Any) -> Any:
        return self.fun(*args)

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """What generated code calls: in reverse mode ``forward`` and ``backward`` are
        Python functions srcad reads; forward mode calls the function's own derivative."""
        if mode != "vjp":
            return CallJVP(self.fun, wrt)
        return _Handle(self.forward_function(), self.backward_for(wrt))

    def _names(self) -> tuple[str, list[str]]:
        name = self.fun.__name__
        count = len(own_signature(self.fun).parameters)
        return (name if name.isidentifier() else "f"), [f"p{k}" for k in range(count)]

    def forward_function(self) -> Callable:
        """``def f_forward(p0, p1): residuals = [p0, p1]; return f(p0, p1), residuals``
        (one parameter: itself the residuals)."""
        from srcad.callables import known_caller, new_caller

        key = ("recursion forward", id(self.fun))
        found = known_caller(key, self.fun)
        if found is not None:
            return found
        name, params = self._names()
        args = ", ".join(params)
        lines = ["residuals = " + (args if len(params) == 1 else f"[{args}]")]
        scope = {"__srcad_callee__": self.fun}
        value = f"__srcad_callee__({args}), residuals"
        return new_caller(key, self.fun, f"{name}_forward", args, value, scope, lines)

    def backward_for(self, wrt: tuple[int, ...]) -> Callable:
        """``def f_backward(residuals, g)``: the cotangents of the parameters ``wrt``, as
        ``srcad.grad`` of ``sum(f(p0, p1) * g)``."""
        from srcad.api import grad
        from srcad.callables import known_caller, new_caller

        key = ("recursion backward", id(self.fun), wrt)
        found = known_caller(key, self.fun)
        if found is not None:
            return found
        name, params = self._names()
        args = ", ".join(params)
        dot = new_caller(
            ("recursion dot", id(self.fun)),
            self.fun,
            f"{name}_dot",
            f"{args}, g",
            f"np.sum(__srcad_callee__({args}) * g)",
            {"__srcad_callee__": self.fun, "np": np},
        )
        gradient = grad(dot, wrt=wrt[0] if len(wrt) == 1 else wrt)
        lines = [f"{p} = residual(residuals, {k})" for k, p in enumerate(params)]
        if len(params) == 1:
            lines = [f"{params[0]} = residuals"]
        lines.append(f"c = __srcad_grad__({args}, g)")
        if len(wrt) == 1:
            result = "(c,)"
        else:
            names = [f"c{k}" for k in range(len(wrt))]
            lines.append(f"{', '.join(names)} = c")
            result = f"({', '.join(names)},)"
        scope = {"__srcad_grad__": gradient, "residual": residual}
        return new_caller(key, self.fun, f"{name}_backward", "residuals, g", result, scope, lines)

    def __repr__(self) -> str:
        return f"<srcad.RecursiveCall of {self.fun.__qualname__}>"


class _Handle:
    """A :class:`RecursiveCall`'s reverse-mode handle: its attributes are the functions."""

    def __init__(self, forward: Callable, backward: Callable) -> None:
        self.forward = forward
        self.backward = backward

    def result_count(self) -> int:
        """The call's value is one value."""
        return 1


def recursive_call(fun: Any, tree: gast.FunctionDef, call: gast.Call, outputs: int) -> Any:
    """The :class:`RecursiveCall` of ``fun`` (parsed as ``tree``) for ``call``, whose
    value is unpacked into ``outputs`` names; None unless the call passes each parameter
    positionally and ``fun`` returns one value (the call then stays a plain call)."""
    if (
        not inspect.isfunction(fun)
        or outputs != 1
        or call.keywords
        or any(isinstance(a, gast.Starred) for a in call.args)
        or any(
            isinstance(node, gast.Return) and isinstance(node.value, (gast.Tuple, gast.List))
            for node in gast.walk(tree)
        )
    ):
        return None
    try:
        params = list(own_signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(params) != len(call.args) or any(p.kind not in kinds for p in params):
        return None
    return RecursiveCall(fun)
