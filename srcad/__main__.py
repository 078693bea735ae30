"""Command line: ``python -m srcad ops`` lists every op srcad differentiates."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import srcad.adjoints  # noqa: F401  (registers the rules)
from srcad.adjoints.registry import (
    _NONDIFF,
    Attribute,
    Method,
    Operator,
    registered,
    registered_tangents,
)

_OPERATORS = {
    "Add": "a + b", "Sub": "a - b", "Mult": "a * b", "Div": "a / b", "Pow": "a ** b",
    "Mod": "a % b", "MatMult": "a @ b", "FloorDiv": "a // b", "USub": "-x", "UAdd": "+x",
    "Square": "x * x", "Copy": "y = x", "Subscript": "x[...] (constant index)",
    "SubscriptDynamic": "x[i] (computed index)", "List": "[a, b, ...]",
    "ListItem": "xs[i] (a list)", "StackList": "np.stack(xs) (a list)",
    "ConcatenateList": "np.concatenate(xs) (a list)", "Not": "not x", "Invert": "~x",
    "BitAnd": "a & b", "BitOr": "a | b", "BitXor": "a ^ b",
}  # fmt: skip
_INTERNAL = {"setitem": "x[i] = v (in place)", "append": "xs.append(v)"}


def _label(key: Any) -> str:
    if isinstance(key, Method):
        return f"x.{key.name}()"
    if isinstance(key, Attribute):
        return f"x.{key.name}"
    if isinstance(key, Operator):
        return _OPERATORS.get(key.name, key.name)
    module = getattr(key, "__module__", None) or ""
    if module.startswith("srcad"):
        name = getattr(key, "__name__", "")
        return _INTERNAL.get(name, f"srcad.{name}")
    name = getattr(key, "__name__", repr(key))
    prefix = {"numpy": "np.", "math": "math.", "builtins": ""}.get(module, f"{module}.")
    return prefix + name


def op_table() -> list[tuple[str, str, str]]:
    """``(op, family, gradient)`` for every registered op, sorted by op; gradient names the
    modes that differentiate it: reverse (grad, vjp) and forward (jvp)."""
    rows = []
    adjoints, tangents = registered(), registered_tangents()
    for key in {**adjoints, **tangents}:
        family = rule_module(adjoints.get(key) or tangents[key])
        # the forward transformation builds a list literal's tangent itself, without a rule
        forward = key in tangents or key == Operator("List")
        modes = ["reverse"] * (key in adjoints) + ["forward"] * forward
        rows.append((_label(key), family, ", ".join(modes)))
    for key in _NONDIFF:
        rows.append((_label(key), "nondiff", "none (no gradient flows)"))
    return sorted(set(rows))


def rule_module(rule: Any) -> str:
    return rule.globals.get("__name__", "").rpartition(".")[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m srcad")
    commands = parser.add_subparsers(dest="command", required=True)
    ops = commands.add_parser("ops", help="list every op with its gradient support")
    ops.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    if args.command == "ops":
        rows = op_table()
        if args.markdown:
            print("| op | family | gradient |")
            print("| --- | --- | --- |")
            for op, family, grad in rows:
                print(f"| `{op}` | {family} | {grad} |")
        else:
            width = max(len(op) for op, _, _ in rows)
            for op, family, grad in rows:
                print(f"{op.ljust(width)}  {family:12}  {grad}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
