"""Command line (``srcad`` or ``python -m srcad``): ``show`` prints a derivative's generated
source, ``compile`` writes a standalone module (see srcad.export), and ``ops`` lists every op
srcad differentiates."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

import srcad.adjoints  # noqa: F401  (registers the rules)
from srcad.adjoints.registry import (
    _NONDIFF,
    Attribute,
    Method,
    Operator,
    registered,
    registered_tangents,
    ufunc_method_label,
)
from srcad.adjoints.scipy_table import is_scipy, public_name
from srcad.transform.ops import public_module
from srcad.transform.templates import stored_params

_OPERATORS = {
    "Add": "a + b", "Sub": "a - b", "Mult": "a * b", "Div": "a / b", "Pow": "a ** b",
    "Mod": "a % b", "MatMult": "a @ b", "FloorDiv": "a // b", "USub": "-x", "UAdd": "+x",
    "Square": "x * x", "Copy": "y = x", "Subscript": "x[...] (constant index)",
    "SubscriptDynamic": "x[i] (computed index)", "List": "[a, b, ...]",
    "ListItem": "xs[i] (a list)", "StackList": "np.stack(xs) (a list)",
    "ConcatenateList": "np.concatenate(xs) (a list)", "Not": "not x", "Invert": "~x",
    "BitAnd": "a & b", "BitOr": "a | b", "BitXor": "a ^ b",
}  # fmt: skip
_INTERNAL = {
    "setitem": "x[i] = v (in place)",
    "scatter": "x[idx] = v (in place, idx may repeat)",
    "append": "xs.append(v)",
}


def _label(key: Any) -> str:
    for name in ("r_", "c_", "s_", "index_exp"):
        if key is getattr(np, name, None):
            return f"np.{name}[...]"
    if isinstance(key, Method):
        return f"x.{key.name}()"
    if isinstance(key, Attribute):
        return f"x.{key.name}"
    if isinstance(key, Operator):
        return _OPERATORS.get(key.name, key.name)
    if is_scipy(key):
        return public_name(key) or repr(key)
    if method := ufunc_method_label(key):
        return method
    module = getattr(key, "__module__", None) or ""
    if module.startswith("srcad"):
        name = getattr(key, "__name__", "")
        return _INTERNAL.get(name, f"srcad.{name}")
    name = getattr(key, "__name__", repr(key))
    module = public_module(module)
    prefix = {"numpy": "np.", "math": "math.", "builtins": ""}.get(module, f"{module}.")
    return prefix + name


def _internal(key: Any) -> bool:
    """Whether ``key`` is one of srcad's own runtime helpers (rules for generated code)."""
    if isinstance(key, (Method, Attribute, Operator)):
        return False
    module = getattr(key, "__module__", None) or ""
    return module.startswith("srcad") and getattr(key, "__name__", "") not in _INTERNAL


def op_table(internal: bool = False) -> list[tuple[str, str, str]]:
    """``(op, family, gradient)`` for every registered op, sorted by op; gradient names the
    modes that differentiate it: reverse (grad, vjp) and forward (jvp). srcad's own runtime
    helpers (which generated code calls, so that it can be differentiated again) are listed
    only with ``internal``."""
    rows = []
    adjoints, tangents = registered(), registered_tangents()
    for key in {**adjoints, **tangents}:
        if _internal(key) and not internal:
            continue
        family = rule_module(adjoints.get(key) or tangents[key])
        # the forward transformation builds a list literal's tangent itself, without a rule
        forward = key in tangents or key == Operator("List")
        modes = ["reverse"] * (key in adjoints) + ["forward"] * forward
        text = ", ".join(modes)
        if key in adjoints and not stored_params(adjoints[key]):
            text = "refused (an argument that varies is an error)"
        rows.append((_label(key), family, text))
    for key in _NONDIFF:
        if _internal(key) and not internal:
            continue
        rows.append((_label(key), "nondiff", "none (no gradient flows)"))
    return sorted(set(rows))


