"""Which calls change one of their arguments in place: the table of NumPy's mutating APIs
(``out=``, ``np.copyto``, ``a.sort()``, ``np.add.at``, ...) and user helpers that update an
argument. Read-only: the pass in normalize/mutating_calls.py lowers or refuses what is found.
"""

from __future__ import annotations

import ast
import functools
import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import gast
import numpy as np

from srcad.errors import TransformError
from srcad.transform.analyses.aliasing import (
    ELEMENT_METHODS,
    Aliases,
    arguments_of,
    carry,
    held_names,
    viewed_name,
    with_arguments,
)
from srcad.transform.calls import own_signature
from srcad.transform.frontend import MISSING, Source
from srcad.transform.libraries import is_library_function

#: how each changes its target: lowered to ``target[...] = <new value>`` ("whole"), to an
#: augmented assignment ("augmented"), to ``target[index] = value`` ("item"), or refused
WHOLE, AUGMENTED, ITEM, REFUSED = "whole", "augmented", "item", "refused"

#: ``a.__iadd__(b)`` and friends -> ``a += b``
AUGMENTED_DUNDERS: dict[str, type[gast.operator]] = {
    "__iadd__": gast.Add, "__isub__": gast.Sub, "__imul__": gast.Mult,
    "__itruediv__": gast.Div, "__ifloordiv__": gast.FloorDiv, "__imod__": gast.Mod,
    "__ipow__": gast.Pow, "__imatmul__": gast.MatMult, "__iand__": gast.BitAnd,
    "__ior__": gast.BitOr, "__ixor__": gast.BitXor, "__ilshift__": gast.LShift,
    "__irshift__": gast.RShift,
}  # fmt: skip

#: ndarray methods that change the array they are called on and are not lowered
_REFUSED_METHODS = {
    "partition": "partitions the array in place; use np.partition(a, kth) instead",
    "resize": "resizes the array in place; use np.resize(a, shape) or reshape instead",
    "itemset": "sets an element in place; write a[i] = v instead",
    "setfield": "writes a field in place",
    "setflags": "changes the array's flags in place",
    "shuffle": "shuffles its argument in place; use a permutation (a[rng.permutation(n)])",
}

#: NumPy functions that change an argument in place and are not lowered: position of the
#: changed argument, and advice
_REFUSED_FUNCTIONS = {
    np.put_along_axis: (0, "build the array with np.where or y[index] = v"),
    np.random.shuffle: (0, "use a permutation (y[np.random.permutation(n)])"),
}

#: functions writing flat positions, lowered to ``put_values``: their parameters, in order
_PUTS = {
    np.put: ("put", ("a", "ind", "v", "mode")),
    np.place: ("place", ("arr", "mask", "vals")),
    np.putmask: ("putmask", ("a", "mask", "values")),
    np.fill_diagonal: ("diagonal", ("a", "val", "wrap")),
}

#: ``np.ufunc.at``: functional helpers that accumulate repeated indices
_AT_LOWERED = {"add", "subtract"}

#: positional index of ``out`` in ufunc methods
_UFUNC_METHOD_OUT = {"reduce": 3, "accumulate": 3, "reduceat": 4}

_LIBRARIES = ("numpy", "scipy", "cupy", "cupyx", "jax", "dask", "srcad", "torch", "builtins")


@dataclass
class Mutation:
    """A call that changes ``target`` in place."""

    kind: str
    #: the expression naming the array that is changed
    target: gast.expr
    #: what is called, for messages: ``np.copyto``, ``y.sort``, ``out= of np.multiply``
    what: str
    #: the parts lowering needs (see normalize/mutating_calls.py), or why it is refused
    detail: dict


def describe(expr: gast.expr) -> str:
    """Source text of a small expression, for messages."""
    return ast.unparse(gast.gast_to_ast(expr))


def mutation_of(call: gast.Call, source: Source, local: set[str]) -> Mutation | None:
    """How ``call`` changes one of its arguments in place, or None when it does not."""
    found = _mutation(call, source, local, _CALLEE)
    if found is not None:  # named only now: unparsing every call would slow ordinary code
        found.what = found.what.replace(_CALLEE, describe(call.func))
    return found


