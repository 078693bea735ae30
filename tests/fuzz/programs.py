"""A generator of random valid Python functions, for differential testing against finite
differences.

Each program defines ``f(x, y, w)`` (or ``f(p, w)`` with ``p`` a dict or tuple holding
``x`` and ``y``): ``x`` has a random shape ``(n,)`` or ``(m, n)`` (length-1 axes included),
``y`` is a row of shape ``(n,)``, a Python float or a 0-d array (it broadcasts against
``x``), and ``w`` holds positive weights shaped like ``x``; ``x`` and ``y`` are
differentiated. ``f`` returns a scalar, an array shaped like ``x``, or a pair of both.
A program mixes

- straight-line arithmetic and NumPy calls whose operands broadcast against ``x``'s shape;
- nested ``if``/``elif``/``else`` on data, ``for`` and bounded ``while`` loops with
  ``break``/``continue``, and early returns;
- calls of helpers: with a branch inside, returning a pair, with defaults and keywords,
  recursive (to a fixed depth or a depth set by data), closures made outside ``f`` and local
  functions (also called inside comprehensions);
- in-place updates of an array made in ``f`` (``u``): element, slice, negative, fancy,
  repeated and boolean index writes, ``out=``, ``np.copyto``, ``np.put``, ``fill``,
  ``sort``, ``+=``/``*=``/``__iadd__``, and names that alias or view ``u`` (``v = u``,
  ``u[1:]``, ``.T``, ``reshape``) read after the update, as NumPy's semantics say;
- lists (literals read by index, ``append`` in loops, of constants too, aliases of a list,
  a list holding ``u`` while ``u`` changes), dicts, comprehensions, ``np.stack``;
- NaN or inf on the side of ``np.where`` it does not take, operations whose derivative is
  exactly zero where a naive rule gives NaN (``0 ** p``, ``p ** 0`` at 0, the ``std`` of one
  element, the norm of zeros), and ops whose derivative once came out zero (``np.r_``,
  ``np.c_``, ``np.linspace``, ``np.einsum`` in sublist form).

``Spec`` says how the checker calls the program (shapes, ``y``'s kind, pytree, output,
float32). ``constructs`` names the families a program used (``--stats`` counts them).

Values stay bounded (tanh, sin, cos, exp of a tanh, denominators kept away from zero).
Branch thresholds, kinks and sorts are not avoided by the generator itself:
``probe_source`` rewrites a program to record how close every comparison, kink and sort
came to flipping, and the test draws inputs until each margin is wide.

``ProgramWriter`` takes any ``random.Random``: ``random.Random(seed)`` for the seeded runs,
or the one ``hypothesis.strategies.randoms()`` draws, so that hypothesis can shrink a
failing program (``programs()`` below).
"""

from __future__ import annotations

import ast
import random
import sys
from collections import Counter
from dataclasses import dataclass, replace

FULL = ["a", "b", "c", "u", "x"]  # names shaped like x
TARGETS = ["a", "b", "c"]

HELPERS = """
def helper(p, q):
    return np.tanh(p) * q + p * 0.5


def applied(p, act=np.tanh):
    return act(p * 0.5) + p * 0.25


def helper_tanh(p):
    return np.tanh(p) * 0.9


def applied_twice(p, act):
    return applied(act(p), act)


def pick(p, q):
    return q


def pick_tried(p, q):
    try:
        r = q
    except ValueError:
        r = p
    return r


def pick_either(p, q):
    if np.sum(p) > 100.0:
        r = p
    else:
        r = q
    return r


def offset_by(p, shift=np.ones(1) * 0.25):
    return p + shift * np.tanh(p)


SCRATCH = np.zeros(8)


def scratch(n):
    return SCRATCH[:n]


class Shelf:
    def __init__(self):
        self.table = np.zeros(8)

    def rows(self, n):
        return self.table[:n]


SHELF = Shelf()


def second_of(*args):
    return args[1]


class Keeper:
    def fetch(self, q):
        return q


class Tray:
    def __init__(self):
        self.cells = np.linspace(0.5, 1.5, 8)

    def peek(self, n):
        return self.cells[:n]

    def taken(self, n):
        return self.cells[:n] * 1.0

    def total(self):
        return np.sum(self.cells) * 0.5

    def spare(self, n):
        return SCRATCH[:n]

    def __call__(self, n):
        return self.cells[:n]


def tray_made():
    return Tray()


def swapped(p, q):
    return q, p


def pick_quiet(p, q):
    with np.errstate(all="ignore"):
        return q


def raising(p, flag):
    if flag:
        raise ValueError("taken")
    return p * 0.5


def pair(p, q):
    s = np.sin(p)
    return s * q, p - q * 0.25


def grown(p, n):
    out = [p]
    v = p
    for _ in range(n):
        v = np.sin(v) * 0.5 + p * 0.1
        out.append(v)
    return out


def pair_by_branch(p, q):
    if np.sum(p) > 0.3:
        return np.tanh(p) * q, p * 0.5
    return p - q * 0.25, np.cos(p) * q


def stats(p, q):
    s = np.sin(p)
    return {"m": s * q, "s": p - q * 0.25}


STORE = {}
KEPT = []


def stash(v):
    KEPT.append(v)


class Box:
    def __init__(self):
        self.items = []

    def keep(self, v):
        self.items.append(v)

    def total(self):
        return sum(self.items)


class Stats:
    def stats(self, p, q):
        return {"m": np.sin(p) * q, "s": p * 0.5}


def stats_by_branch(p, q):
    if np.sum(p) > 0.3:
        return {"m": np.tanh(p) * q, "s": p * 0.5}
    return {"m": p - q * 0.25, "s": np.cos(p) * q}


def branchy(p, t):
    if np.sum(p) > t:
        return np.tanh(p) * 2.0
    return p * 0.5 + 0.1


def scaled(p, s=0.5, shift=0.25):
    return np.tanh(p) * s + shift


def keyed(p, *, k=2.0):
    return np.sin(p * k)


def rec(p, n):
    if n <= 0:
        return p
    return rec(np.sin(p) * 0.9 + 0.1, n - 1)


def shrink(p, t):
    if np.sum(np.abs(p)) > t:
        return shrink(p * 0.5, t) + p * 0.1
    return p


def split(p, t):
    if np.sum(np.abs(p)) > t:
        a, b = split(p * 0.5, t)
        return a + p * 0.1, b * 0.9 + np.sin(p)
    return p * 1.0, np.cos(p)


def split_sum(p, t):
    a, b = split(p, t)
    return a * b


def ping(p, t):
    if np.sum(np.abs(p)) > t:
        return pong(p * 0.6, t) + p * 0.1
    return p * 1.0


def pong(p, t):
    return ping(np.sin(p), t) * 0.9


def make_scale(k):
    def scale(p):
        return np.sin(p) * k

    return scale


scale3 = make_scale(0.75)


def make_affine(k):
    w = np.tanh(k) * 0.5
    return lambda p: np.sin(p) * w + p * 0.25


def opts(p, **kw):
    s = kw.get("s", 1.0)
    if "t" in kw:
        s = s + kw["t"] * 0.5
    return np.tanh(p) * s


def shifted(p, shift, scale):
    return np.sin(p) * scale + shift


bound_shift = functools.partial(shifted, shift=0.25, scale=0.5)


def single(p):
    return (np.cos(p) * p,)


def pairdot(g):
    a, b = g
    return a * np.cos(b)


@srcad.custom_vjp
def soft(p, q):
    return np.tanh(p) * q


def soft_fwd(p, q):
    t = np.tanh(p)
    return t * q, (t, (q, 1.0))


def soft_bwd(res, g):
    t, (q, one) = res
    return g * (1.0 - t * t) * q * one, g * t


soft.defvjp(soft_fwd, soft_bwd)


@srcad.custom_jvp
def smooth(p):
    return np.sin(p) * p


@smooth.defjvp
def smooth_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    return np.sin(p) * p, (np.cos(p) * p + np.sin(p)) * dp


@srcad.custom_jvp
def blend(p, q, s=0.5):
    return np.sin(p) * q * s


@blend.defjvp
def blend_jvp(primals, tangents):
    p, q, s = primals
    dp, dq, ds = tangents
    return np.sin(p) * q * s, (np.cos(p) * q * dp + np.sin(p) * dq) * s + np.sin(p) * q * ds


def tripled_at(p, index):
    return 3.0 * p[..., index]


def spread_at(p, index, g):
    out = np.zeros_like(p)
    out[..., index] = 3.0 * g
    return out


@srcad.adjoint(tripled_at, static=("index",))
def getitem(y, p, index):  # named as srcad's rule for p[i] is: must not be taken for it
    d[p] = spread_at(p, index, d[y])


@srcad.tangent(tripled_at, static=("index",))
def getitem_tangent(y, p, index):
    d[y] = 3.0 * d[p][..., index]


def row_total(p):
    return np.sum(p, axis=-1, keepdims=True)


@srcad.adjoint(row_total)
def add(y, p):  # named as srcad's rule for a + b is: not elementwise
    d[p] = xp.broadcast_to(d[y], xp.asarray(p).shape) * 1.0


@srcad.tangent(row_total)
def add_tangent(y, p):
    d[y] = xp.sum(d[p], axis=-1, keepdims=True)


def heavy(p, q):
    if np.sum(p) > q:
        return np.tanh(p * q) + p * 0.25
    return np.sin(p) * q


checked = srcad.checkpoint(heavy)


def upd(p):
    q = p * 1.0
    q[..., :1] = np.sin(q[..., :1]) * 2.0
    return np.sum(q * q)


def upd_arg(p):
    p[..., :1] = np.tanh(p[..., :1])
    return np.sum(p * np.cos(p))


grad_upd = srcad.grad(upd)
grad_upd_arg = srcad.grad(upd_arg)


def squash(v, t):
    if t == 0:
        return np.sum(v, keepdims=True)
    return v * 1.0
"""

