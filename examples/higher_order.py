"""Forward mode and higher-order derivatives: jvp, jacobian, hessian, hvp, grad of grad.

Run: python examples/higher_order.py
"""

import numpy as np

import srcad


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def wave(t):
    h = t
    for _k in range(3):
        h = np.sin(h) * 1.5
    return h


def main() -> None:
    x, v = np.array([0.5, -0.3, 1.2]), np.array([1.0, 0.0, -1.0])
    value, slope = srcad.jvp(rosenbrock, (x,), (v,))
    print("rosenbrock:", value, " directional derivative:", slope)
    print("Hessian:\n", srcad.hessian(rosenbrock)(x))
    print("Hessian-vector product:", srcad.hvp(rosenbrock, (x,), (v,)))
    print("Jacobian of its gradient (reverse over reverse):")
    print(srcad.jacobian(srcad.grad(rosenbrock), mode="rev")(x))
    d3 = srcad.grad(srcad.grad(srcad.grad(wave)))
    print("third derivative of a loop:", d3(0.4))
    print("the generated forward-mode code:")
    print(srcad.source(rosenbrock, mode="fwd"))


if __name__ == "__main__":
    main()
