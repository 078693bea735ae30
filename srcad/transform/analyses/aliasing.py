"""Which names may share memory: copies and views (``b = a``, ``a[1:]``, ``a.T``, reshape)."""

from __future__ import annotations

import gast

_VIEW_METHODS = {"reshape", "ravel", "transpose", "squeeze", "view", "swapaxes"}
_VIEW_FUNCTIONS = {
    "reshape", "ravel", "transpose", "squeeze", "expand_dims", "broadcast_to",
    "asarray", "moveaxis", "swapaxes", "atleast_1d", "atleast_2d", "atleast_3d",
    "flip", "fliplr", "flipud", "rot90", "real", "imag", "permute_dims", "matrix_transpose",
}  # fmt: skip
_VIEW_ATTRIBUTES = {"T", "mT", "real", "imag"}


def viewed_name(value: gast.expr) -> str | None:
    """The name whose memory ``value`` may share, if it is a copy or a view of one."""
    if isinstance(value, gast.Name):
        return value.id
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return value.value.id
    if isinstance(value, gast.Attribute) and value.attr in _VIEW_ATTRIBUTES:
        return viewed_name(value.value)
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        if value.func.attr in _VIEW_METHODS and isinstance(value.func.value, gast.Name):
            return value.func.value.id
        if value.func.attr in _VIEW_FUNCTIONS and value.args:
            return viewed_name(value.args[0]) if isinstance(value.args[0], gast.Name) else None
    return None


class Aliases:
    """Groups of names that may share memory, as straight-line statements are read in order."""

    def __init__(self) -> None:
        self.group: dict[str, set[str]] = {}

    def others(self, name: str) -> set[str]:
        """Names other than ``name`` that may share its memory."""
        return self.group.get(name, {name}) - {name}

    def assign(self, target: str, value: gast.expr) -> None:
        """Record ``target = value``."""
        self._forget(target)
        source = viewed_name(value)
        if source is not None and source != target:
            shared = self.group.setdefault(source, {source})
            shared.add(target)
            self.group[target] = shared

    def _forget(self, name: str) -> None:
        shared = self.group.pop(name, None)
        if shared is not None:
            shared.discard(name)