# every construct family the generator writes (a test checks each appears in a few hundred
# seeds, so that none silently vanishes)
FAMILIES = {
    "indexing", "kinks", "helper calls", "tuple-returning helpers", "in-place updates",
    "lists", "comprehensions", "if/else", "elif", "for", "while", "break", "continue",
    "early return", "views", "out=", "np.copyto", "np.put", "fill", "sort", "+= on a name",
    "__iadd__", "slice index writes", "negative index writes", "fancy index writes",
    "repeated index writes", "boolean index writes", "keyword helpers", "recursion",
    "data-dependent recursion", "closures", "local functions",
    "local functions in comprehensions", "list aliases", "append constants", "dicts",
    "dict comprehensions", "dict comprehensions over a pytree",
    "list holding an updated array", "nan-where", "nan-safe ops", "zero-derivative ops",
    "float32", "python float y", "0-d y", "length-1 axes", "pytree dict", "pytree tuple",
    "array output", "pair output", "rebinding after zero-trip loop or if",
    "rebound defaults and closures", "helpers returning an argument",
    "second order of in-place updates", "second order of lists", "second order of helpers",
    "pytree nested", "loops over sub-trees", "sub-trees passed whole",
    "sub-trees bound on two paths", "positional reduction options", "tuple names",
    "arrays unpacked", "list displays stacked", "a display converted by an op",
    "a list converted by an op", "Python's max and min of numbers", "a tuple name extended",
    "sum of a display", "np.errstate",
    "star-arguments", "kwargs helpers", "try", "one-tuple results", "local factories",
    "a display passed to a helper", "arguments updated in place",
    "+= through another name of a float parameter",
    "module factories", "second order of recursion", "loops over a dict",
    "loops over a display", "loops handing values round", "shapes changing in a loop",
    "custom rules and checkpoints", "matrix norms", "data-dependent tuple recursion",
    "ranges with a start or step", "locals named as builtins",
    "gradients of updating functions inside f", "a range bound changed in its loop",
    "data-dependent mutual recursion", "statements before a jump",
    "a value read on the next turn", "for/else", "arrays made and updated in a try body",
    "lists unpacked", "module globals at second order", "users' rules named as srcad's",
    "a loop counter as a static operand", "a constant beside varied values on a tape",
    "a helper's results in one name", "tuples from two returns", "a list a helper builds",
    "a name holding a list, then an array", "a tuple name summed",
    "a helper's argument updated in place after the call", "a dict a helper returns",
    "keyword-bound partials", "a dict a method returns", "a tuple grown in a loop",
    "a dict display iterated", "a union of dicts", "a set display of constants",
    "a value kept by a call for its effect", "logging a differentiated value",
    "an element update of a global", "a Python float reduced by NumPy",
    "a sequence of an array's rows",
    "a sub-tree and a display passed together",
    "gradients of updating functions in a try body", "comprehensions in a try body",
    "a helper returning its argument from a try body", "local functions raising in a try body",
    "a helper returning its argument from a with body", "a helper returning one of two arguments",
    "views through displays, conditionals and conj", "a helper returning its argument in a tuple",
    "arguments returned through *args and methods", "defaults made by a call",
    "views unpacked from a display", "tuple displays indexed in place",
    "a helper returning a global array",
    "a method returning its object's array", "decomposition values at ties",
    "np.repeat with a count per element", "augmented updates of a dict's element",
    "chained assignments", "map and functools.reduce", "functions passed to helpers",
    "lambdas given to helpers", "max and min of a sequence", "loops over functions",
    "a method of an object made by a function", "ufunc methods, masks and pad modes",
    "a global array changed through a name",
}  # fmt: skip


@dataclass(frozen=True)
class Spec:
    """How the checker calls a program."""

    shape: tuple[int, ...]
    y: str = "row"  # "row" (n,), "float" (a Python float), "0d" (a 0-d array)
    # "" f(x, y, w); "dict" f(p, w), p = {"x": x, "y": y}; "tuple" p = (x, y);
    # "nested" p = {"in": [x, y]}
    pytree: str = ""
    output: str = "scalar"  # "scalar", "array" (shaped like x), "pair" (scalar, array)
    float32: bool = False
    nan: bool = False  # NaN/inf on an untaken side of np.where (invalid values are legal)
    # checked again after the module's helpers change: scaled's defaults, keyed's keyword
    # default and the closure scale3 rebound (a cached derivative must not go stale)
    rebind: bool = False


@dataclass
class Expr:
    code: str
    full: bool  # shaped like x (otherwise it only broadcasts against x)


