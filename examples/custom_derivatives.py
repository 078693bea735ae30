"""Custom derivatives for your own functions, JAX-style: custom_vjp and custom_jvp.

Run: python examples/custom_derivatives.py
"""

import numpy as np

import srcad


@srcad.custom_vjp
def clip_gradient(x, limit):
    """The identity, whose gradient is clipped to [-limit, limit] on the way back."""
    return x


def clip_fwd(x, limit):
    return x, limit


def clip_bwd(limit, g):
    return np.clip(g, -limit, limit), None


clip_gradient.defvjp(clip_fwd, clip_bwd)


@srcad.custom_jvp
def log1pexp(x):
    """log(1 + exp(x)); its naive derivative exp(x) / (1 + exp(x)) overflows for large x."""
    return np.logaddexp(0.0, x)


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,) = primals
    (dx,) = tangents
    return log1pexp(x), dx / (1 + np.exp(-x))


def loss(x):
    return np.sum(log1pexp(clip_gradient(x, 0.5) * 3.0))


def main() -> None:
    x = np.array([-50.0, -1.0, 0.0, 2.0, 800.0])
    print("gradient (clipped to 0.5 on the way back):", srcad.grad(loss)(x))
    _, slope = srcad.jvp(log1pexp, (x,), (np.ones_like(x),))
    print("forward-mode slope of log1pexp (no overflow):", slope)


if __name__ == "__main__":
    main()
