"""``srcad.elementwise``: a scalar function broadcast over arrays, differentiated in mixed
mode (forward mode inside, one fused pass for the value and every partial; the reverse
pass multiplies the incoming gradient by the partials)."""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from srcad.kernels.components import expand
from srcad.kernels.cuda import PREAMBLE, kernel_parts
from srcad.kernels.vectorize import HELPERS, vectorize
from srcad.runtime import masks
from srcad.runtime.backend import array_namespace
from srcad.runtime.inplace import kept_dtype
from srcad.runtime.mixed import MixedJVP, MixedVJP
from srcad.tracebacks import boundary
from srcad.transform.codegen import compile_source
from srcad.transform.frontend import parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import COMPARE, Operator, classify
from srcad.transform.pipeline import normalize

_BUILTINS = {abs, float, min, max}
_OPERATORS = {"Add", "Sub", "Mult", "Div", "Pow", "Mod", "USub", "UAdd", "Square", "Copy",
              "Not", "FloorDiv"}  # fmt: skip


class Compiled:
    """The generated forms of an elementwise function for one set of differentiated
    parameters: the vectorized NumPy function and the CUDA kernel's parts."""

    def __init__(self, function: Callable, source: str, kernel: Callable[[], dict]) -> None:
        self.function = function
        self.source = source
        self._kernel = kernel
        self._parts: dict[str, str] | None = None
        self._cupy_kernel: Any = None

    @property
    def kernel(self) -> dict[str, str]:
        """The CUDA kernel's parts (generated on first use: NumPy never needs them)."""
        if self._parts is None:
            self._parts = self._kernel()
        return self._parts

    def __call__(self, *args: Any) -> tuple[Any, Any]:
        """``(value, partials)``: partials stacked on a leading axis."""
        if any(type(a).__module__.partition(".")[0] == "cupy" for a in args):
            return self._on_gpu(*args)
        return self.function(*args)

    def _on_gpu(self, *args: Any) -> tuple[Any, Any]:
        import cupy

        if self._cupy_kernel is None:
            parts = self.kernel
            self._cupy_kernel = cupy.ElementwiseKernel(
                parts["in_params"],
                parts["out_params"],
                parts["operation"],
                parts["name"],
                preamble=PREAMBLE,
            )
        dtype = cupy.result_type(*[a for a in args if hasattr(a, "dtype")])
        arrays = [cupy.asarray(a, dtype=dtype) for a in args]
        outputs = self._cupy_kernel(*arrays)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return outputs[0], cupy.stack(outputs[1:]) if len(outputs) > 1 else None


class ElementwiseFunction:
    """A scalar function (numbers in, a number out, branches allowed) applied elementwise
    with NumPy broadcasting; see :func:`srcad.elementwise`."""

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        self._compiled: dict[tuple[int, ...], Compiled] = {}
        functools.update_wrapper(self, fun)
        params = inspect.signature(fun).parameters.values()
        self.params = [p.name for p in params]
        if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
            raise TypeError(f"{fun.__name__}: an elementwise function takes positional numbers")
        _check_scalar(fun)

    def compiled(self, wrt: tuple[int, ...]) -> Compiled:
        """The generated forms with partials for the parameters ``wrt``."""
        found = self._compiled.get(wrt)
        if found is None:
            found = self._compiled[wrt] = _compile(self.fun, wrt)
        return found

    @boundary
    def __call__(self, *args: Any) -> Any:
        """The function applied to every element (of the broadcast arguments)."""
        value, _ = self.compiled(())(*args)
        return value

    @boundary
    def value_and_partials(self, *args: Any, wrt: tuple[int, ...] | None = None) -> tuple:
        """``(value, partials)``: one array per parameter in ``wrt`` (default: all)."""
        wrt = tuple(range(len(self.params))) if wrt is None else tuple(wrt)
        value, partials = self.compiled(wrt)(*args)
        return value, tuple(partials[k] for k in range(len(wrt)))

    @property
    def srcad_source(self) -> str:
        """The vectorized NumPy code and the CUDA kernel, with partials for every parameter."""
        compiled = self.compiled(tuple(range(len(self.params))))
        kernel = compiled.kernel
        return (
            f"{compiled.source}\n"
            f"# CUDA (cupy.ElementwiseKernel {kernel['name']!r})\n"
            f"# in:  {kernel['in_params']}\n# out: {kernel['out_params']}\n"
            + "\n".join("# " + line for line in kernel["operation"].splitlines())
            + "\n"
        )

    def srcad_handle(self, mode: str, wrt: tuple[int, ...]) -> Any:
        """The object generated code calls: ``forward``/``backward`` in reverse mode
        (``mode="vjp"``), ``(tangents, *args) -> (value, tangent)`` in forward mode."""
        compiled = self.compiled(tuple(wrt))
        return MixedVJP(compiled, wrt) if mode == "vjp" else MixedJVP(compiled, wrt)


def _compile(fun: Callable, wrt: tuple[int, ...]) -> Compiled:
    from srcad.transform.cache import cached

    gen = cached(fun, wrt, False, "jvp")
    expanded = expand(ast.parse(gen.source).body[0], len(wrt))
    name = f"{fun.__name__}_vectorized"
    vectorized = vectorize(expanded, name, fun.__code__.co_filename)
    text = ast.unparse(vectorized) + "\n"
    namespace = dict(gen.function.__globals__)
    namespace.update({h: getattr(masks, h) for h in HELPERS})
    namespace["array_namespace"] = array_namespace
    scope = compile_source(text, namespace, f"vectorized {fun.__name__}")
    filename = fun.__code__.co_filename

    def kernel() -> dict[str, str]:
        return kernel_parts(expanded, f"{fun.__name__}_kernel", filename)

    return Compiled(scope[name], text, kernel)


def _check_scalar(fun: Callable) -> None:
    """Refuse, with file:line and a caret, what a scalar kernel cannot contain."""
    source = parse_function(fun)
    namer = Namer.for_tree(source.tree)
    tree = normalize(source, namer)
    local = local_names(tree)
    for node in all_statements(tree.body):
        if isinstance(node, gast.While):
            raise source.error("an elementwise function cannot loop on data (while)", node)
        if not isinstance(node, gast.Assign):
            continue
        op = classify(node.value, source, local)
        if op.key is COMPARE:
            continue
        if isinstance(op.key, Operator) and op.key.name in _OPERATORS:
            continue
        callee = op.callee
        if callee is not None and (
            callee is kept_dtype  # (``s += v``: a number's dtype stays)
            or isinstance(callee, np.ufunc)
            or (op.rule is not None and op.rule.elementwise)  # np.where, np.clip
            or callee in _BUILTINS
            or getattr(callee, "__module__", None) == "math"
        ):
            continue
        raise source.error(
            f"an elementwise function works on single numbers; {op.label} is not an "
            "elementwise operation on numbers",
            node,
        )


@boundary
def elementwise(fun: Callable) -> ElementwiseFunction:
    """Make the scalar function ``fun`` (numbers in, a number out; ``if``/``elif``/``else``
    on data allowed) a function over arrays, broadcast like a ufunc, that srcad
    differentiates in mixed mode: one vectorized pass computes the value and the partial
    derivatives, each branch only on the elements that take it."""
    if isinstance(fun, ElementwiseFunction):
        return fun
    if not callable(fun):
        raise TypeError(f"elementwise needs a function, got {type(fun).__name__}")
    return ElementwiseFunction(fun)