#: stands for the called expression in ``Mutation.what`` until one is found
_CALLEE = "\0callee"


def _mutation(call: gast.Call, source: Source, local: set[str], what: str) -> Mutation | None:
    func = call.func
    callee = source.resolve(func, local)
    receiver, method, args = None, None, list(call.args)
    if isinstance(func, gast.Attribute) and (
        callee is MISSING or isinstance(getattr(callee, "__self__", None), np.ndarray)
    ):
        receiver, method = func.value, func.attr
    elif _is_ndarray_method(callee) and args:
        receiver, method, args = args[0], callee.__name__, args[1:]
    if method is not None:
        found = _method_mutation(call, receiver, method, args, what)
        if found is not None:
            return found
    elif _is_ufunc(callee):
        return _ufunc_out(call, callee, what)
    elif _is_ufunc(getattr(callee, "__self__", None)):
        found = _ufunc_method(call, callee, what)
        if found is not None:
            return found
    elif getattr(callee, "__name__", None) == "shuffle" and call.args:
        return Mutation(REFUSED, call.args[0], what, {"why": _REFUSED_METHODS["shuffle"]})
    elif _hashable(callee) and callee in _REFUSED_FUNCTIONS:
        index, advice = _REFUSED_FUNCTIONS[callee]
        target = _argument(call, index)
        return Mutation(REFUSED, target, what, {"why": f"changes its argument in place; {advice}"})
    elif _hashable(callee) and callee in _PUTS:
        kind, names = _PUTS[callee]
        parts = [_argument(call, k, name) for k, name in enumerate(names)]
        if any(part is None for part in parts[:-1]) or len(call.args) > len(names):
            return Mutation(
                REFUSED,
                parts[0],
                what,
                {"why": "changes its argument in place (called with arguments srcad cannot read)"},
            )
        return Mutation(WHOLE, parts[0], what, {"put": (kind, *parts[1:]), "result": None})
    elif callee is np.copyto:
        return _copyto(call, what)
    elif callee is np.nan_to_num and _changes_in_place(_argument(call, 1, "copy")):
        return Mutation(
            REFUSED,
            _argument(call, 0),
            what,
            {"why": "with copy=False changes its argument in place; leave copy at its default"},
        )
    elif _made_by_srcad(callee):
        return None
    elif _python_function(callee) is not None:
        return _helper_mutation(call, callee, what)
    elif _keyword(call, "out") is None and _returns_what_out_gets(callee):
        found = _positional_out(call, callee, what)
        if found is not None:
            return found
    out = _keyword(call, "out")
    if out is not None and not _is_none(out):
        if not _returns_what_out_gets(callee):
            return Mutation(
                REFUSED,
                out,
                what,
                {"why": "writes its result into 'out=' (a call srcad does not know)"},
            )
        return _out_lowered(call, out, what, drop=("out",))
    for kw in call.keywords:
        if kw.arg and kw.arg.startswith("overwrite_") and not _is_false(kw.value):
            target = _argument(call, 0)
            return Mutation(
                REFUSED,
                target,
                what,
                {"why": f"with {kw.arg} may change its argument in place; leave it False"},
            )
    return None


#: modules whose functions, called for their effect alone, are known not to change arrays
#: passed to them (beyond what the table above names)
_NO_HIDDEN_EFFECTS = {
    "builtins", "numpy", "math", "srcad", "cupy", "jax", "dask", "warnings", "_warnings", "logging",
}  # fmt: skip


def unknown_effect(call: gast.Call, source: Source, local: set[str]) -> bool:
    """Whether ``call``, made for its effect alone, passes a variable's array to code srcad
    cannot see into (a C extension's function), which might change it."""
    callee = source.resolve(call.func, local)
    if callee is MISSING or _made_by_srcad(callee) or _python_function(callee) is not None:
        return False
    module = (getattr(callee, "__module__", None) or "").split(".")[0]
    if module in _NO_HIDDEN_EFFECTS or isinstance(callee, (type, np.ufunc)):
        return False
    arguments = [*call.args, *(kw.value for kw in call.keywords)]
    return any(_memory_name(arg) in local for arg in arguments)


