"""Gradients of ``einsum`` in every form NumPy takes: ``...`` (written out as letters of
its own), an index repeated within one operand (a diagonal: the gradient is put back on
it, zeros elsewhere) and operands broadcast along an index of size 1 (summed back).

:func:`grad_einsum_general` is linear in ``g`` and in every operand but the ``i``-th (read
for its shape only); :func:`einsum_general_replacing` in ``t`` and every operand but the
``i``-th, with ``<grad_einsum_general(s, g, ops, i), c> = <g, einsum_general_replacing(s,
ops, i, c)>``, which is how their rules (srcad/adjoints/linalg.py) differentiate them.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from srcad.runtime.accumulate import grad_einsum
from srcad.runtime.backend import array_namespace


def explicit_subscripts(subscripts: str, operands: Sequence[Any]) -> str:
    """``subscripts`` with ``...`` written out as unused letters and the output named
    (``'...i,i'`` for operands of 3 and 1 dimensions: ``'ABi,i->AB'``)."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    specs = inputs.split(",")
    if not arrow:
        letters = "".join(specs).replace(".", "")
        singles = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        output = ("..." if "..." in inputs else "") + singles
    if "..." not in spec:
        return ",".join(specs) + "->" + output
    free = [c for c in string.ascii_letters if c not in spec]
    widest = max(
        (getattr(op, "ndim", 0) - len(s.replace("...", "")) for s, op in zip(specs, operands)),
        default=0,
    )
    span = "".join(free[:widest])
    written = []
    for s, op in zip(specs, operands):
        if "..." in s:
            count = getattr(op, "ndim", 0) - len(s.replace("...", ""))
            s = s.replace("...", span[widest - count :] if count else "")
        written.append(s)
    return ",".join(written) + "->" + output.replace("...", span)


def _parts(subscripts: str, operands: Sequence[Any]) -> tuple[list[str], str]:
    inputs, _, output = explicit_subscripts(subscripts, operands).partition("->")
    return inputs.split(","), output


def grad_einsum_general(subscripts: str, g: Any, operands: Sequence[Any], i: int) -> Any:
    """Gradient of ``einsum(subscripts, *operands)`` with respect to operand ``i``."""
    specs, output = _parts(subscripts, operands)
    xp = array_namespace(g, *operands)
    x = operands[i]
    target = specs[i]
    unique = "".join(dict.fromkeys(target))
    if unique == target:
        result = grad_einsum(",".join(specs) + "->" + output, g, operands, i)
    else:
        # through the diagonal the operand contributes: its gradient, put back on it
        diagonal = xp.einsum(f"{target}->{unique}", x)
        specs = [unique if k == i else s for k, s in enumerate(specs)]
        ops = [diagonal if k == i else op for k, op in enumerate(operands)]
        result = _on_diagonal(grad_einsum(",".join(specs) + "->" + output, g, ops, i), target)
    return _summed_to(result, x.shape)


def _on_diagonal(h: Any, target: str) -> Any:
    """The array of subscripts ``target`` (an index repeated) holding ``h`` (subscripts
    ``target`` without the repeats) on its diagonal and zeros elsewhere."""
    xp = array_namespace(h)
    unique = "".join(dict.fromkeys(target))
    free = iter(c for c in string.ascii_letters if c not in target)
    seen: set[str] = set()
    written, eyes, specs = [], [], []
    for c in target:
        if c in seen:
            fresh = next(free)
            size = h.shape[unique.index(c)]
            eyes.append(xp.eye(size, dtype=h.dtype))
            specs.append(c + fresh)
            written.append(fresh)
        else:
            seen.add(c)
            written.append(c)
    return xp.einsum(",".join([unique, *specs]) + "->" + "".join(written), h, *eyes)


