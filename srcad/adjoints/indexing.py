"""Adjoints of indexing reads: scatter the gradient into a zero array of the source's shape."""

from srcad.adjoints.registry import GETITEM, Operator, adjoint, d, tangent, xp
from srcad.runtime.accumulate import add_at, unbroadcast
from srcad.runtime.inplace import setitem, zeroed


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


@adjoint(setitem)
def setitem_(y, x, index, value):
    d[value] = unbroadcast(d[y][index], value)
    d[x] = zeroed(d[y], index)


# ---- tangents ----


@tangent(GETITEM, Operator("SubscriptDynamic"))
def getitem_tangent(y, x, index):
    d[y] = d[x][index]


@tangent(setitem)
def setitem_tangent(y, x, index, value):
    # one contribution reading both: where one does not vary its zeros are what is written
    d[y] = setitem(d[x], index, d[value])
