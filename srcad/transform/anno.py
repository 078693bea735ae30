"""Annotations attached to AST nodes by the passes (origin line, purity, ...)."""

from __future__ import annotations

from typing import Any

_KEY = "_srcad_anno"


def setanno(node: Any, key: str, value: Any) -> None:
    """Attach ``value`` under ``key`` to ``node``."""
    store = getattr(node, _KEY, None)
    if store is None:
        store = {}
        setattr(node, _KEY, store)
    store[key] = value


def getanno(node: Any, key: str, default: Any = None) -> Any:
    """Read the annotation ``key`` of ``node``."""
    return getattr(node, _KEY, {}).get(key, default)