def _summed_to(result: Any, shape: tuple[int, ...]) -> Any:
    """``result`` summed over the axes an operand of ``shape`` was broadcast along (a
    size-1 axis meeting a longer one of the same index)."""
    if tuple(result.shape) == tuple(shape):
        return result
    xp = array_namespace(result)
    axes = tuple(k for k, (n, m) in enumerate(zip(shape, result.shape)) if n == 1 and m != 1)
    return xp.sum(result, axis=axes, keepdims=True)


def grad_einsum_general_replacing(
    subscripts: str, g: Any, operands: Sequence[Any], i: int, j: int, t: Any
) -> Any:
    """:func:`grad_einsum_general` for operand ``i`` with operand ``j`` replaced by ``t``;
    zeros when ``j == i`` (that gradient does not read operand ``i``)."""
    if i == j:
        return array_namespace(operands[i]).zeros_like(operands[i])
    return grad_einsum_general(subscripts, g, _replaced(operands, j, t), i)


def einsum_general_replacing(subscripts: str, operands: Sequence[Any], i: int, t: Any) -> Any:
    """``einsum(subscripts, *operands)`` with ``operands[i]`` replaced by ``t``."""
    xp = array_namespace(t, *operands)
    return xp.einsum(subscripts, *_replaced(operands, i, t))


def _replaced(operands: Sequence[Any], i: int, t: Any) -> list[Any]:
    return [t if k == i else op for k, op in enumerate(operands)]


# ---- product-rule terms to any order. Each derivative of an einsum term replaces one more
# operand by a tangent (or a gradient), so the terms are written with the replacements as
# data: ``arrays`` holds the operands, then each replacement in turn; ``replaced[r]`` is
# the index (into ``arrays``) of the operand the r-th replacement takes the place of. A
# derivative appends one array and one index, so a template can write it (``replaced +
# (k,)``, ``*arrays, d[x]``) without taking a tuple apart. A replacement of an array that
# is no longer an operand is a product-rule term that does not exist: zeros.


def _picks(replaced: Sequence[int], count: int) -> list[int] | None:
    """The index into the ``count`` arrays of each operand after the replacements, or None
    when one of them replaces an array that is not an operand by then."""
    first = count - len(replaced)
    picks = list(range(first))
    for r, k in enumerate(replaced):
        if k not in picks:
            return None
        picks[picks.index(k)] = first + r
    return picks


def _output_shape(subscripts: str, operands: Sequence[Any]) -> tuple[int, ...]:
    """The shape ``einsum(subscripts, *operands)`` has, without computing it."""
    specs, output = _parts(subscripts, operands)
    sizes: dict[str, int] = {}
    for spec, op in zip(specs, operands):
        for c, n in zip(spec, getattr(op, "shape", ())):
            sizes[c] = max(sizes.get(c, 1), n)
    return tuple(sizes[c] for c in output)


def einsum_replaced(subscripts: str, replaced: Sequence[int], *arrays: Any) -> Any:
    """``einsum(subscripts, *operands)``, the operands being the first ``len(arrays) -
    len(replaced)`` arrays with each replacement made in turn (see above); zeros when a
    replacement's array is no longer an operand."""
    xp = array_namespace(*arrays)
    picks = _picks(replaced, len(arrays))
    if picks is None:
        first = arrays[: len(arrays) - len(replaced)]
        return xp.zeros(_output_shape(subscripts, first), dtype=xp.result_type(*arrays))
    return xp.einsum(subscripts, *(arrays[p] for p in picks))


def grad_einsum_replaced(
    subscripts: str, g: Any, k: int, replaced: Sequence[int], *arrays: Any
) -> Any:
    """The gradient of :func:`einsum_replaced` (incoming gradient ``g``) with respect to
    ``arrays[k]``: zeros when that array is not an operand."""
    picks = _picks(replaced, len(arrays))
    if picks is None or k not in picks:
        return array_namespace(arrays[k]).zeros_like(arrays[k])
    return grad_einsum_general(subscripts, g, [arrays[p] for p in picks], picks.index(k))
