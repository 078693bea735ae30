"""Reverse mode: the primal statements, then each active statement's adjoint in reverse order."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import gast

from srcad.errors import NoAdjointError
from srcad.runtime import accumulate
from srcad.transform import build
from srcad.transform.analyses.activity import Activity, analyse_activity
from srcad.transform.analyses.shapes import SameShape, analyse_shapes
from srcad.transform.anno import getanno, setanno
from srcad.transform.frontend import Source
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import local_names
from srcad.transform.ops import UNKNOWN, classify, operand_names
from srcad.transform.templates import ADJOINT, TemplateError, bind, instantiate, stored_params


@dataclass
class _Backward:
    """State of one reverse sweep: adjoint names so far and the statements emitted."""

    source: Source
    namer: Namer
    activity: Activity
    shapes: SameShape
    xp_name: str
    adjoints: dict[str, str] = field(default_factory=dict)
    out: list[gast.stmt] = field(default_factory=list)

    def adjoint_of(self, name: str) -> str:
        return self.adjoints[name]

    def contribute(self, target: gast.expr, value: gast.expr, origin: gast.AST) -> None:
        """Add ``value`` to the adjoint of ``target``: first contribution assigns."""
        varied = operand_names(target) & self.activity.varied
        if not varied:
            return
        if not isinstance(target, gast.Name):
            raise self.source.error(
                "the gradient flows into a list or expression here, which is not supported "
                "yet; pass arrays as separate arguments (e.g. np.stack([a, b]) for arrays)",
                origin,
            )
        name = target.id
        if name in self.adjoints:
            adj = self.adjoints[name]
            value = build.binop(build.load(adj), gast.Add(), value)
        else:
            adj = self.adjoints[name] = self.namer.adjoint(name)
        self.emit(build.assign(adj, value))

    def emit(self, stmt: gast.stmt) -> None:
        setanno(stmt, "pure", not isinstance(stmt, gast.Expr))
        setanno(stmt, "generated", True)
        self.out.append(stmt)


class _ReadAdjoints(gast.NodeTransformer):
    """Replace ``d[y]`` reads with the adjoint's name; elide unbroadcasts shapes rule out."""

    def __init__(self, sweep: _Backward, result: gast.Name, unbroadcast_name: str) -> None:
        self.sweep = sweep
        self.result = result
        self.unbroadcast_name = unbroadcast_name

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        if isinstance(node.value, gast.Name) and node.value.id == ADJOINT:
            return build.load(self.sweep.adjoint_of(node.slice.id))
        return self.generic_visit(node)

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, gast.Name)
            and func.id == self.unbroadcast_name
            and len(node.args) == 2
            and self.sweep.shapes.same(node.args[1], self.result)
        ):
            return node.args[0]
        return node


def _adjoint_statement(sweep: _Backward, stmt: gast.Assign, local: set[str]) -> None:
    source = sweep.source
    target = stmt.targets[0]
    where = getanno(stmt, "expr") or stmt
    op = classify(stmt.value, source, local)
    rule = op.rule
    if rule is None:
        if op.key is UNKNOWN and op.label in ("Tuple", "List", "Dict"):
            raise source.error(
                "building a container of differentiable values is not supported yet", where
            )
        raise source.error(
            f"no adjoint rule for {op.label}: srcad cannot differentiate this call; register "
            "one with srcad.adjoints.adjoint",
            where,
            NoAdjointError,
        )
    try:
        bound = bind(rule, op.args, op.keywords)
    except TemplateError as exc:
        raise source.error(
            f"{op.label}: arguments not supported for differentiation ({exc})", where
        ) from None
    stored = stored_params(rule)
    for param, node in bound.items():
        if param not in stored and operand_names(node) & sweep.activity.varied:
            raise source.error(
                f"the gradient of {op.label} with respect to its argument '{param}' is not "
                "implemented",
                where,
            )
    try:
        body = instantiate(rule, build.load(target.id), bound, sweep.namer, sweep.xp_name)
    except TemplateError as exc:
        raise source.error(f"{op.label}: {exc}", where) from None
    unbroadcast_name = sweep.namer.bind_global(accumulate.unbroadcast, "unbroadcast")
    reader = _ReadAdjoints(sweep, build.load(target.id), unbroadcast_name)
    for tstmt in body:
        if isinstance(tstmt, gast.Assign):
            dest = tstmt.targets[0]
            value = reader.visit(tstmt.value)
            if isinstance(dest, gast.Subscript) and getattr(dest.value, "id", None) == ADJOINT:
                sweep.contribute(dest.slice, value, where)
                continue
            sweep.emit(gast.Assign(targets=[reader.visit(dest)], value=value, type_comment=None))
        else:
            sweep.emit(reader.visit(tstmt))


