"""The tapes of generated code differentiated again (#17): which pop takes which push.

Code differentiated again holds the tapes of the code it differentiates, each carrying
values of several kinds: arrays that vary, and integers, axes or zeros that do not. Each
pop is paired with the pushes it may take by following the tape's stack through the code
(srcad/transform/analyses/tape_pairs.py), so that a value that does not vary stays so when
it shares a tape with one that does, and a varied value that no useful pop takes back
needs no adjoint. Checked against central differences with the helpers of
test_third_order_rules.py, at first and second order in both modes and three times.
"""

import dataclasses

import gast
import numpy as np
import pytest
from opcheck import rand
from test_third_order_rules import (
    check_along_varying_directions,
    check_jvp_of_hessian,
    check_reverse_three_times,
)

import srcad
from srcad.adjoints.registry import _RULES, _TANGENTS, d, lookup, lookup_tangent
from srcad.runtime.tangents import concatenated_piece
from srcad.transform.analyses.tape_pairs import pair_tapes

W = np.random.default_rng(3).uniform(0.5, 1.5, size=4)
X = rand(4, low=-1.0, high=1.0) + 0.3


# ---- a varied value no useful pop takes back (fuzz seed 2400000) ----


def update_in_place(p):
    p[..., :1] = np.tanh(p[..., :1])
    return np.sum(p * np.cos(p))


grad_update_in_place = srcad.grad(update_in_place)


def through_a_gradient_updating_in_place(x):
    return np.sum(W * grad_update_in_place(np.sin(x)) ** 3)


def test_a_pushed_value_whose_pops_are_dropped_needs_no_adjoint():
    # the gradient of a function updating its argument in place, differentiated three
    # times more: an adjoint tape of the second derivative carries a varied value that
    # only dropped pops take; its adjoint was read off the third derivative's tape, where
    # those pops leave None ("None + float")
    f = through_a_gradient_updating_in_place
    srcad.check_grad(f, X, order=2, modes=("fwd", "rev"))
    check_reverse_three_times(f, (X,))
    check_jvp_of_hessian(f, (X,))
    check_along_varying_directions(f, (X,))


# ---- a constant saved beside varied values, its save split off (fuzz seed 2600280) ----


def branchy(p, t):
    if np.sum(p) > t:
        return np.tanh(p) * 2.0
    return p * 0.5 + 0.1


def zero_power_in_nested_whiles(x, y):
    b = y * x
    c = x + y
    u = np.sin(x) * y
    k1 = 0
    while k1 < 3:
        k1 = k1 + 1
        k2 = 0
        while k2 < 3 and np.sum(y) < 0.43:
            k2 = k2 + 1
            if np.sum(b) > 0.87:
                pass
            elif c[1].sum() > 0.97:
                b = np.tanh(branchy(y, -0.43)) + x
            else:
                u[0] = np.sum(np.cos(b)) * 0.26
        c = np.zeros_like(c) ** (1.5 + np.sin(c))
    return np.sum(b * c + u)


def test_a_constant_saved_beside_varied_values_stays_constant():
    # the gradient's tape, whose stack the pairing cannot follow here, carries the zeros
    # beside varied arrays, and an element of u saved by `saved(u, 0)`, which the code
    # differentiated again splits into a temporary pushed and another popped: the zeros
    # were taken to vary (with a zero tangent) because not every push was of a name
    # restored into that name; the power's base term 1.5 * 0 ** -0.5 * 0 was NaN
    x = np.array([[0.99965278, 0.39060031], [0.25702676, -0.97391422]])
    y = np.array([-0.07184903, -0.40444838])
    with np.errstate(divide="raise", invalid="raise"):
        srcad.check_grad(zero_power_in_nested_whiles, x, y, wrt=(0, 1), order=2, modes=("fwd",))


# ---- an integer off a tape that carries varied values ----


def shifted(x, k):
    """``x`` rolled by ``k`` places (an op whose integer parameter is not declared static)."""
    return np.roll(x, k)


