"""An array from outside the function (a global, a module's, an object's field) changed in
place through a local name: its other readers, a function reading the global, are not
srcad's to see. Until stop 33 the gradient ignored the update, in both modes ([1, 1, 1]
where finite differences give [5, 1, 1]), and where the name was not read again the update
was dropped from the generated code; now it is refused by name."""

import types

import numpy as np
import pytest

import srcad

TABLE = np.zeros(3)
MODULE = types.SimpleNamespace(TABLE=np.zeros(3))
X = np.array([0.5, 0.3, 0.2])


def table_total():
    return np.sum(TABLE * TABLE) + np.sum(MODULE.TABLE * MODULE.TABLE)


class Holder:
    def __init__(self):
        self.table = TABLE

    def rows(self):
        return self.table

    @staticmethod
    def shared():
        return TABLE


class Own:
    def __init__(self):
        self.W = np.linspace(0.5, 1.5, 3)

    def weights(self):
        return self.W


def through_a_global(x):
    w = TABLE
    w[0] = x[0] * 2.0
    return table_total() + np.sum(x)


def through_a_view_of_a_global(x):
    w = TABLE[:2]
    w += x[:2]
    return table_total() + np.sum(x)


def through_a_module(x):
    w = MODULE.TABLE
    w[0] = x[0] * 2.0
    return table_total() + np.sum(x)


def through_a_field(x):
    h = Holder()
    w = h.table
    w[0] = x[0] * 2.0
    return table_total() + np.sum(x)


def through_getattr(x):
    h = Holder()
    w = h.table
    w[0] = x[0] * 2.0
    return table_total() + np.sum(x)


def through_a_method(x):
    h = Holder()
    w = h.rows()
    w[0] = x[0] * 2.0
    return table_total() + np.sum(w)


def through_a_staticmethod(x):
    h = Holder()
    w = h.shared()
    w[0] = x[0] * 2.0
    return table_total() + np.sum(x)


def through_an_argument(x, h):
    w = h.table
    w[0] = x[0] * 2.0
    return table_total() + np.sum(x)


REFUSED = [
    through_a_global,
    through_a_view_of_a_global,
    through_a_module,
    through_a_field,
    through_getattr,
    through_a_method,
    through_a_staticmethod,
]


@pytest.fixture(autouse=True)
def _zeros():
    TABLE[:] = 0.0
    MODULE.TABLE[:] = 0.0
    yield
    TABLE[:] = 0.0
    MODULE.TABLE[:] = 0.0


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("f", REFUSED, ids=lambda f: f.__name__)
def test_an_array_from_outside_changed_in_place_is_refused(f, mode):
    with pytest.raises(srcad.TransformError, match="from outside the function|reads from outside"):
        srcad.check_grad(f, X.copy(), modes=(mode,))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_through_an_argument_object(mode):
    with pytest.raises(srcad.TransformError, match=r"from outside the function \('h': an object"):
        srcad.check_grad(through_an_argument, X.copy(), Holder(), wrt=0, modes=(mode,))


def copied_first(x):
    w = TABLE.copy()
    w[0] = x[0] * 2.0
    return np.sum(w * w) + table_total()


def an_object_with_arrays_of_its_own(x):
    h = Own()
    w = h.weights()
    w += x
    return np.sum(w * w)


def test_copies_and_objects_with_arrays_of_their_own_are_differentiated():
    g = srcad.grad(copied_first)(X.copy())
    assert np.allclose(g, [8 * X[0], 0.0, 0.0])
    srcad.check_grad(copied_first, X.copy(), modes=("rev", "fwd"), order=2)
    own = np.linspace(0.5, 1.5, 3)
    assert np.allclose(srcad.grad(an_object_with_arrays_of_its_own)(X.copy()), 2 * (own + X))
    srcad.check_grad(an_object_with_arrays_of_its_own, X.copy(), modes=("rev", "fwd"))
    assert not TABLE.any()  # (nothing outside was changed)