def reverse(
    tree: gast.FunctionDef,
    source: Source,
    namer: Namer,
    wrt: list[str],
    single: bool,
    mode: str = "grad",
) -> gast.FunctionDef:
    """Build the gradient function of the normalized ``tree`` with respect to ``wrt``.

    ``mode="grad"`` returns ``(value, grads)``; ``mode="vjp"`` returns ``(value, pullback)``
    where ``pullback(cotangent)`` returns the gradients.
    """
    body = list(tree.body)
    ret = body.pop()
    output = ret.value.id
    local = local_names(tree)
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            op = classify(stmt.value, source, local)
            pure = op.key is not UNKNOWN and (op.rule is not None or op.nondifferentiable)
            setanno(stmt, "pure", pure)
        else:
            setanno(stmt, "pure", False)
    activity = analyse_activity(body, source, local, wrt, output)
    shapes = analyse_shapes(body, source, local, output if mode == "grad" else None)
    sweep = _Backward(source, namer, activity, shapes, namer.fresh("xp"))
    seed = sweep.adjoints[output] = namer.adjoint(output)
    if mode == "grad":
        sweep.emit(build.assign(seed, build.const(1.0)))
    last_origin = None
    for stmt in reversed(body):
        if not isinstance(stmt, gast.Assign):
            continue
        target = stmt.targets[0]
        if not isinstance(target, gast.Name):
            names = [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]
            if any(activity.active(n) and n in sweep.adjoints for n in names):
                raise source.error(
                    "unpacking a differentiable value into several names is not supported yet",
                    getanno(stmt, "expr") or stmt,
                )
            continue
        if not activity.active(target.id) or target.id not in sweep.adjoints:
            continue
        origin = getanno(stmt, "origin")
        if origin is not last_origin and origin is not None:
            sweep.emit(build.comment("grad of: " + source.line_text(origin)))
            last_origin = origin
        _adjoint_statement(sweep, stmt, local)
    grads = []
    for name in wrt:
        if name not in sweep.adjoints:
            zeros = namer.bind_global(accumulate.zeros_like, "zeros_like")
            sweep.adjoints[name] = namer.adjoint(name)
            sweep.emit(build.assign(sweep.adjoints[name], build.call(zeros, build.load(name))))
        grads.append(build.load(sweep.adjoints[name]))
    grads_expr = grads[0] if single else build.tuple_(grads)
    params = [a.id for a in tree.args.posonlyargs + tree.args.args]
    namespace = namer.bind_global(_array_namespace(), "array_namespace")
    xp_def = build.assign(sweep.xp_name, build.call(namespace, *map(build.load, params)))
    setanno(xp_def, "pure", False)  # kept until rebind knows whether NumPy calls use it
    new = copy.copy(tree)
    setanno(new, "xp_name", sweep.xp_name)
    if mode == "grad":
        new.name = namer.fresh("value_and_grad_" + tree.name)
        new.body = [xp_def, *body, *sweep.out, build.ret(build.tuple_([ret.value, grads_expr]))]
    else:
        pullback_name = namer.fresh("pullback")
        args = gast.arguments(
            args=[gast.Name(id=seed, ctx=gast.Param(), annotation=None, type_comment=None)],
            posonlyargs=[],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        )
        pullback = gast.FunctionDef(
            name=pullback_name,
            args=args,
            body=[*sweep.out, build.ret(grads_expr)],
            decorator_list=[],
            returns=None,
            type_comment=None,
            type_params=[],
        )
        new.name = namer.fresh("vjp_" + tree.name)
        new.body = [
            xp_def,
            *body,
            pullback,
            build.ret(build.tuple_([ret.value, build.load(pullback_name)])),
        ]
    return new


def _array_namespace():
    from srcad.runtime.backend import array_namespace

    return array_namespace
