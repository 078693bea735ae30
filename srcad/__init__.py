"""srcad: automatic differentiation of NumPy functions by source transformation."""

from srcad.api import grad, source, value_and_grad, vjp
from srcad.errors import (
    NoAdjointError,
    SourceUnavailableError,
    TransformError,
    UnsupportedConstructError,
)
from srcad.testing import check_grad

__version__ = "0.1.0"

__all__ = [
    "NoAdjointError",
    "SourceUnavailableError",
    "TransformError",
    "UnsupportedConstructError",
    "check_grad",
    "grad",
    "source",
    "value_and_grad",
    "vjp",
]
