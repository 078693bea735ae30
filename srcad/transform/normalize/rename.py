"""SSA-style renaming: a name assigned twice in straight-line code gets a fresh name.

>>> import gast
>>> from srcad.transform.codegen import to_source
>>> from srcad.transform.naming import Namer
>>> tree = gast.parse("def f(x):\\n    h = x * 2\\n    h = h + x\\n    return h").body[0]
>>> print(to_source(rename(tree, Namer.for_tree(tree))), end="")
def f(x):
    h = x * 2
    h_1 = h + x
    return h_1
"""

from __future__ import annotations

import gast

from srcad.transform.anno import getanno
from srcad.transform.naming import Namer
from srcad.transform.normalize.walk import merged_names


def rename(
    tree: gast.FunctionDef,
    namer: Namer,
    lists: set[str] | None = None,
    popped: set[str] | None = None,
) -> gast.FunctionDef:
    """Give every redefinition of a name in ``tree`` a fresh name; update the reads.

    Names assigned inside ``if``/``for``/``while`` keep one name throughout: their values
    merge at the end of branches and loops, where the reverse pass restores them instead.
    So do names in ``popped`` (generated code's ``a = tape.pop()``): the push of ``a``
    and its pop must name one variable, since that is how the analyses pair them.
    A fresh name for a list (a name in ``lists``, as ``xs = append(xs, v)`` outside loops)
    is added to ``lists``: it names a list too.
    """
    args = tree.args
    defined = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    merged = merged_names(tree, getanno(tree, "inplace")) | set(popped or ())
    current: dict[str, str] = {}
    for stmt in tree.body:
        stores = []
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name):
                if isinstance(node.ctx, gast.Load):
                    node.id = current.get(node.id, node.id)
                elif isinstance(node.ctx, gast.Store):
                    stores.append(node)
        for node in stores:
            if node.id in merged:
                continue
            if node.id in defined:
                new = namer.fresh(node.id)
                if lists is not None and node.id in lists:
                    lists.add(new)
                current[node.id] = new
                node.id = new
            defined.add(node.id)
    return tree