@pytest.fixture
def shifted_rules():
    # no ``static=("k",)``: a varied ``k`` would be refused ("... with respect to its
    # argument 'k' is not implemented"); the rules call the op again, so they close under
    # differentiation
    @srcad.adjoint(shifted)
    def shifted_adjoint(y, x, k):
        d[x] = shifted(d[y], -k)

    @srcad.tangent(shifted)
    def shifted_tangent(y, x, k):
        d[y] = shifted(d[x], k)

    yield
    del _RULES[shifted], _TANGENTS[shifted]


def shifted_in_a_while(x):
    a = x * 1.0
    a[0] = a[0] * 0.5  # (a restore of part of an array on the same tape)
    k = 0
    while k < 2 and np.sum(a * a) < 50.0:
        k = k + 1
        a = shifted(np.sin(a), k) * x + 0.1
    return np.sum(W * a**3)


def shifted_in_a_branch_in_a_loop(x):
    a = x * 1.0
    k = 0
    for i in range(3):
        if np.sum(a) > 0.5 * i:
            k = k + i
            a = shifted(np.cos(a), k) * x
            a[1] = a[1] * 0.5
        else:
            a = a * np.sin(x)
    return np.sum(W * a**3)


@pytest.mark.parametrize("f", [shifted_in_a_while, shifted_in_a_branch_in_a_loop])
def test_an_integer_sharing_a_tape_with_arrays_does_not_vary(shifted_rules, f):
    # the shift is restored off the tape that restores the arrays; paired with its own
    # push it does not vary, so the rule's integer operand is never differentiated
    srcad.check_grad(f, X, order=2, modes=("fwd", "rev"))
    check_reverse_three_times(f, (X,))
    check_jvp_of_hessian(f, (X,))
    check_along_varying_directions(f, (X,))


@pytest.fixture
def piece_axis_not_static():
    # concatenate's gradient helper with its piece index and axis no longer declared
    # static (they once were, one by one, for this): paired with their pushes they stay
    # constant by themselves
    saved = {}
    for table, find in ((_RULES, lookup), (_TANGENTS, lookup_tangent)):
        rule = find(concatenated_piece)
        saved[id(table)] = (table, rule)
        table[concatenated_piece] = dataclasses.replace(rule, static=rule.static - {"i", "axis"})
    yield
    for table, rule in saved.values():
        table[concatenated_piece] = rule


def hstack_in_a_while(x):
    a = x * 1.0
    a[0] = a[0] * 0.5
    k = 0
    while k < 2 and np.sum(a * a) < 50.0:
        k = k + 1
        a = np.hstack([np.sin(a[:2]), a[2:] * x[2:]]) * x
    return np.sum(W * a**3)


def test_a_helpers_axis_off_a_tape_does_not_vary(piece_axis_not_static):
    # np.hstack in a loop, reverse mode three times, was refused: "the gradient of
    # concatenated_piece with respect to its argument 'axis' is not implemented"
    check_reverse_three_times(hstack_in_a_while, (X,))
    check_jvp_of_hessian(hstack_in_a_while, (X,))


def test_a_varied_integer_is_still_refused(shifted_rules):
    # the pairing keeps what does vary: a shift computed from x is refused, loudly
    def f(x):
        return np.sum(shifted(x, np.sum(x)) * W)

    with pytest.raises(srcad.TransformError, match="argument 'k'"):
        srcad.grad(f)(X)


# ---- the pairing itself ----


def _pairs(source: str) -> tuple[dict[str, set[str]], set[str]]:
    """Each pop's target (or "_" for a dropped pop) -> the names pushed by what it takes."""
    body = gast.parse(source).body
    pushes, pops = {}, {}
    for stmt in gast.walk(gast.Module(body=body, type_ignores=[])):
        call = getattr(stmt, "value", None)
        if not isinstance(stmt, (gast.Expr, gast.Assign)) or not isinstance(call, gast.Call):
            continue
        if getattr(call.func, "attr", None) == "push":
            pushes[id(stmt)] = call.args[0].id
        elif getattr(call.func, "attr", None) == "pop":
            pops[id(stmt)] = stmt.targets[0].id if isinstance(stmt, gast.Assign) else "_"
    found = pair_tapes(body, {"tape"})
    taken: dict[str, set[str]] = {}
    for pop, target in pops.items():
        taken.setdefault(target, set()).update(pushes[p] for p in found.pops.get(pop, ()))
    return taken, set(found.lost)


