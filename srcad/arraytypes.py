"""Which array types srcad takes: ndarray subclasses that change what NumPy's operations
mean (np.matrix, masked arrays, subclasses overriding operators, ``__array_ufunc__``,
``__array_function__`` or methods) are refused with a TypeError, since derivative rules
assume NumPy's own meaning; a subclass that overrides none of that passes as an ndarray.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from srcad import pytree

# what a subclass may define without changing the meaning of operations on its arrays
_HARMLESS = frozenset({
    "__new__", "__init__", "__array_finalize__", "__doc__", "__module__", "__dict__",
    "__weakref__", "__repr__", "__str__", "__format__", "__reduce__", "__reduce_ex__",
    "__setstate__", "__copy__", "__deepcopy__", "__sizeof__", "__dir__", "__hash__",
    "__init_subclass__", "__subclasshook__", "__class_getitem__", "__qualname__",
    "__annotations__", "__slots__", "__firstlineno__", "__static_attributes__",
})  # fmt: skip
_NDARRAY = frozenset(dir(np.ndarray))
_ACCEPTED = (np.memmap,)  # file-backed, NumPy's own operations

# the verdict on each ndarray subclass seen: None (accepted) or why it is refused
_VERDICTS: dict[type, str | None] = {np.ndarray: None}


def refusal(kind: type) -> str | None:
    """Why arrays of the ndarray subclass ``kind`` cannot be differentiated, or None."""
    verdict = _VERDICTS.get(kind, False)
    if verdict is False:
        verdict = _VERDICTS[kind] = _judge(kind)
    return verdict


def _judge(kind: type) -> str | None:
    if issubclass(kind, np.matrix):
        return (
            "an np.matrix ('*' is a matrix product there, and results stay 2-d); pass np.asarray(m)"
        )
    if issubclass(kind, np.ma.MaskedArray):
        return (
            "a masked array (srcad would ignore its mask); pass np.ma.filled(m, value), "
            "or m.compressed() for the unmasked values"
        )
    if issubclass(kind, _ACCEPTED):
        return None
    changed = sorted(
        name
        for klass in kind.__mro__
        if klass is not np.ndarray and issubclass(klass, np.ndarray)
        for name in vars(klass)
        if name in _NDARRAY and name not in _HARMLESS
    )
    if not changed:
        return None
    shown = ", ".join(changed[:4]) + (", ..." if len(changed) > 4 else "")
    return (
        f"a {kind.__name__}, an ndarray subclass that overrides {shown} (derivative rules "
        "assume NumPy's own meaning); pass np.asarray(x)"
    )


def check_arrays(values: Any, names: Any, what: str = "argument {}") -> None:
    """Raise TypeError if any of ``values`` (or a leaf of one that is a pytree) is an
    array srcad refuses; ``what`` with each of ``names`` says which in the message."""
    for value, name in zip(values, names):
        kind = type(value)
        if kind is np.ndarray or kind is float or kind is int:
            continue
        if isinstance(value, np.ndarray):
            _raise(refusal(kind), what.format(repr(name)))
        elif pytree.is_container(value):
            leaves, tree = pytree.flatten(value)
            for path, leaf in zip(pytree.paths(tree), leaves):
                if type(leaf) is not np.ndarray and isinstance(leaf, np.ndarray):
                    label = name + "".join(f"[{p!r}]" for p in path)
                    _raise(refusal(type(leaf)), what.format(repr(label)))


def _raise(reason: str | None, what: str) -> None:
    if reason is not None:
        raise TypeError(f"srcad cannot differentiate with {what}: it is {reason}")
