"""Which names may share memory: copies and views (``b = a``, ``a[1:]``, ``a.T``, reshape),
and containers holding an array (``items = [u, x]``, ``d["a"] = u``, ``items.append(u)``):
``items[0]`` is ``u`` itself, so an update of ``u`` shows through the container."""

from __future__ import annotations

from collections.abc import Callable

import gast

#: (``conj``/``conjugate`` of a real array is the array itself)
_VIEW_METHODS = {
    "reshape", "ravel", "transpose", "squeeze", "view", "swapaxes", "diagonal", "conj",
    "conjugate",
}  # fmt: skip
_VIEW_FUNCTIONS = {
    "reshape", "ravel", "transpose", "squeeze", "expand_dims", "broadcast_to",
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "require",
    "moveaxis", "swapaxes", "atleast_1d", "atleast_2d", "atleast_3d", "diagonal",
    "flip", "fliplr", "flipud", "rot90", "real", "imag", "permute_dims", "matrix_transpose",
    # several views: np.split(u, 3)[0], a, b = np.split(u, 2)
    "split", "array_split", "hsplit", "vsplit", "dsplit", "broadcast_arrays", "unstack",
    # (np.diag of a matrix is its diagonal, a view; stride tricks view by design)
    "diag", "sliding_window_view", "as_strided", "real_if_close", "asarray_chkfinite",
    "rollaxis", "trim_zeros", "asmatrix", "frombuffer", "from_dlpack", "ix_",
}  # fmt: skip
#: functions handing back their argument itself for one count (``np.diff(u, 0)``,
#: ``matrix_power(a, 1)``, ``nan_to_num(a, copy=False)``): its position, keyword and value
_VIEW_COUNTS = {
    "diff": (1, "n", 0), "polyder": (1, "m", 0), "polyint": (1, "m", 0),
    "matrix_power": (1, "n", 1), "nan_to_num": (1, "copy", False),
}  # fmt: skip
_VIEW_ATTRIBUTES = {"T", "mT", "real", "imag"}
#: attributes that are numbers, tuples or dtypes: they share no array's memory
_NUMBER_ATTRIBUTES = {
    "shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides", "flags", "device",
}  # fmt: skip
#: builtins handing back an object's field, or the dict holding its fields
_FIELD_READERS = {"getattr", "vars"}
#: names an array module goes by: ``np.ravel(u)`` views ``u``, while ``a.ravel()`` views ``a``
_MODULE_NAMES = {"np", "numpy", "xp", "cp", "cupy", "jnp", "da"}


def viewed_name(value: gast.expr) -> str | None:
    """The name whose memory ``value`` may share, if it is a copy or a view of one (the
    likelier one where the form is ambiguous: :func:`viewed_names` gives every one)."""
    names = viewed_names(value)
    if len(names) <= 1:
        return next(iter(names), None)
    # a call read as a method and as a function: the receiver, unless a module's name
    receiver = viewed_name(value.func.value)
    return receiver if receiver in names else min(names)


