"""Rules for the functional forms of generated code's in-place updates
(srcad/runtime/updates.py), so that generated code can be differentiated again."""

from srcad.adjoints.registry import adjoint, d, tangent
from srcad.runtime.accumulate import zeros_like
from srcad.runtime.updates import added_at, gathered


@adjoint(added_at, static=("index",))
def added_at_adjoint(y, buffer, index, g):
    d[buffer] = d[y]
    d[g] = gathered(d[y], index, g)


@tangent(added_at, static=("index",))
def added_at_tangent(y, buffer, index, g):
    d[y] = added_at(d[buffer], index, d[g])


@adjoint(gathered, static=("index", "like"))
def gathered_adjoint(y, g, index, like):
    d[g] = added_at(zeros_like(g), index, d[y])


@tangent(gathered, static=("index", "like"))
def gathered_tangent(y, g, index, like):
    d[y] = gathered(d[g], index, like)