# ---- ndarray methods


def _method_mutation(
    call: gast.Call, receiver: gast.expr, method: str, args: list[gast.expr], what: str
) -> Mutation | None:
    keywords = {kw.arg: kw.value for kw in call.keywords}
    if method in AUGMENTED_DUNDERS and len(args) == 1 and not keywords:
        return Mutation(
            AUGMENTED, receiver, what, {"op": AUGMENTED_DUNDERS[method], "value": args[0]}
        )
    if method == "__setitem__" and len(args) == 2 and not keywords:
        return Mutation(ITEM, receiver, what, {"index": args[0], "value": args[1]})
    if method == "fill" and len(args) == 1 and not keywords:
        return Mutation(WHOLE, receiver, what, {"value": args[0], "result": None})
    if method == "put":
        parts = [
            args[k] if len(args) > k else keywords.get(name)
            for k, name in enumerate(("indices", "values", "mode"))
        ]
        if parts[0] is None or parts[1] is None or len(args) > 3:
            return Mutation(REFUSED, receiver, what, {"why": "writes elements in place"})
        return Mutation(WHOLE, receiver, what, {"put": ("put", *parts), "result": None})
    if method == "sort":
        return Mutation(WHOLE, receiver, what, {"sort": (args, call.keywords), "result": None})
    if method == "byteswap":
        inplace = args[0] if args else keywords.get("inplace")
        if inplace is not None and not _is_false(inplace):
            return Mutation(
                REFUSED, receiver, what, {"why": "with inplace=True changes the array in place"}
            )
        return None
    if method == "shuffle" and args:
        return Mutation(REFUSED, args[0], what, {"why": _REFUSED_METHODS[method]})
    if method in _REFUSED_METHODS:
        return Mutation(REFUSED, receiver, what, {"why": _REFUSED_METHODS[method]})
    if method in ("at",):
        return None  # ufunc.at on a local ufunc name: unknown, left to the out= check
    position = _method_out_position(method)
    if position is not None and "out" in keywords and not _is_none(keywords["out"]):
        return _out_lowered(call, keywords["out"], what, drop=("out",))
    if position is not None and len(args) > position:
        if len(args) > position + 1:
            return Mutation(
                REFUSED,
                args[position],
                what,
                {"why": "writes into a positional 'out' argument followed by others"},
            )
        new = _call_like(call, args=call.args[: len(call.args) - 1], keywords=call.keywords)
        return _whole_out(args[position], new, what)
    return None


@functools.cache
def _method_out_position(method: str) -> int | None:
    """Position of ``out`` among an ndarray method's arguments (after self), if it has one."""
    try:
        params = list(inspect.signature(getattr(np.ndarray, method)).parameters)
    except (AttributeError, TypeError, ValueError):
        return None
    return params.index("out") - 1 if "out" in params else None


def _returns_what_out_gets(callee: object) -> bool:
    """Whether ``callee(...)`` without ``out=`` returns what it would write there: NumPy's
    and CuPy's functions, not their random generators (``out`` gives those the shape)."""
    module = (
        getattr(callee, "__module__", None) or type(getattr(callee, "__self__", None)).__module__
    )
    top = module.split(".")[0]
    return top in ("numpy", "cupy", "cupyx") and ".random" not in module


def _is_ufunc(obj: object) -> bool:
    """A NumPy ufunc, or one of another array library (CuPy's) with the same protocol."""
    return isinstance(obj, np.ufunc) or (
        isinstance(getattr(obj, "nin", None), int) and isinstance(getattr(obj, "nout", None), int)
    )


def _is_ndarray_method(obj: object) -> bool:
    name = getattr(obj, "__name__", None)
    return isinstance(name, str) and getattr(np.ndarray, name, None) is obj


