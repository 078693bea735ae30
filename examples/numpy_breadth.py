"""The breadth of NumPy: decompositions, splits, cumulative products, tensor products.

Run: python examples/numpy_breadth.py
"""

import numpy as np

import srcad


def spectral_loss(a, c):
    """Uses eigh (eigenvalues and eigenvector weights), slogdet and cholesky."""
    sym = a @ a.T + 3.0 * np.eye(a.shape[0])
    w, v = np.linalg.eigh(sym)
    sign, logdet = np.linalg.slogdet(sym)
    chol = np.linalg.cholesky(sym)
    return np.sum(w * c) + np.sum((v * v) @ c) + logdet + np.sum(np.diag(chol))


def mixed_loss(x, y):
    """Uses svd, split, cumprod, kron and tensordot."""
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    left, right = np.split(y, 2)
    scan = np.cumprod(1.0 + 0.1 * left)
    return np.sum(s**2) + np.sum(scan) + np.sum(np.kron(right, s)) + np.tensordot(x, x, 2)


def main() -> None:
    rng = np.random.default_rng(0)
    a, c = rng.normal(size=(4, 4)), rng.normal(size=4)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=6)
    for f, args in ((spectral_loss, (a, c)), (mixed_loss, (x, y))):
        error = srcad.check_grad(f, *args, wrt=0, modes=("fwd", "rev"))
        print(f"{f.__name__}: both modes agree with finite differences (error {error:.1e})")
    print("every op and its modes: python -m srcad ops")


if __name__ == "__main__":
    main()