class ProgramWriter:
    """Writes one random function ``f`` from a random source."""

    def __init__(self, rng: random.Random | int, second_order: bool = False) -> None:
        self.rng = rng = random.Random(rng) if isinstance(rng, int) else rng
        # second derivatives of some helper calls (data-dependent recursion), of in-place
        # updates and some of lists are refused (open, pinned in test_regressions.py): a
        # second-order program has helpers in 1 of 2, lists and in-place updates in 1 of 3
        # (a clear refusal is accepted; their first order is checked, and any result given
        # must be right)
        self.second_order = second_order
        self.helpers = not second_order or rng.random() < 0.5
        self.mutable = not second_order or rng.random() < 0.33
        self.loops = 0
        self.lists = 0
        self.views = 0
        self.locals: set[str] = set()
        self.constructs: set[str] = set()
        two = rng.random() < 0.5
        n = rng.randint(2, 4) if rng.random() < 0.85 else 1
        m = rng.randint(2, 3) if rng.random() < 0.85 else 1
        self.shape = (m, n) if two else (n,)
        if 1 in self.shape:
            self.constructs.add("length-1 axes")
        y = rng.choice(["row"] * 4 + ["float", "0d"])
        pytree = "" if second_order else rng.choice([""] * 6 + ["dict", "tuple"])
        if pytree == "dict" and rng.random() < 0.5:
            pytree = "nested"  # p = {"in": [x, y]}: sub-trees iterated and passed whole
        output = "scalar" if second_order else rng.choice(["scalar"] * 3 + ["array", "pair"])
        float32 = not second_order and rng.random() < 0.15
        self.spec = Spec(self.shape, y, pytree, output, float32)
        for flag, name in [
            (y == "float", "python float y"), (y == "0d", "0-d y"),
            (pytree == "dict", "pytree dict"), (pytree == "tuple", "pytree tuple"),
            (pytree == "nested", "pytree nested"),
            (output == "array", "array output"), (output == "pair", "pair output"),
            (float32, "float32"),
        ]:  # fmt: skip
            if flag:
                self.constructs.add(name)

    # expressions ---------------------------------------------------------------------------

    def atom(self, names: list[str]) -> Expr:
        rng = self.rng
        name = rng.choice(names)
        full = name in FULL
        if full and rng.random() < 0.03:
            # ufunc methods, a reduction's mask, np.pad's modes (refused as "no adjoint rule
            # for ufunc.accumulate" and "unexpected keyword argument" until stop 33)
            self.constructs.add("ufunc methods, masks and pad modes")
            widths = ((0, 0),) * (len(self.shape) - 1) + ((1, 1),)
            mode = rng.choice(["edge", "reflect", "symmetric", "wrap"])
            code, full = rng.choice([
                (f"np.maximum.accumulate({name}, axis=-1)", True),
                (f"np.add.accumulate({name}, axis=0) * 0.5", True),
                (f"np.multiply.accumulate(np.cos({name}), axis=-1)", True),
                (f"np.pad({name}, {widths}, mode='{mode}')[..., 1:-1]", True),
                (f"np.pad({name}, {widths}, mode='{mode}')[..., :-2]", True),
                (f"np.sum({name}, axis=0, where={name} > 0.1)", False),
                (f"np.max({name}, axis=-1, keepdims=True, initial=0.2)", False),
                (f"np.logaddexp.reduce({name}, axis=0)", False),
                (f"np.add.outer(np.sum({name}, axis=0), np.ones(1))[..., 0]", False),
            ])  # fmt: skip
            return Expr(code, full)
        if full and rng.random() < 0.25:
            self.constructs.add("indexing")
            k = rng.randrange(self.shape[0])
            col = rng.randrange(self.shape[-1])
            code, full = rng.choice(
                [
                    (f"{name}[::-1]", True),
                    (f"{name}[{k}]", False),
                    (f"{name}[{k - self.shape[0]}]", False),
                    (f"{name}[..., {col}:{col + 1}]", False),
                    (f"np.sum({name}, axis=0)", False),
                    (f"np.mean({name}, axis=-1, keepdims=True)", False),
                    # options by position, bound by NumPy's names (dtype and out first)
                    (f"np.mean({name}, -1, None, None, True)", False),
                    (f"np.var({name}, -1, None, None, 0, True)", False),
                ]
            )
            if ", None, None, " in code:
                self.constructs.add("positional reduction options")
            if name == "u" and "[" in code and not code.startswith("np."):
                # a view of u read later, after u is updated, is what the "views" family
                # writes on purpose; here a copy keeps ordinary expressions simple
                code = f"({code} * 1.0)"
            return Expr(code, full)
        return Expr(name, full)

    def special(self, names: list[str]) -> Expr | None:
        """An expression of one of the rarer families, or None."""
        rng = self.rng
        kind = rng.random()
        c = rng.choice([n for n in names if n in FULL])
        if kind < 0.25:
            self.constructs.add("nan-where")
            self.spec = replace(self.spec, nan=True)
            t = round(rng.uniform(-0.5, 0.5), 2)
            form = rng.choice(
                [
                    "np.where({c} > {t}, np.sqrt({c}), 0.0)",
                    "np.where({c} > {t}, np.log({c}), {c})",
                    "np.where({c} > {t}, {c} ** 0.5, np.cos({c}))",
                    "np.where(1.0 > np.abs({c}), np.arcsin({c}), np.sin({c}))",
                ]
            )
            return Expr(form.format(c=c, t=max(t, 0.05)), True)
        if kind < 0.5:
            self.constructs.add("nan-safe ops")
            form, full = rng.choice(
                [
                    ("np.zeros_like({c}) ** (1.5 + np.sin({c}))", True),
                    ("({c} * 0.0) ** 0 * {c}", True),
                    ("{c} ** 0 * 0.5", True),
                    ("np.std({c}[..., :1], axis=-1, keepdims=True)", False),
                    ("np.linalg.norm({c} * 0.0)", False),
                    ("np.linalg.norm({c})", False),
                ]
            )
            return Expr(form.format(c=c), full)
        pick = rng.random() if kind < 0.75 else 1.0
        if pick < 0.3 and rng.random() < 0.3:
            # eigenvalues and singular values alone, of matrices where some are equal (or
            # zero) exactly: NaN in reverse mode until stop 31 (0 * inf from the unread
            # vectors' part); the values never cross, so that their order is fixed
            self.constructs.add("decomposition values at ties")
            d = rng.choice([n for n in names if n in FULL])
            level = f"(1.5 + 0.2 * np.tanh(np.sum({c})))"
            spread = f"np.eye(3) * np.mean({d}) * 0.1"
            form = rng.choice(
                [
                    "np.linalg.eigh(np.diag(np.array([1.0, 1.0, 2.0]) * {l}) + {s})[0]",
                    "np.linalg.svd(np.diag(np.array([1.0, 1.0, 0.0]) * {l}))[1]",
                    "np.linalg.eig(np.diag(np.array([2.0, 1.0, 1.0]) * {l}) + {s})[0]",
                ]
                # values tied up to rounding (a rank-one matrix): their second derivatives
                # read the rounding as a change breaking the tie, NaN (campaign seed
                # 5600076), as JAX's do; det of a singular matrix (a LinAlgError until stop
                # 31; its second derivative there still goes through inv): first order only
                + (
                    []
                    if self.second_order
                    else [
                        "np.linalg.eigh(np.outer({v}, {v}) + np.eye(3))[0]",
                        "np.linalg.svd(np.outer({v}, {v}) * {l})[1]",
                        "np.linalg.det(np.diag(np.array([1.0, 1.0, 0.0]) * {l})) + {l}",
                    ]
                )
            )
            v = f"np.tanh(np.array([np.sum({c}), np.mean({d}), 0.5]))"
            values = form.format(l=level, s=spread, v=v)
            return Expr(f"(np.sum({values} * np.array([0.5, -0.3, 0.2])) * 0.25)", False)
        if pick < 0.3:
            # norms of singular values (any order since stop 24) of a matrix whose singular
            # values stay well apart: diag(3, 2, 1) moved by less than half their gaps
            self.constructs.add("matrix norms")
            d = rng.choice([n for n in names if n in FULL])
            norm = rng.choice(["np.linalg.norm({m}, {o})", "np.linalg.matrix_norm({m}, ord={o})"])
            matrix = (
                f"(np.diag([3.0, 2.0, 1.0]) + np.tanh(np.sum({c})) * 0.2 * "
                "np.array([[0.0, 0.5, -0.3], [0.2, 0.0, 0.4], [-0.5, 0.1, 0.3]]) + "
                f"np.tanh(np.mean({d})) * 0.15 * np.array([[0.4, -0.2, 0.0], [0.1, 0.3, -0.5], "
                "[0.0, 0.2, 0.1]]))"
            )
            order = rng.choice(["'nuc'", "2", "-2"])
            return Expr(f"({norm.format(m=matrix, o=order)} * 0.25)", False)
        if kind < 0.75:
            self.constructs.add("zero-derivative ops")
            d = rng.choice([n for n in names if n in FULL])
            n = self.shape[-1]
            if len(self.shape) == 2:
                sub = "[0, 1]"
            else:
                sub = "[0]"
            if rng.random() < 0.25:
                # a count per element, or one in a list (a TypeError from the reverse-mode
                # gradient until stop 31): option forms a rule's helper must take whole
                self.constructs.add("np.repeat with a count per element")
                self.constructs.discard("zero-derivative ops")
                counts = rng.choice(
                    [str([rng.randint(0, 2) for _ in range(n)]), "[2]", f"np.arange({n}) % 3"]
                )
                axis = rng.choice(["-1", str(len(self.shape) - 1)])
                weights = f"np.cos(np.arange(np.sum(np.ones({n}, int) * {counts}) * 1.0))"
                if counts == "[2]":
                    weights = f"np.cos(np.arange({2 * n}) * 1.0)"
                form = f"np.sum(np.repeat({c}, {counts}, axis={axis}) * {weights})"
                return Expr(f"({form} * 0.2)", False)
            form = rng.choice(
                [
                    "np.sum(np.r_[{c}, {d}] ** 2) * 0.1",
                    "np.mean(np.c_[{c}, {d}] * 0.5)",
                    "np.linspace(np.sum({c}) * 0.1, np.mean({d}), {n})",
                    "np.einsum({c}, {sub}, [{last}])",
                    "np.einsum({c}, {sub}, {d}, {sub}, [{last}])",
                ]
            )
            last = len(self.shape) - 1
            return Expr(form.format(c=c, d=d, n=n, sub=sub, last=last), False)
        if not self.helpers:
            return None
        inner = self.expr(names, 2)
        other = self.expr(names, 2)
        choice = rng.random()
        if choice < 0.4:
            self.constructs.add("keyword helpers")
            form = rng.choice(
                [
                    "scaled({p})",
                    "scaled({p}, 0.3)",
                    "scaled({p}, shift=0.1)",
                    "scaled({p}, s={q})",
                    "scaled(shift={q}, p={p})",
                    "keyed({p}, k=1.5)",
                    "keyed({p})",
                ]
            )
            return Expr(form.format(p=inner.code, q=other.code), inner.full)
        if choice < 0.7:
            if rng.random() < 0.6:
                self.constructs.add("recursion")
                if self.second_order:  # (its depth a constant: unrolled, and checked)
                    self.constructs.add("second order of recursion")
                return Expr(f"rec({inner.code}, {rng.randint(0, 3)})", inner.full)
            self.constructs.add("data-dependent recursion")
            t = round(rng.uniform(0.3, 1.5), 2)
            kind = rng.random()
            if kind < 0.3:
                self.constructs.add("data-dependent mutual recursion")
                return Expr(f"ping({inner.code}, {t})", inner.full)
            if kind < 0.55:
                self.constructs.add("data-dependent tuple recursion")
                form = rng.choice(["split_sum({p}, {t})", "split_sum(p={p}, t={t})"])
                return Expr(form.format(p=inner.code, t=t), inner.full)
            form = rng.choice(["shrink({p}, {t})", "shrink({p}, {t})", "shrink(t={t}, p={p})"])
            return Expr(form.format(p=inner.code, t=t), inner.full)
        if choice < 0.85 or self.second_order:
            self.constructs.add("closures")
            return Expr(f"scale3({inner.code})", inner.full)
        self.constructs.add("local functions")
        name = rng.choice(["sq", "cube"])
        self.locals.add(name)
        return Expr(f"{name}({inner.code})", inner.full)

    def expr(self, names: list[str], depth: int = 0) -> Expr:
        rng = self.rng
        if depth > 1 or rng.random() < 0.3:
            return self.atom(names)
        if rng.random() < 0.12:
            special = self.special(names)
            if special is not None:
                return special
        if rng.random() < 0.5:
            inner = self.expr(names, depth + 1)
            lambda_full = False
            forms = [
                "np.sin({})", "np.tanh({})", "np.cos({})", "({} * 0.5)",
                "np.exp(np.tanh({}) * 0.5)", "np.sqrt(1.0 + ({0}) * ({0}))",
                "np.log(1.5 + np.sin({}))", "np.abs({})", "helper({}, 0.5)",
                "branchy({}, {t})", "({} ** 2 * 0.25)", "smooth({})", "checked({}, {t})",
                "soft({}, 0.75)", "blend({0}, np.cos({0}), 0.75)",
                "(np.sum(tripled_at(np.atleast_1d({0}), 0)) * 0.1 + {0} * {0} * 0.5)",
                "(row_total({0}) * 0.5 + {0})",
            ]  # fmt: skip
            form = rng.choice(forms)
            if form.startswith("soft") and rng.random() < 0.6:
                # forward mode refuses a custom vjp (as JAX does), and the refusal ends the
                # program's first-order check: rarer, so that forward mode sees most programs
                form = "smooth({})"
            if (
                not self.helpers
                and form.startswith(("helper", "branchy", "smooth", "check", "soft", "blend"))
                or (not self.helpers and ("tripled_at" in form or "row_total" in form))
            ):
                form = "np.sin({})"
            if form.startswith("helper(") and rng.random() < 0.2:
                # a default value made by a call (a NameError from inside srcad until
                # stop 29: the generated signature wrote it out)
                self.constructs.add("defaults made by a call")
                form = "offset_by({})"
            elif form.startswith("helper(") and rng.random() < 0.25:
                # a function passed to a helper, or its default one (refused as "the
                # function called here is held in a local variable" until stop 32)
                self.constructs.add("functions passed to helpers")
                form = rng.choice([
                    "applied({})", "applied({}, np.sin)", "applied({}, act=smooth)",
                    "applied({}, helper_tanh)", "lambda",
                ])  # fmt: skip
                if form == "lambda":
                    # a lambda given to a helper, reading the caller's variables (refused
                    # as "lambda expressions are not supported yet" until stop 33)
                    self.constructs.add("lambdas given to helpers")
                    atom = self.atom(names)
                    lambda_full = atom.full  # (the lambda's result is shaped as both)
                    form = rng.choice([
                        "applied({}, lambda t: np.sin(t) * 0.5)",
                        "applied({}, act=lambda t: np.tanh(t) * " + atom.code + ")",
                        "applied_twice({}, lambda t: helper_tanh(t) + t * 0.1)",
                        "applied({}, lambda v: v * np.cos(" + atom.code + "))",
                    ])  # fmt: skip
            if form.startswith(("smooth", "checked", "soft", "blend")):
                self.constructs.add("custom rules and checkpoints")
            if ("tripled_at" in form or "row_total" in form) and rng.random() < 0.75:
                form = "np.tanh({})"  # (rarer: two of the forms)
            if "tripled_at" in form or "row_total" in form:
                self.constructs.add("users' rules named as srcad's")
            if inner.full and self.helpers and rng.random() < 0.04:
                # the gradient of a function that updates a copy of its argument, or the
                # argument (srcad's copy of it), called inside f (a returned gradient was
                # once restored in place by the caller's backward pass: silently wrong)
                self.constructs.add("gradients of updating functions inside f")
                form = rng.choice(["np.cos({0}) * grad_upd({0})", "grad_upd_arg({0}) * 0.5"])
            if form.startswith("np.abs"):
                self.constructs.add("kinks")
            if form.startswith(("helper", "branchy")):
                self.constructs.add("helper calls")
            t = round(rng.uniform(-1, 1), 2)
            return Expr(form.format(inner.code, t=t), inner.full or lambda_full)
        left = self.expr(names, depth + 1)
        right = self.expr(names, depth + 1)
        if left.code == right.code:
            right = Expr(f"np.cos({right.code})", right.full)
        forms = [
            "{} + {}", "{} - {}", "{} * {}", "{} / (1.5 + np.sin({}))",
            "np.maximum({}, {})", "np.minimum({}, {})", "np.where({} > 0, {}, {})",
            "helper({}, {})", "np.sin(pick({}, {}))",
        ]  # fmt: skip
        form = rng.choice(forms)
        if not self.helpers and form.startswith(("helper", "np.sin(pick")):
            form = "{} * {}"
        if form.startswith("helper"):
            self.constructs.add("helper calls")
        if form.startswith("np.sin(pick"):
            # the helper hands back an array it was given: its memory, updated later
            self.constructs.add("helpers returning an argument")
        if form.startswith(("np.maximum", "np.minimum", "np.where")):
            self.constructs.add("kinks")
        full = left.full or right.full
        if form.startswith("np.sin(pick"):
            full = right.full  # pick hands back its second argument, shaped as that is
        if form.startswith("np.where"):
            cond = self.expr(names, depth + 1)
            return Expr(form.format(cond.code, left.code, right.code), full or cond.full)
        return Expr(form.format(left.code, right.code), full)

    def full_expr(self, names: list[str]) -> str:
        """An expression shaped like x (a broadcast one made so by a full-shaped operand)."""
        value = self.expr(names)
        if not value.full:
            op = self.rng.choice(["*", "+"])
            return f"{value.code} {op} {self.rng.choice(['a', 'b', 'c', 'x'])}"
        if value.code in FULL:
            return value.code + " * 1.0"  # a new array, never a second name for one
        return value.code

    def scalar(self, names: list[str]) -> str:
        return f"np.sum({self.expr(names).code}) * {round(self.rng.uniform(0.1, 0.5), 2)}"

    def threshold(self, names: list[str], low: float, high: float) -> str:
        value = self.rng.choice(["np.sum({})", "np.mean({})", "np.max({})", "{}[{}, ...].sum()"])
        name = self.rng.choice(names)
        if "[" in value:
            code = value.format(name, self.rng.randrange(self.shape[0])) if name in FULL else None
            code = code or f"np.sum({name})"
        else:
            code = value.format(name)
        return f"{code} > {round(self.rng.uniform(low, high), 2)}"

    # statements ----------------------------------------------------------------------------

    def block(self, names: list[str], depth: int, loop: bool) -> list[list[str]]:
        """A list of statements, each a list of lines indented relative to the block."""
        rng = self.rng
        out: list[list[str]] = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.random()
            if kind < 0.18 and self.mutable:
                out.append(self.update(names, loop))
            elif kind < 0.4 or depth > 2:
                if rng.random() < 0.2:
                    out.extend(self.python_forms(names))
                else:
                    out.append([f"{rng.choice(TARGETS)} = {self.full_expr(names)}"])
            elif kind < 0.54 and self.second_order and (kind < 0.47 or not self.mutable):
                if rng.random() < 0.3:
                    out.extend(self.rebinding(names))
                elif self.helpers and rng.random() < 0.25:
                    out.extend(self.tuple_call(names))  # written out at second order
                else:
                    out.append([f"{rng.choice(TARGETS)} = {self.full_expr(names)}"])
            elif kind < 0.47:
                if not self.helpers:
                    out.append([f"{rng.choice(TARGETS)} = {self.full_expr(names)}"])
                    continue
                out.extend(self.tuple_call(names))
            elif kind < 0.54:
                out.append(self.container(names))
            elif kind < 0.68:
                out.append(self.branch(names, depth, loop))
            elif kind < 0.8:
                out.append(self.for_loop(names, depth))
            elif kind < 0.9:
                out.extend(self.while_loop(names, depth))
            else:
                self.constructs.add("early return")
                out.append(
                    [
                        f"if {self.threshold(names, -2, 2)}:",
                        f"    return {self.result(self.full_expr(names), '')}",
                    ]
                )
        return out

    def python_forms(self, names: list[str]) -> list[list[str]]:
        """Python that srcad rewrites into forms it differentiates: a name holding tuples,
        an array unpacked into names, list displays NumPy converts, Python's sum of a
        display, statements under np.errstate."""
        rng = self.rng
        target = rng.choice(TARGETS)
        p, q = self.full_expr(names), self.full_expr(names)
        choice = rng.random()
        if choice < 0.25:
            self.constructs.add("tuple names")
            self.loops += 1
            st = f"st{self.loops}"
            read = f"{st}[0] * 0.5 + {st}[-1] * len({st})"
            if rng.random() < 0.3:
                # read whole by sum (refused until stop 26: written out after the literals)
                self.constructs.add("a tuple name summed")
                read = f"sum({st}) * 0.5"
            if rng.random() < 0.25:
                # rebound to a longer tuple in the same block (refused until stop 27)
                self.constructs.add("a tuple name extended")
                grow = rng.choice([f"{st} + (np.sin({p}),)", f"(np.cos({q}),) + {st}"])
                return [[f"{st} = ({p}, {q})", f"{st} = {grow}"], [f"{target} = {read}"]]
            if rng.random() < 0.25:
                # grown on each turn of a loop, built as a list (refused until stop 28)
                self.constructs.add("a tuple grown in a loop")
                j = f"j{self.loops}"
                grow = rng.choice([
                    f"{st} = {st} + (np.sin({q}) * ({j} + 1.0),)",
                    f"{st} += (np.tanh({p}) * 0.5, {q} * ({j} * 0.25))",
                ])  # fmt: skip
                if rng.random() < 0.3:
                    read = f"np.sum(np.stack({st}), axis=0) * 0.25 + {st}[1]"
                return [
                    [f"{st} = ({p},)", f"for {j} in range(2):", f"    {grow}"],
                    [f"{target} = {read}"],
                ]
            if rng.random() < 0.25:
                # a display indexed where it is written (refused until stop 29; a third
                # derivative through tuple(list) failed on it, seed 4500048)
                self.constructs.add("tuple displays indexed in place")
                k = rng.randrange(2)
                form = rng.choice([f"({p}, {q})[{k}]", f"tuple([{p}, {q} * 0.5])[{k}]"])
                return [[f"{target} = {form} * 0.5 + {p}"]]
            return [[f"{st} = ({p}, {q})"], [f"{target} = {read}"]]
        if choice < 0.45 and self.shape[0] >= 2:
            self.loops += 1
            if rng.random() < 0.3:
                # tuple()/list() of an array: a sequence of its rows (a TypeError in reverse
                # mode, a repeated tuple as the tangent of np.array(tuple(p)), until stop 28)
                self.constructs.add("a sequence of an array's rows")
                v = f"r{self.loops}"
                if rng.random() < 0.5:
                    return [[f"{target} = {target} + np.array(tuple({p})) ** 2 * 0.25"]]
                return [[f"for {v} in list({p}):", f"    {target} = {target} * 0.5 + {v}"]]
            self.constructs.add("arrays unpacked")
            e0, e1 = f"e{self.loops}", f"f{self.loops}"
            return [[f"{e0}, {e1} = ({p})[:2]"], [f"{target} = {target} + {e0} * {e1}"]]
        if choice < 0.65:
            if rng.random() < 0.4:
                # any op with a rule converts a display it takes as an array operand (until
                # stop 27, only a fixed few: np.maximum([p, q], c) was refused)
                self.constructs.add("a display converted by an op")
                forms = [
                    f"np.maximum([{p}, {q}], 0.1)[1]",
                    f"np.where({p} > 0, [{p}, {q}], 0.5)[0]",
                    f"np.clip([{p}, {q} * 0.5], -1.5, 1.5).sum(axis=0)",
                    f"np.multiply((0.5, 1.5), [np.sum({p}), np.max({q})]).sum() * {q}",
                ]
                return [[f"{target} = {rng.choice(forms)}"]]
            if rng.random() < 0.2:
                # Python's max/min of two numbers (no rule until stop 27)
                self.constructs.add("Python's max and min of numbers")
                pick = rng.choice(["max", "min"])
                return [[f"{target} = {pick}(np.sum({p}) * 0.1, np.max({q}) * 0.3) * {q}"]]
            self.constructs.add("list displays stacked")
            scalars = f"np.sum({p}) * 0.1, np.max({q}) * 0.5, 1.0"
            return [[f"{target} = {q} * np.mean(np.array([{scalars}]) ** 2)"]]
        if choice < 0.75:
            if self.helpers and rng.random() < 0.3:
                # read by a user's rule named getitem, after a read whose adjoint the
                # backward code makes (a scatter into it in place once took the rule's
                # place: silently wrong)
                self.constructs.add("users' rules named as srcad's")
                return [
                    [f"{target} = {p} * 1.0"],
                    [f"{target} = np.sum(tripled_at({target}, 0)) * 0.1 + {target} * {target}"],
                ]
            if rng.random() < 0.6:
                return self.containers_refused_or_read(target, p, q)
            self.constructs.add("sum of a display")
            return [[f"{target} = sum([{p}, {q} * 0.5])"]]
        if choice < 0.86:
            return self.calling_forms(target, p, q)
        if choice < 0.93:
            self.constructs.add("try")
            self.loops += 1
            t = f"tr{self.loops}"
            made = []
            body = [f"    {t} = {p}"]
            # (second-order seeds check a third derivative every second time: more often)
            pick = self.rng.random() * (0.5 if self.second_order else 1.0)
            if self.helpers and pick < 0.3:
                # the gradient of a function updating an array in place, called in the body
                # (passes run before 'try' is lowered once skipped its statements: a wrong
                # third derivative, seed 4300272)
                self.constructs.add("gradients of updating functions in a try body")
                body = [f"    {t} = np.cos({p}) * grad_upd({p})"]
            elif self.helpers and pick < 0.6:
                # a comprehension in the body, whose helper may raise (it was moved out of
                # the body: the exception escaped the handler)
                self.constructs.add("comprehensions in a try body")
                flag = self.threshold(names, -2, 2)
                body = [
                    f"    {t}f = {flag}",
                    f"    {t} = sum([raising(v, {t}f) for v in ({p}, {q} * 0.25)])",
                ]
                if self.rng.random() < 0.5:
                    # a local function that may raise, called in the body (written out
                    # before the 'try' until stop 29: the exception escaped the handler)
                    self.constructs.add("local functions raising in a try body")
                    self.locals.add("halved")
                    body[1] = f"    {t} = halved({p}, {t}f) + {q} * 0.25"
            if self.rng.random() < 0.45:
                # an array the body makes and updates (accepted: no name outside sees it)
                self.constructs.add("arrays made and updated in a try body")
                made = [
                    f"    {t}m = np.zeros_like({p})",
                    f"    {t}m[..., :1] = np.tanh(({p})[..., :1])",
                    f"    {t}m[..., 1:] = ({p})[..., 1:] * 0.5",
                ]
                p = f"{t}m * ({p})"
            return [
                [
                    "try:",
                    *made,
                    *body,
                    f"    if {self.threshold(names, -2, 2)}:",
                    '        raise ValueError("taken")',
                    "except ValueError:",
                    f"    {t} = {q} * 0.5",
                ],
                [f"{target} = {t}"],
            ]
        self.constructs.add("np.errstate")
        return [
            [
                'with np.errstate(divide="ignore", invalid="ignore"):',
                f"    {target} = {p}",
            ]
        ]

    def tuple_call(self, names: list[str]) -> list[list[str]]:
        """A call of a helper returning two values: unpacked, or taken into one name and
        read by index, unpacked or passed whole to a helper that takes it apart."""
        rng = self.rng
        out: list[list[str]] = []
        if rng.random() < 0.2:
            # a list the helper builds by appends, returned by name (indexing it crashed in
            # reverse mode, unpacking or looping over it was refused, until stop 26)
            self.constructs.add("a list a helper builds")
            self.loops += 1
            first = rng.choice(TARGETS)
            r, v = f"grown{self.loops}", f"e{self.loops}"
            p = self.full_expr(names)
            forms = [
                [[f"{r} = grown({p}, 2)"], [f"{first} = {r}[0] * 0.5 + {r}[-1] * len({r})"]],
                [[f"{first}, {v}, {v}x = grown({p}, 2)"], [f"{first} = {first} + {v} * {v}x"]],
                [[f"for {v} in grown({p}, 2):", f"    {first} = {first} * 0.5 + {v}"]],
            ]
            return forms[rng.randrange(3)]
        self.constructs.add("tuple-returning helpers")
        first, second = rng.sample(TARGETS, 2)
        helper = "pair"
        if rng.random() < 0.3:
            # tuples from two returns (at second order, written out: its result
            # once started as None, refused as a container until stop 26)
            self.constructs.add("tuples from two returns")
            helper = "pair_by_branch"
        p, q = self.full_expr(names), self.expr(names).code
        if rng.random() < 0.3:
            # both results taken into one name, then read (refused in reverse mode
            # until stop 26)
            self.constructs.add("a helper's results in one name")
            self.loops += 1
            r = f"r{self.loops}"
            form = rng.randrange(4)
            if form == 3:
                # a dict the helper returns, one name per key (refused in reverse mode
                # until stop 28; written out at second order)
                self.constructs.add("a dict a helper returns")
                helper = "stats_by_branch" if helper == "pair_by_branch" else "stats"
                if rng.random() < 0.15:
                    # a method of an object made in the function: its class known only
                    # at run time, refused by name in reverse mode (an IndexError from
                    # the generated code until stop 28)
                    self.constructs.add("a dict a method returns")
                    helper = "Stats().stats"
                out.append([f"{r} = {helper}({p}, {q})"])
                second_read = rng.choice([
                    f"sum({r}.values()) * 0.5", f"{r}.get('s') * len({r})", f"{r}['s'] * 0.5",
                ])  # fmt: skip
                out.append([f"{first} = {r}['m'] * 0.5 + {r}['s']", f"{second} = {second_read}"])
                return out
            out.append([f"{r} = {helper}({p}, {q})"])
            reads = [
                [f"{first}, {second} = {r}"],
                [f"{first} = {r}[0]", f"{second} = {r}[-1] * len({r}) * 0.5"],
                # the tuple name passed whole to a helper taking it apart
                [f"{first} = pairdot({r})", f"{second} = {r}[1] * 0.5"],
            ]
            out.append(reads[form])
        elif rng.random() < 0.2:
            # the helper hands back u itself inside its tuple (not known to until stop 29:
            # an update of u after it was silently missed)
            self.constructs.add("a helper returning its argument in a tuple")
            out.append([f"{first}, {second} = swapped({p}, u)"])
        else:
            out.append([f"{first}, {second} = {helper}({p}, {q})"])
        return out

    def containers_refused_or_read(self, target: str, p: str, q: str) -> list[list[str]]:
        """A value kept by a method called for its effect and a union of dicts (refused in
        both modes; reverse mode gave zero gradients until stop 28), a global's element
        updated (refused by name), a set display of constants and logging of a
        differentiated value (refused until stop 28)."""
        rng = self.rng
        self.loops += 1
        choice = rng.randrange(6 if self.helpers else 2)  # (logging: 4 and 5)
        if choice == 0:
            self.constructs.add("a union of dicts")
            d = f"un{self.loops}"
            return [
                [f"{d} = {{'p': {p}}} | {{'q': {q} * 0.5}}"],
                [f"{target} = {d}['p'] * {d}['q']"],
            ]
        if choice == 1:
            self.constructs.add("a set display of constants")
            return [[f"{target} = {p} * (2.0 if 'p' in {{'p', 'q'}} else 1.0) + len({{1, 2, 1}})"]]
        if choice == 2:
            self.constructs.add("a value kept by a call for its effect")
            if rng.random() < 0.5:
                # a function of the module keeping its argument in a global list
                return [[f"stash({p})"], [f"{target} = KEPT[-1] * 0.5 + {q}"]]
            b = f"bx{self.loops}"
            keep = rng.choice([f"{b}.keep({p})", f"_ = {b}.keep({p})"])  # (zero in both modes)
            return [[f"{b} = Box()", keep], [f"{target} = {b}.total() * 0.5 + {q}"]]
        if choice == 3:
            # (an UnboundLocalError from the generated code until stop 28)
            self.constructs.add("an element update of a global")
            return [[f"STORE['v'] = {p}"], [f"{target} = STORE['v'] * 0.5 + {q}"]]
        self.constructs.add("logging a differentiated value")
        return [[f"logging.debug('%s', {p})"], [f"{target} = {p} * 0.5 + {q}"]]

    def calling_forms(self, target: str, p: str, q: str) -> list[list[str]]:
        """Calls written with stars, helpers taking **kwargs, a one-tuple unpacked, and a
        function a local factory makes."""
        rng = self.rng
        choice = rng.random()
        self.loops += 1
        if choice < 0.25 or not self.helpers:
            g = f"g{self.loops}"
            if self.helpers and choice < 0.15:
                # the module's own factory, written out at the call (both orders)
                self.constructs.add("module factories")
                return [[f"{g} = make_affine({q})"], [f"{target} = {g}({p})"]]
            self.constructs.add("local factories")
            self.locals.add("mk")
            return [[f"{g} = mk({q})"], [f"{target} = {g}({p})"]]
        if choice < 0.5:
            self.constructs.add("star-arguments")
            args = f"args{self.loops}"
            return [[f"{args} = ({p},)"], [f"{target} = helper(*({args} + ({q},)))"]]
        if choice < 0.7:
            self.constructs.add("kwargs helpers")
            keywords = rng.choice([f"s={q}", f"t={q}", f"s={q}, t={p}", "**{'t': 0.5}"])
            return [[f"{target} = opts({p}, {keywords})"]]
        if choice < 0.78:
            # passed element by element since stop 26 (refused in both modes before;
            # forward mode once gave it a zero tangent)
            self.constructs.add("a display passed to a helper")
            return [[f"{target} = pairdot(({p}, {q}))"]]
        if choice < 0.85:
            # keywords a partial binds for parameters without defaults, one replaced by
            # the call's (refused until stop 28: "missing a required argument")
            self.constructs.add("keyword-bound partials")
            call = rng.choice([f"bound_shift({p})", f"bound_shift({p}, scale={q})"])
            return [[f"{target} = {call}"]]
        if choice < 0.92:
            self.constructs.add("one-tuple results")
            return [[f"({target},) = single({p})"]]
        # a helper's two results taken into one name (refused in reverse mode until stop 26)
        self.constructs.add("a helper's results in one name")
        r = f"r{self.loops}"
        read = rng.choice([f"{r}[0] * 0.5 + {r}[-1]", f"np.stack({r})[1] * len({r})"])
        return [[f"{r} = pair({p}, {q})"], [f"{target} = {read}"]]

    def rebinding(self, names: list[str]) -> list[list[str]]:
        """A name bound in a loop that runs no turn or an untaken branch, then rebound
        twice (second order once lost the rebinding)."""
        self.constructs.add("rebinding after zero-trip loop or if")
        self.loops += 1
        target = self.rng.choice(TARGETS)
        if self.rng.random() < 0.5:
            head = f"for i{self.loops} in range(0):"
        else:
            head = f"if {self.threshold(names, 50, 60)}:"
        return [
            [head, f"    {target} = {self.full_expr(names)}"],
            [f"{target} = {self.full_expr(names)}"],
            [f"{target} = np.sin({target}) * 0.5 + {self.full_expr(names)}"],
        ]

    def index(self, names: list[str]) -> str:
        indices = [n[2:-1] for n in names if n.startswith("x[")]
        return self.rng.choice(indices) if indices else str(self.rng.randrange(self.shape[0]))

    def update(self, names: list[str], loop: bool) -> list[str]:
        """An in-place update of ``u`` (or of a view of it), or an append to ``outs``."""
        rng = self.rng
        self.constructs.add("in-place updates")
        if self.second_order:
            self.constructs.add("second order of in-place updates")
        index = self.index(names)
        if self.second_order and self.helpers and rng.random() < 0.25:
            # a helper (or custom rule) reads u, then u changes in place: at second order
            # the restore of u, made a new array, once missed the helper's parameter and
            # the rule's residuals (silently wrong Hessians until stop 26)
            self.constructs.add("a helper's argument updated in place after the call")
            # (each one's backward code reads its argument: smooth's rule, keyed's sin)
            call = rng.choice(["smooth(u)", "keyed(u)", "rec(u, 2)"])
            return [f"u[{index}] = np.sum(np.sin({call})) * 0.12"]
        choice = rng.random()
        if self.helpers and choice < 0.04:
            # a helper handing back a view of a global array, changed in place here, then
            # read again through the helper (not known to until stop 29: silently wrong)
            self.constructs.add("a helper returning a global array")
            self.views += 1
            g = f"glob{self.views}"
            target = rng.choice(TARGETS)
            get = "scratch(2)"
            if rng.random() < 0.5:
                # a method of a global object handing back an array the object holds
                # (an object's field was not an alias of it until stop 29)
                self.constructs.add("a method returning its object's array")
                get = "SHELF.rows(2)"
            elif rng.random() < 0.5:
                # the global itself, a view of it or a field of a global object, changed
                # through a name, then read by a helper (silently wrong until stop 33)
                self.constructs.add("a global array changed through a name")
                get = rng.choice(["SCRATCH[:2]", "SCRATCH", "SHELF.table[:2]"])
                return [
                    f"{g} = {get}",
                    f"{g}[0] = {self.scalar(names)}",
                    f"{target} = {self.full_expr(names)} + np.sum(scratch(2)) * 0.5",
                ]
            return [
                f"{g} = {get}",
                f"{g}[0] = {self.scalar(names)}",
                f"{target} = {self.full_expr(names)} + np.sum({get}) * 0.5",
            ]
        if self.helpers and choice < 0.07:
            # a method of an object made here handing back an array the object holds
            # (or a new one), changed in place, then the object read again (not known to
            # until stop 30: silently wrong in both modes)
            self.constructs.add("a method's result changed in place")
            self.views += 1
            t, g = f"tray{self.views}", f"cell{self.views}"
            target = rng.choice(TARGETS)
            get = rng.choice(["peek(2)", "taken(2)", "peek(3)[1:]"])
            if rng.random() < 0.25:  # (the field read by name: getattr, stop 30 too)
                get = "cells[:2]"
            elif rng.random() < 0.2:  # (a global array the method hands back, stop 30 too)
                get = "spare(2)"
            elif rng.random() < 0.2:  # (the object called, or its bound method held)
                get = rng.choice(["__call__", "peek"])
            update = rng.choice([
                f"{g} += {self.scalar(names)}", f"{g} *= np.cos({self.scalar(names)})",
                f"{g}[0] = {self.scalar(names)}",
            ])  # fmt: skip
            read = rng.choice([f"{t}.total()", f"np.sum({g})"])
            maker = "Tray()"
            if rng.random() < 0.3:
                # the object made by a function: its class known only at run time (a
                # global array its method hands back, changed in place, was silently
                # wrong until stop 33: refused now)
                self.constructs.add("a method of an object made by a function")
                maker = "tray_made()"
                if rng.random() < 0.5:
                    get = "spare(2)"
                    read = rng.choice([read, "np.sum(scratch(3))", "np.sum(scratch(3))"])
            bind = f"{g} = {t}.{get}" if get != "cells[:2]" else f"{g} = getattr({t}, 'cells')[:2]"
            binds = [bind]
            if get == "__call__":
                binds = [f"{g} = {t}(2)"]
            elif get == "peek":
                binds = [f"{g}m = {t}.peek", f"{g} = {g}m(2)"]
            return [
                f"{t} = {maker}",
                *binds,
                update,
                f"{target} = {self.full_expr(names)} + {read} * 0.5",
            ]
        if choice < 0.15:
            return [f"u[{index}] = {self.scalar(names)}"]
        if choice < 0.25:
            return [f"u[{index}] += np.tanh({self.full_expr(names)})[{index}] * 0.5"]
        if choice < 0.32:
            return [f"u[{index}] = u[{index}] * np.cos({self.full_expr(names)})[{index}]"]
        if choice < 0.5:
            return self.index_write(names)
        if choice < 0.7:
            return self.mutating_call(names)
        if choice < 0.76:
            # rarer: srcad refuses most views read after an update (a documented refusal),
            # and a refused program checks nothing else
            return self.view(names)
        if choice < 0.79:  # refused clearly (an alias through a list): rarer
            self.constructs.add("list holding an updated array")
            self.lists += 1
            items = f"items{self.lists}"
            target = rng.choice(TARGETS)
            return [
                f"{items} = [u, {self.full_expr(names)}]",
                f"u[{index}] = {self.scalar(names)}",
                f"{target} = {items}[0] * 0.5 + {items}[1]",
            ]
        self.constructs.add("lists")
        return [f"outs.append(np.tanh({self.expr(names).code}) * x)"]

    def index_write(self, names: list[str]) -> list[str]:
        rng = self.rng
        m = self.shape[0]
        e = f"np.tanh({self.full_expr(names)})"
        k = rng.randrange(m)
        kind = rng.choice(["slice", "negative", "fancy", "repeated", "boolean"])
        self.constructs.add(f"{kind} index writes")
        op = rng.choice(["=", "+="])
        if kind == "slice":
            s = rng.choice([f"{k}:", f":{k + 1}", "::2", f"{k}::-1"])
            if rng.random() < 0.7:
                return [f"u[{s}] {op} {e}[{s}]"]
            return [f"u[{s}] = {self.scalar(names)}"]
        if kind == "negative":
            return [f"u[{k - m}] {op} {e}[{k}] * 0.5"]
        if kind == "fancy":
            idx = sorted(rng.sample(range(m), min(m, 2)))
            return [f"u[{idx}] {op} {e}[{idx[::-1]}]"]
        if kind == "repeated":
            # repeated (and negative aliases of one) index: NumPy keeps the last write, and
            # u[[0, 0]] += v adds once
            j = rng.choice([k, k - m])
            src = [rng.randrange(m), rng.randrange(m)]
            return [f"u[[{k}, {j}]] {op} {e}[{src}]"]
        t = round(rng.uniform(-0.6, 0.6), 2)
        mask = f"{rng.choice(['x', 'a', 'c'])} > {t}"
        if rng.random() < 0.5:
            return [f"u[{mask}] = {self.scalar(names)}"]
        return [f"mask = {mask}", f"u[mask] {op} {e}[mask]"]

    def mutating_call(self, names: list[str]) -> list[str]:
        rng = self.rng
        e = self.full_expr(names)
        kinds = ["out=", "np.copyto", "np.put", "fill", "sort", "+= on a name", "__iadd__"]
        kind = rng.choice(kinds)
        self.constructs.add(kind)
        if kind == "out=":
            return [
                rng.choice(
                    [
                        f"np.multiply({e}, {self.expr(names).code}, out=u)",
                        f"np.sin({e}, out=u)",
                        f"np.add(u, {e}, out=u)",
                        "np.tanh(u, out=u)",
                        f"np.multiply(u, np.cos({e}), out=u)",
                    ]
                )
            ]
        if kind == "np.copyto":
            return [f"np.copyto(u, {e})"]
        if kind == "np.put":
            return [f"np.put(u, [0, -1], {self.scalar(names)})"]
        if kind == "fill":
            return [f"u.fill({rng.choice(['0.5', self.scalar(names)])})"]
        if kind == "sort":
            return ["u.sort()"]
        if kind == "+= on a name":
            return [f"u {rng.choice(['+=', '*=', '-='])} np.tanh({e})"]
        return [f"u.__iadd__(np.tanh({e}))"]

    def view(self, names: list[str]) -> list[str]:
        """A name that aliases or views ``u``, an update through one of them, then a read of
        the view (which sees the update, as in NumPy)."""
        rng = self.rng
        self.constructs.add("views")
        self.views += 1
        v = f"v{self.views}"
        views = ["u", "u[::-1]", "u.T", "u.reshape(-1)", "u[..., :1]"]
        # the function forms (each once silently missed; splits: test_view_forms.py, as
        # indexing np.split's result is refused where no update comes after it)
        views += ["np.ravel(u)", "np.transpose(u)", "np.asanyarray(u)"]
        if self.shape[0] > 1:
            views.append("u[1:]")
        if len(self.shape) == 2:
            views += ["u[0]", "np.swapaxes(u, 0, 1)"]
        view = rng.choice(views)
        if rng.random() < 0.25:
            # an element of a display, a conditional expression, conj of a real array,
            # NumPy 2's copy=None (each silently missed until stop 29)
            self.constructs.add("views through displays, conditionals and conj")
            view = rng.choice(
                [
                    "(u, x)[0]",
                    "[x, u][-1]",
                    f"u if {self.threshold(names, -2, 2)} else u[::-1]",
                    "u.conj()",
                    "np.array(u, copy=None)",
                ]
            )
        if rng.random() < 0.3:
            # NumPy's other views: einsum keeping every index, rollaxis, a count handing
            # back the argument itself, getattr (each silently missed until stop 30)
            self.constructs.add("einsum, rollaxis and counts as views")
            view = rng.choice(
                [
                    "np.einsum('...->...', u)",
                    "np.rollaxis(u, 0)",
                    "np.diff(u, 0)",
                    "getattr(u, 'T')",
                ]
                + (["np.einsum('i->i', u)"] if len(self.shape) == 1 else [])
            )
        pre: list[str] = []
        held = ""
        if rng.random() < 0.25:
            # an element a dict's method hands back is the array itself (silently missed
            # until stop 30)
            self.constructs.add("elements a dict's method hands back")
            held = rng.choice(["{'k': u}", "{'k': u, 'j': x}"])
            pre = [f"d{v} = {held}"]
            view = rng.choice([f"d{v}.get('k', u)", f"d{v}.get('k')", f"d{v}.get('j', u)"])
        if self.helpers and rng.random() < 0.4:
            # a helper handing back its argument from a 'try' body (not known to until
            # stop 29: the update through it was silently lost)
            form = rng.random()
            if form < 0.25:
                self.constructs.add("a helper returning its argument from a try body")
                view = "pick_tried(x, u)"
            elif form < 0.5:  # (the same walkers skipped a 'with' body: silently wrong too)
                self.constructs.add("a helper returning its argument from a with body")
                view = "pick_quiet(x, u)"
            elif form < 0.75:
                # either argument, on two paths (only the first was known to until stop 29)
                self.constructs.add("a helper returning one of two arguments")
                view = "pick_either(x, u)"
            else:
                # through *args, or a method of an object made here (stop 29 too)
                self.constructs.add("arguments returned through *args and methods")
                view = rng.choice(["second_of(x, u)", "Keeper().fetch(u)"])
        same = (
            view
            in (
                "u",
                "u[::-1]",
                "np.asanyarray(u)",
                "(u, x)[0]",
                "[x, u][-1]",
                "u.conj()",
                "np.array(u, copy=None)",
                "pick_tried(x, u)",
                "pick_quiet(x, u)",
                "pick_either(x, u)",
                "second_of(x, u)",
                "Keeper().fetch(u)",
                "np.einsum('...->...', u)",
                "np.rollaxis(u, 0)",
                "np.diff(u, 0)",
                "np.einsum('i->i', u)",
            )
            or view in (f"d{v}.get('k', u)", f"d{v}.get('k')")
            or view == f"d{v}.get('j', u)"
            and held == "{'k': u}"
            or view.startswith("u if")
            or (view == "getattr(u, 'T')" and len(self.shape) == 1)
            or (view in ("u.T", "np.transpose(u)") and len(self.shape) == 1)
        )
        pre = pre if view.startswith(f"d{v}.") else []  # (a later form chosen instead)
        index = self.index(names)
        update = rng.choice(
            [
                f"u[{index}] = {self.scalar(names)}",
                f"u[{index}] += {self.scalar(names)}",
                f"{v}[0] = {self.scalar(names)}",
                f"{v}[-1] *= np.cos({self.scalar(names)})",
                f"u *= np.cos({self.full_expr(names)})",
                "np.sin(u, out=u)",
            ]
        )
        if rng.random() < 0.15:
            # an element of a dict updated in place: the array it holds changes (NumPy's
            # __iadd__), so u and the view change too (silently missed until stop 31)
            self.constructs.add("augmented updates of a dict's element")
            pre = [*pre, f"e{v} = {{'k': u}}"]
            update = f"e{v}['k'] *= np.cos({self.full_expr(names)})"
        target = rng.choice(TARGETS)
        read = f"{v} * 0.5" if same else f"np.sum({v}) * 0.5"
        bind = f"{v} = {view}"
        if rng.random() < 0.15:
            # a chained assignment, updated through its other name (a = b = ...: one object,
            # taken as two until stop 31, so the update was silently missed)
            self.constructs.add("chained assignments")
            bind = f"{v} = {v}c = {view}"
            update = update.replace(f"{v}[", f"{v}c[")
            if not update.startswith(f"{v}c["):
                update = f"{v}c[0] = {self.scalar(names)}"
        elif rng.random() < 0.2:
            # the view taken out of a display by unpacking (read as a container until
            # stop 29, so an update through it was silently missed)
            self.constructs.add("views unpacked from a display")
            bind = f"{v}, {v}o = {view}, x"
        return [*pre, bind, update, f"{target} = {self.full_expr(names)} + {read}"]

    def container(self, names: list[str]) -> list[str]:
        """A list literal read back by index, a comprehension stacked into an array, a list
        alias, a dict."""
        rng = self.rng
        self.constructs.add("lists")
        if self.second_order:
            self.constructs.add("second order of lists")
        target = rng.choice(TARGETS)
        kind = rng.random()
        if kind < 0.35:
            self.lists += 1
            items = f"items{self.lists}"
            parts = [self.full_expr(names) for _ in range(rng.randint(2, 3))]
            k, j = rng.randrange(len(parts)), rng.randrange(len(parts))
            if rng.random() < 0.5:
                return self.list_unpacked(items, parts, target, k, j)
            if rng.random() < 0.6:
                # the list's name then bound to an array (refused until stop 26)
                self.constructs.add("a name holding a list, then an array")
                return [
                    f"{items} = [{', '.join(parts)}]",
                    f"{items} = np.stack({items})[{k}] + {items}[{j}] * 0.5",
                    f"{target} = {items} * 0.5 + {target} * 0.5",
                ]
            display = f"[{', '.join(parts)}]"
            named: list[str] = []
            if rng.random() < 0.3:
                # the list written out as a join or a repeat (each was differentiated as
                # NumPy's addition or scaling of arrays until stop 30: silently wrong)
                self.constructs.add("lists joined or repeated with an operator")
                display = f"[{parts[0]}] + [{', '.join(parts[1:])}]"
                if rng.random() < 0.5:  # (a repeat of names: computed values are refused)
                    named = [f"{items}e{i} = {part}" for i, part in enumerate(parts)]
                    elements = ", ".join(f"{items}e{i}" for i in range(len(parts)))
                    display = f"2 * [{elements}]"
                    k = k + len(parts)
            return [
                *named,
                f"{items} = {display}",
                f"{target} = {items}[{k}] * 0.5 + np.sin({items}[{j}])",
            ]
        if kind < 0.5 and self.mutable:
            self.constructs.add("list aliases")
            self.lists += 1
            alias = f"alias{self.lists}"
            return [f"{alias} = outs", f"{alias}.append(np.sin({self.full_expr(names)}))"]
        if kind < 0.6 and self.mutable:
            self.constructs.add("append constants")
            const = rng.choice(["np.zeros_like(x)", "np.ones(x.shape) * 0.5", "x * 0.0 + 2.0"])
            return [f"outs.append({const})"]
        if kind < 0.78 and self.mutable:
            self.constructs.add("dicts")
            self.lists += 1
            d = f"d{self.lists}"
            shape = rng.random()
            if shape < 0.2:
                return [
                    f"{d} = {{}}",
                    f"{d}['p'] = {self.full_expr(names)}",
                    f"{target} = {d}['p'] * 0.5",
                ]
            if shape < 0.5:
                return self.dict_loop(d, target, names)
            made = f"{d} = {{'p': {self.full_expr(names)}, 'q': {self.full_expr(names)}}}"
            if shape < 0.85:
                # a dict comprehension over its items or keys, filtered sometimes (refused
                # until stop 27), then read by key or by sum(values())
                self.constructs.add("dict comprehensions")
                self.loops += 1
                k, v = f"k{self.loops}", f"v{self.loops}"
                comp = rng.choice([
                    f"{{{k}: np.tanh({v}) * 0.5 for {k}, {v} in {d}.items()}}",
                    f"{{{k}: {d}[{k}] * {d}['q'] for {k} in ('p', 'q', 'r') if {k} != 'r'}}",
                    f"{{{k}: np.sin({v}) for {k}, {v} in {d}.items() if {k} == 'p'}}",
                    # a dict display iterated where it is written (refused until stop 28)
                    f"{{{k}: {v} * 2.0 for {k}, {v} in {{'p': {d}['q'], 'q': x}}.items()}}",
                ])  # fmt: skip
                if "}.items()" in comp:
                    self.constructs.add("a dict display iterated")
                read = rng.choice([f"sum({d}c.values())", f"{d}c['p'] * 2.0"])
                return [made, f"{d}c = {comp}", f"{target} = {read}"]
            return [made, f"{target} = {d}['p'] * {d}['q']"]
        self.loops += 1
        j = f"j{self.loops}"
        if rng.random() < 0.25:
            # map and functools.reduce, lambdas and functions given to them (refused as
            # "no adjoint rule for map" and "lambda expressions" until stop 32)
            self.constructs.add("map and functools.reduce")
            parts = [self.full_expr(names) for _ in range(rng.randint(2, 3))]
            seq, backwards = f"[{', '.join(parts)}]", f"[{', '.join(reversed(parts))}]"
            a, b = f"a{j}", f"b{j}"
            form = rng.choice([
                f"np.sum(np.stack(list(map(lambda {j}: np.sin({j}) * 0.5, {seq}))), axis=0)",
                f"np.mean(np.stack(tuple(map(np.tanh, {seq}))), axis=0)",
                f"sum(map(lambda {a}, {b}: {a} * {b}, {seq}, {backwards})) * 0.5",
                f"functools.reduce(lambda {a}, {b}: {a} * 0.5 + np.sin({b}), {seq})",
                f"functools.reduce(lambda {a}, {b}: {a} + {b} * {b}, {seq}, x * 0.0) * 0.5",
                f"functools.reduce(np.maximum, {seq})",
                "max", "functions",
            ])  # fmt: skip
            if form == "functions":
                # a loop over a display of functions (refused as "no adjoint rule for act:
                # the function called here is held in a local variable" until stop 33)
                self.constructs.add("loops over functions")
                act = f"act{self.loops}"
                functions = rng.choice(["(np.tanh, np.sin)", "[np.cos, np.tanh, np.sin]"])
                if self.helpers:
                    functions = rng.choice(
                        [functions, "(helper_tanh, np.sin)", "[applied, smooth]"]
                    )
                return [
                    f"{target} = {parts[0]}",
                    f"for {act} in {functions}:",
                    f"    {target} = {act}({target}) * 0.5 + {parts[1]}",
                ]
            if form == "max":
                # Python's max/min of a sequence of numbers (refused as "max: arguments not
                # supported" until stop 33)
                self.constructs.add("max and min of a sequence")
                pick = rng.choice(["max", "min"])
                numbers = rng.choice([
                    f"(np.sum({j} * {j}) for {j} in {seq})",
                    f"([np.mean(np.sin({j})) for {j} in {seq}])",
                ])  # fmt: skip
                form = f"{parts[0]} * {pick}{numbers}"
            return [f"{target} = {form}"]
        self.constructs.add("comprehensions")
        inner = self.full_expr(names)
        reduce = rng.choice(["np.sum(np.stack({}), axis=0)", "np.mean(np.stack({}), axis=0)"])
        call = "np.sin"
        if self.helpers and not self.second_order and rng.random() < 0.3:
            self.constructs.add("local functions in comprehensions")
            call = rng.choice(["sq", "cube"])
            self.locals.add(call)
        comp = f"[{call}({inner} * ({j} + 1.0)) for {j} in range({rng.randint(1, 3)})]"
        return [f"{target} = {reduce.format(comp)}"]

    def list_unpacked(self, items: str, parts: list[str], target: str, k: int, j: int) -> list[str]:
        """A list display (an element a number, sometimes: elements of different shapes)
        unpacked, starred, turned into a tuple or sliced, then read."""
        rng = self.rng
        self.constructs.add("lists unpacked")
        if rng.random() < 0.4:  # never the element read into sin(): the result stays an array
            m = rng.choice([i for i in range(len(parts)) if i != j])
            parts[m] = f"np.sum({parts[m]})"
        n = len(parts)
        made = f"{items} = [{', '.join(parts)}]"
        got = [f"{items}_{i}" for i in range(n)]
        form = rng.choice(["plain", "tuple", "list", "star", "middle", "tuple name", "slice"])
        if form in ("plain", "tuple", "list"):
            value = items if form == "plain" else f"{form}({items})"
            unpack = f"{', '.join(got)} = {value}"
        elif form == "star":
            unpack = f"{got[0]}, *{items}_r = {items}"
            got = [got[0]] + [f"{items}_r[{i}]" for i in range(n - 1)]
        elif form == "middle":
            unpack = f"{got[0]}, *{items}_r, {got[-1]} = {items}"
            got = [got[0], *(f"{items}_r[{i}]" for i in range(n - 2)), got[-1]]
        elif form == "tuple name":
            unpack = f"{items}_t = tuple({items})"
            got = [f"{items}_t[{i}]" for i in range(n)]
        else:
            unpack = f"{items}_s = {items}[1:]"
            got = [f"{items}[0]", *(f"{items}_s[{i}]" for i in range(n - 1))]
        return [made, unpack, f"{target} = {got[k]} * 0.5 + np.sin({got[j]})"]

    def dict_loop(self, d: str, target: str, names: list[str]) -> list[str]:
        """A dict with constant keys read in a loop over its keys, values or items (the
        loop is unrolled with the keys written in), or a loop over a tuple display whose
        later item reads a name the body changes (Python builds the display first)."""
        rng = self.rng
        self.loops += 1
        i, k, v = f"i{self.loops}", f"k{self.loops}", f"v{self.loops}"
        start = f"{target} = {self.full_expr(names)}"
        if rng.random() < 0.3:
            self.constructs.add("loops over a display")
            return [
                start,
                f"for {v} in ({target}, np.sin({target}) * 0.5):",
                f"    {target} = {target} * 0.5 + {v}",
            ]
        self.constructs.add("loops over a dict")
        loop, read = rng.choice([
            (f"for {i}, {k} in enumerate({d}):", f"{d}[{k}]"),
            (f"for {i}, {k} in enumerate(sorted({d}, reverse=True)):", f"{d}[{k}]"),
            (f"for {k}, {i} in zip({d}, (0.5, 2.0)):", f"{d}[{k}]"),
            (f"for {i}, {k} in enumerate({d}.keys(), 1):", f"{d}[{k}]"),
            (f"for {i}, {k} in enumerate(reversed(list({d}))):", f"{d}[{k}]"),
            (f"for {i}, ({k}, {v}) in enumerate({d}.items()):", v),
            (f"for {i}, {v} in enumerate({d}.values()):", v),
        ])  # fmt: skip
        body = [f"    {target} = {target} + ({i} + 1.0) * {read}"]
        if read != v and rng.random() < 0.4:
            body.insert(0, f"    {d}[{k}] = np.tanh({d}[{k}])")
        values = f"'p': {self.full_expr(names)}, 'q': {self.full_expr(names)}"
        return [f"{d} = {{{values}}}", start, loop, *body]

    def branch(self, names: list[str], depth: int, loop: bool) -> list[str]:
        rng = self.rng
        self.constructs.add("if/else")
        lines = [f"if {self.threshold(names, -2, 2)}:"]
        lines += _indent(self.block(names, depth + 1, loop))
        for _ in range(rng.choice([0, 0, 1, 2])):
            self.constructs.add("elif")
            lines.append(f"elif {self.threshold(names, -2, 2)}:")
            lines += _indent(self.block(names, depth + 1, loop))
        if rng.random() < 0.6:
            lines.append("else:")
            lines += _indent(self.block(names, depth + 1, loop))
        return lines

    def jump(self, names: list[str], body: list[list[str]], start: int) -> None:
        rng = self.rng
        for _ in range(2 if rng.random() < 0.2 else 1):  # two jumps in one loop
            if rng.random() >= 0.45:
                continue
            jump = rng.choice(["break", "continue"])
            self.constructs.add(jump)
            lines = [f"if {self.threshold(names, -1, 1)}:"]
            if rng.random() < 0.3:
                self.constructs.add("statements before a jump")
                lines.append(f"    {rng.choice(TARGETS)} = {self.full_expr(names)}")
            body.insert(rng.randint(start, len(body)), [*lines, f"    {jump}"])

    def for_loop(self, names: list[str], depth: int) -> list[str]:
        kind = self.rng.random()
        if kind < 0.08:
            return self.rotation_loop(names)
        if kind < 0.14 and self.helpers:
            return self.reshaping_loop(names)
        self.constructs.add("for")
        self.loops += 1
        index = f"i{self.loops}"
        body = self.block(names + [f"x[{index}]"], depth + 1, True)
        before: list[str] = []
        if self.rng.random() < 0.15:
            # a value read on the next turn, before this turn assigns it again
            self.constructs.add("a value read on the next turn")
            carried, target = f"v{self.loops}", self.rng.choice(TARGETS)
            before = [f"{carried} = {self.full_expr(names)}"]
            body.insert(0, [f"if {index} > 0:", f"    {target} = {target} + {carried} * 0.5"])
            body.append([f"{carried} = np.sin({self.full_expr(names)})"])
        self.jump(names, body, 0)
        count = self.rng.randint(0, self.shape[0])
        bounds = f"{count}"
        if self.rng.random() < 0.1:
            # the bound's name changes in the loop (range() read it once) and is read after
            self.constructs.add("a range bound changed in its loop")
            bound = f"n{self.loops}"
            before = [*before, f"{bound} = {count}"]
            body.append([f"{bound} = {bound} - 1"])
            bounds = bound
            after = [f"{self.rng.choice(TARGETS)} = a * (1.0 + {bound} * 0.1)"]
        else:
            after = []
        if not after and self.rng.random() < 0.25:
            # a range with a start or a step (its backward loop counts the turns that ran)
            self.constructs.add("ranges with a start or step")
            start = self.rng.randint(0, count)
            bounds = f"{start}, {count}" + self.rng.choice(["", ", 2", ", 3"])
        lines = [*before, f"for {index} in range({bounds}):", *_indent(body)]
        if self.rng.random() < 0.15:
            # runs when the loop was not left by a break (a return in the loop skips it)
            self.constructs.add("for/else")
            target = self.rng.choice(TARGETS)
            lines += ["else:", f"    {target} = {target} * 0.5 + {self.full_expr(names)}"]
        return lines + after

    def rotation_loop(self, names: list[str]) -> list[str]:
        """A loop handing values on one name per turn (``a = b; b = c; ...``): the
        adjoints reach the start only after as many rounds of the backward body as names
        (a plan once stopped after eight, with a zero gradient)."""
        rng = self.rng
        self.constructs.add("loops handing values round")
        self.loops += 1
        names_round = [f"r{self.loops}_{j}" for j in range(rng.randint(3, 11))]
        z = f"z{self.loops}"
        lines = [f"{r} = {self.full_expr(names)}" for r in names_round]
        lines.append(f"for _ in range({rng.randint(0, len(names_round) + 2)}):")
        lines.append(f"    {z} = np.sin({names_round[0]}) * 0.9 + {rng.choice(['y', '0.1'])}")
        lines += [f"    {a} = {b}" for a, b in zip(names_round, names_round[1:])]
        lines.append(f"    {names_round[-1]} = {z}")
        target = rng.choice(TARGETS)
        return [*lines, f"{target} = {target} + {names_round[0]} * 0.5"]

    def reshaping_loop(self, names: list[str]) -> list[str]:
        """A name whose shape changes from one turn of a loop to the next (``squash``
        sums on the first turn only): its old values are needed for their shapes (the
        reduction of ``h + y`` to ``h``'s shape once read the last one)."""
        self.constructs.add("shapes changing in a loop")
        self.loops += 1
        h, t = f"h{self.loops}", f"t{self.loops}"
        target = self.rng.choice(TARGETS)
        return [
            f"{h} = {self.full_expr(names)}",
            f"for {t} in range(2):",
            f"    {h} = squash({h} + y, {t})",
            f"{target} = {target} + {h} * 0.5",
        ]

    def while_loop(self, names: list[str], depth: int) -> list[list[str]]:
        self.constructs.add("while")
        self.loops += 1
        counter = f"k{self.loops}"
        limit = self.rng.randint(0, 3)
        body = [[f"{counter} = {counter} + 1"], *self.block(names, depth + 1, True)]
        if self.rng.random() < 0.25:
            # the counter, an integer the loop changes, as an op's static operand: pushed
            # and popped beside varied values, it must not be taken to vary (third order)
            self.constructs.add("a loop counter as a static operand")
            target = self.rng.choice(["a", "b", "c"])
            use = self.rng.choice(
                [
                    f"np.roll({target}, {counter})",
                    f"np.sum({target}, axis={counter} % {target}.ndim, keepdims=True)",
                    f"np.hstack([{target}, {target}])[..., {counter} % 2 :]"
                    f"[..., : {target}.shape[-1]]",
                ]
            )
            body.append([f"{target} = {use} * 0.5 + {target} * 0.5"])
        if self.rng.random() < 0.2:
            # a constant saved on a tape beside varied values each turn, whose derivative
            # is infinite (0 ** p, p < 1): taken to vary at second order, its zero tangent
            # times that derivative is NaN (campaign seed 2600280)
            self.constructs.add("a constant beside varied values on a tape")
            target = self.rng.choice(["a", "b", "c"])
            body.append(
                [
                    f"z{self.loops} = np.zeros_like({target})",
                    f"{target} = {target} * 0.5 + z{self.loops} ** (0.5 + np.sin({target}) * 0.2)",
                ]
            )
        self.jump(names, body, 1)  # after the counter moves: a continue cannot spin
        test = f"{counter} < {limit} and not ({self.threshold(names, 0, 5)})"
        return [[f"{counter} = 0"], [f"while {test}:", *_indent(body)]]

    def result(self, full: str, extra: str) -> str:
        """The returned value built from an expression shaped like x (``extra``: more terms
        of the same shape)."""
        total = f"({full}{extra}) * w"
        if self.spec.output == "array":
            return total
        if self.spec.output == "pair":
            return f"np.sum({total}), {total} * 0.5"
        return f"np.sum({total})"

    def sub_trees(self) -> list[str]:
        """Reads of the sub-tree ``p['in']``: a loop over it, a helper taking it whole, a
        name bound to different parts of it on two paths (refused: it once read the last)."""
        lines = []
        if self.rng.random() < 0.5:
            self.constructs.add("loops over sub-trees")
            lines += [
                "    for k, v in enumerate(p['in']):",
                "        u = u + v * (0.5 * k + 0.25)",
            ]
        if self.rng.random() < 0.5:
            self.constructs.add("sub-trees passed whole")
            if self.rng.random() < 0.7:
                # beside a tuple display of the function's own values (a state carried
                # through a cell, the LSTM's form; refused until stop 26)
                self.constructs.add("a sub-tree and a display passed together")
                lines.append("    u = u + tree_cell(p['in'], (u, u * 0.5))[0]")
            else:
                lines.append("    u = u + tree_dot(p['in'])")
        if self.rng.random() < 0.2:
            self.constructs.add("sub-trees bound on two paths")
            lines += [
                "    q = p['in']",
                f"    if {self.threshold(['x', 'u'], -1, 1)}:",
                "        q = p['in'][::-1]",
                "    u = u + q[0] * 0.5",
            ]
        return lines

    def program(self) -> str:
        """The source of a module defining ``f`` and the helpers it may call."""
        if self.spec.pytree == "dict" and self.rng.random() < 0.6:
            # a dict comprehension over the pytree argument's items (refused until stop 27)
            self.constructs.add("dict comprehensions over a pytree")
            comp = self.rng.choice([
                "{k: v * 1.5 for k, v in p.items()}",
                "{k: np.tanh(p[k]) for k in p if k != 'z'}",
            ])  # fmt: skip
            lines = ["def f(p, w):", f"    ps = {comp}", "    x = ps['x']", "    y = ps['y']"]
        elif self.spec.pytree == "dict":
            lines = ["def f(p, w):", "    x = p['x']", "    y = p['y']"]
        elif self.spec.pytree == "tuple":
            lines = ["def f(p, w):", "    x, y = p"]
        elif self.spec.pytree == "nested":
            lines = ["def f(p, w):"]
            if self.rng.random() < 0.5:
                lines.append("    x, y = p['in']")
            else:
                lines += ["    x = p['in'][0]", "    y = p['in'][-1]"]
        else:
            lines = ["def f(x, y, w):"]
            if self.rng.random() < 0.12:
                # srcad works on a copy of x; the caller's array stays as it was
                self.constructs.add("arguments updated in place")
                lines.append("    x[0] = x[0] * 0.5 + 0.25")
        lines += [
            "    a = x * 1.0",
            "    b = y * x",
            "    c = x + y",
            "    u = np.sin(x) * y",
        ]
        if not self.spec.pytree and self.spec.y == "float" and self.rng.random() < 0.4:
            # y a Python float: the update makes a new number, y is left as it was
            self.constructs.add("+= through another name of a float parameter")
            lines += ["    zf = y", "    zf += np.sum(x) * 0.1", "    c = c * 0.5 + zf"]
        if not self.spec.pytree and self.spec.y == "float" and self.rng.random() < 0.3:
            # a Python float reduced by NumPy (at second order its cotangent, summed, was
            # a Python float whose dtype the rule read until stop 28: seed 4100244)
            self.constructs.add("a Python float reduced by NumPy")
            lines += [f"    u = u * 0.5 + np.{self.rng.choice(['sum', 'mean', 'max'])}(y) * 0.28"]
        if self.spec.pytree == "nested":
            lines += self.sub_trees()
        if self.mutable:
            lines.append("    outs = [a]")
        body = self.block(["a", "b", "c", "x", "y", "u"], 0, False)
        local = {
            "sq": ["    def sq(v):", "        return v * v * 0.5"],
            "cube": ["    cube = lambda v: v * 0.25 + np.sin(v) * v"],
            "mk": ["    def mk(k):", "        return lambda v: np.sin(v) * k + v"],
            "halved": [
                "    def halved(v, flag):",
                "        if flag:",
                '            raise ValueError("taken")',
                "        return v * 0.5",
            ],
        }
        for name in sorted(self.locals):
            lines += local[name]
        lines += ["    " + line for stmt in body for line in stmt]
        extra = " + b * c + u"
        text = "\n".join(lines)
        # (``slice``: the generated code writes an index as ``slice(...)``; a variable of
        # that name, or ``len`` beside a try, broke it until stop 30)
        names = ("range", "reversed", "len", "zip", "slice", "max")
        free = [n for n in names if f"{n}(" not in text]
        if free and self.rng.random() < 0.1:
            # a local named as a builtin the derivative code may call (a `range` once broke
            # a while loop's backward pass)
            self.constructs.add("locals named as builtins")
            name = self.rng.choice(free)
            lines.insert(len(lines) - len(_indent(body)), f"    {name} = 0.5")
            extra = f" + b * c + u * (1.0 + {name})"
        if self.mutable and self.rng.random() < 0.3:
            # the list passed as it is, converted by the op (refused until stop 27)
            self.constructs.add("a list converted by an op")
            extra += self.rng.choice([" + np.sum(outs, axis=0)", " + np.mean(outs, axis=0)"])
        elif self.mutable:
            extra += " + np.sum(np.stack(outs), axis=0)"
        if self.second_order and self.rng.random() < 0.5:
            # a module global, rebound while a second derivative is held (test_programs)
            self.constructs.add("module globals at second order")
            extra += " + u * GAIN"
        lines.append(f"    return {self.result('a', extra)}")
        body_text = "\n".join(lines)
        if (
            any(h in body_text for h in ("scaled(", "keyed(", "scale3("))
            and self.rng.random() < 0.5
        ):
            self.constructs.add("rebound defaults and closures")
            self.spec = replace(self.spec, rebind=True)
        helpers = (
            "import functools\nimport logging\n\nimport srcad\n"
            "from srcad.adjoints.registry import d, xp\n\n" + HELPERS + "\n\n"
            if self.helpers
            else ""
        )
        if "sub-trees passed whole" in self.constructs:
            helpers += "def tree_dot(q):\n    return q[0] * np.cos(q[1])\n\n\n"
            helpers += (
                "def tree_cell(q, state):\n    h, c = state\n"
                "    return np.tanh(q[0] * h + c), c * np.cos(q[1])\n\n\n"
            )
        if self.second_order and "helper calls" in self.constructs:
            self.constructs.add("second order of helpers")
        if "module globals at second order" in self.constructs:
            helpers += "GAIN = 1.0\n\n\n"
        if "map and functools.reduce" in self.constructs and not self.helpers:
            helpers = "import functools\n\n" + helpers
        return "import numpy as np\n\n" + helpers + "\n".join(lines) + "\n"


