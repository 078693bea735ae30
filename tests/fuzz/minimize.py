"""Shrink a failing fuzz program to a small one that fails the same way.

    .venv/bin/python tests/fuzz/minimize.py SEED            # a seed of test_programs.py
    .venv/bin/python tests/fuzz/minimize.py program.py SEED ORDER "Spec(shape=(3,), ...)"

Greedy, to a fixed point: drop a statement, replace an ``if``/``for``/``while`` by its body,
replace a call or an operation by one of its operands. A candidate is kept when checking it
fails with the same kind of error (exception type and the first words of its message); the
program printed at the end is the regression test's body.
"""

from __future__ import annotations

import ast
import copy
import re
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from programs import Spec, write  # noqa: E402
from test_programs import SECOND_ORDER_EVERY, check_program  # noqa: E402


def signature(exc: BaseException) -> tuple[str, str]:
    """The kind of a failure: its type and the start of its message, numbers and temporary
    paths taken out."""
    # the first two lines: a mismatch says what differs on its second line
    text = " ".join([line for line in str(exc).split("\n") if line.strip()][:2])
    text = re.sub(r"/tmp/\S+|<srcad \d+[^>]*>", "F", text)
    text = re.sub(r"[-+]?\d[\d.e+-]*|_t\d+", "#", text)
    return type(exc).__name__, text[:100]


class _Timeout(BaseException):  # not caught by check_program
    pass


def _alarm(signum, frame):
    raise _Timeout


def failure(source: str, seed: int, spec: Spec, order: int, limit: int = 30):
    """The kind of failure of a program, or None; a candidate that runs past ``limit``
    seconds (a while loop that lost its counter) is a failure of its own kind."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    try:
        check_program(source, seed, spec, order)
    except _Timeout:
        return ("timeout", "")
    except Exception as exc:  # noqa: BLE001  (any failure is a candidate to keep)
        return signature(exc)
    finally:
        signal.alarm(0)
    return None


def _bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _unused_definitions(tree: ast.Module) -> Iterator[int]:
    """Positions of module-level helpers (and assignments) no other statement names."""
    for k, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef) and stmt.name != "f":
            names = {stmt.name}
        elif isinstance(stmt, ast.Assign):
            names = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        else:
            continue
        rest = [s for j, s in enumerate(tree.body) if j != k]
        used = {n.id for s in rest for n in ast.walk(s) if isinstance(n, ast.Name)}
        if names and not names & used:
            yield k


def candidates(source: str) -> Iterator[str]:
    """Programs one step smaller than ``source``."""
    tree = ast.parse(source)
    for k in _unused_definitions(tree):
        new = copy.deepcopy(tree)
        del new.body[k]
        yield _unparse(new)
    count = sum(len(b) for b in _bodies(tree))
    for k in range(count):
        for action in ("drop", "inline"):
            new = copy.deepcopy(tree)
            seen = 0
            for block in _bodies(new):
                if seen + len(block) > k:
                    stmt = block[k - seen]
                    if action == "drop" and not isinstance(stmt, ast.FunctionDef):
                        if len(block) == 1:
                            block[0] = ast.Pass()
                        else:
                            del block[k - seen]
                    elif action == "inline" and isinstance(stmt, (ast.If, ast.For, ast.While)):
                        block[k - seen : k - seen + 1] = stmt.body
                    else:
                        break
                    yield _unparse(new)
                    break
                seen += len(block)
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.BinOp, ast.Subscript))]
    for index in range(len(nodes)):
        node = nodes[index]
        parts = node.args if isinstance(node, ast.Call) else None
        if isinstance(node, ast.BinOp):
            parts = [node.left, node.right]
        elif isinstance(node, ast.Subscript):
            parts = [node.value]
        for part in parts or []:
            if isinstance(part, ast.Starred):
                continue
            new = copy.deepcopy(tree)
            target = [
                n for n in ast.walk(new) if isinstance(n, (ast.Call, ast.BinOp, ast.Subscript))
            ]
            _replace(new, target[index], copy.deepcopy(part))
            yield _unparse(new)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
                        return


def _unparse(tree: ast.AST) -> str:
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def minimize(source: str, seed: int, spec: Spec, order: int, log: Callable = print) -> str:
    wanted = failure(source, seed, spec, order)
    if wanted is None:
        raise SystemExit("the program does not fail")
    log(f"failure: {wanted}")
    changed = True
    while changed:
        changed = False
        # the smallest candidates first: whole blocks go before single operations
        for smaller in sorted(set(candidates(source)), key=len):
            if len(smaller) < len(source) and failure(smaller, seed, spec, order) == wanted:
                source, changed = smaller, True
                log(f"  {len(source)} characters")
                break
    return source


def main(argv: list[str]) -> None:
    target = argv[0]
    if target.isdigit():
        seed = int(target)
        order = 2 if seed % SECOND_ORDER_EVERY == 0 else 1
        source, spec, _ = write(seed, second_order=order == 2)
    else:
        source = Path(target).read_text()
        seed, order = int(argv[1]), int(argv[2])
        spec = eval(argv[3], {"Spec": Spec})  # as the failure message prints it
    print(f"# seed {seed}, order {order}, {spec}")
    print(minimize(source, seed, spec, order))


if __name__ == "__main__":
    main(sys.argv[1:])
