"""A generator of random valid Python functions with control flow, for differential testing.

Each program reads arrays ``x``, ``y`` (differentiated) and ``w`` (weights), and mixes
elementwise NumPy calls, branches on data, range loops with break/continue, bounded while
loops and early returns. Values stay bounded (tanh, sin, cos, exp of a tanh) and branch
thresholds are random, so a tiny finite-difference step rarely flips a decision.
"""

from __future__ import annotations

import random

UNARY = [
    "np.sin({})", "np.tanh({})", "np.cos({})", "({} * 0.5)", "np.exp(np.tanh({}) * 0.5)",
    "helper({}, 0.5)",
]  # fmt: skip
BINARY = [
    "{} + {}", "{} - {}", "{} * {}", "np.maximum({}, {})", "np.where({} > 0, {}, {})",
    "helper({}, {})",
]  # fmt: skip
TARGETS = ["a", "b", "c"]


class ProgramWriter:
    """Writes one random function ``f(x, y, w)`` from a seeded random source."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.loops = 0

    def expr(self, names: list[str], depth: int = 0) -> str:
        rng = self.rng
        if depth > 1 or rng.random() < 0.3:
            return rng.choice(names)
        if rng.random() < 0.5:
            form = rng.choice(UNARY)
            return form.format(self.expr(names, depth + 1))
        form = rng.choice(BINARY)
        return form.format(*(self.expr(names, depth + 1) for _ in range(form.count("{}"))))

    def threshold(self, names: list[str], low: float, high: float) -> str:
        return f"np.sum({self.rng.choice(names)}) > {round(self.rng.uniform(low, high), 2)}"

    def block(self, names: list[str], depth: int, loop: bool) -> list[list[str]]:
        """A list of statements, each a list of lines indented relative to the block."""
        rng = self.rng
        out: list[list[str]] = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.random()
            indices = [n[2:-1] for n in names if n.startswith("x[")]
            if indices and rng.random() < 0.25:
                # an element update in place, or an append, inside a loop
                index = rng.choice(indices)
                if rng.random() < 0.5:
                    out.append([f"u[{index}] = np.sum({self.expr(names)}) * 0.25"])
                else:
                    out.append([f"outs.append(np.tanh({self.expr(names)}) * x)"])
            elif kind < 0.45 or depth > 2:
                value = self.expr(names)
                if value in names:
                    value += " * 1.0"  # a new array, never a second name for one
                out.append([f"{rng.choice(TARGETS)} = {value}"])
            elif kind < 0.6:
                lines = [f"if {self.threshold(names, -2, 2)}:"]
                lines += _indent(self.block(names, depth + 1, loop))
                if rng.random() < 0.6:
                    lines.append("else:")
                    lines += _indent(self.block(names, depth + 1, loop))
                out.append(lines)
            elif kind < 0.78:
                self.loops += 1
                index = f"i{self.loops}"
                body = self.block(names + [f"x[{index}]"], depth + 1, True)
                if rng.random() < 0.4:
                    jump = rng.choice(["break", "continue"])
                    body.insert(
                        rng.randint(0, len(body)),
                        [f"if {self.threshold(names, -1, 1)}:", f"    {jump}"],
                    )
                out.append([f"for {index} in range({rng.randint(0, 3)}):", *_indent(body)])
            elif kind < 0.9:
                self.loops += 1
                counter = f"k{self.loops}"
                limit = rng.randint(0, 3)
                out.append([f"{counter} = 0"])
                body = [[f"{counter} = {counter} + 1"], *self.block(names, depth + 1, True)]
                test = f"{counter} < {limit} and not ({self.threshold(names, 0, 5)})"
                out.append([f"while {test}:", *_indent(body)])
            else:
                out.append(
                    [
                        f"if {self.threshold(names, -2, 2)}:",
                        f"    return np.sum({self.expr(names)} * w)",
                    ]
                )
        return out

    def program(self) -> str:
        """The source of a module defining ``f`` (and a helper it may call)."""
        lines = [
            "def f(x, y, w):",
            "    a = x * 1.0",
            "    b = y * 1.0",
            "    c = x + y",
            "    u = np.sin(x) * y",
            "    outs = [a]",
        ]
        body = self.block(["a", "b", "c", "x", "y", "u"], 0, False)
        lines += ["    " + line for stmt in body for line in stmt]
        lines.append("    return np.sum((a + b * c + u) * w) + np.sum(np.stack(outs) * w)")
        helper = "def helper(p, q):\n    return np.tanh(p) * q + p * 0.5\n"
        return "import numpy as np\n\n\n" + helper + "\n\n" + "\n".join(lines) + "\n"


def _indent(block: list[list[str]]) -> list[str]:
    return ["    " + line for stmt in block for line in stmt]
