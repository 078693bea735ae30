"""A generator of random valid Python functions, for differential testing against finite
differences.

Each program defines ``f(x, y, w)``: ``x`` has a random shape ``(n,)`` or ``(m, n)``, ``y``
has shape ``(n,)`` (it broadcasts against ``x``), and ``w`` holds positive weights shaped
like ``x``; ``x`` and ``y`` are differentiated. A program mixes

- straight-line arithmetic and NumPy calls whose operands broadcast against ``x``'s shape
  (rows, columns kept as ``(m, 1)``, reductions along an axis, reversed and indexed arrays);
- nested ``if``/``elif``/``else`` on data, ``for`` loops over ranges and bounded ``while``
  loops, both with ``break``/``continue``, and early returns;
- calls of helpers (one with a branch inside, one returning a pair unpacked
  ``a, b = pair(...)``);
- in-place updates of an array made in the function (``u[k] = ...``, ``u[k] += ...``,
  ``u[i] = ...`` in loops), lists (literals read back by index, ``append`` in loops,
  comprehensions) and ``np.stack`` of them.

Values stay bounded (tanh, sin, cos, exp of a tanh, denominators kept away from zero).
Branch thresholds and kinks (``np.maximum``, ``np.abs``, ``np.where``) are not avoided by
the generator itself: ``probe_source`` rewrites a program to record how close every
comparison and kink came to flipping, and the test draws inputs until each margin is wide.

``ProgramWriter`` takes any ``random.Random``: ``random.Random(seed)`` for the seeded runs,
or the one ``hypothesis.strategies.randoms()`` draws, so that hypothesis can shrink a
failing program (``programs()`` below).
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass

FULL = ["a", "b", "c", "u", "x"]  # names shaped like x
TARGETS = ["a", "b", "c"]

HELPERS = """
def helper(p, q):
    return np.tanh(p) * q + p * 0.5


def pair(p, q):
    s = np.sin(p)
    return s * q, p - q * 0.25


def branchy(p, t):
    if np.sum(p) > t:
        return np.tanh(p) * 2.0
    return p * 0.5 + 0.1