def viewed_names(value: gast.expr) -> set[str]:
    """Every name whose memory ``value`` may share: ``f.reshape(u)`` is a view of ``u`` if
    ``f`` is NumPy, of ``f`` if it is an array (both, when the syntax cannot tell)."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, gast.IfExp):  # ``a if c else b``: either
        return viewed_names(value.body) | viewed_names(value.orelse)
    if isinstance(value, gast.BoolOp):  # ``a or b`` is one of its operands
        return {name for part in value.values for name in viewed_names(part)}
    if isinstance(value, gast.Subscript):
        # (an element of a display is the array put there: ``(a, b)[0]`` is ``a``)
        return held_names(value.value)
    if isinstance(value, gast.Attribute) and value.attr not in _NUMBER_ATTRIBUTES:
        # a view (``u.T``), or an object's field (``p.W`` of a dataclass argument, a
        # method's ``self.W``): the array the object holds
        return viewed_names(value.value)
    if not isinstance(value, gast.Call):
        return set()
    func = value.func
    if isinstance(func, gast.Name):
        if func.id in _FIELD_READERS and value.args:
            # ``getattr(h, "W")`` is the field itself, ``vars(h)`` the object's own dict
            return viewed_names(value.args[0])
        return _viewed_arguments(func.id, value)  # (``from numpy import ravel``)
    if not isinstance(func, gast.Attribute):
        return set()
    attr, receiver = func.attr, func.value
    found: set[str] = set()
    method = attr in _VIEW_METHODS or (attr == "astype" and _no_copy(value))
    root = receiver
    while isinstance(root, gast.Attribute):
        root = root.value  # (``np.linalg.diagonal(a)``: a module's function)
    if method and not (isinstance(root, gast.Name) and root.id in _MODULE_NAMES):
        found |= viewed_names(receiver)
    return found | _viewed_arguments(attr, value)


def _unsummed(subscripts: str) -> bool:
    """Whether an einsum of one operand keeps every index (``"ii->i"``, ``"ij->ji"``)."""
    given, _, output = subscripts.replace(" ", "").partition("->")
    letters = [c for c in given if c.isalpha()]
    if "->" not in subscripts:
        output = "".join(c for c in letters if letters.count(c) == 1)
    return set(letters) <= set(output)


def _viewed_arguments(name: str, call: gast.Call) -> set[str]:
    """The names whose memory the NumPy function ``name`` called so may hand back."""
    args = call.args
    if not args or any(isinstance(a, gast.Starred) for a in args):
        return set()
    if name == "einsum":
        # one operand, ``einsum("ii->i", a)`` or ``einsum(a, [0, 0], [0])``: a view of it
        # (a diagonal, a transpose) where no index is summed
        spelled = isinstance(args[0], gast.Constant) and isinstance(args[0].value, str)
        if spelled:
            return viewed_names(args[1]) if len(args) == 2 and _unsummed(args[0].value) else set()
        if len(args) == 2:  # (the subscripts in a variable, or the sublist form)
            return viewed_names(args[0]) | viewed_names(args[1])
        return viewed_names(args[0]) if len(args) == 3 else set()
    if name in _VIEW_COUNTS:
        position, keyword, itself = _VIEW_COUNTS[name]
        count = args[position] if len(args) > position else None
        count = next((kw.value for kw in call.keywords if kw.arg == keyword), count)
        if count is None or (isinstance(count, gast.Constant) and count.value != itself):
            return set()
        return viewed_names(args[0])
    if name in _VIEW_FUNCTIONS or (name == "array" and _no_copy(call)):
        return viewed_names(args[0])
    return set()


def unpacked_names(target: gast.expr) -> list[str]:
    """The names an assignment target binds: ``a``, or each of ``a, (b, c)``."""
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, (gast.Tuple, gast.List)):
        return [name for elt in target.elts for name in unpacked_names(elt)]
    if isinstance(target, gast.Starred):
        return unpacked_names(target.value)
    return []


def _no_copy(call: gast.Call) -> bool:
    """``copy=False`` (or NumPy 2's ``copy=None``) among the keywords (``a.astype(t,
    copy=False)``, ``np.array(a, copy=None)``): the result may be the array itself."""
    return any(
        kw.arg == "copy"
        and isinstance(kw.value, gast.Constant)
        and (kw.value.value is False or kw.value.value is None)
        for kw in call.keywords
    )


_CONTAINER_DISPLAYS = (gast.List, gast.Tuple, gast.Set, gast.Dict)
#: methods of dicts and lists handing back elements they hold
ELEMENT_METHODS = {"get", "setdefault", "pop", "popitem", "values", "items"}
#: methods that put their arguments into the container they are called on
CONTAINER_STORES = {"append", "extend", "insert", "add", "update", "setdefault"}


def held_names(value: gast.expr) -> set[str]:
    """Names whose memory ``value`` may share: a view, or the elements of a container display
    (nested displays and views of elements too)."""
    if isinstance(value, _CONTAINER_DISPLAYS):
        parts = value.values if isinstance(value, gast.Dict) else value.elts
        return {name for part in parts for name in held_names(part)}
    if isinstance(value, gast.Starred):
        return held_names(value.value)
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
        if value.func.attr in ELEMENT_METHODS:
            # ``d.get("a")``, ``d.values()``, ``xs.pop()``: elements of the container
            # itself, or the default given
            given = (name for arg in value.args[1:] for name in held_names(arg))
            return held_names(value.func.value) | set(given)
    if isinstance(value, gast.BinOp) and _joined(value):
        # ``[u] + [x]``, ``[u] * 2``: a new list holding the same arrays
        return held_names(value.left) | held_names(value.right)
    if isinstance(value, gast.Call) and _shallow(value.func):
        # ``copy.copy(d)``, ``zip(xs, ys)``, ``sorted(xs)``: the same arrays, or an
        # object's same fields
        return {name for arg in value.args for name in held_names(arg)}
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
        if value.func.id in ("list", "tuple", "dict") and not value.keywords:
            return {name for arg in value.args for name in held_names(arg)}
        if value.func.id == "dict":
            return {name for kw in value.keywords for name in held_names(kw.value)}
    return viewed_names(value)


def _joined(value: gast.BinOp, containers: set[str] = frozenset()) -> bool:
    """Whether ``value`` joins or repeats lists or tuples (``[u] + [x]``, ``xs + ys`` of
    names bound to containers, ``[u] * 2``)."""
    if not isinstance(value.op, (gast.Add, gast.Mult)):
        return False
    return any(
        is_container(side)
        or (isinstance(side, gast.Name) and side.id in containers)
        or (isinstance(side, gast.BinOp) and _joined(side, containers))
        for side in (value.left, value.right)
    )


def _shallow(func: gast.expr) -> bool:
    """Whether calling ``func`` makes a shallow copy or an iterator of what it is given."""
    if isinstance(func, gast.Name):
        return func.id in _SHALLOW_BUILTINS
    return (
        isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Name)
        and (func.value.id, func.attr) in (("copy", "copy"), ("itertools", "chain"))
    )


#: builtins handing back the very objects they are given, in a new container or iterator
_SHALLOW_BUILTINS = {"zip", "enumerate", "reversed", "sorted", "iter", "filter"}


def held_calls(value: gast.expr) -> list[gast.Call]:
    """The calls whose result ``value`` may be (or view, or hold): the call itself, through
    subscripts, views, both arms of ``a if c else b``, ``a or b`` and displays' elements
    (``v, w = h(x, u), x``: ``v`` is what ``h`` returns)."""
    if isinstance(value, gast.Call):
        func = value.func
        inner: list[gast.Call] = []
        if isinstance(func, gast.Attribute) and func.attr in _VIEW_METHODS:
            inner = held_calls(func.value)
        if isinstance(func, gast.Attribute) and func.attr in _VIEW_FUNCTIONS and value.args:
            inner += held_calls(value.args[0])
        return [value, *inner]
    if isinstance(value, gast.Subscript) or (
        isinstance(value, gast.Attribute) and value.attr in _VIEW_ATTRIBUTES
    ):
        return held_calls(value.value)
    if isinstance(value, gast.IfExp):
        return held_calls(value.body) + held_calls(value.orelse)
    if isinstance(value, gast.BoolOp):
        return [call for part in value.values for call in held_calls(part)]
    if isinstance(value, _CONTAINER_DISPLAYS):
        parts = value.values if isinstance(value, gast.Dict) else value.elts
        return [call for part in parts for call in held_calls(part)]
    if isinstance(value, gast.Starred):
        return held_calls(value.value)
    return []


def stored_into(stmt: gast.stmt, containers: set[str]) -> tuple[str, set[str]] | None:
    """``(container, names)`` when ``stmt`` puts ``names`` into one of ``containers``:
    ``d[k] = u``, ``items.append(u)``, ``items.extend([u, v])``, ``d.update(a=u)``."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        if (
            len(stmt.targets) == 1
            and isinstance(target, gast.Subscript)
            and isinstance(target.value, gast.Name)
            and target.value.id in containers
        ):
            return target.value.id, held_names(stmt.value)
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        call = stmt.value
        if (
            isinstance(call.func, gast.Attribute)
            and call.func.attr in CONTAINER_STORES
            and isinstance(call.func.value, gast.Name)
            and call.func.value.id in containers
        ):
            values = [*call.args, *(kw.value for kw in call.keywords)]
            return call.func.value.id, {n for v in values for n in held_names(v)}
    return None