def test_pairs_through_loops_and_branches():
    taken, lost = _pairs(
        "tape = Tape()\n"
        "tape.push(a0)\n"
        "for i in range(n):\n"
        "    tape.push(k)\n"
        "    c = flag\n"
        "    if c:\n"
        "        tape.push(b)\n"
        "        tape.push(m)\n"
        "    tape.push(flag)\n"
        "    for j in range(p):\n"
        "        tape.push(q)\n"
        "for i in reversed(range(n)):\n"
        "    for j in range(p):\n"
        "        q1 = tape.pop()\n"
        "    flag = tape.pop()\n"
        "    t = flag\n"
        "    if t:\n"
        "        m1 = tape.pop()\n"
        "        b1 = tape.pop()\n"
        "    k1 = tape.pop()\n"
        "a1 = tape.pop()\n"
    )
    assert not lost
    assert taken == {
        "q1": {"q"}, "flag": {"flag"}, "m1": {"m"}, "b1": {"b"}, "k1": {"k"}, "a1": {"a0"}
    }  # fmt: skip


@pytest.mark.parametrize(
    "source",
    [
        # a loop that takes back what came before it, one value a turn
        "tape = Tape()\ntape.push(a)\ntape.push(b)\nfor i in range(2):\n    c = tape.pop()\n",
        # a branch's values taken back without a branch on the same decision
        "tape = Tape()\nif c:\n    tape.push(a)\n    tape.push(b)\nd1 = tape.pop()\n",
        # a turn cut short
        "tape = Tape()\nfor i in range(3):\n    tape.push(a)\n    if c:\n        break\n"
        "    tape.push(b)\nfor i in range(3):\n    b1 = tape.pop()\n    a1 = tape.pop()\n",
        # a loop's turn taken back on one side of a branch only
        "tape = Tape()\nfor i in range(2):\n    tape.push(a)\nfor i in range(2):\n"
        "    if c:\n        a1 = tape.pop()\n",
        # a tape passed on
        "tape = Tape()\ntape.push(a)\nrestore(x, 0, tape.pop())\n",
    ],
    ids=["loop-below", "fork-unmatched", "break", "undone-on-one-side", "passed-on"],
)
def test_what_the_code_does_not_say_is_not_followed(source):
    # there a pop may take any push of the tape (the analysis before pairing)
    assert _pairs(source)[1] == {"tape"}


@pytest.mark.parametrize(
    "op, params",
    [
        (np.roll, {"shift", "axis"}),
        (np.triu, {"k"}),
        (np.tril, {"k"}),
        (np.rollaxis, {"axis", "start"}),
        (np.sum, {"axis", "keepdims"}),
        (np.mean, {"axis", "keepdims"}),
        (np.prod, {"axis", "keepdims"}),
        (np.max, {"axis", "keepdims"}),
        (np.var, {"axis", "ddof", "keepdims"}),
        (np.std, {"axis", "ddof", "keepdims"}),
    ],
)
def test_integer_operands_of_linear_ops_are_static(op, params):
    # fuzz "a loop counter as a static operand" (seed 64: nested while loops with
    # continue/break, whose tapes the pairing cannot follow): a counter popped off such a
    # tape was taken to vary at second order, "the derivative of np.roll with respect to
    # its argument 'shift' is not implemented"
    assert params <= set(lookup(op).static)
    assert params <= set(lookup_tangent(op).static)


def test_a_slice_carries_no_derivative():
    # campaign seeds 2700001, 2700096, 2700189: ``x[..., k % 2:]`` with a loop counter
    # taken to vary at second order, "no tangent rule for slice"
    from srcad.adjoints.registry import is_nondifferentiable

    assert is_nondifferentiable(slice)
