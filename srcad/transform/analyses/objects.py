"""Which objects a method's result may be part of: ``w = holder.weights()`` where the
method returns ``self.W`` makes ``w`` the very array ``holder`` holds, so ``w += x`` changes
what a later ``holder.score()`` reads. Read-only: the fence and the summaries of helpers
treat such a result as a view of its object.

An object's class is read where the function makes it (``holder = Holder()``): a class of
the user's is looked up and its method read; a library's objects (``rng =
np.random.default_rng(0)``) hand back new arrays. For any other object (a parameter, one a
function returned) the class is known only when the function runs: its method may hand
back part of it.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable

import gast
import numpy as np

from srcad.errors import TransformError
from srcad.transform.frontend import MISSING, Source, parse_function
from srcad.transform.libraries import is_library_function
from srcad.transform.normalize.walk import all_statements, own_parts

#: methods of arrays, lists, dicts and srcad's tapes: other analyses follow those
KNOWN_METHODS = set(dir(np.ndarray)) | set(dir(list)) | set(dir(dict)) | {"push", "pop"}


def method_objects(
    body: list[gast.stmt], source: Source, local: set[str]
) -> Callable[[gast.Call], set[str]]:
    """For :func:`~srcad.transform.analyses.aliasing.carry`'s ``returned``: the local
    object a call of its method may hand back part of (``{"holder"}`` for
    ``holder.weights()``), if any."""
    makers = _makers(body)

    def returned(call: gast.Call) -> set[str]:
        func = call.func
        if isinstance(func, gast.Name) and func.id in local:
            # a local holding an object called (``h()``: its ``__call__``) or a bound method
            # (``get = h.weights``, which views ``h``)
            made = makers.get(func.id)
            if made is not None and all(_fresh(v, "__call__", source, local) for v in made):
                return set()
            return {func.id}
        if not isinstance(func, gast.Attribute) or func.attr in KNOWN_METHODS:
            return set()
        receiver = func.value
        while isinstance(receiver, (gast.Subscript, gast.Attribute)):
            receiver = receiver.value  # (``hs[0].weights()``, ``o.child.weights()``)
        if not isinstance(receiver, gast.Name) or receiver.id not in local:
            return set()
        made = makers.get(receiver.id) if receiver is func.value else None
        if made is not None and all(_fresh(value, func.attr, source, local) for value in made):
            return set()
        return {receiver.id}

    return returned


def user_methods(
    body: list[gast.stmt], source: Source, local: set[str]
) -> Callable[[gast.Call], Callable | None]:
    """The Python function a call of a method runs where its object is a local made by a
    class of the user's (``h = Holder()``, then ``h.weights()``), else None."""
    makers = _makers(body)

    def method(call: gast.Call) -> Callable | None:
        func = call.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return None
        made = makers.get(func.value.id) if func.value.id in local else None
        classes = {_user_class(value, source, local) for value in made or [None]}
        if len(classes) != 1 or None in classes:
            return None
        found = inspect.getattr_static(classes.pop(), func.attr, None)
        if isinstance(found, (staticmethod, classmethod)):
            found = found.__func__  # (what it returns is read the same way)
        return found if inspect.isfunction(found) else None

    return method


def _user_class(value: gast.expr | None, source: Source, local: set[str]) -> type | None:
    """The class of the user's that ``value`` calls to make an object, if it is one."""
    if not isinstance(value, gast.Call):
        return None
    maker = source.resolve(value.func, local)
    if maker is MISSING or not inspect.isclass(maker) or is_library_function(maker):
        return None
    return maker


def _makers(body: list[gast.stmt]) -> dict[str, list[gast.expr] | None]:
    """What each local name is bound to, where every binding is ``name = value`` (None for
    a name also bound otherwise: a loop, an unpacking, an update)."""
    makers: dict[str, list[gast.expr] | None] = {}
    for stmt in all_statements(body):
        whole = isinstance(stmt, gast.Assign) and all(
            isinstance(t, gast.Name) for t in stmt.targets
        )
        stores = (node for part in own_parts(stmt) for node in gast.walk(part))
        for node in stores:
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                if not whole:
                    makers[node.id] = None
                elif makers.setdefault(node.id, []) is not None:
                    makers[node.id].append(stmt.value)
    return makers