def is_container(value: gast.expr) -> bool:
    """Whether ``value`` makes a list, tuple, set or dict (a display, a comprehension, or
    ``list(...)``/``dict(...)``)."""
    if isinstance(value, (*_CONTAINER_DISPLAYS, gast.ListComp, gast.DictComp, gast.SetComp)):
        return True
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id in ("list", "tuple", "dict", "set")
    )


def _chained_names(first: gast.expr, other: gast.expr) -> list[tuple[str, set[str]]]:
    """For ``first = other = v``: each name of ``other`` with the names of ``first`` bound to
    the same object (``a, b = c, d = v``: ``c`` with ``a``; any name of ``first``, where the
    two are not unpacked alike)."""
    if isinstance(first, gast.Name) and isinstance(other, gast.Name):
        return [(other.id, {first.id})]
    if (
        isinstance(first, (gast.Tuple, gast.List))
        and isinstance(other, (gast.Tuple, gast.List))
        and len(first.elts) == len(other.elts)
        and not any(isinstance(e, gast.Starred) for e in [*first.elts, *other.elts])
    ):
        return [pair for a, b in zip(first.elts, other.elts) for pair in _chained_names(a, b)]
    names = {n.id for n in gast.walk(first) if isinstance(n, gast.Name)}
    return [(n.id, names) for n in gast.walk(other) if isinstance(n, gast.Name)]


