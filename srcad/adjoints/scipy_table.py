"""SciPy's functions with rules, by public name, and the rule module registering each.

The rule modules import SciPy, so they are loaded only once the user's code has imported
the SciPy module they need (``import srcad`` never imports SciPy). A SciPy function
without a rule is never transformed as Python source: it gets "no rule for scipy.x.y".
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np

_SPECIAL = "srcad.adjoints.scipy_special"
_STATS = "srcad.adjoints.scipy_stats"
_LINALG = "srcad.adjoints.scipy_linalg"
_SIGNAL = "srcad.adjoints.scipy_signal"

#: public SciPy name -> the module of srcad that registers its rules
RULE_MODULES: dict[str, str] = {
    **{
        f"scipy.special.{name}": _SPECIAL
        for name in (
            "logsumexp expit logit erf erfc erfinv gammaln digamma psi polygamma gamma betaln "
            "xlogy xlog1py softmax log_softmax ndtr log_ndtr"
        ).split()
    },
    **{
        f"scipy.stats.{dist}.{method}": _STATS
        for dist, methods in (
            ("norm", "logpdf pdf cdf logcdf"),
            ("t", "logpdf pdf cdf"),
            ("multivariate_normal", "logpdf pdf cdf logcdf"),
            ("poisson", "logpmf pmf cdf logcdf"),
            ("gamma", "logpdf pdf cdf"),
            ("beta", "logpdf pdf cdf"),
            ("dirichlet", "logpdf pdf"),
        )
        for method in methods.split()
    },
    **{
        f"scipy.linalg.{name}": _LINALG
        for name in "cholesky solve_triangular sqrtm solve_sylvester".split()
    },
    "scipy.signal.convolve": _SIGNAL,
}


def _scipy_module(name: str) -> str:
    """``scipy.stats`` for ``scipy.stats.norm.logpdf``."""
    return ".".join(name.split(".")[:2])


#: rule module -> the SciPy module whose import makes it worth loading
NEEDS: dict[str, str] = {module: _scipy_module(name) for name, module in RULE_MODULES.items()}


def resolve(name: str) -> Any:
    """The object a public SciPy name denotes (its module must be imported)."""
    parts = name.split(".")
    obj: Any = sys.modules[".".join(parts[:2])]
    for part in parts[2:]:
        obj = getattr(obj, part)
    return obj


def is_scipy(obj: Any) -> bool:
    """Whether ``obj`` is a SciPy function, ufunc or method of a SciPy object."""
    if "scipy" not in sys.modules:
        return False
    return _in_scipy(_module_of(obj)) or _special_ufunc(obj) is not None


def _in_scipy(module: str) -> bool:
    """Whether ``module`` is SciPy or one of its modules (not ``scipy_helpers``)."""
    return module == "scipy" or module.startswith("scipy.")


def _module_of(obj: Any) -> str:
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, ModuleType):
        return getattr(type(owner), "__module__", "") or ""
    func = getattr(obj, "__func__", obj)
    module = getattr(func, "__module__", None)
    if module is None and not callable(func):
        return ""
    return module or getattr(type(func), "__module__", "") or ""


def _special_ufunc(obj: Any) -> str | None:
    """``scipy.special.erf`` for that ufunc (ufuncs do not say which module made them)."""
    if not isinstance(obj, np.ufunc) or getattr(np, obj.__name__, None) is obj:
        return None
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, obj.__name__, None) is obj:
        return f"scipy.special.{obj.__name__}"
    return None


#: names found, by (id of the function or of the object whose method it is, method name)
_NAMES: dict[tuple[int, str], tuple[Any, str | None]] = {}


def public_name(obj: Any) -> str | None:
    """The name a user reaches a SciPy object by (``scipy.stats.norm.logpdf``), if any:
    the one in RULE_MODULES where there is one (``digamma``, not its alias ``psi``)."""
    owner = getattr(obj, "__self__", None)
    target = owner if owner is not None and not isinstance(owner, ModuleType) else obj
    key = (id(target), getattr(obj, "__name__", "") if target is not obj else "")
    found = _NAMES.get(key)
    if found is None or found[0] is not target:
        found = _NAMES[key] = (target, _ruled(obj) or _special_ufunc(obj) or _find(obj))
    return found[1]


def _ruled(obj: Any) -> str | None:
    for name in RULE_MODULES:
        if _scipy_module(name) in sys.modules and resolve(name) == obj:
            return name
    return None


def _public(module: str) -> str:
    """``scipy.special`` for ``scipy.special._basic``."""
    kept = []
    for part in module.split("."):
        if part.startswith("_"):
            break
        kept.append(part)
    return ".".join(kept)


def _find(obj: Any) -> str | None:
    module = _module_of(obj)
    if not _in_scipy(module):
        return None
    owner = getattr(obj, "__self__", None)
    target = owner if owner is not None and not isinstance(owner, ModuleType) else obj
    public = sys.modules.get(_public(module))
    for name, value in vars(public).items() if public is not None else ():
        if value is target:
            found = f"{public.__name__}.{name}"
            return f"{found}.{obj.__name__}" if target is not obj else found
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "?")
    return f"{module}.{qualname}"
