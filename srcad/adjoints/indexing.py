"""Adjoints of indexing reads: scatter the gradient into a zero array of the source's shape."""

from srcad.adjoints.registry import GETITEM, Operator, adjoint, d, xp
from srcad.runtime.accumulate import add_at


@adjoint(GETITEM)
def getitem(y, x, index):
    dx = xp.zeros_like(x)
    dx[index] = d[y]
    d[x] = dx


@adjoint(Operator("SubscriptDynamic"))
def getitem_dynamic(y, x, index):
    dx = xp.zeros_like(x)
    add_at(dx, index, d[y])
    d[x] = dx