class Aliases:
    """Pairs of names that may share memory, as statements are read in order; at the end
    of a branch or loop the pairs of every path are kept (:meth:`merge`)."""

    def __init__(self, immutable: Callable[[gast.expr], bool] | None = None) -> None:
        self.links: dict[str, set[str]] = {}
        #: whether a value from outside the function is immutable (``np.pi``): a name
        #: bound to it shares no memory with where it came from
        self.immutable = immutable
        #: names bound to a list, tuple, set or dict on some path / on every path here
        self.maybe_containers: set[str] = set()
        self.containers: set[str] = set()
        #: names bound to a Python number (immutable: it shares no memory) on some path /
        #: to anything else on some path
        self.numbers: set[str] = set()
        self.non_numbers: set[str] = set()

    def others(self, name: str) -> set[str]:
        """Names other than ``name`` that may share its memory."""
        return set(self.links.get(name, ()))

    def is_number(self, name: str) -> bool:
        """Whether ``name`` holds a Python number on every path that binds it."""
        return name in self.numbers and name not in self.non_numbers

    def assign(self, target: str, value: gast.expr) -> None:
        """Record ``target = value``."""
        # ``a = a[::-1]``: the new ``a`` views what the old one shared memory with
        sources = held_names(value)
        joined = isinstance(value, gast.BinOp) and _joined(value, self.maybe_containers)
        if joined:  # (``ys = xs + [x]`` of a list name: its arrays too)
            sources |= held_names(value.left) | held_names(value.right)
        shared = set()
        for source in sources:
            if not self.is_number(source):
                shared |= self.others(source) | {source}
        fixed = self.immutable is not None and self.immutable(value)
        if fixed:
            shared = set()
        shared.discard(target)
        self._forget(target)
        self.link(target, shared)
        number = fixed or _number(value, self)
        (self.numbers if number else self.non_numbers).add(target)
        (self.non_numbers if number else self.numbers).discard(target)
        if is_container(value) or joined:
            self.maybe_containers.add(target)
            self.containers.add(target)
        else:
            self.maybe_containers.discard(target)
            self.containers.discard(target)

    def link(self, target: str, names: set[str]) -> None:
        """Record that ``target`` may also share memory with ``names`` (and what they share
        memory with): an array stored into the container ``target``."""
        shared = set()
        for name in names:
            if not self.is_number(name):
                shared |= self.others(name) | {name}
        shared.discard(target)
        if shared:
            self.links.setdefault(target, set()).update(shared)
            for name in shared:
                self.links.setdefault(name, set()).add(target)

    def copy(self) -> Aliases:
        """An independent copy (one path of a branch)."""
        new = Aliases(self.immutable)
        new.links = {name: set(others) for name, others in self.links.items()}
        new.maybe_containers = set(self.maybe_containers)
        new.containers = set(self.containers)
        new.numbers = set(self.numbers)
        new.non_numbers = set(self.non_numbers)
        return new

    def merge(self, other: Aliases) -> bool:
        """Add the pairs of ``other`` (another path to the same point); whether any was new."""
        changed = not other.maybe_containers <= self.maybe_containers
        changed |= not (other.numbers <= self.numbers and other.non_numbers <= self.non_numbers)
        self.maybe_containers |= other.maybe_containers
        self.numbers |= other.numbers
        self.non_numbers |= other.non_numbers
        self.containers &= other.containers
        for name, others in other.links.items():
            mine = self.links.setdefault(name, set())
            if not others <= mine:
                mine |= others
                changed = True
        return changed

    def _forget(self, name: str) -> None:
        for other in self.links.pop(name, ()):
            self.links.get(other, set()).discard(name)


