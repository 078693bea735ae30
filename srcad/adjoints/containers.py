"""Adjoints of Python lists built in the function: literals, append, stack/concatenate/sum
and the vstack family."""

import builtins

from srcad.adjoints.registry import Operator, adjoint, d, tangent, xp
from srcad.runtime.accumulate import unconcatenate, unstack
from srcad.runtime.lists import (
    append,
    drop_gradient,
    element_gradient,
    list_gradient,
    scatter_element,
    unjoined,
    unsum,
)


@adjoint(append, takes_lists=True)
def list_append(y, items, value):
    # the last gradient is taken off even when the element is a constant (no ``d[value]``)
    d[value] = element_gradient(d[y], -1, value)
    d[items] = drop_gradient(d[y])


@adjoint(Operator("List"), takes_lists=True)
def list_literal(y, *elements):
    for i, x in enumerate(elements):
        d[x] = element_gradient(d[y], i, x)


# (the index is an int, as for arrays: code differentiated again may pop it from a tape
# that also holds values which vary, and it must not be taken for one of them)
@adjoint(Operator("ListItem"), static=("index",), takes_lists=True)
def list_item(y, items, index):
    d[items] = scatter_element(items, index, d[y])


@adjoint(Operator("StackList"), takes_lists=True)
def stack_list(y, arrays, axis=0):
    d[arrays] = unstack(d[y], axis)


@adjoint(Operator("ConcatenateList"), takes_lists=True)
def concatenate_list(y, arrays, axis=0):
    d[arrays] = unconcatenate(d[y], arrays, axis)


@adjoint(Operator("VStackList"), takes_lists=True)
def vstack_list(y, tup):
    d[tup] = unjoined(d[y], tup, "vstack")


@adjoint(Operator("HStackList"), takes_lists=True)
def hstack_list(y, tup):
    d[tup] = unjoined(d[y], tup, "hstack")


@adjoint(Operator("DStackList"), takes_lists=True)
def dstack_list(y, tup):
    d[tup] = unjoined(d[y], tup, "dstack")


@adjoint(Operator("ColumnStackList"), takes_lists=True)
def column_stack_list(y, tup):
    d[tup] = unjoined(d[y], tup, "column_stack")


@adjoint(builtins.tuple, builtins.list, takes_lists=True)
def tuple_of_list(y, items):
    d[items] = list_gradient(d[y], items)


@adjoint(builtins.sum, takes_lists=True)
def builtin_sum(y, items):
    d[items] = unsum(d[y], items)


# ---- tangents: the tangent of a list is the list of its elements' tangents ----


@tangent(append)
def list_append_tangent(y, items, value):
    d[y] = append(d[items], d[value])


@tangent(Operator("ListItem"), static=("index",))
def list_item_tangent(y, items, index):
    d[y] = d[items][index]


@tangent(Operator("StackList"))
def stack_list_tangent(y, arrays, axis=0):
    d[y] = xp.stack(d[arrays], axis=axis)


@tangent(Operator("ConcatenateList"))
def concatenate_list_tangent(y, arrays, axis=0):
    d[y] = xp.concatenate(d[arrays], axis=axis)


@tangent(Operator("VStackList"))
def vstack_list_tangent(y, tup):
    d[y] = xp.vstack(d[tup])


@tangent(Operator("HStackList"))
def hstack_list_tangent(y, tup):
    d[y] = xp.hstack(d[tup])


@tangent(Operator("DStackList"))
def dstack_list_tangent(y, tup):
    d[y] = xp.dstack(d[tup])


@tangent(Operator("ColumnStackList"))
def column_stack_list_tangent(y, tup):
    d[y] = xp.column_stack(d[tup])


@tangent(builtins.tuple)
def tuple_of_list_tangent(y, items):
    d[y] = builtins.tuple(d[items])


@tangent(builtins.list)
def list_of_list_tangent(y, items):
    d[y] = builtins.list(d[items])


@tangent(builtins.sum)
def builtin_sum_tangent(y, items):
    d[y] = builtins.sum(d[items])
