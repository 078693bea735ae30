"""Lists and dicts built in the differentiated function, and local functions called from
comprehensions (issue #16): both modes against finite differences, and what is refused."""

import numpy as np
import pytest

import srcad

X = np.array([0.3, -0.7, 1.1])
RNG = np.random.default_rng(16)


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


# ---- lists: constant elements, second names, extend --------------------------------------


def append_zeros(x):
    parts = []
    parts.append(x * 2.0)
    parts.append(np.zeros(2))
    parts.append(x * 3.0)
    return np.sum(parts[0] * parts[2]) + np.sum(parts[1])


def constant_first(x):
    parts = [np.ones(2)]
    parts.append(np.ones(4))
    parts.append(np.sin(x))
    return np.sum(parts[2] ** 2) + np.sum(parts[0]) * np.sum(x)


def constants_in_a_loop(x):
    parts = []
    for i in range(3):
        parts.append(x * (i + 1.0))
        parts.append(np.zeros(i + 1))
    return np.sum(parts[0] * parts[4]) + np.sum(np.stack([parts[2], parts[4]]) ** 2)


def alias_append(x):
    xs = [x * 2.0]
    ys = xs
    ys.append(x * 3.0)
    return np.sum(xs[1] * xs[0])


def alias_read(x):
    xs = []
    ys = xs
    xs.append(np.sin(x))
    xs.append(x * x)
    return np.sum(ys[0] * ys[1]) + len(ys)


def alias_in_a_loop(x):
    total = 0.0
    for k in range(2):
        xs = [x * (k + 1.0)]
        ys = xs
        ys.append(np.cos(x))
        total = total + np.sum(xs[0] * xs[1])
    return total


def second_name_of_a_finished_list(x):
    if x[0] > 0:
        xs = [x[i] for i in range(2)]
    else:
        xs = [x[i] * 2.0 for i in range(2)]
    ys = xs
    return np.sum(np.stack(ys)) * sum(xs)


def through_a_local_helper(x):
    def push(items, v):
        items.append(v * v)
        return items

    xs = [x]
    ys = push(xs, np.sin(x))
    return np.sum(xs[1] * ys[0])


def pushed_in_a_loop(x):
    def push(items, v):
        items.append(v * v)
        return 0.0

    xs = [x]
    for i in range(3):
        push(xs, x * x[i])
    return np.sum(np.stack(xs) ** 2)


def second_name_in_a_loop(x):
    xs = [x]
    for i in range(3):
        ys = xs
        ys.append(x * i)
    return np.sum(np.stack(xs) ** 2)


def appended_in_branches(x):
    xs = []
    for i in range(3):
        if x[i] > 0:
            xs.append(x * x[i])
        else:
            xs.append(np.zeros(3))
    return np.sum(np.stack(xs) ** 2)


def nested_lists(x):
    xs = [x, x * 3.0]
    ys = [xs, np.sin(x)]
    return np.sum(ys[0][1] * ys[1])


def extended(x):
    xs = [x]
    xs.extend([x * 2.0, np.zeros(3)])
    xs += [np.sin(x)]
    more = [x * x, np.ones(3)]
    xs.extend(more)
    xs += more
    return np.sum(np.stack(xs) ** 2)


def extended_by_rows(A):
    rows = [A[0] * 2.0]
    rows.extend(A)
    return np.sum(np.stack(rows) ** 3)


LIST_CASES = [
    (append_zeros, (X,)),
    (constant_first, (vec(3),)),
    (constants_in_a_loop, (vec(3),)),
    (alias_append, (X,)),
    (alias_read, (vec(3),)),
    (alias_in_a_loop, (vec(3),)),
    (through_a_local_helper, (vec(3),)),
    (second_name_of_a_finished_list, (np.array([0.5, -0.2, 0.1]),)),
    (second_name_of_a_finished_list, (np.array([-0.5, -0.2, 0.1]),)),
    (pushed_in_a_loop, (vec(3),)),
    (second_name_in_a_loop, (vec(3),)),
    (appended_in_branches, (np.array([0.5, -0.3, 0.8]),)),
    (nested_lists, (vec(3),)),
    (extended, (vec(3),)),
    (extended_by_rows, (vec(2, 3),)),
]