def _number(value: gast.expr, aliases: Aliases) -> bool:
    """Whether ``value`` is a Python number: a constant, a name holding one, arithmetic of
    those (``z = 0.0; w = z`` shares no memory: ``w += 1`` rebinds ``w``)."""
    if isinstance(value, gast.Constant):
        return isinstance(value.value, (int, float, complex))
    if isinstance(value, gast.Name):
        return aliases.is_number(value.id)
    if isinstance(value, gast.UnaryOp):
        return _number(value.operand, aliases)
    if isinstance(value, gast.BinOp):
        return _number(value.left, aliases) and _number(value.right, aliases)
    return False


Visit = Callable[[gast.stmt, list[gast.stmt], Aliases], None]


def carry(
    body: list[gast.stmt],
    visit: Visit,
    aliases: Aliases | None = None,
    returned: Callable[[gast.Call], set[str]] | None = None,
) -> Aliases:
    """Carry ``aliases`` through ``body`` in program order and call ``visit(stmt, loops,
    aliases)`` before each statement takes effect (on a loop's last round: the state then
    holds what any turn can bring). A branch or loop may not run its body, or may run it
    again: the pairs of every path count after it; ``break``/``continue`` end a turn too.
    ``returned(call)`` names the variables whose arrays a call may return (a user function
    handing back its argument), if any."""
    # per enclosing loop: the states at break/continue (none where no path reaches one: an
    # empty state merged in would drop what every path holds, such as a name's being a dict)
    jumps: list[dict[type, Aliases]] = []

    def walk(stmts: list[gast.stmt], loops: list[gast.stmt], aliases: Aliases, final: bool):
        for stmt in stmts:
            if final:
                visit(stmt, loops, aliases)
            stored = stored_into(stmt, aliases.maybe_containers)
            if stored is not None:
                aliases.link(*stored)
            elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                aliases.assign(stmt.target.id, gast.Constant(value=None, kind=None))
            elif isinstance(stmt, gast.Assign):
                for target in stmt.targets:
                    # a, b = np.split(u, 2): each name may view what the value views
                    for name, part in unpacked_parts(target, stmt.value):
                        aliases.assign(name, part)
                        _link_returned(aliases, name, part, returned)
                # ``a = b = x * 1.0``: one object under every name
                for other in stmt.targets[1:]:
                    for name, first in _chained_names(stmt.targets[0], other):
                        aliases.link(name, first)
            elif isinstance(stmt, gast.If):
                other = walk(stmt.orelse, loops, aliases.copy(), final)
                aliases = walk(stmt.body, loops, aliases, final)
                aliases.merge(other)
            elif isinstance(stmt, gast.With):
                aliases = walk(stmt.body, loops, aliases, final)  # (a helper's own code)
            elif isinstance(stmt, gast.Try):
                # (a helper's own code: ``try`` is lowered only in the function transformed)
                # the handler may start after any statement of the body
                entry = aliases.copy()
                for inner in stmt.body:
                    aliases = walk([inner], loops, aliases, final)
                    entry.merge(aliases)
                aliases = walk(stmt.orelse, loops, aliases, final)
                for handler in stmt.handlers:
                    aliases.merge(walk(handler.body, loops, entry.copy(), final))
                aliases = walk(stmt.finalbody, loops, aliases, final)
            elif isinstance(stmt, (gast.Break, gast.Continue)) and jumps:
                exits = jumps[-1]
                if type(stmt) in exits:
                    exits[type(stmt)].merge(aliases)
                else:
                    exits[type(stmt)] = aliases.copy()
            elif isinstance(stmt, (gast.For, gast.While)) and _turns(stmt) == 0:
                aliases = walk(stmt.orelse, loops, aliases, final)  # the body never runs
            elif isinstance(stmt, (gast.For, gast.While)):
                inner = loops + [stmt]
                # the state at the top of a turn: before the loop, or after any turn
                top = aliases
                while True:
                    jumps.append({})
                    end = walk(stmt.body, inner, _turn(stmt, top, returned), False)
                    exits = jumps.pop()
                    if gast.Continue in exits:
                        end.merge(exits[gast.Continue])
                    if not top.merge(end):
                        break
                jumps.append({})
                last = walk(stmt.body, inner, _turn(stmt, top, returned), final)
                for exits in jumps.pop().values():  # a last turn may end at either
                    last.merge(exits)
                if not _turns(stmt):
                    last.merge(top)  # no turn at all
                aliases = walk(stmt.orelse, loops, last, final)
        return aliases

    return walk(body, [], aliases if aliases is not None else Aliases(), True)


