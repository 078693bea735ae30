"""The transformation pipeline, in order, on one screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

import srcad.adjoints  # noqa: F401  (registers the rules)
from srcad.transform.anno import getanno, setanno
from srcad.transform.codegen import compile_source, to_source
from srcad.transform.fence import fence
from srcad.transform.forward import forward
from srcad.transform.frontend import MISSING, Source, parse_function
from srcad.transform.naming import Namer
from srcad.transform.normalize.anf import anf, local_names
from srcad.transform.normalize.aux import split_aux
from srcad.transform.normalize.builtin_names import rename_builtin_variables
from srcad.transform.normalize.chains import split_chained_assignments
from srcad.transform.normalize.contexts import inline_errstate, wrap_errstate
from srcad.transform.normalize.derivatives import fold_derivatives
from srcad.transform.normalize.desugar import desugar, keep_augmented_dtypes
from srcad.transform.normalize.dicts import lower_dicts
from srcad.transform.normalize.display_arguments import flatten_display_arguments
from srcad.transform.normalize.factors import split_factors
from srcad.transform.normalize.functional import lower_functional
from srcad.transform.normalize.grown_tuples import grown_tuples_as_lists
from srcad.transform.normalize.helper_results import split_helper_results
from srcad.transform.normalize.helpers import inline_helpers
from srcad.transform.normalize.inplace import lower_setitems
from srcad.transform.normalize.jumps import lower_jumps
from srcad.transform.normalize.lists import join_displays, lower_lists
from srcad.transform.normalize.local_functions import inline_local_functions, lambdas_as_defs
from srcad.transform.normalize.loops import (
    desugar_loops,
    unroll_constant_loops,
    unroll_function_loops,
)
from srcad.transform.normalize.mutating_calls import lower_mutating_calls
from srcad.transform.normalize.namespaces import unbind_namespaces
from srcad.transform.normalize.none_returns import refuse_none_returns
from srcad.transform.normalize.number_params import guard_number_params
from srcad.transform.normalize.objects import call_methods
from srcad.transform.normalize.option_forms import drop_copy_options, rewrite_option_forms
from srcad.transform.normalize.outputs import split_outputs
from srcad.transform.normalize.pytrees import expand_pytree_params, refuse_unknown_structures
from srcad.transform.normalize.rename import rename
from srcad.transform.normalize.sequences import stack_list_arguments, stack_literals
from srcad.transform.normalize.spreads import spread_known_keys
from srcad.transform.normalize.stars import spread_stars
from srcad.transform.normalize.trying import lower_try, restore_try
from srcad.transform.normalize.tuples import name_indexed_displays, split_tuples
from srcad.transform.normalize.unpacking import lower_unpacking, pick_results, pieces_as_lists
from srcad.transform.normalize.updates import functional_updates
from srcad.transform.ops import popped_names
from srcad.transform.optimize import optimize
from srcad.transform.rebind import namespace_reads, rebind
from srcad.transform.reverse import reverse
from srcad.transform.snapshot import Snapshot, replaced, stored


@dataclass
class Generated:
    """A compiled derivative and the source it was compiled from.

    ``function`` is the gradient function (grad mode) or the forward function (vjp mode,
    returning ``(value, residuals)``); ``backward`` is ``(residuals, cotangent) -> grads``.
    """

    function: Callable
    source: str
    params: list[str]
    wrt: list[str]
    snapshot: Snapshot
    backward: Callable | None = None
    #: whether ``function`` returns ``(value, grads)`` (grad mode; gradient mode when the
    #: output was not proved a scalar) rather than the gradients alone
    returns_value: bool = True


def _lambdas_lowered(tree: gast.FunctionDef, source: Source, namer: Namer) -> gast.FunctionDef:
    """The comprehensions a lambda given to your function brought into the code written out
    (``apply(lambda t: sum(w * t for w in ws), x)``) lowered, as the others were."""
    comprehensions = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
    if any(isinstance(n, comprehensions) for n in gast.walk(tree)):
        tree = lower_functional(tree, source, namer)
    return tree


def normalize(
    source: Source,
    namer: Namer,
    has_aux: bool = False,
    structures: dict | None = None,
    outputs: bool = False,
    inline: bool = False,
) -> gast.FunctionDef:
    """The function in A-normal form with structured control flow: one operation per
    statement, loops over ranges, no break/continue/early return, one name per value in
    straight-line code."""
    tree = join_displays(lambdas_as_defs(call_methods(source.tree, source)), source)
    # (before your functions are written out)
    tree = spread_known_keys(tree, structures or {}, namer)
    tree = lower_functional(tree, source, namer)  # map, comprehensions, reduce
    tree = unroll_function_loops(tree, source)
    tree = inline_local_functions(tree, source, namer)
    tree = name_indexed_displays(tree, source, namer)
    if inline:
        # ``args = (a, b); f(*args)``: the star spread first, so the call can be written out
        tree = spread_stars(split_tuples(tree, namer, builtin_len=source.lookup("len") is len))
    # (at first order only a helper given a function is written out: its own derivative
    # could not call it)
    helpers, names = inline_helpers(tree, source, namer, given_functions=not inline)
    if inline or helpers:
        # (in the helpers written out)
        tree = _lambdas_lowered(tree, source, namer)
        tree = name_indexed_displays(join_displays(tree, source), source, namer)
        setanno(tree, "inlined", helpers)
        setanno(tree, "inlined_names", names)
    tree = lower_try(tree, source, namer)
    if structures:
        setanno(tree, "leaves", expand_pytree_params(tree, source, namer, structures))
    lower_mutating_calls(tree, source, namer)
    tree = rewrite_option_forms(tree, source)
    tree = split_helper_results(split_factors(tree, source, namer), source, namer)
    tree = grown_tuples_as_lists(tree, source, namer)
    tree = split_tuples(tree, namer, builtin_len=source.lookup("len") is len)
    # after split_tuples: a tuple name read whole is its display (``sum(t)``, ``np.array(t)``)
    tree = stack_literals(tree, source, namer)
    tree = spread_stars(flatten_display_arguments(tree, source, namer))
    tree = guard_number_params(fence(tree, source), source, namer)
    tree = drop_copy_options(tree, source)
    tree = refuse_none_returns(tree, source, namer)
    tree = pieces_as_lists(tree, source, namer)  # (before the passes of lists)
    tree = lower_dicts(unroll_constant_loops(desugar(tree)), source, namer)
    source.lists = lower_lists(tree, source, namer)
    tree = stack_list_arguments(tree, source, namer, source.lists)
    keep_augmented_dtypes(tree, source, namer)
    setanno(tree, "inplace", lower_setitems(tree, source, namer))
    if has_aux:
        setanno(tree, "aux", split_aux(tree, source, namer))
    else:
        split_outputs(tree, source, namer, allowed=outputs)
    tree = desugar_loops(tree, source, namer)
    tree = lower_unpacking(pick_results(tree, source, namer), source, namer)
    tree = lower_jumps(tree, namer)
    tree = anf(tree, namer)
    return rename(tree, namer, source.lists, popped_names(tree.body, source, local_names(tree)))


def transform(
    func: Callable,
    wrt: tuple[int, ...],
    single: bool,
    mode: str,
    has_aux: bool = False,
    structures: tuple = (),
    facts: tuple | None = None,
    masked: bool = False,
    inline: bool = False,
) -> Generated:
    """Transform ``func`` into its derivative: reverse mode (``mode``: grad or vjp) or
    forward mode (``mode="jvp"``: the function takes the parameters, then one tangent per
    ``wrt`` leaf, and returns ``(value, tangent)``).

    With ``has_aux`` the function returns ``(output, aux)``; the generated function returns
    ``((value, aux), grads)`` (grad) or ``((value, aux), residuals)`` (vjp).
    ``structures`` pairs parameter indices with pytree structures: those parameters become
    one parameter per leaf, and the gradients come back flat, leaf by leaf.
    ``facts`` specializes reverse mode for NumPy arrays and Python numbers: one
    ``(ndim, full)`` per positional argument (``full``: no axis of length 1); the code then
    says ``np`` and ``math`` instead of asking the arguments for their namespace.
    ``masked``: the cotangents (reverse) or tangents (forward) passed in may be zero where
    a caller's selection did not choose a value; the elementwise rules reading them then
    multiply zero-safely.
    """
    source = parse_function(func)
    unbind_namespaces(source)
    # before any pass reads the body: a tape's pushes inside the block are the body's
    source.tree, errstate = inline_errstate(source.tree, source)
    namer = Namer.for_tree(source.tree)
    source.tree = split_chained_assignments(rename_builtin_variables(source.tree, namer))
    params = source.params
    if source.tree.args.vararg is not None:
        params = [*params, source.tree.args.vararg.id]  # *args, when called with a count
    if source.tree.args.kwarg is not None:
        params = [*params, source.tree.args.kwarg.id]  # **kwargs, called with its keywords
    free = _free_names(source.tree, source)
    for name, obj in free.items():
        namer.bind_user_global(name, obj)
    fold_derivatives(source, namer)
    functional_updates(source.tree, source, namer)
    by_name = {params[k]: treedef for k, treedef in structures}
    refuse_unknown_structures(source, [params[i] for i in wrt if params[i] not in by_name])
    tree = normalize(source, namer, has_aux, by_name, mode in ("vjp", "jvp"), inline)
    errstate = _with_helpers_errstate(errstate, getanno(tree, "inlined_errstate") or [], source)
    # the helpers' free names written out: rebound like the function's own (their
    # snapshot entries are the helpers' globals, recorded by the inliner)
    extra = {n: o for n, o in (getanno(tree, "inlined_names") or {}).items() if n not in free}
    for name, obj in extra.items():
        namer.bind_user_global(name, obj)
    rebound = {**free, **extra}
    leaves = getanno(tree, "leaves") or {}
    wrt_names = [leaf for i in wrt for leaf in leaves.get(params[i], [params[i]])]
    if mode == "jvp":
        result = forward(tree, source, namer, wrt_names, masked)
    else:
        ranks = dict(zip(params, facts)) if facts is not None else None
        result = reverse(tree, source, namer, wrt_names, single, mode, ranks, masked, inline)
    functions = result if isinstance(result, list) else [result]
    texts = []
    reads = [entry for entries in source.reads.values() for entry in entries]
    inner = getattr(func, "__srcad_snapshot__", None)
    if inner is not None:  # a derivative's code differentiated again: still current too
        reads.append((inner, "", inner))
    if not structures and mode != "jvp":
        # the function's own default values are given to the code once compiled: written
        # out, ``buf=np.zeros(3)`` would run when the code is compiled, in its namespace
        _defaults_given_later(functions[0])
    for function in functions:
        optimize(function, namer)
        restore_try(function, getanno(tree, "attempted"), namer)
        rebind(function, source, namer, rebound, numpy_only=facts is not None)
        if errstate is not None:
            wrap_errstate(function, errstate, namer)
        reads.extend(_namespace_reads(function, source, namer))
        texts.append(to_source(function))
    text = "\n".join(texts)
    if facts is not None:
        text = _specialized_for(params, facts) + text
    label = f"{mode} of {source.name} ({source.filename}:{source.first_line})"
    scope = compile_source(text, namer.globals, label)
    compiled = [scope[f.name] for f in functions]
    if not structures and mode != "jvp":
        compiled[0].__defaults__ = func.__defaults__
        compiled[0].__kwdefaults__ = func.__kwdefaults__
    backward = compiled[1] if len(compiled) > 1 else None
    returns_value = getanno(functions[0], "returns_value") is not False
    snapshot = Snapshot(func, free, reads, getanno(tree, "inlined") or ())
    return Generated(compiled[0], text, params, wrt_names, snapshot, backward, returns_value)


def _defaults_given_later(function: gast.FunctionDef) -> None:
    """Each default value of ``function``'s signature that is not a constant a placeholder
    (see :func:`transform`); constants stay, to be read."""

    def placeholder(default: gast.expr | None) -> gast.expr | None:
        number = isinstance(default, gast.UnaryOp) and isinstance(default.operand, gast.Constant)
        if default is None or isinstance(default, gast.Constant) or number:
            return default
        return gast.Constant(value=None, kind=None)

    args = function.args
    args.defaults = [placeholder(d) for d in args.defaults]
    args.kw_defaults = [placeholder(d) for d in args.kw_defaults]


def _with_helpers_errstate(
    errstate: dict | None, helpers: list[tuple[dict, Callable, gast.Call]], source: Source
) -> dict | None:
    """The ``np.errstate`` settings the derivative runs under: the function's, or those of
    the helpers written out in it (one setting for all, as for one function's blocks)."""
    for settings, helper, call in helpers:
        if errstate is None:
            errstate = settings
        elif settings != errstate:
            raise source.error(
                f"{helper.__name__}, written out here for a derivative of a derivative, runs "
                f"under np.errstate({_settings(settings)}), and this function under "
                f"np.errstate({_settings(errstate)}); srcad runs a derivative under one "
                "setting: use the same settings",
                call,
            )
    return errstate


def _settings(settings: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in settings.items())


def _namespace_reads(function: gast.FunctionDef, source: Source, namer: Namer) -> list:
    """Where the NumPy and math functions the generated code calls by name are stored;
    refused when one is not NumPy's (math's) own any more (monkeypatched)."""
    reads = []
    for module, attr in namespace_reads(function, namer):
        now = replaced(module, attr)
        if now is not None:
            prefix = "np" if module.__name__ == "numpy" else module.__name__
            raise source.error(
                f"{prefix}.{attr} has been replaced (by {now!r}) since srcad was imported; "
                f"the derivative code srcad generates here calls {prefix}.{attr} by name and "
                "would run the replacement. Restore it, or call your function under a name "
                "of its own",
                source.tree,
            )
        reads.extend(stored(module, attr))
    return reads


def _specialized_for(params: list[str], facts: tuple) -> str:
    """A comment line saying what arguments specialized code is for."""
    parts = []
    for name, (ndim, full) in zip(params, facts):
        if ndim == 0 and full:
            parts.append(f"{name} a number or 0-d")
        else:
            parts.append(f"{name} {ndim}-d" + ("" if full else " (may have length-1 axes)"))
    return "# for NumPy arrays and Python numbers: " + ", ".join(parts) + "\n"


def _free_names(tree: gast.FunctionDef, source: Source) -> dict[str, Any]:
    local = local_names(tree)
    free = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id not in local:
            obj = source.lookup(node.id)
            if obj is MISSING:
                raise source.error(f"name '{node.id}' is not defined", node)
            free[node.id] = obj
    return free
