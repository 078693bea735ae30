"""The public pytree utilities and classes registered with srcad.register_pytree_node."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import srcad

RNG = np.random.default_rng(18)
Pair = namedtuple("Pair", "a b")


@dataclasses.dataclass
class Box:
    x: np.ndarray
    y: float


class Layer:
    """A plain class made a pytree node: W and b are children, act is static aux data."""

    def __init__(self, W, b, act="tanh"):
        self.W, self.b, self.act = W, b, act


class Opaque:
    """Registered without names: srcad cannot map its attributes to children."""

    def __init__(self, W, b):
        self.W, self.b = W, b


srcad.register_pytree_node(
    Layer, lambda o: ((o.W, o.b), o.act), lambda act, c: Layer(*c, act=act), names=("W", "b")
)
srcad.register_pytree_node(Opaque, lambda o: ((o.W, o.b), None), lambda _, c: Opaque(*c))


def vec(*shape):
    return RNG.uniform(-1, 1, size=shape)


def layer_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def layer_loss_closed_grad(p, x):
    h = np.tanh(x @ p.W + p.b)
    dz = 2 * h * (1 - h**2)
    return x.T @ dz, dz.sum(axis=0)


TREES = [
    {"a": vec(2), "b": [vec(3), (1.5, vec(2, 2))]},
    Pair(vec(2), {"c": 2.0}),
    Box(vec(3), 0.5),
    [Layer(vec(2, 2), vec(2), act="relu"), ()],
    (),
    3.0,
]


@pytest.mark.parametrize("tree", TREES)
def test_flatten_unflatten_round_trip(tree):
    leaves, treedef = srcad.tree_flatten(tree)
    same = srcad.tree_leaves(tree)
    assert len(same) == len(leaves) and all(a is b for a, b in zip(leaves, same))
    rebuilt = srcad.tree_unflatten(treedef, leaves)
    again, treedef2 = srcad.tree_flatten(rebuilt)
    assert treedef2 == treedef
    assert all(a is b for a, b in zip(again, leaves))
    assert type(rebuilt) is type(tree)


def test_leaf_order_and_registered_aux_kept():
    tree = {"b": 1.0, "a": [2.0, Layer(3.0, 4.0, act="relu")]}
    assert srcad.tree_leaves(tree) == [1.0, 2.0, 3.0, 4.0]
    doubled = srcad.tree_map(lambda v: 2 * v, tree)
    assert doubled["a"][1].act == "relu"
    assert srcad.tree_leaves(doubled) == [2.0, 4.0, 6.0, 8.0]


def test_tree_map_over_several_trees():
    a = {"x": 1.0, "y": Pair(2.0, 3.0)}
    b = {"x": 10.0, "y": Pair(20.0, 30.0)}
    out = srcad.tree_map(lambda u, v, w: u + v * w, a, b, b)
    assert out == {"x": 101.0, "y": Pair(402.0, 903.0)}


@pytest.mark.parametrize(
    "other",
    [{"x": 1.0}, {"x": 1.0, "y": (2.0, 3.0)}, {"x": 1.0, "y": Pair(2.0, [3.0])}, [1.0, 2.0]],
)
def test_tree_map_refuses_another_structure(other):
    with pytest.raises(ValueError, match="one structure"):
        srcad.tree_map(lambda u, v: u + v, {"x": 1.0, "y": Pair(2.0, 3.0)}, other)


def test_tree_unflatten_refuses_a_wrong_leaf_count():
    _, treedef = srcad.tree_flatten({"x": 1.0, "y": [2.0, 3.0]})
    with pytest.raises(ValueError, match="3 leaves, but 2"):
        srcad.tree_unflatten(treedef, [1.0, 2.0])
    with pytest.raises(TypeError, match="tree_flatten"):
        srcad.tree_unflatten("not a treedef", [1.0])


def test_register_refuses_bad_input():
    with pytest.raises(TypeError, match="class"):
        srcad.register_pytree_node(Layer(1.0, 2.0), lambda o: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="already"):
        srcad.register_pytree_node(Layer, lambda o: ((), None), lambda a, c: None)
    with pytest.raises(ValueError, match="already"):
        srcad.register_pytree_node(Box, lambda o: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="callable"):
        srcad.register_pytree_node(type("T", (), {}), None, lambda a, c: None)
    with pytest.raises(TypeError, match="identifiers"):
        srcad.register_pytree_node(
            type("U", (), {}), lambda o: ((), None), lambda a, c: None, names=["not a name"]
        )


def test_flatten_refuses_unhashable_aux_and_wrong_names():
    class Unhashable:
        def __init__(self, W):
            self.W = W

    srcad.register_pytree_node(Unhashable, lambda o: ((o.W,), [1]), lambda a, c: Unhashable(*c))
    with pytest.raises(TypeError, match="hashable"):
        srcad.tree_flatten(Unhashable(1.0))

    class Misnamed:
        def __init__(self, W, b):
            self.W, self.b = W, b

    # names in the wrong order would map p.W to b's leaf: refused at flatten time
    srcad.register_pytree_node(
        Misnamed, lambda o: ((o.b, o.W), None), lambda a, c: Misnamed(*c[::-1]), names=("W", "b")
    )
    with pytest.raises(ValueError, match="is not Misnamed.W"):
        srcad.grad(lambda p: np.sum(p.W))(Misnamed(vec(2), vec(2)))


def test_grad_of_a_registered_class_is_an_instance_of_it():
    p, x = Layer(vec(3, 2), vec(2), act="relu"), vec(4, 3)
    g = srcad.grad(layer_loss)(p, x)
    assert type(g) is Layer and g.act == "relu"
    dW, db = layer_loss_closed_grad(p, x)
    np.testing.assert_allclose(g.W, dW, rtol=1e-12)
    np.testing.assert_allclose(g.b, db, rtol=1e-12)
    srcad.check_grad(layer_loss, p, x, modes=("rev", "fwd"))


def test_value_and_grad_jvp_and_vjp_of_a_registered_class():
    p, x = Layer(vec(3, 2), vec(2)), vec(4, 3)
    value, g = srcad.value_and_grad(layer_loss)(p, x)
    assert value == pytest.approx(layer_loss(p, x))
    t = Layer(vec(3, 2), vec(2))
    out, tangent = srcad.jvp(layer_loss, (p, x), (t, np.zeros_like(x)))
    assert out == pytest.approx(layer_loss(p, x))
    assert tangent == pytest.approx(np.sum(g.W * t.W) + np.sum(g.b * t.b), rel=1e-10)
    out, pullback = srcad.vjp(layer_loss, p, x)
    gp, gx = pullback(2.0)
    assert type(gp) is Layer
    np.testing.assert_allclose(gp.W, 2 * g.W, rtol=1e-12)
    np.testing.assert_allclose(gp.b, 2 * g.b, rtol=1e-12)


def test_registered_class_nested_in_a_dict_and_list():
    def loss(params, x):
        h = x
        for layer in params["layers"]:
            h = np.tanh(h @ layer.W + layer.b)
        return np.sum(h**2) * params["scale"]

    params = {"layers": [Layer(vec(3, 3), vec(3)), Layer(vec(3, 2), vec(2))], "scale": 0.7}
    srcad.check_grad(loss, params, vec(5, 3), modes=("rev", "fwd"))
    g = srcad.grad(loss)(params, vec(5, 3))
    assert [type(layer) for layer in g["layers"]] == [Layer, Layer]


def test_unmappable_reads_of_a_registered_class_are_refused():
    p, x = Layer(vec(3, 2), vec(2)), vec(4, 3)

    def indexed(p, x):
        return np.sum(x @ p[0])

    def other_attribute(p, x):
        return np.sum(x @ p.W) * len(p.act)

    def whole(p, x):
        return np.sum(x @ np.asarray(p))

    def length(p, x):
        return np.sum(x @ p.W) * len(p)

    def loop(p, x):
        total = 0.0
        for w in p:
            total = total + np.sum(w)
        return total

    with pytest.raises(srcad.TransformError, match="indexed here"):
        srcad.grad(indexed)(p, x)
    with pytest.raises(srcad.TransformError, match="'act' is not a child.*names: W, b"):
        srcad.grad(other_attribute)(p, x)
    with pytest.raises(srcad.TransformError, match="used as a whole"):
        srcad.grad(whole)(p, x)
    with pytest.raises(srcad.TransformError, match="len.. of a registered"):
        srcad.grad(length)(p, x)
    with pytest.raises(srcad.TransformError, match="loop over a registered"):
        srcad.grad(loop)(p, x)


def test_a_class_registered_without_names_is_opaque_to_attribute_reads():
    def loss(o, x):
        return np.sum(x @ o.W + o.b)

    with pytest.raises(srcad.TransformError, match="'W' is not a child.*none given"):
        srcad.grad(loss)(Opaque(vec(3, 2), vec(2)), vec(4, 3))
    # with respect to another argument it is an ordinary, undifferentiated object
    g = srcad.grad(loss, wrt=1)(Opaque(vec(3, 2), vec(2)), vec(4, 3))
    assert g.shape == (4, 3)


def layer_out(p):
    return np.sin(p.W) * p.b


def split_out(p):
    return {"s": np.sin(p["W"]), "c": p["W"] * 2.0}


def squares(p):
    return np.sum(p["W"] ** 2) * 1.5


def test_jacobian_with_respect_to_a_registered_class():
    W, b = vec(2), vec(2) + 1.0
    jac = srcad.jacobian(layer_out)(Layer(W, b))
    assert isinstance(jac, Layer)
    assert np.allclose(jac.W, np.diag(np.cos(W) * b)) and np.allclose(jac.b, np.diag(np.sin(W)))


def test_jacobian_of_a_dict_output_with_respect_to_a_dict():
    W = vec(2)
    jac = srcad.jacobian(split_out)({"W": W})
    assert set(jac) == {"s", "c"}
    assert np.allclose(jac["s"]["W"], np.diag(np.cos(W)))
    assert np.allclose(jac["c"]["W"], 2.0 * np.eye(2))


def test_hessian_of_a_pytree_argument():
    h = srcad.hessian(squares)({"W": vec(2)})
    assert np.allclose(h["W"]["W"], 3.0 * np.eye(2))
    with pytest.raises(srcad.TransformError, match="one scalar"):
        srcad.hessian(split_out)({"W": vec(2)})


def test_registered_tangent_and_leaves_are_checked():
    p, x = Layer(vec(3, 2), vec(2)), vec(4, 3)
    with pytest.raises(ValueError, match="structure of its primal"):
        srcad.jvp(layer_loss, (p, x), ({"W": p.W, "b": p.b}, None))
    with pytest.raises(TypeError, match=r"p\['b'\].*int"):
        srcad.grad(layer_loss)(Layer(p.W, 3), x)