def unpacked_parts(target: gast.expr, value: gast.expr) -> list[tuple[str, gast.expr]]:
    """Each name an assignment binds, with what it takes: the value itself for a name; for
    ``a, b = ...`` the matching element of a display of that length, else an element of
    the value (not the value: ``t0, t1 = (y, x)`` makes ``t0`` the array ``y``, not a
    tuple, whose element stores would change no array)."""
    if isinstance(target, gast.Name):
        return [(target.id, value)]
    if isinstance(target, gast.Starred):  # ``*rest``: a new list of elements
        return unpacked_parts(target.value, gast.List(elts=[value], ctx=gast.Load()))
    if not isinstance(target, (gast.Tuple, gast.List)):
        return []
    same = isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts)
    if same and not any(isinstance(e, gast.Starred) for e in (*target.elts, *value.elts)):
        return [pair for t, v in zip(target.elts, value.elts) for pair in unpacked_parts(t, v)]
    element = gast.Subscript(value=value, slice=gast.Constant(value=0, kind=None), ctx=gast.Load())
    return [
        pair
        for t in target.elts
        for pair in unpacked_parts(t, element if not isinstance(t, gast.Starred) else value)
    ]


def _link_returned(
    aliases: Aliases, name: str, value: gast.expr, returned: Callable | None
) -> None:
    """``name = value``: ``name`` may also share memory with what a call in ``value`` hands
    back (``returned(call)``: a helper's argument, a method's object)."""
    if returned is None:
        return
    given = {n for call in held_calls(value) for n in returned(call)}
    if given - {name}:
        aliases.link(name, given - {name})