def _indent(block: list[list[str]]) -> list[str]:
    return ["    " + line for stmt in block for line in stmt]


# margins ---------------------------------------------------------------------------------

PROBES = """
import numpy as _np

GAPS = []
# comparisons sitting at their threshold (np.var of a constant array > 0): rounding in a
# step may flip them, unlike a tie of two equal functions at a kink (seed 4200229)
AT_THRESHOLD = []


def _gap(value, threshold):
    d = _np.abs(_np.asarray(value) - threshold) / (1.0 + _np.abs(value) + abs(threshold))
    GAPS.append(float(_np.min(d)) if d.size else _np.inf)
    if d.size and float(_np.min(d)) <= 1e-9:
        AT_THRESHOLD.append(True)
    return value > threshold


def _kink(p, q=0.0):
    d = _np.abs(_np.asarray(p) - _np.asarray(q))
    GAPS.append(float(_np.min(d)) if d.size else _np.inf)
    return d


def _abs(p):
    _kink(p)
    return _np.abs(p)


def _maximum(p, q):
    _kink(p, q)
    return _np.maximum(p, q)


def _minimum(p, q):
    _kink(p, q)
    return _np.minimum(p, q)


def _sort(p):
    s = _np.sort(p, axis=-1)
    d = _np.diff(s, axis=-1)
    GAPS.append(float(_np.min(d)) if d.size else _np.inf)
    p.sort()"""


