"""To-be-recorded: which overwritten values the backward pass needs, and how it gets them.

A name defined once outside any loop or branch is *stable*: its value is still in its
variable when the backward pass needs it, so nothing is recorded. A needed name that is
overwritten (assigned in a loop, in a branch, or more than once) is either recomputed in
the backward pass, when it is a cheap view or comparison of stable values, or its old value
is pushed on the tape before each assignment and popped back after that assignment's
adjoint. Branch decisions and trip counts are names like any other here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from srcad.adjoints.registry import COPY, GETITEM, Attribute, Operator
from srcad.transform.anno import getanno
from srcad.transform.frontend import Source
from srcad.transform.ops import COMPARE, DYNAMIC_GETITEM, classify, operand_names

_RECOMPUTABLE = {
    GETITEM, DYNAMIC_GETITEM, COMPARE, COPY, Attribute("T"), Attribute("shape"),
    Operator("Add"), Operator("Sub"), Operator("Mult"), Operator("Div"), Operator("USub"),
}  # fmt: skip


@dataclass
class Definition:
    """One assignment of a name, with the loops around it."""

    stmt: gast.Assign
    loops: list[gast.stmt]
    nested: bool
    block: list[gast.stmt]
    root: list[gast.stmt]
    path: tuple = ()


@dataclass
class Recording:
    """The plan: statements that push/pop, statements recomputed in the backward pass."""

    stable: frozenset[str]
    pushed: set[int] = field(default_factory=set)
    recomputed: set[int] = field(default_factory=set)
    pushed_names: set[str] = field(default_factory=set)


def definitions(body: list[gast.stmt]) -> dict[str, list[Definition]]:
    """Every assignment of every name in ``body``, with its enclosing loops and position."""
    found: dict[str, list[Definition]] = {}
    for stmt, loops, nested, block, path in positions(body):
        if isinstance(stmt, gast.Assign) and not getanno(stmt, "no_push"):
            for node in gast.walk(stmt.targets[0]):
                if isinstance(node, gast.Name):
                    found.setdefault(node.id, []).append(
                        Definition(stmt, loops, nested, block, body, path)
                    )
    return found


def positions(body: list[gast.stmt]):
    """Each statement with its loops, whether nested, its block and its path of positions.

    A path is a tuple of (index, arm) steps; arm 0/1 are an if's body/else.
    """

    def visit(stmts, loops, nested, path):
        for k, stmt in enumerate(stmts):
            here = path + ((k, 0),)
            yield stmt, loops, nested, stmts, here
            if isinstance(stmt, gast.If):
                yield from visit(stmt.body, loops, True, path + ((k, 0),))
                yield from visit(stmt.orelse, loops, True, path + ((k, 1),))
            elif isinstance(stmt, (gast.For, gast.While)):
                yield from visit(stmt.body, loops + [stmt], True, path + ((k, 0),))

    yield from visit(body, [], False, ())


def may_precede(a: tuple, b: tuple) -> bool:
    """Whether the statement at path ``a`` can run before the one at ``b`` (no loops)."""
    for (ka, arm_a), (kb, arm_b) in zip(a, b):
        if ka != kb:
            return ka < kb
        if arm_a != arm_b:
            return False  # the two arms of one if: never both
    return len(a) < len(b)


def _old_value_needed(definition: Definition, readers: set[int], places: dict[int, tuple]) -> bool:
    """Whether the backward pass of some statement that may run before this assignment
    (or around it, in a loop they share) reads the value this assignment overwrites."""
    own_loops = {id(loop) for loop in definition.loops}
    for reader in readers:
        if reader == id(definition.stmt):
            if definition.loops:
                return True  # next time round, this statement's own value is the old one
            continue
        loops, path = places[reader]
        if own_loops & {id(loop) for loop in loops}:
            return True
        if may_precede(path, definition.path):
            return True
    return False


def loop_targets(body: list[gast.stmt]) -> set[str]:
    """Variables of range loops (the backward loop sets them again)."""
    names = set()
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            names.add(node.target.id)
        if isinstance(node, (gast.If, gast.For, gast.While)):
            todo.extend(node.body + node.orelse)
        elif isinstance(node, gast.FunctionDef):
            todo.extend(node.body)
    return names


def stable_names(body: list[gast.stmt], params: list[str]) -> frozenset[str]:
    """Names whose single value lives from its definition to the end of the function."""
    defs = definitions(body)
    stable = {p for p in params if p not in defs}
    stable |= {name for name, found in defs.items() if len(found) == 1 and not found[0].nested}
    return frozenset(stable - loop_targets(body))


def plan_recording(
    body: list[gast.stmt],
    stable: frozenset[str],
    need: set[str],
    source: Source,
    local: set[str],
    readers: dict[str, set[int]],
) -> Recording:
    """Decide, for each needed name, whether it is stable, recomputed or pushed.

    ``stable`` is the caller's set (stable_names, less memory updated in place);
    ``readers`` maps a name to the statements whose backward code reads it.
    """
    plan = Recording(stable)
    defs = definitions(body)
    targets = loop_targets(body)
    places = {id(stmt): (loops, path) for stmt, loops, _, _, path in positions(body)}
    for name in sorted(need - stable - targets):
        found = defs.get(name, [])
        if len(found) == 1 and _recomputable(found[0], stable, source, local):
            plan.recomputed.add(id(found[0].stmt))
            continue
        for definition in found:
            if _old_value_needed(definition, readers.get(name, set()), places):
                plan.pushed.add(id(definition.stmt))
                plan.pushed_names.add(name)
    return plan


def _recomputable(
    definition: Definition, stable: frozenset[str], source: Source, local: set
) -> bool:
    """A cheap op inside a loop, reading only stable names and loop indices, whose value is
    used only in its own block: the backward pass recomputes it at the top of that block."""
    stmt = definition.stmt
    if not isinstance(stmt.targets[0], gast.Name) or not definition.loops:
        return False
    if getanno(stmt, "counter"):
        return False  # a while loop's trip counter also changes where the analysis cannot see
    op = classify(stmt.value, source, local)
    if op.key not in _RECOMPUTABLE:
        return False
    indices = {lp.target.id for lp in definition.loops if isinstance(lp, gast.For)}
    reads = operand_names(stmt.value) & local
    if not reads <= stable | indices:
        return False
    name = stmt.targets[0].id
    inside = {id(n) for s in definition.block for n in gast.walk(s)}
    return all(id(n) in inside for n in _loads_of(definition.root, name))


def _loads_of(body: list[gast.stmt], name: str) -> list[gast.Name]:
    return [
        n
        for n in gast.walk(gast.Module(body=body, type_ignores=[]))
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
    ]