"""


@dataclass
class Expr:
    code: str
    full: bool  # shaped like x (otherwise it only broadcasts against x)


class ProgramWriter:
    """Writes one random function ``f(x, y, w)`` from a random source."""

    def __init__(self, rng: random.Random | int, second_order: bool = False) -> None:
        self.rng = random.Random(rng) if isinstance(rng, int) else rng
        # second derivatives of helper calls, lists and in-place updates fail (see
        # test_regressions.py): programs checked to second order use none of them
        self.second_order = second_order
        self.loops = 0
        self.lists = 0
        two = self.rng.random() < 0.5
        n = self.rng.randint(2, 4)
        self.shape = (self.rng.randint(2, 3), n) if two else (n,)
        self.constructs: set[str] = set()

    # expressions ---------------------------------------------------------------------------

    def atom(self, names: list[str]) -> Expr:
        rng = self.rng
        name = rng.choice(names)
        full = name in FULL
        if full and rng.random() < 0.25:
            self.constructs.add("indexing")
            k = rng.randrange(self.shape[0])
            col = rng.randrange(self.shape[-1])
            code, full = rng.choice(
                [
                    (f"{name}[::-1]", True),
                    (f"{name}[{k}]", False),
                    (f"{name}[..., {col}:{col + 1}]", False),
                    (f"np.sum({name}, axis=0)", False),
                    (f"np.mean({name}, axis=-1, keepdims=True)", False),
                ]
            )
            if name == "u" and "[" in code and not code.startswith("np."):
                # a view of the array updated in place would alias it (srcad refuses that
                # with a clear error when the view is read after an update): copy instead
                code = f"({code} * 1.0)"
            return Expr(code, full)
        return Expr(name, full)

    def expr(self, names: list[str], depth: int = 0) -> Expr:
        rng = self.rng
        if depth > 1 or rng.random() < 0.3:
            return self.atom(names)
        if rng.random() < 0.5:
            inner = self.expr(names, depth + 1)
            forms = [
                "np.sin({})", "np.tanh({})", "np.cos({})", "({} * 0.5)",
                "np.exp(np.tanh({}) * 0.5)", "np.sqrt(1.0 + ({0}) * ({0}))",
                "np.log(1.5 + np.sin({}))", "np.abs({})", "helper({}, 0.5)",
                "branchy({}, {t})", "({} ** 2 * 0.25)",
            ]  # fmt: skip
            form = rng.choice(forms)
            if self.second_order and form.startswith(("helper", "branchy")):
                form = "np.sin({})"
            if form.startswith("np.abs"):
                self.constructs.add("kinks")
            if form.startswith(("helper", "branchy")):
                self.constructs.add("helper calls")
            t = round(rng.uniform(-1, 1), 2)
            return Expr(form.format(inner.code, t=t), inner.full)
        left = self.expr(names, depth + 1)
        right = self.expr(names, depth + 1)
        if left.code == right.code:
            right = Expr(f"np.cos({right.code})", right.full)
        forms = [
            "{} + {}", "{} - {}", "{} * {}", "{} / (1.5 + np.sin({}))",
            "np.maximum({}, {})", "np.minimum({}, {})", "np.where({} > 0, {}, {})",
            "helper({}, {})",
        ]  # fmt: skip
        form = rng.choice(forms)
        if self.second_order and form.startswith("helper"):
            form = "{} * {}"
        if form.startswith(("np.maximum", "np.minimum", "np.where")):
            self.constructs.add("kinks")
        full = left.full or right.full
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
            if kind < 0.12 and not self.second_order:
                out.append(self.update(names, loop))
            elif kind < 0.4 or depth > 2:
                out.append([f"{rng.choice(TARGETS)} = {self.full_expr(names)}"])
            elif kind < 0.54 and self.second_order:
                out.append([f"{rng.choice(TARGETS)} = {self.full_expr(names)}"])
            elif kind < 0.47:
                self.constructs.add("tuple-returning helpers")
                first, second = rng.sample(TARGETS, 2)
                p, q = self.full_expr(names), self.expr(names).code
                out.append([f"{first}, {second} = pair({p}, {q})"])
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
                        f"    return np.sum({self.full_expr(names)} * w)",
                    ]
                )
        return out

    def update(self, names: list[str], loop: bool) -> list[str]:
        """An in-place update of ``u`` (an element, a row, or an append to ``outs``)."""
        rng = self.rng
        self.constructs.add("in-place updates")
        indices = [n[2:-1] for n in names if n.startswith("x[")]
        index = rng.choice(indices) if indices else str(rng.randrange(self.shape[0]))
        choice = rng.random()
        if choice < 0.3:
            return [f"u[{index}] = np.sum({self.expr(names).code}) * 0.25"]
        if choice < 0.55:
            return [f"u[{index}] += np.tanh({self.full_expr(names)})[{index}] * 0.5"]
        if choice < 0.7:
            return [f"u[{index}] = u[{index}] * np.cos({self.full_expr(names)})[{index}]"]
        self.constructs.add("lists")
        return [f"outs.append(np.tanh({self.expr(names).code}) * x)"]

    def container(self, names: list[str]) -> list[str]:
        """A list literal read back by index, or a comprehension stacked into an array."""
        rng = self.rng
        self.constructs.add("lists")
        target = rng.choice(TARGETS)
        if rng.random() < 0.5:
            self.lists += 1
            items = f"items{self.lists}"
            parts = [self.full_expr(names) for _ in range(rng.randint(2, 3))]
            k, j = rng.randrange(len(parts)), rng.randrange(len(parts))
            return [
                f"{items} = [{', '.join(parts)}]",
                f"{target} = {items}[{k}] * 0.5 + np.sin({items}[{j}])",
            ]
        self.constructs.add("comprehensions")
        self.loops += 1
        j = f"j{self.loops}"
        inner = self.full_expr(names)
        reduce = rng.choice(["np.sum(np.stack({}), axis=0)", "np.mean(np.stack({}), axis=0)"])
        comp = f"[np.sin({inner} * ({j} + 1.0)) for {j} in range({rng.randint(1, 3)})]"
        return [f"{target} = {reduce.format(comp)}"]

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
        if rng.random() < 0.45:
            jump = rng.choice(["break", "continue"])
            self.constructs.add(jump)
            body.insert(
                rng.randint(start, len(body)),
                [f"if {self.threshold(names, -1, 1)}:", f"    {jump}"],
            )

    def for_loop(self, names: list[str], depth: int) -> list[str]:
        self.constructs.add("for")
        self.loops += 1
        index = f"i{self.loops}"
        body = self.block(names + [f"x[{index}]"], depth + 1, True)
        self.jump(names, body, 0)
        count = self.rng.randint(0, self.shape[0])
        return [f"for {index} in range({count}):", *_indent(body)]

    def while_loop(self, names: list[str], depth: int) -> list[list[str]]:
        self.constructs.add("while")
        self.loops += 1
        counter = f"k{self.loops}"
        limit = self.rng.randint(0, 3)
        body = [[f"{counter} = {counter} + 1"], *self.block(names, depth + 1, True)]
        self.jump(names, body, 1)  # after the counter moves: a continue cannot spin
        test = f"{counter} < {limit} and not ({self.threshold(names, 0, 5)})"
        return [[f"{counter} = 0"], [f"while {test}:", *_indent(body)]]

    def program(self) -> str:
        """The source of a module defining ``f`` and the helpers it may call."""
        lines = [
            "def f(x, y, w):",
            "    a = x * 1.0",
            "    b = y * x",
            "    c = x + y",
            "    u = np.sin(x) * y",
        ]
        if not self.second_order:
            lines.append("    outs = [a]")
        body = self.block(["a", "b", "c", "x", "y", "u"], 0, False)
        lines += ["    " + line for stmt in body for line in stmt]
        result = "np.sum((a + b * c + u) * w)"
        if not self.second_order:
            result += " + np.sum(np.stack(outs) * w)"
        lines.append(f"    return {result}")
        helpers = "" if self.second_order else HELPERS + "\n\n"
        return "import numpy as np\n\n" + helpers + "\n".join(lines) + "\n"


def _indent(block: list[list[str]]) -> list[str]:
    return ["    " + line for stmt in block for line in stmt]


# margins ---------------------------------------------------------------------------------

PROBES = """
import numpy as _np

GAPS = []


def _gap(value, threshold):
    d = _np.abs(_np.asarray(value) - threshold) / (1.0 + _np.abs(value) + abs(threshold))
    GAPS.append(float(_np.min(d)) if d.size else _np.inf)
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
    return _np.minimum(p, q)"""


class _Probe(ast.NodeTransformer):
    """Comparisons on data (``>``) and kinks rewritten to record their distance to a flip
    (loop counters compare with ``<``, exactly, and are left alone)."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], ast.Gt):
            return _call("_gap", [node.left, node.comparators[0]])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
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
    """``source`` with every float threshold and kink recording its margin in ``GAPS``."""
    tree = _Probe().visit(ast.parse(source))
    return PROBES + "\n\n" + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def programs():
    """A hypothesis strategy of ``(source, shape of x)`` (shrinks through the random choices)."""
    from hypothesis import strategies as st

    def write(rng: random.Random) -> tuple[str, tuple[int, ...]]:
        writer = ProgramWriter(rng)
        return writer.program(), writer.shape

    return st.randoms(use_true_random=False).map(write)
