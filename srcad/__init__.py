"""srcad: automatic differentiation of NumPy functions by source transformation."""

from srcad.adjoints.registry import (
    adjoint,
    bilinear,
    linear,
    nondifferentiable,
    partials,
    tangent,
)
from srcad.api import (
    checkpoint,
    custom_jvp,
    custom_vjp,
    grad,
    hessian,
    hvp,
    jacobian,
    jvp,
    source,
    stop_gradient,
    value_and_grad,
    vjp,
)
from srcad.errors import (
    ExportError,
    NoAdjointError,
    NoOutputError,
    SourceUnavailableError,
    StaleSourceError,
    TransformError,
    UnsupportedConstructError,
)
from srcad.export import export
from srcad.kernels.function import elementwise
from srcad.pytree import (
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)
from srcad.testing import check_grad
from srcad.transform.cache import set_cache_size

__version__ = "0.1.0"

nondifferentiable(stop_gradient)

__all__ = [
    "adjoint",
    "bilinear",
    "checkpoint",
    "custom_jvp",
    "custom_vjp",
    "elementwise",
    "linear",
    "nondifferentiable",
    "partials",
    "register_pytree_node",
    "stop_gradient",
    "tangent",
    "ExportError",
    "NoAdjointError",
    "NoOutputError",
    "SourceUnavailableError",
    "StaleSourceError",
    "TransformError",
    "UnsupportedConstructError",
    "check_grad",
    "export",
    "grad",
    "hessian",
    "hvp",
    "jacobian",
    "jvp",
    "set_cache_size",
    "source",
    "value_and_grad",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
    "vjp",
]
