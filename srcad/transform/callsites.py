"""Call sites of user functions and of methods of objects, rewritten before the reverse
pass: ``y = f(a, b)`` becomes ``y, f_res = f_vjp.forward(a, b)``, and the backward pass
calls ``f_vjp.backward(f_res, dy)`` (srcad/transform/calls.py holds the handles).
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from srcad.adjoints.registry import Method
from srcad.transform import build
from srcad.transform.analyses.activity import Activity
from srcad.transform.anno import getanno, setanno
from srcad.transform.calls import (
    BuildInProgress,
    CallVJP,
    CheckpointCall,
    Checkpointed,
    CustomCall,
    CustomJVP,
    CustomJVPCall,
    CustomVJP,
    DictResults,
    FlatCall,
    MethodVJP,
    flat_call,
    own_signature,
    user_callee,
)
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.helper_results import returned_keys, returns_dict
from srcad.transform.normalize.walk import all_statements
from srcad.transform.ops import USER_CALL, Op, classify, operand_names, tape_call
from srcad.transform.templates import refuse_unknown_stars


@dataclass
class UserCall:
    """A call to a user function, rewritten to call its transformed forward function."""

    handle: str
    residuals: str
    arguments: list[gast.expr]
    where: gast.AST
    #: the names the call's result is bound to (several when it is unpacked)
    outputs: list[str]


def rewrite_user_calls(
    body: list[gast.stmt],
    source: Source,
    namer: Namer,
    local: set[str],
    activity: Activity,
    tapes: set[str] = frozenset(),
) -> bool:
    """``y = f(a, b)`` with ``f`` a user function and ``y`` active becomes
    ``y, f_res = f_vjp.forward(a, b)``; the backward pass calls ``f_vjp.backward``."""
    changed = False
    handles: dict[tuple, str] = {}
    for stmt in all_statements(body):
        if not isinstance(stmt, gast.Assign):
            continue
        outputs = unpacked_names(stmt.targets[0])
        if not any(map(activity.active, outputs)) or tape_call(stmt, tapes, "pop") is not None:
            continue
        op = classify(stmt.value, source, local)
        where = getanno(stmt, "expr") or stmt
        if not isinstance(stmt.targets[0], gast.Name) and op.key is not USER_CALL:
            continue
        target = stmt.targets[0]
        if is_method_of_object(op, activity):
            _rewrite_method_call(stmt, op, namer, activity, source, where)
            changed = True
            continue
        if op.key is not USER_CALL:
            continue
        func = user_callee(op.callee)[0]
        wrt, arguments, structures = differentiated_arguments(op, source, activity, where)
        key = (id(op.callee), tuple(wrt), structures)
        make = getattr(op.callee, "srcad_handle", None)
        if key not in handles and make is not None:
            handles[key] = namer.bind_global(
                make("vjp", tuple(wrt)), f"{identifier(func.__name__)}_mixed"
            )
        if key not in handles and isinstance(op.callee, CustomVJP):
            handles[key] = namer.bind_global(
                CustomCall(op.callee, tuple(wrt)), f"{identifier(func.__name__)}_vjp"
            )
        if key not in handles and isinstance(op.callee, CustomJVP):
            handles[key] = namer.bind_global(
                CustomJVPCall(op.callee, tuple(wrt)), f"{identifier(func.__name__)}_vjp"
            )
        if key not in handles:
            callee = op.callee.fun if isinstance(op.callee, Checkpointed) else op.callee
            handle = CallVJP(callee, tuple(wrt), structures)
            try:
                handle.generated()  # transform now, so errors in the callee surface here
            except BuildInProgress:
                pass  # a recursive call: the callee is being transformed right now
            suffix = "_vjp"
            if isinstance(op.callee, Checkpointed):
                handle, suffix = CheckpointCall(handle), "_checkpoint"
            handles[key] = namer.bind_global(handle, f"{identifier(func.__name__)}{suffix}")
        handle_name = handles[key]
        count = getattr(namer.globals[handle_name], "result_count", None)
        returned = count() if count is not None else None
        if returns_dict(func) and not isinstance(op.callee, DictResults):
            raise _dict_result(op, func, source, where)
        if returned is not None and returned != len(outputs):
            raise source.error(
                f"{op.label} returns {returned} values; unpack them into as many names "
                f"({', '.join(f'v{k}' for k in range(returned))} = ...)",
                where,
            )
        residuals = namer.fresh_temp(f"_{identifier(func.__name__)}_residuals")
        forward = build.attr(build.load(handle_name), "forward")
        stmt.targets = [build.tuple_([target, build.store(residuals)], gast.Store())]
        stmt.value = gast.Call(func=forward, args=op.args, keywords=stmt.value.keywords)
        setanno(stmt, "user_call", UserCall(handle_name, residuals, arguments, where, outputs))
        changed = True
    return changed


def _dict_result(op: Op, func, source: Source, where: gast.AST) -> Exception:
    """Why reverse mode does not take the dict the call returns."""
    if returned_keys(func) is None:
        why = "only with the same constant keys at every return, no container among its values"
    elif isinstance(op.callee, (CustomVJP, CustomJVP)):
        why = "through a custom rule yet"
    elif isinstance(op.callee, Checkpointed):
        why = "through srcad.checkpoint yet"
    elif getattr(op.callee, "srcad_handle", None) is not None:
        why = "from a recursion whose depth depends on data, at second order, yet"
    else:
        why = "only bound to a name (d = f(...)), not read inside an expression"
    return source.error(
        f"{op.label} returns a dict, which reverse mode takes from a function of yours {why}; "
        "return a tuple and unpack it instead (return mean, logvar; then mean, logvar = f(...))",
        where,
    )


def unpacked_names(target: gast.expr) -> list[str]:
    """``[y]`` for ``y = ...``, ``[a, b]`` for ``a, b = ...``; ``[]`` for other targets."""
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, gast.Tuple) and all(isinstance(e, gast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    return []


def differentiated_arguments(
    op: Op, source: Source, activity: Activity, where: gast.AST
) -> tuple[list[int], list[gast.expr], tuple]:
    """For a call to a user function: the differentiated parameter indices (not counting
    arguments a partial or bound method supplies), the argument nodes passed to them, and
    the pytree structure that packs ``*args`` when the callee has them."""
    flat = flat_call(op.callee)
    if flat is not None:
        return _flat_call_arguments(op, flat, source, activity, where)
    func, leading, fixed = user_callee(op.callee)
    refuse_unknown_stars(op.args, op.label, source, where)
    signature = own_signature(func)
    params = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if None in op.keywords:
        # (``f(x, **cfg)`` of an argument not differentiated: its keys known only at run time)
        raise source.error(
            f"{op.label}: '**' of an argument, beside differentiated values, is not supported; "
            "pass its entries by name (f(x, scale=cfg['scale'])), or differentiate with "
            "respect to the argument too (its keys are then known)",
            where,
        )
    try:
        bound = signature.bind(*leading, *op.args, **{**fixed, **op.keywords})
    except TypeError as exc:
        raise source.error(f"{op.label}: {exc}", where) from None
    wrt: list[int] = []
    arguments: list[gast.expr] = []
    structures: tuple = ()
    star = next((p.name for p in signature.parameters.values() if p.kind is p.VAR_POSITIONAL), None)
    stars = next((p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None)
    extra = bound.arguments.get(star, ()) if star else ()
    leaf = ("leaf",)
    # *args, **kwargs: specialized to this call's count and keywords (in sorted order, as
    # call_arguments passes them); each differentiated as a whole
    packed: dict[str, tuple[int, list]] = {}
    if star:
        if not all(isinstance(v, gast.AST) for v in extra):
            raise source.error(
                f"{op.label}: a functools.partial binding positional arguments of a function "
                "taking *args is not supported yet; call the function itself",
                where,
            )
        structures += ((len(params), ("tuple", tuple, len(extra), (leaf,) * len(extra))),)
        packed[star] = (len(params), list(extra))
    if stars:
        given = bound.arguments.get(stars, {})
        keys = tuple(sorted(given))
        index = len(params) + bool(star)
        structures += ((index, ("dict", dict, keys, (leaf,) * len(keys))),)
        packed[stars] = (index, [given[k] for k in keys])
    for name, value in bound.arguments.items():
        if name in packed:
            index, values = packed[name]
            if any(operand_names(v) & activity.varied for v in values if isinstance(v, gast.AST)):
                wrt.append(index - len(leading))
                arguments.extend(values)
            continue
        if not isinstance(value, gast.AST) or not operand_names(value) & activity.varied:
            continue
        if name not in params:
            raise _keyword_only(op, name, source, where)
        wrt.append(params.index(name) - len(leading))
        arguments.append(value)
    return wrt, arguments, structures


def _keyword_only(op: Op, name: str, source: Source, where: gast.AST) -> Exception:
    """The error for a differentiable value given as a '*' or keyword-only argument."""
    return source.error(
        f"{op.label}: a differentiable value passed as '*' or keyword-only argument "
        f"'{name}' is not supported yet",
        where,
    )


def _flat_call_arguments(
    op: Op, flat: FlatCall, source: Source, activity: Activity, where: gast.AST
) -> tuple[list[int], list[gast.expr], tuple]:
    """:func:`differentiated_arguments` for a call passing containers leaf by leaf (a plain
    function's): a container is differentiated as a whole, every leaf passed on, when any
    leaf is."""
    params = [
        p.name
        for p in own_signature(flat.fun).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    given = list(enumerate(flat.groups(op.args)))
    for name, node in op.keywords.items():
        if not operand_names(node) & activity.varied:
            continue
        if name not in params:
            raise _keyword_only(op, name, source, where)
        given.append((params.index(name), [node]))
    wrt: list[int] = []
    arguments: list[gast.expr] = []
    for index, group in sorted(given, key=lambda entry: entry[0]):
        if any(operand_names(node) & activity.varied for node in group):
            wrt.append(index)
            arguments.extend(group)
    return wrt, arguments, flat.structures


def identifier(name: str) -> str:
    """``name`` usable inside a generated identifier (``<lambda>`` becomes ``lambda``)."""
    return "".join(c for c in name if c.isalnum() or c == "_") or "f"


def is_method_of_object(op, activity: Activity) -> bool:
    """``obj.f(...)`` with no rule for ``.f`` on an object that is not differentiated, given
    a differentiated argument: the object's class decides at run time which Python function
    runs. (Given none, what it returns is a constant in both modes.)"""
    return (
        isinstance(op.key, Method)
        and op.rule is None
        and not op.nondifferentiable
        and isinstance(op.args[0], gast.Name)
        and op.args[0].id not in activity.varied
        and any(
            operand_names(arg) & activity.varied for arg in [*op.args[1:], *op.keywords.values()]
        )
    )


def _rewrite_method_call(stmt, op, namer: Namer, activity: Activity, source, where) -> None:
    target = stmt.targets[0].id
    call = stmt.value
    for kw in call.keywords:
        if operand_names(kw.value) & activity.varied:
            raise source.error(
                f"{op.label}: pass differentiable values to a method positionally", where
            )
    positions = tuple(k for k, arg in enumerate(call.args) if operand_names(arg) & activity.varied)
    arguments = [call.args[k] for k in positions]
    handle = MethodVJP(op.key.name, positions, where=source.location(where))
    handle = namer.bind_global(handle, f"{op.key.name}_vjp")
    residuals = namer.fresh_temp(f"_{op.key.name}_residuals")
    forward = build.attr(build.load(handle), "forward")
    stmt.targets = [build.tuple_([build.store(target), build.store(residuals)], gast.Store())]
    stmt.value = gast.Call(func=forward, args=[op.args[0], *call.args], keywords=call.keywords)
    setanno(stmt, "user_call", UserCall(handle, residuals, arguments, where, [target]))