def rule_module(rule: Any) -> str:
    return rule.globals.get("__name__", "").rpartition(".")[2]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from srcad import __version__

    parser = argparse.ArgumentParser(
        prog="srcad", description="Automatic differentiation by source transformation."
    )
    parser.add_argument("--version", action="version", version=f"srcad {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    ops = commands.add_parser("ops", help="list every op with its gradient support")
    ops.add_argument(
        "names", nargs="*", help="show only ops whose name contains one of these (e.g. sin linalg)"
    )
    ops.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ops.add_argument(
        "--all", action="store_true", help="include srcad's own runtime helpers (srcad.*)"
    )
    show = commands.add_parser("show", help="print the generated source of a derivative")
    show.add_argument("target", help="FILE.py:FUNCTION")
    show.add_argument("--wrt", default="0", help="parameters: indices or names, e.g. 0,1 or W,b")
    show.add_argument("--mode", choices=("rev", "fwd"), default="rev", help="reverse or forward")
    show.add_argument(
        "--example",
        metavar="NAME",
        help="a function in FILE returning example arguments (expands dict/list arguments as "
        "for that call; default: example_args, if FILE defines it and a parameter needs it)",
    )
    show.add_argument("--no-example", action="store_true", help="show without examples")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    build = commands.add_parser(
        "compile", help="write a function and its derivatives as a standalone module"
    )
    build.add_argument("target", help="FILE.py:FUNCTION")
    build.add_argument("-o", "--output", required=True, help="the module to write")
    build.add_argument(
        "--example",
        metavar="NAME",
        help="a function in FILE returning the "
        "example arguments (default: example_args, if FILE defines it)",
    )
    build.add_argument("--no-example", action="store_true", help="compile without examples")
    args = parser.parse_args(argv)
    if args.command == "ops":
        return _quiet_on_closed_pipe(_print_ops, args.markdown, args.names, args.all)
    from srcad.errors import TransformError
    from srcad.loading import LoadError

    try:
        if args.command == "show":
            return _show(args)
        return _compile(args)
    except (LoadError, TransformError, NotImplementedError, ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _quiet_on_closed_pipe(write: Any, *args: Any) -> int:
    """Run ``write``; a reader that closed the pipe early (``srcad ops | head``) is no error."""
    try:
        status = write(*args)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at devnull so that flush cannot fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return status


def _print_ops(markdown: bool, names: list[str], internal: bool) -> int:
    """Print the op table (filtered by ``names``); 1 when no op matches, as grep does."""
    wanted = [name.lower() for name in names]
    rows = [
        row
        for row in op_table(internal)
        if not wanted or any(name in row[0].lower() for name in wanted)
    ]
    if not rows:
        print(f"no op matches {' '.join(names)}", file=sys.stderr)
        return 1
    if markdown:
        print("| op | family | gradient |")
        print("| --- | --- | --- |")
        for op, family, grad in rows:
            print(f"| `{op}` | {family} | {grad} |")
    else:
        width = max(len(op) for op, _, _ in rows)
        family_width = max(len(family) for _, family, _ in rows)
        for op, family, grad in rows:
            print(f"{op.ljust(width)}  {family.ljust(family_width)}  {grad}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from srcad import api
    from srcad.errors import UnknownStructureError
    from srcad.highlight import highlight
    from srcad.loading import load_target
    from srcad.show import source_of

    module, func = load_target(args.target)
    example = _example(module, args.example, required=True) if args.example else None
    if isinstance(func, api.Derivative):
        text = api.source(func)
    else:
        try:
            text = source_of(func, _parse_wrt(args.wrt), args.mode, example)
        except UnknownStructureError:
            # as compile does: a pytree parameter takes its structure from example_args,
            # which the file may define for another function, so only when it is needed
            example = None if args.no_example else _example(module, "example_args", False)
            if args.example or example is None:
                raise
            text = source_of(func, _parse_wrt(args.wrt), args.mode, example)
    color = args.color == "always" or (
        args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    )
    sys.stdout.write(highlight(text) if color else text)
    return 0


def _compile(args: argparse.Namespace) -> int:
    from srcad.export import export
    from srcad.loading import load_target

    module, func = load_target(args.target)
    example = None
    if not args.no_example:
        name = args.example or "example_args"
        example = _example(module, name, required=args.example is not None)
    path = export(func, args.output, example_args=example)
    how = "specialized to the example arguments" if example is not None else "no example arguments"
    print(f"wrote {path} ({how})")
    return 0


def _example(module: Any, name: str | None, required: bool) -> tuple | None:
    """The example arguments that ``module.name()`` returns (a tuple)."""
    from srcad.loading import LoadError

    if name is None:
        return None
    make = getattr(module, name, None)
    if make is None:
        if required:
            raise LoadError(f"{module.__file__} has no function '{name}' (for --example)")
        return None
    value = make() if callable(make) else make
    if not isinstance(value, tuple):
        raise LoadError(f"{name}() must return a tuple of arguments, got {type(value).__name__}")
    return value


def _parse_wrt(text: str) -> Any:
    """``0`` -> 0, ``0,1`` -> (0, 1), ``W,b`` -> ("W", "b"), ``0,`` -> (0,)."""
    items = [item.strip() for item in text.split(",")]
    parsed = tuple(int(i) if i.lstrip("-").isdigit() else i for i in items if i)
    if "," not in text and len(parsed) == 1:
        return parsed[0]
    return parsed


if __name__ == "__main__":
    sys.exit(main())
