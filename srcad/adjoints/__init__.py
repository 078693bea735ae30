"""Adjoint rules, one module per family; importing this package registers them all."""

from srcad.adjoints import (  # noqa: F401  (imported for their registrations)
    arithmetic,
    complex,
    containers,
    creation,
    decompositions,
    elementwise,
    fft,
    generated,
    indexing,
    linalg,
    nondiff,
    numeric,
    reductions,
    shape,
    ufunc_methods,
    updates,
)
from srcad.adjoints.registry import adjoint, lookup, nondifferentiable, tangent

__all__ = ["adjoint", "lookup", "nondifferentiable", "tangent"]
