"""The function an exported module calls in place of ``srcad.grad(f)`` or
``srcad.value_and_grad(f)``: it takes ``f``'s arguments, passes the generated derivative
one leaf of each pytree at a time, and gives the gradients back in their arguments'
structure, type and dtype (what srcad's own ``grad`` does at run time)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from srcad import api, pytree
from srcad.errors import ExportError
from srcad.runtime import exported
from srcad.standalone import values
from srcad.standalone.module import ModuleWriter, dict_lookup, display_path, user_source
from srcad.transform.cache import cached


def reverse(writer: ModuleWriter, derivative: Any, call: tuple | None, where: str) -> str:
    """The module-level name of the wrapper for ``derivative`` (an ``srcad.grad`` or
    ``srcad.value_and_grad``), specialized to the arguments of ``call`` = ``(args,
    kwargs)`` where known (else every argument is taken to be an array or a number)."""
    if not isinstance(derivative, api.Derivative):
        raise ExportError(f"{where} calls {derivative!r}, which is not a derivative made by srcad")
    func = derivative._func
    if derivative._prefix:
        raise ExportError(f"{where}: derivatives of bound methods cannot be exported yet")
    label = f"{func.__qualname__} ({display_path(func.__code__.co_filename)}:"
    label += f"{func.__code__.co_firstlineno})"
    params = _parameters(func, label)
    structures: tuple = ()
    if call is not None:
        args, kwargs = call
        bound = derivative._bound(args, kwargs) if kwargs else list(args)
        structures = api._structures(bound, derivative._wrt)
    wrt, single = derivative._wrt, derivative._single
    with_value, has_aux = derivative._with_value, derivative._has_aux
    key = ("wrapper", func, wrt, single, with_value, has_aux, structures)
    known = writer.known(key)
    if known is not None:
        return known
    gen = derivative.generated(structures)
    writer.sources.setdefault(label, user_source(func, label))
    raw = writer.generated(gen.source, gen.function.__globals__, ("gen", id(gen)), label)
    writer.keep(gen)
    kind = "value_and_grad" if with_value else "grad"
    name = writer.claim(key, f"{kind}_of_{func.__code__.co_name}")
    fit = writer.helper(exported.fit_gradients, label)

    trees = dict(structures)
    leaves: list[str] = []  # every argument the generated function takes, as expressions
    wrt_leaves: list[int] = []  # positions in ``leaves`` of the differentiated ones
    rebuilt: list[str] = []  # each differentiated argument's gradient, as an expression
    for k, param in enumerate(params):
        start = len(leaves)
        leaves.extend(_leaf_paths(trees[k], param) if k in trees else [param])
        if k in wrt:
            wrt_leaves.extend(range(start, len(leaves)))
    count = iter(range(len(wrt_leaves)))
    for k in wrt:
        rebuilt.append(
            _rebuild(trees[k], params[k], count) if k in trees else f"grads[{next(count)}]"
        )

    signature = _signature(params, func, label)
    described = f"srcad.{kind}({func.__code__.co_name}, wrt={wrt[0] if single else wrt!r}"
    described += ", has_aux=True)" if has_aux else ")"
    if structures:
        shapes = "".join(f"    {params[k]}: {_describe(t)}\n" for k, t in structures)
        body = [f'"""{described}, for arguments of these structures:\n{shapes}    """']
    else:
        body = [f'"""{described}, compiled by srcad."""']
    value = "(value, aux)" if has_aux else "value"
    if structures:
        body.append(f"leaves = ({', '.join(leaves)}{',' if len(leaves) == 1 else ''})")
        arguments, inputs = "*leaves", "leaves"
        like = _subset("leaves", wrt_leaves)
    else:
        arguments = inputs = ", ".join(leaves)
        inputs = f"({inputs}{',' if len(leaves) == 1 else ''})"
        like = f"({', '.join(leaves[i] for i in wrt_leaves)}{',' if len(wrt_leaves) == 1 else ''})"
    if single and not structures:
        body.append(f"{value}, grad = {raw[gen.function.__name__]}({arguments})")
        body.append(f"grads = {fit}((grad,), {like}, {inputs})")
    else:
        body.append(f"{value}, grads = {raw[gen.function.__name__]}({arguments})")
        body.append(f"grads = {fit}(grads, {like}, {inputs})")
    result = rebuilt[0] if single else f"({', '.join(rebuilt)}{',' if len(rebuilt) == 1 else ''})"
    if with_value:
        body.append(f"return {value}, {result}")
    else:
        body.append(f"return ({result}, aux)" if has_aux else f"return {result}")
    text = f"def {name}({signature}):\n" + "".join(f"    {line}\n" for line in body)
    writer.add(text, {name: name}, dict_lookup({}), "derivatives", label)
    return name


def forward(writer: ModuleWriter, jvp: Any, call: tuple | None, where: str) -> str:
    """The module-level name of the wrapper compiled for a call ``srcad.jvp(f, primals,
    tangents)``, for the tangents that were not ``None`` when it ran with the example
    arguments."""
    if call is None:
        raise ExportError(
            f"{where}: srcad.jvp did not run with the example arguments; pass example "
            "arguments that reach it"
        )
    args, kwargs = call
    if kwargs or len(args) != 3:
        raise ExportError(f"{where}: export compiles srcad.jvp(f, primals, tangents) only")
    func, primals, tangents = args
    if isinstance(func, api.Derivative) or not inspect.isfunction(func):
        raise ExportError(f"{where}: export compiles srcad.jvp of a plain Python function")
    if any(pytree.is_container(p) for p in primals):
        raise ExportError(f"{where}: export compiles srcad.jvp of array arguments only")
    wrt = tuple(k for k, t in enumerate(tangents) if t is not None)
    label = f"{func.__qualname__} ({display_path(func.__code__.co_filename)}:"
    label += f"{func.__code__.co_firstlineno})"
    key = ("forward", func, wrt)
    known = writer.known(key)
    if known is not None:
        return known
    gen = cached(func, wrt, False, "jvp")
    writer.sources.setdefault(label, user_source(func, label))
    raw = writer.generated(gen.source, gen.function.__globals__, ("gen", id(gen)), label)
    writer.keep(gen)
    name = writer.claim(key, f"jvp_of_{func.__code__.co_name}")
    chosen = ", ".join(f"tangents[{k}]" for k in wrt)
    text = (
        f"def {name}(f, primals, tangents):\n"
        f'    """srcad.jvp({func.__code__.co_name}, primals, tangents), compiled by srcad for the '
        f'tangents of arguments {wrt}."""\n'
        f"    return {raw[gen.function.__name__]}(*primals, {chosen})\n"
    )
    writer.add(text, {name: name}, dict_lookup({}), "derivatives", label)
    return name


