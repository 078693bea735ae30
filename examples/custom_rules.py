"""Rule authoring: give srcad the derivatives of an op it cannot read.

`fast_softplus` stands for a compiled kernel (a C extension, a SciPy function): srcad
does not look inside it once rules are registered. Run: python examples/custom_rules.py
"""

import numpy as np

import srcad
from srcad.adjoints.registry import d, xp


def fast_softplus(x):
    """log(1 + exp(x)), computed stably (imagine this is compiled code)."""
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


@srcad.adjoint(fast_softplus)  # reverse mode: d[x] from d[y]
def fast_softplus_adjoint(y, x):
    d[x] = d[y] / (1 + xp.exp(-x))


@srcad.tangent(fast_softplus)  # forward mode: d[y] from d[x]
def fast_softplus_tangent(y, x):
    d[y] = d[x] / (1 + xp.exp(-x))


def loss(w, x):
    return np.sum(fast_softplus(x @ w))


def main() -> None:
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=3), rng.normal(size=(5, 3))
    print(srcad.source(srcad.grad(loss)))
    error = srcad.check_grad(loss, w, x, modes=("fwd", "rev"), order=2)
    print(f"both modes and second order agree with finite differences (max error {error:.1e})")


if __name__ == "__main__":
    main()
