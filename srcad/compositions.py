"""Derivatives of the functions srcad.jacobian and srcad.hessian return, and of theirs: a
table of leaves, each a function srcad transforms, differentiated in forward mode once per
level and evaluated along unit directions. Differentiating a table adds a level, so any
composition of grad, jvp, vjp, jacobian, hessian and hvp is one more table."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from srcad import pytree
from srcad.tracebacks import boundary
from srcad.transform.cache import cached
from srcad.transform.calls import call_arguments, calls_tangent_rules, mark_written_again


@dataclass(frozen=True)
class Leaf:
    """``F(*args)[..., i_1, ..., i_n]`` is ``P_n(*args, e_1, ..., e_n)``, read at
    ``[1][1]...[path]`` (the tangent of each level, then ``path`` into what the function
    returns): ``P_0`` the function, ``P_j`` the forward-mode code of ``P_{j-1}`` along
    argument ``levels[j-1]``, ``e_j`` the ``i_j``-th unit array shaped like that argument.
    ``scalar``: how many levels' axes, with the output's, must make one number (a
    gradient's; -1 for none)."""

    levels: tuple[int, ...]
    path: tuple[int, ...] = ()
    scalar: int = -1


@dataclass(frozen=True, eq=False)
class Origin:
    """What every leaf of a table differentiates: ``function(*prefix, *args, **keywords)``."""

    function: Callable
    prefix: tuple = ()
    keywords: dict[str, Any] = field(default_factory=dict)
    name: str = "f"
    #: why the table cannot be evaluated (a holomorphic derivative), or None
    refused: str | None = None


@dataclass(frozen=True, eq=False)
class Table:
    """A pytree (nested tuples) of :class:`Leaf` over one :class:`Origin`."""

    origin: Origin
    leaves: Any

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        base, values, named = self._bind(args, kwargs)
        runs: dict[tuple[int, ...], list[Any]] = {}

        def value(leaf: Leaf) -> Any:
            if leaf.levels not in runs:
                program = _program(base, leaf.levels)
                runs[leaf.levels] = [
                    program(*values, *combo, **named) for combo in _directions(values, leaf)
                ]
            return self._assemble(leaf, runs[leaf.levels], base, values, named)

        return _map(value, self.leaves)

    def jvp(self, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        """``(F(*primals), tangent)``: forward mode over each leaf's function."""
        from srcad import api

        primals, tangents = tuple(primals), tuple(tangents)
        if len(primals) != len(tangents):
            raise ValueError(
                f"jvp needs one tangent per primal: got {len(primals)} primals and "
                f"{len(tangents)} tangents"
            )
        base, values, named = self._bind(primals, {})
        bound = len(self.origin.prefix)
        given = [*(None,) * bound, *tangents]
        given += [None] * (len(values) - len(given))
        runs: dict[tuple[int, ...], tuple[list[Any], list[Any]]] = {}

        def pair(leaf: Leaf) -> tuple[Any, Any]:
            if leaf.levels not in runs:
                program = _program(base, leaf.levels, again=True)
                if named:
                    program = functools.partial(program, **named)
                outs, dots = [], []
                for combo in _directions(values, leaf):
                    nothing = (None,) * len(combo)
                    out, dot = api.jvp(program, (*values, *combo), (*given, *nothing))
                    outs.append(out)
                    dots.append(dot)
                runs[leaf.levels] = (outs, dots)
            outs, dots = runs[leaf.levels]
            return (
                self._assemble(leaf, outs, base, values, named),
                self._assemble(leaf, dots, base, values, named),
            )

        pairs = {leaf: pair(leaf) for leaf in _flat(self.leaves)}
        return _map(lambda leaf: pairs[leaf][0], self.leaves), _map(
            lambda leaf: pairs[leaf][1], self.leaves
        )

    def vjp(self, primals: tuple) -> tuple[Any, Callable]:
        """``(F(*primals), pullback)``: the pullback contracts the cotangent with the
        Jacobian of each differentiable primal (a forward-mode column per element)."""
        from srcad import api

        out = self(primals, {})
        for k, value in enumerate(primals):
            if pytree.is_container(value) and any(map(_differentiable, pytree.flatten(value)[0])):
                raise TypeError(
                    f"vjp of {self.origin.name}, a function made by srcad.jacobian or "
                    f"srcad.hessian, with respect to a pytree (argument {k}) is not supported; "
                    "pass its arrays as separate arguments"
                )
        wrt = [k for k, value in enumerate(primals) if _differentiable(value)]
        if not wrt:
            raise TypeError(f"vjp of {self.origin.name}: no argument is a float or array")

        @boundary
        def pullback(cotangent: Any) -> tuple[Any, ...]:
            ct_leaves, ct_tree = pytree.flatten(cotangent)
            out_leaves, out_tree = pytree.flatten(out)
            if ct_tree != out_tree and not (len(out_leaves) == 1 == len(ct_leaves)):
                raise ValueError(
                    f"the cotangent's structure does not match what {self.origin.name} returned"
                )
            for ct, leaf in zip(ct_leaves, out_leaves):
                if np.shape(ct) != np.shape(leaf):
                    raise ValueError(
                        f"cotangent has shape {np.shape(ct)}, but {self.origin.name} "
                        f"returned shape {np.shape(leaf)}"
                    )
            result: list[Any] = [None] * len(primals)
            for k in wrt:
                jacobian = self.derivative(k, scalar=False)(primals, {})
                blocks = pytree.flatten(jacobian)[0]
                total = sum(
                    np.tensordot(ct, block, axes=np.ndim(ct))
                    for ct, block in zip(ct_leaves, blocks)
                )
                result[k] = api._match(total, primals[k], [])
            return tuple(result)

        return out, pullback

    def derivative(self, wrt: Any, scalar: bool) -> Table:
        """The table of ``F``'s derivative with respect to the arguments ``wrt`` (indices
        or names of the caller's arguments): a level more on each leaf, one per argument
        (a tuple of them for a tuple ``wrt``); ``scalar`` for a gradient."""
        indices, single = self.indices(wrt)

        def deeper(leaf: Leaf) -> Any:
            marked = len(leaf.levels) if scalar else leaf.scalar
            made = tuple(replace(leaf, levels=(*leaf.levels, k), scalar=marked) for k in indices)
            return made[0] if single else made

        return Table(self.origin, _map(deeper, self.leaves))

    def indices(self, wrt: Any) -> tuple[tuple[int, ...], bool]:
        """``wrt`` as indices of the origin's arguments, and whether it is a single one."""
        from srcad import api
        from srcad.callables import Target

        origin = self.origin
        target = Target(origin.function, origin.prefix, origin.keywords)
        params = api._visible_params(target)
        indices, single = api._normalize_wrt(origin.function, wrt, params)
        return tuple(k + len(origin.prefix) for k in indices), single

    def bound(self, prefix: tuple, keywords: dict[str, Any]) -> Table:
        """This table for ``functools.partial(F, *prefix, **keywords)``."""
        origin = replace(
            self.origin,
            prefix=(*self.origin.prefix, *prefix),
            keywords={**self.origin.keywords, **keywords},
        )
        return Table(origin, self.leaves)

    def _bind(self, args: tuple, kwargs: dict) -> tuple[Callable, list[Any], dict[str, Any]]:
        """The Python function behind the table for this call, and the call's positional
        values (defaults filled in) and keyword-only ones."""
        from srcad import api

        origin = self.origin
        if origin.refused:
            raise TypeError(origin.refused)
        full = (*origin.prefix, *args)
        keywords = {**origin.keywords, **kwargs}
        base = api._called_function(origin.function, len(full), keywords)
        values, named = call_arguments(base, full, keywords)
        labels = api._labels(api._positional_params(base), len(values))
        for k in sorted({k for leaf in _flat(self.leaves) for k in leaf.levels}):
            if k >= len(values):
                raise TypeError(f"{origin.name} got {len(values)} arguments; no argument {k}")
            if pytree.is_container(values[k]):
                raise TypeError(
                    f"a derivative of {origin.name}'s derivative is taken with respect to "
                    f"floats and arrays, and '{labels[k]}' is a pytree "
                    f"({type(values[k]).__name__}); pass its arrays as separate arguments"
                )
            api._check_differentiable(values[k], labels[k])
            if api._is_complex(values[k]):
                raise TypeError(
                    f"a derivative of a derivative with respect to complex argument "
                    f"'{labels[k]}' is not supported yet; differentiate with respect to its "
                    "real and imaginary parts as separate real arguments"
                )
        return base, list(values), named

    def _assemble(
        self, leaf: Leaf, runs: list[Any], base: Callable, values: list[Any], named: dict
    ) -> Any:
        """The leaf's value from its function's results along each combination of unit
        directions: each output array with the levels' axes after its own."""
        depth = len(leaf.levels)
        trailing = [np.shape(values[k]) for k in leaf.levels]
        if runs:
            picked = [_pick(run, (1,) * depth + leaf.path) for run in runs]
        else:  # an argument without elements: the output's structure, then zeros
            zeros = [np.zeros_like(values[k]) for k in leaf.levels]
            sample = _program(base, leaf.levels)(*values, *zeros, **named)
            picked = [_pick(sample, (1,) * depth + leaf.path)]
        first, tree = pytree.flatten(picked[0])
        if leaf.scalar >= 0:
            several = pytree.is_container(picked[0])
            shape = () if several else np.shape(picked[0]) + sum(trailing[: leaf.scalar], ())
            if several or shape:
                what = "a container" if several else f"shape {shape}"
                raise TypeError(
                    f"grad needs a function with a scalar output; {self.origin.name} "
                    f"returned {what}. Use srcad.jacobian or srcad.vjp for non-scalar outputs"
                )
        if not depth:
            return picked[0]
        columns = [pytree.flatten(p)[0] for p in picked]
        axes = sum(trailing, ())
        stacked = []
        for j, sample in enumerate(first):
            if runs:
                stacked.append(_stack([c[j] for c in columns], np.shape(sample), axes))
            else:
                stacked.append(np.zeros(np.shape(sample) + axes))
        return pytree.unflatten(tree, stacked)


def _directions(values: list[Any], leaf: Leaf) -> Any:
    """Every combination of unit directions, one per level (the last varying fastest)."""
    from srcad import api

    return itertools.product(*(list(api._basis(values[k])) for k in leaf.levels))


def _stack(parts: list[Any], leading: tuple[int, ...], trailing: tuple[int, ...]) -> Any:
    from srcad import api

    return api._stack(parts, leading, trailing, columns=True)


def _program(base: Callable, levels: tuple[int, ...], again: bool = False) -> Callable:
    """``P_n``: forward mode over ``base``, once along each of ``levels`` (``again``: the
    last one is differentiated again too)."""
    program = base
    for j, k in enumerate(levels):
        # a level differentiated again has its calls written out (as a gradient
        # differentiated again has: a custom rule's functions among them), and so has one
        # of code calling a custom_jvp function's rule with a tuple of tangents
        if again or j < len(levels) - 1 or calls_tangent_rules(program):
            program = mark_written_again(cached(program, (k,), False, "jvp", inline=True))
        else:
            program = cached(program, (k,), False, "jvp").function
    return program


def _pick(value: Any, path: tuple[int, ...]) -> Any:
    for k in path:
        value = value[k]
    return value


def _flat(leaves: Any) -> list[Leaf]:
    if isinstance(leaves, Leaf):
        return [leaves]
    return [leaf for part in leaves for leaf in _flat(part)]


def _map(f: Callable[[Leaf], Any], leaves: Any) -> Any:
    """``f`` of each leaf, nested as the leaves are."""
    if isinstance(leaves, Leaf):
        return f(leaves)
    return tuple(_map(f, part) for part in leaves)


def _differentiable(value: Any) -> bool:
    """A float, or an array of a floating or complex dtype."""
    if isinstance(value, (bool, np.bool_)) or pytree.is_container(value):
        return False
    if isinstance(value, (float, complex)):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    return kind in ("f", "c")


def table_of(f: Any) -> Table | None:
    """The table of a function srcad.jacobian or srcad.hessian made (or one made from
    such a table), seen through ``functools.partial``; None for any other function."""
    prefix: tuple = ()
    keywords: dict[str, Any] = {}
    while isinstance(f, functools.partial):
        prefix = (*f.args, *prefix)
        keywords = {**f.keywords, **keywords}
        f = f.func
    table = getattr(f, "srcad_table", None)
    if not isinstance(table, Table):
        return None
    return table.bound(prefix, keywords) if prefix or keywords else table


def function_of(table: Table, made_by: str) -> Callable:
    """The function evaluating ``table``, which srcad differentiates again."""

    @boundary
    def derivative(*args: Any, **kwargs: Any) -> Any:
        return table(args, kwargs)

    name = table.origin.name
    derivative.__name__ = derivative.__qualname__ = f"{made_by}_of_{name}"
    derivative.srcad_table = table  # type: ignore[attr-defined]
    derivative.srcad_made_by = made_by  # type: ignore[attr-defined]
    return derivative