def _parameters(func: Any, label: str) -> list[str]:
    params = []
    for p in inspect.signature(func).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise ExportError(
                f"{label}: export compiles derivatives of functions with positional parameters "
                f"only; '{p.name}' is {p.kind.description}"
            )
        params.append(p.name)
    return params


def _signature(params: list[str], func: Any, label: str) -> str:
    defaults = func.__defaults__ or ()
    first = len(params) - len(defaults)
    parts = []
    for k, param in enumerate(params):
        if k < first:
            parts.append(param)
            continue
        try:
            parts.append(f"{param}={values.literal(defaults[k - first])[0]}")
        except values.NotWritable:
            raise ExportError(
                f"{label}: the default value of '{param}' cannot be written into a module"
            ) from None
    return ", ".join(parts)


def _subset(name: str, positions: list[int]) -> str:
    if positions and positions == list(range(positions[0], positions[-1] + 1)):
        return f"{name}[{positions[0]}:{positions[-1] + 1}]"
    items = ", ".join(f"{name}[{i}]" for i in positions)
    return f"({items}{',' if len(positions) == 1 else ''})"


def _key(label: Any) -> str:
    return values.literal(label)[0]


def _children(treedef: Any, expr: str) -> Iterator[tuple[str, Any, Any]]:
    """``(expression of the child, its label, its treedef)`` for each child of a node."""
    kind, _, keys, children = treedef
    labels = keys if isinstance(keys, tuple) else range(keys)
    for label, child in zip(labels, children):
        if kind == "dict":
            yield f"{expr}[{_key(label)}]", label, child
        elif kind in ("namedtuple", "dataclass"):
            yield f"{expr}.{label}", label, child
        else:
            yield f"{expr}[{label}]", label, child


def _leaf_paths(treedef: Any, expr: str) -> list[str]:
    if treedef[0] == "leaf":
        return [expr]
    return [leaf for sub, _, child in _children(treedef, expr) for leaf in _leaf_paths(child, sub)]


def _rebuild(treedef: Any, expr: str, count: Iterator[int]) -> str:
    """An expression building the gradient of ``expr`` (structure ``treedef``) from
    ``grads[i]``, leaf by leaf."""
    if treedef[0] == "leaf":
        return f"grads[{next(count)}]"
    kind, cls = treedef[0], treedef[1]
    parts = [(label, _rebuild(child, sub, count)) for sub, label, child in _children(treedef, expr)]
    if kind == "dict":
        text = "{" + ", ".join(f"{_key(label)}: {part}" for label, part in parts) + "}"
        return text if cls is dict else f"type({expr})({text})"
    if kind in ("namedtuple", "dataclass"):
        return f"type({expr})(" + ", ".join(f"{label}={part}" for label, part in parts) + ")"
    items = ", ".join(part for _, part in parts)
    if cls is list:
        return f"[{items}]"
    if cls is tuple:
        return f"({items}{',' if len(parts) == 1 else ''})"
    return f"type({expr})([{items}])"


def _describe(treedef: Any) -> str:
    """A short description of a pytree structure, for the wrapper's docstring."""
    if treedef[0] == "leaf":
        return "array"
    kind, cls, keys, children = treedef
    if kind == "dict":
        inner = ", ".join(f"{k!r}: {_describe(c)}" for k, c in zip(keys, children))
        return "{" + inner + "}"
    inner = ", ".join(_describe(c) for c in children)
    if kind in ("namedtuple", "dataclass"):
        return f"{cls.__name__}({inner})"
    return f"({inner}{',' if len(children) == 1 else ''})" if cls is tuple else f"[{inner}]"
