"""srcad: automatic differentiation of NumPy functions by source transformation."""

from srcad.adjoints.registry import adjoint, nondifferentiable
from srcad.api import custom_vjp, grad, source, stop_gradient, value_and_grad, vjp
from srcad.errors import (
    ExportError,
    NoAdjointError,
    SourceUnavailableError,
    TransformError,
    UnsupportedConstructError,
)
from srcad.export import export
from srcad.testing import check_grad

__version__ = "0.1.0"

nondifferentiable(stop_gradient)

__all__ = [
    "adjoint",
    "custom_vjp",
    "nondifferentiable",
    "stop_gradient",
    "ExportError",
    "NoAdjointError",
    "SourceUnavailableError",
    "TransformError",
    "UnsupportedConstructError",
    "check_grad",
    "export",
    "grad",
    "source",
    "value_and_grad",
    "vjp",
]