# ---- ufuncs and functions with out=


def _ufunc_out(call: gast.Call, ufunc: np.ufunc, what: str) -> Mutation | None:
    out = _keyword(call, "out")
    positional = call.args[ufunc.nin :]
    if out is None and not positional:
        return None
    if out is not None and _is_none(out):
        return None
    outs = positional or (list(out.elts) if isinstance(out, gast.Tuple) else [out])
    if ufunc.nout != 1 or len(outs) != 1:
        return Mutation(
            REFUSED,
            outs[0],
            what,
            {"why": "writes several results through 'out'; assign the results instead"},
        )
    new = _call_like(
        call,
        args=call.args[: ufunc.nin],
        keywords=[kw for kw in call.keywords if kw.arg not in ("out", "where")],
    )
    found = _whole_out(outs[0], new, what)
    where = _keyword(call, "where")
    if where is not None:
        found.detail["where"] = where
    return found


def _ufunc_method(call: gast.Call, bound: object, what: str) -> Mutation | None:
    ufunc, name = bound.__self__, bound.__name__
    if name == "at":
        target = _argument(call, 0)
        if ufunc.__name__ in _AT_LOWERED and len(call.args) == 3 and not call.keywords:
            return Mutation(
                WHOLE,
                target,
                what,
                {"at": (ufunc.__name__, call.args[1], call.args[2]), "result": None},
            )
        return Mutation(
            REFUSED,
            target,
            what,
            {"why": "updates its argument in place; only np.add.at and np.subtract.at are lowered"},
        )
    position = _UFUNC_METHOD_OUT.get(name)
    if position is not None and len(call.args) > position:
        if len(call.args) > position + 1:
            return Mutation(
                REFUSED,
                call.args[position],
                what,
                {"why": "writes into a positional 'out' argument"},
            )
        new = _call_like(call, args=call.args[:position], keywords=call.keywords)
        return _whole_out(call.args[position], new, what)
    return None


def _positional_out(call: gast.Call, callee: object, what: str) -> Mutation | None:
    """``np.dot(a, b, y)``: ``out`` given by position, found through the signature."""
    position = _out_position(callee) if _hashable(callee) else None
    if position is None or len(call.args) <= position:
        return None
    out = call.args[position]
    if _is_none(out):
        return None
    if position != len(call.args) - 1:
        return Mutation(
            REFUSED,
            out,
            what,
            {
                "why": "writes into a positional 'out' argument "
                "followed by others; pass out= by keyword"
            },
        )
    new = _call_like(call, args=call.args[:position], keywords=call.keywords)
    return _whole_out(out, new, what)


