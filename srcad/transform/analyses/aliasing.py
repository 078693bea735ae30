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
    """Pairs of names that may share memory, as statements are read in order; at the end
    of a branch or loop the pairs of every path are kept (:meth:`merge`)."""

    def __init__(self) -> None:
        self.links: dict[str, set[str]] = {}

    def others(self, name: str) -> set[str]:
        """Names other than ``name`` that may share its memory."""
        return set(self.links.get(name, ()))

    def assign(self, target: str, value: gast.expr) -> None:
        """Record ``target = value``."""
        source = viewed_name(value)
        # ``a = a[::-1]``: the new ``a`` views what the old one shared memory with
        shared = set() if source is None else (self.others(source) | {source}) - {target}
        self._forget(target)
        if shared:
            self.links[target] = shared
            for name in shared:
                self.links.setdefault(name, set()).add(target)

    def copy(self) -> Aliases:
        """An independent copy (one path of a branch)."""
        new = Aliases()
        new.links = {name: set(others) for name, others in self.links.items()}
        return new

    def merge(self, other: Aliases) -> bool:
        """Add the pairs of ``other`` (another path to the same point); whether any was new."""
        changed = False
        for name, others in other.links.items():
            mine = self.links.setdefault(name, set())
            if not others <= mine:
                mine |= others
                changed = True
        return changed

    def _forget(self, name: str) -> None:
        for other in self.links.pop(name, ()):
            self.links.get(other, set()).discard(name)