@pytest.mark.parametrize("fn, args", LIST_CASES, ids=[c[0].__name__ for c in LIST_CASES])
def test_lists_in_both_modes(fn, args):
    srcad.check_grad(fn, *args, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", [append_zeros, alias_append, extended])
def test_lists_forward_over_reverse(fn):
    srcad.check_grad(fn, vec(3), order=2, modes=("fwd",))


def test_constant_element_keeps_the_others_in_place():
    # the constant's gradient slot is taken off, so each element gets its own gradient
    assert np.allclose(srcad.grad(append_zeros)(X), 12.0 * X)
    value, tangent = srcad.jvp(append_zeros, (X,), (np.ones(3),))
    assert np.isclose(value, append_zeros(X)) and np.isclose(tangent, np.sum(12.0 * X))


# ---- dicts --------------------------------------------------------------------------------


def dict_store(x):
    d = {}
    d["a"] = x * 2
    return np.sum(d["a"] ** 2)


def dict_display(x):
    d = {"a": x * 2.0, "b": np.sin(x)}
    d["a"] += d["b"]
    d["c"] = d["a"] * d["b"]
    return np.sum(d["c"]) + np.sum(d.get("b", 0.0)) + np.sum(d.get("z", x))


def dict_items(x):
    d = {"w": x * x}
    d["v"] = np.tanh(x)
    total = 0.0
    for key, value in d.items():
        total = total + np.sum(value) * len(key)
    for value in d.values():
        total = total + np.sum(value**2)
    for key in d:
        total = total + len(d) * ("v" in d) * (key == "w")
    return total


def dict_in_a_loop(x):
    total = 0.0
    for i in range(3):
        d = {"s": x[i]}
        d["s"] = d["s"] * x[(i + 1) % 3]
        total = total + d["s"]
    return total


def dict_updated_in_a_loop(x):
    d = {"acc": 0.0}
    for i in range(3):
        d["acc"] += np.sin(x[i]) * x[i]
    return d["acc"]


def dict_in_branches(x):
    d = {}
    if x[0] > 0:
        d["a"] = x * 2.0
    else:
        d["a"] = np.cos(x)
    return np.sum(d["a"] * x)


def dict_call(x):
    d = dict(a=x, b=x * x)
    d["a"] = d["a"] * d["b"]
    return np.sum(d["a"])


def dict_of_lists(x):
    d = {"xs": [x]}
    d["xs"].append(x * 2.0)
    return np.sum(np.stack(d["xs"]) ** 2)


def dict_of_dicts(x):
    d = {"inner": {"u": x * 3.0}}
    return np.sum(d["inner"]["u"] * x)


DICT_CASES = [
    (dict_store, (X,)),
    (dict_display, (vec(3),)),
    (dict_items, (vec(3),)),
    (dict_in_a_loop, (vec(3),)),
    (dict_updated_in_a_loop, (vec(3),)),
    (dict_in_branches, (np.array([0.4, 0.2, -0.3]),)),
    (dict_in_branches, (np.array([-0.4, 0.2, -0.3]),)),
    (dict_of_dicts, (vec(3),)),
    (dict_call, (vec(3),)),
    (dict_of_lists, (vec(3),)),
]


@pytest.mark.parametrize("fn, args", DICT_CASES, ids=[c[0].__name__ for c in DICT_CASES])
def test_dicts_in_both_modes(fn, args):
    srcad.check_grad(fn, *args, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", [dict_store, dict_display, dict_updated_in_a_loop])
def test_dicts_at_second_order(fn):
    srcad.check_grad(fn, vec(3), order=2, modes=("rev", "fwd"))


def dict_as_aux(x):
    aux = {}
    aux["double"] = x * 2.0
    aux["n"] = 3
    return np.sum(x**2), aux


def dict_output(x):
    d = {"a": np.sin(x)}
    d["b"] = x * x
    return d


def test_dict_returned_as_aux_and_as_output():
    grads, aux = srcad.grad(dict_as_aux, has_aux=True)(X)
    assert np.allclose(grads, 2 * X)
    assert set(aux) == {"double", "n"} and np.allclose(aux["double"], 2 * X) and aux["n"] == 3
    out, pullback = srcad.vjp(dict_output, X)
    assert list(out) == ["a", "b"]
    (g,) = pullback({"a": np.ones(3), "b": np.ones(3)})
    assert np.allclose(g, np.cos(X) + 2 * X)


# ---- local functions in comprehensions ----------------------------------------------------


def local_in_listcomp(x):
    def h(v):
        return v * v

    return sum([np.sum(h(x[i])) for i in range(3)])


def lambda_in_generator(x):
    sq = lambda v: np.sin(v) * v  # noqa: E731
    return sum(sq(x[i]) for i in range(3) if i != 1)


def nested_comprehensions(x):
    def h(v):
        w = v * 2.0
        return np.tanh(w)

    pairs = [h(x[i]) * h(x[j]) for i in range(3) for j in range(i)]
    rows = [sum([h(x[j]) * x[i] for j in range(i + 1)]) for i in range(3)]
    return sum(pairs) + sum(rows)


def comprehension_inside_local(x):
    def h(v):
        return v * 3.0

    def total(v):
        return sum([h(v[i]) for i in range(v.shape[0])])

    g = lambda v: sum([total(v) * v[k] for k in range(2)])  # noqa: E731
    return g(x) + total(x * x)


def closure_over_loop_variable(x):
    def scaled(v):
        return v * k

    total = 0.0
    for k in range(1, 4):  # noqa: B007 (scaled reads k)
        total = total + np.sum(scaled(x) ** 2)
    return total


def comprehension_variable_shadows(x):
    i = 2
    ys = [x[i] * 2.0 for i in range(3)]
    zs = [x[j] for j in range(i)]
    return np.sum(np.stack(ys)) * x[i] + sum(zs)


def comprehension_in_headers(x):
    total = 0.0
    for v in [np.sin(x[i]) for i in range(3)]:
        total = total + v * v
    if sum([x[i] for i in range(3)]) > -10.0:
        total = total * 2.0
    return total


LOCAL_CASES = [
    (local_in_listcomp, (X,)),
    (lambda_in_generator, (vec(3),)),
    (nested_comprehensions, (vec(3),)),
    (comprehension_inside_local, (vec(3),)),
    (closure_over_loop_variable, (vec(3),)),
    (comprehension_variable_shadows, (vec(3),)),
    (comprehension_in_headers, (vec(3),)),
]


@pytest.mark.parametrize("fn, args", LOCAL_CASES, ids=[c[0].__name__ for c in LOCAL_CASES])
def test_local_functions_in_comprehensions_in_both_modes(fn, args):
    srcad.check_grad(fn, *args, modes=("rev", "fwd"))


def test_local_function_in_comprehension_forward_over_reverse():
    srcad.check_grad(local_in_listcomp, vec(3), order=2, modes=("fwd",))


# ---- refused, with the user's line --------------------------------------------------------


def set_list_element(x):
    xs = [x, x * 2.0]
    xs[0] = np.sin(x)
    return np.sum(xs[0] * xs[1])


def insert_into_list(x):
    xs = [x]
    xs.insert(0, x * 2.0)
    return np.sum(xs[0])


def pop_from_list(x):
    xs = [x, x * 2.0]
    v = xs.pop()
    return np.sum(v)


def delete_from_list(x):
    xs = [x, x * 2.0]
    del xs[0]
    return np.sum(xs[0])


def alias_rebound(x):
    xs = [x]
    ys = xs
    ys = [x * 2.0]
    ys.append(x)
    return np.sum(xs[0] * ys[1])


def alias_read_before(x):
    xs = [x]
    total = 0.0
    for _ in range(2):
        if total > 0:
            total = total + np.sum(ys[0])  # noqa: F821 (bound by the previous turn)
        ys = xs
        ys.append(x * 2.0)
    return total


def append_to_parameter(xs, x):
    xs.append(x)
    return np.sum(xs[0] * xs[1])


def _append_into(items, v):
    items.append(v * 2.0)
    return 0.0


def helper_appends(x):
    parts = [x]
    _append_into(parts, x)
    return np.sum(parts[0] * parts[1])


def helper_appends_with_result(x):
    parts = [x]
    z = _append_into(parts, x)
    return np.sum(parts[0] * parts[1]) + z


def list_inside_a_list_grows(x):
    xs = [x]
    ys = [xs, x]
    xs.append(x * 3.0)
    return np.sum(ys[0][1])


def joined_lists(x):
    xs = [x]
    ys = xs + [x * 2.0]
    return np.sum(ys[0] * ys[1])


def comprehension_in_while(x):
    n = 0
    while sum([n for _ in range(2)]) < 4:
        n = n + 1
    return np.sum(x) * n


def dict_variable_key(x):
    d = {}
    d["a"] = x
    k = "a"
    return np.sum(d[k])


def dict_passed_on(x):
    d = {"a": x * 2.0}
    d["b"] = x
    return np.sum(list(d.values())[0])


def dict_maybe_key(x):
    d = {}
    if x[0] > 0:
        d["a"] = x
    return np.sum(d.get("a", x * 2.0))


def dict_missing_key(x):
    d = {"a": x}
    return np.sum(d["b"])


def dict_pop(x):
    d = {"a": x}
    return np.sum(d.pop("a"))


def dict_made_twice(x):
    d = {"a": x}
    d = {"a": x * 2.0}
    d["b"] = x
    return np.sum(d["a"] * d["b"])


def scaled_sum(x, options):
    return np.sum(x * options["scale"])


def constant_options(x):
    options = {"scale": 2.0}
    return scaled_sum(np.sin(x), options) + len(options)


def test_a_dict_never_changed_is_left_as_it_is():
    # passed whole to a helper: not made variables, and differentiated as before
    srcad.check_grad(constant_options, vec(3), modes=("rev", "fwd"))


REFUSED = [
    (set_list_element, "element of the list 'xs'", 3),
    (insert_into_list, "'xs.insert' of a list built in the function", 3),
    (pop_from_list, "'xs.pop' of a list built in the function", 3),
    (delete_from_list, "'del' statements", 3),
    (alias_rebound, "a second name", 3),
    (alias_read_before, "a second name", 7),
    (helper_appends, "called for its effect with a differentiated value", 3),
    (helper_appends_with_result, "'items.append' changes a list this function did not", 2),
    (joined_lists, "joining or repeating lists", 3),
    (list_inside_a_list_grows, "put inside another container", 3),
    (comprehension_in_while, "comprehension in a while condition", 3),
    (dict_variable_key, "needs a constant key", 5),
    (dict_passed_on, "in a way srcad cannot follow", 4),
    (dict_maybe_key, "may or may not hold the key 'a'", 5),
    (dict_missing_key, "has no key 'b'", 3),
    (dict_pop, "in a way srcad cannot follow", 3),
    (dict_made_twice, "assigned more than once", 3),
]


def _line_of(fn, offset):
    return fn.__code__.co_firstlineno + offset - 1


@pytest.mark.parametrize("fn, message, line", REFUSED, ids=[c[0].__name__ for c in REFUSED])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_refused_with_file_line_and_caret(fn, message, line, mode):
    with pytest.raises(srcad.TransformError, match=message) as info:
        if mode == "rev":
            srcad.grad(fn)(vec(3))
        else:
            srcad.jvp(fn, (vec(3),), (vec(3),))
    text = str(info.value)
    callee = _append_into if "items.append" in message else fn
    assert f"test_containers.py:{_line_of(callee, line)}" in text
    assert "^" in text


def test_appending_to_a_parameter_is_refused():
    with pytest.raises(srcad.TransformError, match="did not build"):
        srcad.grad(append_to_parameter, wrt=1)([X], X)


def appends_with_a_constant_gradient(x):
    outs = [x]
    for _ in range(2):
        outs.append(np.tanh(x) * x)
    outs.append(np.zeros(3))
    return np.sum(np.stack(outs))


def test_reverse_over_reverse_where_the_list_gradient_is_constant():
    srcad.check_grad(appends_with_a_constant_gradient, vec(3), order=2, modes=("rev", "fwd"))


def test_reverse_over_reverse_of_a_varying_list_gradient():
    # was refused: the gradient's drop_gradient had no adjoint (issue #17)
    srcad.check_grad(append_zeros, vec(3), order=2, modes=("rev", "fwd"))


# ---- loops over constant keys of a dict the function builds (issue #17) ----


def loop_over_keys(x):
    d = {"a": x, "b": 2 * x}
    s = 0.0
    for k in ("a", "b"):
        s = s + np.sum(np.sin(d[k]))
    return s * len(k)  # k keeps its last value, as in Python


def generator_over_keys(x):
    d = {"a": x, "b": 2 * x}
    return sum(np.sum(d[k] ** 2) for k in ("a", "b"))


@pytest.mark.parametrize("f", [loop_over_keys, generator_over_keys])
def test_a_dict_read_with_keys_from_a_literal(f):
    x = np.array([0.5, 1.0, 2.0])
    assert srcad.check_grad(f, x, modes=("rev", "fwd")) < 1e-6
    assert srcad.check_grad(f, x, order=2, modes=("rev", "fwd")) < 1e-6