@functools.lru_cache(maxsize=1024)
def _out_position(callee: object) -> int | None:
    """Position of a positional ``out`` parameter of ``callee``, if it has one."""
    try:
        params = list(own_signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    for k, param in enumerate(params):
        if param.kind in (param.VAR_POSITIONAL, param.KEYWORD_ONLY, param.VAR_KEYWORD):
            return None
        if param.name == "out":
            return k
    return None


def _out_lowered(call: gast.Call, out: gast.expr, what: str, drop: tuple[str, ...]) -> Mutation:
    if isinstance(out, gast.Tuple):
        if len(out.elts) != 1:
            return Mutation(REFUSED, out, what, {"why": "writes several results through 'out'"})
        out = out.elts[0]
    new = _call_like(
        call, args=call.args, keywords=[kw for kw in call.keywords if kw.arg not in drop]
    )
    return _whole_out(out, new, what)


def _call_like(call: gast.Call, args: list, keywords: list) -> gast.Call:
    """``call``'s callee with other arguments, at ``call``'s place in the source."""
    return gast.copy_location(gast.Call(func=call.func, args=args, keywords=keywords), call)


def _whole_out(out: gast.expr, new: gast.Call, what: str) -> Mutation:
    return Mutation(WHOLE, out, f"out= of {what}", {"value": new, "result": out})


def _copyto(call: gast.Call, what: str) -> Mutation:
    dst = _argument(call, 0)
    src = _argument(call, 1)
    where = _argument(call, 3, "where")
    if src is None:
        return Mutation(REFUSED, dst, what, {"why": "is called without a source"})
    return Mutation(WHOLE, dst, what, {"value": src, "where": where, "result": None})


# ---- user helpers


def _python_function(callee: object) -> object | None:
    """The user's Python function a call runs: a function, a bound method's function, a
    ``functools.partial``'s, a jitted function's Python original (``py_func``)."""
    if callable(getattr(callee, "srcad_handle", None)):
        return None  # (srcad.elementwise: a function of numbers, new arrays out)
    for attr in ("func", "__func__", "py_func", "__wrapped__"):
        inner = getattr(callee, attr, None)
        if inspect.isfunction(inner) and not inspect.isfunction(callee):
            callee = inner
            break
    # (the standard library's too: copy.deepcopy's own code keeps its argument in a memo,
    # inside a 'try' body, which is no change of the array)
    if inspect.isfunction(callee) and not (_is_library(callee) or is_library_function(callee)):
        return callee
    return None


def _made_by_srcad(callee: object) -> bool:
    """Whether ``callee`` is a derivative srcad made (grad's object, hessian's function):
    its generated code updates copies, whatever the function it wraps (``__wrapped__``)
    does to its arguments (fuzz seeds 80, 208: grad of a function calling grad(f), for an
    f updating ``x``, was refused as updating ``x``)."""
    return hasattr(type(callee), "srcad_function") or hasattr(callee, "srcad_made_by")


def _helper_mutation(call: gast.Call, callee: object, what: str) -> Mutation | None:
    changed = changed_parameters(_python_function(callee))
    if not changed:
        return None
    try:
        bound = own_signature(callee).bind_partial(
            *call.args, **{kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        )
    except TypeError:
        return None
    for name, (kind, where) in changed.items():
        arg = next(
            (a for a in _argument_nodes(bound.arguments.get(name)) if _names_memory(a)), None
        )
        if arg is not None:
            return Mutation(
                REFUSED,
                arg,
                what,
                {
                    "why": f"changes its argument '{name}' in place ({where}); srcad "
                    "differentiates helpers that leave their arguments unchanged: return a "
                    "new array instead",
                    "augmented": kind == AUGMENTED,
                },
            )
    return None


@dataclass
class _Summary:
    """What a user function does to its parameters' arrays."""

    #: parameter -> (kind, 'file:line') of a change in place
    changed: dict[str, tuple[str, str]]
    #: parameter -> 'file:line' of a return of it (or of a view of it)
    returned: dict[str, str]
    #: a name from outside the function (a global, a closure's variable) -> 'file:line' of
    #: a return of its array (or of a view of it)
    returned_outside: dict[str, str] = field(default_factory=dict)


_in_progress: set[object] = set()
_DEPTH = 16  # helpers calling helpers: deeper chains (a library's) are not followed
_summaries: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_NOTHING = _Summary({}, {})


def changed_parameters(func: object) -> dict[str, tuple[str, str]]:
    """Parameters a user function changes in place: name -> (kind, 'file:line')."""
    return _summary(func).changed


def returned_parameters(func: object) -> dict[str, str]:
    """Parameters a user function may return (or return a view of): name -> 'file:line'."""
    return _summary(func).returned


def returned_outside(call: gast.Call, source: Source, local: set[str]) -> dict[str, str]:
    """The names from outside a user function (globals, a closure's variables) whose
    arrays ``call`` may return, or a view of them: name -> 'file:line'."""
    found = _called_function(call, source, local)
    if found is None:
        return {}
    callee, function = found
    outside = outside_arrays(function)
    summary = _summary(function)
    memory, where = _returned_receiver(call, callee, function, summary.returned)
    if memory is not None and memory not in local:
        # a method of an object from outside the function handing back part of it
        outside[memory] = where
    return outside


def outside_arrays(function: Callable) -> dict[str, str]:
    """The arrays from outside a user function (globals, a closure's variables) that it
    may return, or a view of them: name -> 'file:line'."""
    # (an array the function reads from outside now: a number would be rebound, not changed)
    scope = dict(function.__globals__)
    closure = function.__closure__ or ()
    for name, cell in zip(function.__code__.co_freevars, closure):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # (a cell not filled yet)
            continue
    summary = _summary(function)
    return {
        n: w for n, w in summary.returned_outside.items() if isinstance(scope.get(n), np.ndarray)
    }


def _called_function(call: gast.Call, source: Source, local: set[str]) -> tuple | None:
    """``(callee, its Python function)`` for a call of a user function, else None."""
    callee = source.resolve(call.func, local)
    if callee is MISSING or is_library_function(callee):
        return None
    function = _python_function(callee)
    return None if function is None else (callee, function)


def _returned_receiver(
    call: gast.Call, callee: object, function: object, returned: dict[str, str]
) -> tuple[str | None, str]:
    """``(name, 'file:line')`` of the object a bound method is called on, when the method
    may hand back (part of) it (``m.weights()`` returning ``self.W``); else ``(None, "")``."""
    first = next(iter(inspect.signature(function).parameters), None)
    if getattr(callee, "__self__", None) is None or not isinstance(call.func, gast.Attribute):
        return None, ""
    if first not in returned:
        return None, ""
    return _memory_name(call.func.value), returned[first]


def _summary(func: object) -> _Summary:
    if func in _summaries:
        return _summaries[func]
    if func in _in_progress or len(_in_progress) > _DEPTH:
        return _NOTHING  # recursion: what the outer analysis finds is what it changes
    _in_progress.add(func)
    try:
        summary = _summarize(func)
    finally:
        _in_progress.discard(func)
    _summaries[func] = summary
    return summary


def _summarize(func: object) -> _Summary:
    from srcad.transform.analyses.objects import method_objects
    from srcad.transform.frontend import parse_function
    from srcad.transform.normalize.anf import local_names
    from srcad.transform.normalize.walk import own_parts

    try:
        source = parse_function(func)
    except TransformError:
        return _NOTHING
    tree = source.tree
    local = local_names(tree)
    args = tree.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    # (``*args``/``**kwargs``: their elements are the arguments given there)
    params += [a.id for a in (args.vararg, args.kwarg) if a is not None]
    # flow-sensitive: a local rebound to a new array (``h = h @ W``) no longer views its
    # argument, and statements that never run do not count
    aliases = with_arguments(params)
    summary = _Summary({}, {})

    def place(node: gast.AST) -> str:
        filename, lineno, _, _ = source.location(node)
        return f"{filename}:{lineno}"

    def visit(stmt: gast.stmt, loops: list[gast.stmt], aliases: Aliases) -> None:
        def note(expr: gast.expr, kind: str, node: gast.AST) -> None:
            for root in arguments_of(aliases, _memory_name(expr), params):
                summary.changed.setdefault(root, (kind, place(node)))

        if isinstance(stmt, gast.Return) and stmt.value is not None:
            value = stmt.value
            names = given(value) if isinstance(value, gast.Call) else set()
            # (a display returned: each of its elements, ``return q, p``)
            for name in sorted(names or held_names(value)):
                roots = arguments_of(aliases, name, params)
                for root in roots:
                    summary.returned.setdefault(root, place(stmt))
                outside = ({name} | aliases.others(name)) - local - set(params)
                for other in sorted(outside):
                    summary.returned_outside.setdefault(other, place(stmt))
        if isinstance(stmt, (gast.Assign, gast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, gast.Subscript):
                    note(target.value, ITEM, stmt)
                elif isinstance(stmt, gast.AugAssign) and isinstance(target, gast.Name):
                    note(target, AUGMENTED, stmt)
        for part in own_parts(stmt):
            for node in gast.walk(part):
                if isinstance(node, gast.Call):
                    found = mutation_of(node, source, local)
                    if found is not None:
                        augmented = found.kind == AUGMENTED or found.detail.get("augmented")
                        note(found.target, AUGMENTED if augmented else found.kind, node)

    objects = method_objects(tree.body, source, local)

    def given(call: gast.Call) -> set[str]:
        # a helper's helper may hand back the array in turn, a method part of its object
        return {name for name, _ in returned_arguments(call, source, local)} | objects(call)

    carry(tree.body, visit, aliases, given)
    return summary


def returned_arguments(call: gast.Call, source: Source, local: set[str]) -> list[tuple[str, str]]:
    """Each ``(name, 'file:line')`` where ``call`` runs a user function that may return the
    array of the variable ``name`` passed to it (or a view of it): all of them (a helper
    returning one argument or another on two paths may hand back either)."""
    if source.resolve(call.func, local) is MISSING:
        return _unseen_method_arguments(call, local)
    called = _called_function(call, source, local)
    if called is None:
        return []
    callee, function = called
    returned = returned_parameters(function)
    if not returned:
        return []
    try:
        bound = own_signature(callee).bind_partial(
            *call.args, **{kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        )
    except TypeError:
        return []
    found: dict[str, str] = {}
    receiver, _ = _returned_receiver(call, callee, function, returned)
    first = next(iter(inspect.signature(function).parameters), None)
    for name, where in returned.items():
        if receiver is not None and name == first:  # (``m.weights()``: ``m`` itself)
            if receiver in local:
                found.setdefault(receiver, where)
            continue
        for arg in _argument_nodes(bound.arguments.get(name)):
            memory = _memory_name(arg)
            if memory in local:
                found.setdefault(memory, where)
    return list(found.items())


def _argument_nodes(value: object) -> list[gast.AST]:
    """The expressions a parameter was given: one, or those ``*args``/``**kwargs`` packed."""
    if isinstance(value, gast.AST):
        return [value]
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, gast.AST)]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, gast.AST)]
    return []


