"""stop_gradient and nondifferentiable: values that take part in the computation but not in
its derivative. Run: python examples/gradient_controls.py
"""

import numpy as np

import srcad


def normalize(x):
    """x scaled to unit norm, treating the norm as a constant (a common trick)."""
    return x / srcad.stop_gradient(np.sqrt(np.sum(x * x)))


def bucket(x):
    """Which of 4 buckets each entry falls in: an integer result, no derivative."""
    return np.floor(np.clip(x, 0.0, 0.999) * 4.0)


srcad.nondifferentiable(bucket)


def loss(x):
    return np.sum(normalize(x) * (1.0 + bucket(x)))


def main() -> None:
    x = np.array([0.1, 0.4, 0.7, 0.9])
    g = srcad.grad(loss)(x)
    expected = (1.0 + bucket(x)) / np.sqrt(np.sum(x * x))
    print("gradient:", g)
    print("matches (1 + bucket) / |x| with the norm held constant:", np.allclose(g, expected))
    print("forward mode agrees:", np.allclose(srcad.jvp(loss, (x,), (np.ones(4),))[1], g.sum()))


if __name__ == "__main__":
    main()