def _turn(loop: gast.stmt, aliases: Aliases, returned: Callable | None = None) -> Aliases:
    """``aliases`` at the top of a turn of ``loop``: the row ``for row in a`` views ``a``, as
    do ``u, v`` of ``for u, v in a`` and ``u`` of ``for i, (u, w) in enumerate(zip(a, b))``."""
    entry = aliases.copy()
    if isinstance(loop, gast.For):
        for target, sequence in _loop_bindings(loop.target, loop.iter):
            # an element of the sequence, not the sequence: ``for v in [y]`` makes ``v``
            # the array ``y``, not a list (whose element stores change no array)
            element = gast.Subscript(
                value=sequence, slice=gast.Constant(value=0, kind=None), ctx=gast.Load()
            )
            for name in unpacked_names(target):
                entry.assign(name, element)
                _link_returned(entry, name, sequence, returned)
    return entry


def _loop_bindings(target: gast.expr, it: gast.expr) -> list[tuple[gast.expr, gast.expr]]:
    """``(target, sequence)`` pairs of a loop header: ``target`` takes an element of
    ``sequence``."""
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and not it.keywords:
        pairs = isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 2
        if it.func.id == "enumerate" and len(it.args) == 1 and pairs:
            counter = gast.Constant(value=0, kind=None)  # an int: it shares no memory
            return [(target.elts[0], counter), *_loop_bindings(target.elts[1], it.args[0])]
        if (
            it.func.id == "zip"
            and isinstance(target, (gast.Tuple, gast.List))
            and len(target.elts) == len(it.args)
        ):
            return [pair for t, a in zip(target.elts, it.args) for pair in _loop_bindings(t, a)]
    return [(target, it)]


def _turns(loop: gast.stmt) -> int | None:
    """How many turns ``loop`` makes when that is written in it (``for i in range(n)`` with
    constants); None when it is not known."""
    if not isinstance(loop, gast.For) or not isinstance(loop.iter, gast.Call):
        return None
    call = loop.iter
    args = call.args
    if not (isinstance(call.func, gast.Name) and call.func.id == "range") or call.keywords:
        return None
    if not args or len(args) > 2 or not all(isinstance(a, gast.Constant) for a in args):
        return None
    bounds = [a.value for a in args]
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
        return None
    start, stop = (0, bounds[0]) if len(bounds) == 1 else bounds
    return max(stop - start, 0)


def memory_of(param: str) -> str:
    """A name no code can use for the memory parameter ``param`` holds at the call."""
    return f"<memory of {param}>"


def with_arguments(params: list[str]) -> Aliases:
    """Aliases at a function's entry: each parameter views its argument's memory, so that
    a parameter rebound to a new array (``h = h @ W``) no longer counts as the argument."""
    aliases = Aliases()
    for p in params:
        aliases.assign(p, gast.Name(id=memory_of(p), ctx=gast.Load(), annotation=None,
                                    type_comment=None))  # fmt: skip
    return aliases


def argument_of(aliases: Aliases, name: str | None, params: list[str]) -> str | None:
    """The parameter whose argument's memory ``name`` may denote here (the first)."""
    found = arguments_of(aliases, name, params)
    return found[0] if found else None


def arguments_of(aliases: Aliases, name: str | None, params: list[str]) -> list[str]:
    """Every parameter whose argument's memory ``name`` may denote here (``r`` bound to
    ``p`` on one path and to ``q`` on another may denote either)."""
    if name is None:
        return []
    shared = aliases.others(name)
    return [p for p in params if memory_of(p) in shared]