def _unseen_method_arguments(call: gast.Call, local: set[str]) -> list[tuple[str, str]]:
    """A method of an object whose class is known only when the function runs (not an
    array's, nor a module's function): srcad cannot read it now, so any variable's array
    passed to it may come back."""
    func = call.func
    if not isinstance(func, gast.Attribute) or hasattr(np.ndarray, func.attr):
        return []
    if func.attr in ELEMENT_METHODS:
        return []  # (``d.get(k, u)``: its elements or the default, aliasing.held_names)
    if isinstance(func.value, gast.Name) and func.value.id not in local:
        return []  # (a module's function, or a global object's: resolved where it can be)
    where = f"the class of its object is known only when the function runs: .{func.attr}()"
    memories = (_memory_name(a) for a in [*call.args, *(kw.value for kw in call.keywords)])
    return [(memory, where) for memory in dict.fromkeys(memories) if memory in local]


# ---- small helpers


def _memory_name(expr: gast.expr) -> str | None:
    """The name whose memory ``expr`` denotes (through subscripts and views)."""
    while isinstance(expr, (gast.Subscript, gast.Attribute)) and not isinstance(expr, gast.Name):
        expr = expr.value
    if isinstance(expr, gast.Name):
        return expr.id
    return viewed_name(expr)


def _names_memory(expr: gast.expr) -> bool:
    return _memory_name(expr) is not None


def _argument(call: gast.Call, index: int, name: str | None = None) -> gast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return _keyword(call, name) if name else None


def _keyword(call: gast.Call, name: str) -> gast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _changes_in_place(copy: gast.expr | None) -> bool:
    """Whether a ``copy=`` argument may be false."""
    return copy is not None and not (isinstance(copy, gast.Constant) and copy.value is True)


def _is_none(expr: gast.expr) -> bool:
    return isinstance(expr, gast.Constant) and expr.value is None


def _is_false(expr: gast.expr) -> bool:
    return isinstance(expr, gast.Constant) and expr.value in (False, None, 0)


def _is_library(func: object) -> bool:
    module = getattr(func, "__module__", None) or ""
    return module.split(".")[0] in _LIBRARIES


def _hashable(obj: object) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True