def _fresh(value: gast.expr, method: str, source: Source, local: set[str]) -> bool:
    """Whether ``method`` of the object ``value`` makes surely hands back no part of it."""
    if isinstance(value, gast.Call):
        maker = source.resolve(value.func, local)
        if maker is not MISSING and is_library_function(maker):
            return True  # a library's object (a random generator): its methods make new arrays
    made_by = _user_class(value, source, local)
    if made_by is None:
        return False  # (a user function's object: its class is known only when it runs)
    found = inspect.getattr_static(made_by, method, None)
    if isinstance(found, (staticmethod, classmethod)):
        return True
    if not inspect.isfunction(found):
        return False
    from srcad.transform.analyses.mutators import returned_parameters

    first = next(iter(inspect.signature(found).parameters), None)
    return first not in returned_parameters(found)


def shares_nothing(source: Source, local: set[str]) -> Callable[[gast.expr], bool]:
    """Whether a value read from outside the function is immutable (``np.pi``, a global
    ``SCALE = 2.0``), so a name bound to it shares no memory with the module or object it
    came from."""

    def immutable(value: gast.expr) -> bool:
        # (``getattr(np, "pi")`` is ``np.pi`` by now: normalize/objects.py ``read_fields``)
        if not isinstance(value, (gast.Name, gast.Attribute)):
            return False
        found = source.resolve(value, local)
        if found is MISSING:
            return False
        return isinstance(found, (numbers.Number, np.generic, str, bytes, type(None)))

    return immutable


#: NumPy's functions that make a new array of what they are given (others, ``asarray``,
#: ``reshape``, may hand back the very array)
_MAKERS = {
    np.array, np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
    np.empty_like, np.full_like, np.linspace, np.logspace, np.geomspace, np.arange, np.eye,
    np.identity, np.copy, np.tri,
}  # fmt: skip


def local_objects_own_arrays(
    body: list[gast.stmt], source: Source, local: set[str]
) -> Callable[[str], bool]:
    """Whether the local ``name`` is surely an object the function makes (``h =
    Holder()``, on every path) of a class of yours whose arrays are its own: each field
    its methods set on ``self`` is a number, arithmetic, a copy or made by NumPy or a
    library (``np.linspace``, ``rng.normal``), and no class attribute is an array. Such an
    object's arrays are read by nothing outside the function."""
    makers = _makers(body)
    verdicts: dict[type, bool] = {}

    def owns(name: str) -> bool:
        made = makers.get(name) if name in local else None
        classes = {_user_class(value, source, local) for value in made or [None]}
        if len(classes) != 1 or None in classes:
            return False
        cls = classes.pop()
        if cls not in verdicts:
            verdicts[cls] = _owns_its_arrays(cls)
        return verdicts[cls]

    return owns


def _owns_its_arrays(cls: type) -> bool:
    for klass in cls.__mro__[:-1]:
        for value in vars(klass).values():
            if isinstance(value, (np.ndarray, property)):
                # (a class attribute: every object, and the class, read it; a property
                # may hand back any array)
                return False
            if inspect.isfunction(value) and not _sets_own_fields(value):
                return False
    return True


def _sets_own_fields(method: Callable) -> bool:
    """Whether every ``self.f = v`` in ``method`` gives ``f`` an array of its own."""
    try:
        parsed = parse_function(method)
    except TransformError:  # (no source: nothing can be said)
        return False
    args = parsed.tree.args.args
    if not args:
        return True
    own = args[0].id
    for node in gast.walk(parsed.tree):
        if isinstance(node, gast.Call) and getattr(node.func, "id", None) == "setattr":
            return False
        if isinstance(node, gast.Assign):
            targets = [t for target in node.targets for t in gast.walk(target)]
            sets = any(
                isinstance(t, gast.Attribute) and getattr(t.value, "id", None) == own
                for t in targets
            )
            if sets and not _made_here(node.value, parsed):
                return False
    return True


def _made_here(value: gast.expr, parsed: Source) -> bool:
    """Whether ``value`` is surely a new array or a number (see ``local_objects_own_arrays``)."""
    if isinstance(value, (gast.Constant, gast.BinOp, gast.UnaryOp)):
        return True
    if isinstance(value, gast.IfExp):
        return _made_here(value.body, parsed) and _made_here(value.orelse, parsed)
    if not isinstance(value, gast.Call):
        return False
    if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
        return True
    maker = parsed.resolve(value.func, set())
    if maker is MISSING:
        return False
    if maker is np.array:
        return not any(k.arg == "copy" for k in value.keywords)
    if maker in _MAKERS:
        return True
    # NumPy's random functions, and the methods of its generators, make new arrays
    module = getattr(maker, "__module__", None) or type(getattr(maker, "__self__", None)).__module__
    return module.startswith("numpy.random")