class _Probe(ast.NodeTransformer):
    """Comparisons on data (``>``), kinks and sorts rewritten to record their distance to a
    flip (loop counters compare with ``<``, exactly, and are left alone)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.Gt):
            return _call("_gap", [node.left, node.comparators[0]])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "sort" and not node.args:
            return _call("_sort", [func.value])
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "np"
        ):
            if func.attr in ("abs", "maximum", "minimum"):
                return _call("_" + func.attr, node.args)
        return node


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def probe_source(source: str) -> str:
    """``source`` with every float threshold, kink and sort recording its margin in ``GAPS``."""
    tree = _Probe().visit(ast.parse(source))
    return PROBES + "\n\n" + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def write(seed: int, second_order: bool = False) -> tuple[str, Spec, set[str]]:
    """The program of a seed, how to call it, and the construct families it uses."""
    writer = ProgramWriter(seed, second_order)
    source = writer.program()
    return source, writer.spec, writer.constructs


def programs():
    """A hypothesis strategy of ``(source, spec)`` (shrinks through the random choices)."""
    from hypothesis import strategies as st

    def draw(rng: random.Random) -> tuple[str, Spec]:
        writer = ProgramWriter(rng)
        return writer.program(), writer.spec

    return st.randoms(use_true_random=False).map(draw)


def stats(start: int, count: int, every: int = 4) -> Counter:
    """How many of the programs of seeds ``start..start+count`` use each construct family."""
    seen: Counter = Counter()
    for seed in range(start, start + count):
        seen.update(write(seed, seed % every == 0)[2])
    return seen


if __name__ == "__main__":
    # python tests/fuzz/programs.py --stats [COUNT [START]]: family counts over seeds
    args = [a for a in sys.argv[1:] if a != "--stats"]
    count = int(args[0]) if args else 300
    start = int(args[1]) if len(args) > 1 else 0
    counts = stats(start, count)
    for family in sorted(FAMILIES | set(counts), key=lambda f: counts[f]):
        print(f"{counts[family]:6d}  {family}")
