"""Fresh names for generated code that never collide with the user's names."""

from __future__ import annotations

import itertools
from typing import Any

import gast


class Namer:
    """Hands out unique identifiers and binds generated globals to objects."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.globals: dict[str, Any] = {}
        self.generated: set[str] = set()
        self._temps = itertools.count(1)

    @classmethod
    def for_tree(cls, tree: gast.AST) -> Namer:
        """A namer that avoids every identifier appearing in ``tree``."""
        taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        taken |= {
            n.name for n in gast.walk(tree) if isinstance(n, gast.FunctionDef) and n is not tree
        }
        return cls(taken)

    def fresh(self, base: str) -> str:
        """``base`` if free, else ``base_1``, ``base_2``, ..."""
        name = base
        k = 0
        while name in self.taken or name in self.globals:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def temp(self) -> str:
        """A fresh temporary ``_t1``, ``_t2``, ..."""
        while True:
            name = f"_t{next(self._temps)}"
            if name not in self.taken and name not in self.globals:
                self.taken.add(name)
                self.generated.add(name)
                return name

    def fresh_temp(self, base: str) -> str:
        """A fresh generated temporary named after ``base`` (free to rename or inline)."""
        name = self.fresh(base)
        self.generated.add(name)
        return name

    def adjoint(self, name: str) -> str:
        """A fresh adjoint name for primal ``name``: ``dW`` for ``W``, ``d_t1`` for ``_t1``."""
        return self.fresh_temp("d" + name)

    def bind_global(self, obj: Any, preferred: str) -> str:
        """A global name under which generated code reaches ``obj``."""
        for name, bound in self.globals.items():
            if bound is obj and (name == preferred or name.startswith(preferred + "_")):
                return name
        if preferred in self.globals and self.globals[preferred] is obj:
            return preferred
        name = preferred
        k = 0
        while name in self.taken or (name in self.globals and self.globals[name] is not obj):
            k += 1
            name = f"{preferred}_{k}"
        self.globals[name] = obj
        return name

    def bind_user_global(self, name: str, obj: Any) -> None:
        """Record that the user's free name ``name`` means ``obj`` in generated code."""
        self.globals[name] = obj
