"""One gradient function per peer and problem: ``make(problem) -> (call, check)``.

``call()`` computes the gradient of the problem's loss at its inputs (synchronously);
``check()`` returns the gradient as NumPy arrays, compared with the hand-written one.
The peers differentiate the very same loss functions: their globals ``np`` (and ``math``
where the loss is a scalar function) are rebound to the peer's array library.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.problems import Problem


def _rebind(f: Callable, **names: Any) -> Callable:
    """``f`` with some of its global names meaning something else."""
    scope = {**f.__globals__, **names}
    return types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)


class _Stop:
    """Stands for the ``srcad`` module in a loss: only ``stop_gradient`` is used."""

    def __init__(self, stop: Callable) -> None:
        self.stop_gradient = stop


# ---------------------------------------------------------------- srcad


def srcad_peer(problem: Problem):
    import srcad

    args = problem.args()
    g = srcad.grad(problem.loss, wrt=problem.wrt)
    return (lambda: g(*args)), (lambda: [np.asarray(a) for a in g(*args)])


# ---------------------------------------------------------------- autograd


def autograd_peer(problem: Problem):
    import autograd
    import autograd.numpy as anp

    names = {"np": anp, "srcad": _Stop(lambda x: x)}
    if problem.scalar:
        names["math"] = anp
    loss = _rebind(problem.loss, **names)
    args = problem.args()
    g = autograd.grad(loss, argnum=problem.wrt)
    return (lambda: g(*args)), (lambda: [np.asarray(a) for a in g(*args)])


# ---------------------------------------------------------------- PyTorch (eager)


class _TorchNumpy:
    """The few NumPy names the losses use, spelled with torch."""

    def __init__(self, torch: Any) -> None:
        self.t = torch
        self.tanh, self.exp, self.sin, self.cos = torch.tanh, torch.exp, torch.sin, torch.cos

    def sum(self, x, axis=None, keepdims=False):
        return self.t.sum(x) if axis is None else self.t.sum(x, dim=axis, keepdim=keepdims)

    def max(self, x, axis=None, keepdims=False):
        return self.t.amax(x, dim=axis, keepdim=keepdims)

    def concatenate(self, xs, axis=0):
        return self.t.cat(xs, dim=axis)

    def zeros(self, shape):
        return self.t.zeros(shape, dtype=self.t.float64)


def torch_peer(problem: Problem):
    import torch

    shim = _TorchNumpy(torch)
    names = {"np": shim, "srcad": _Stop(lambda x: x.detach())}
    if problem.scalar:
        names["math"] = shim
    loss = _rebind(problem.loss, **names)
    args = [
        torch.tensor(a, dtype=torch.float64, requires_grad=k in problem.wrt)
        for k, a in enumerate(problem.args())
    ]
    wrt = [args[k] for k in problem.wrt]

    def call():
        return torch.autograd.grad(loss(*args), wrt)

    return call, (lambda: [a.numpy() for a in call()])


# ---------------------------------------------------------------- JAX


def _jax_grad(problem: Problem, jit: bool):
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    names = {"np": jnp, "srcad": _Stop(jax.lax.stop_gradient)}
    if problem.scalar:
        names["math"] = jnp
    loss = _rebind(problem.loss, **names)
    g = jax.grad(loss, argnums=problem.wrt)
    if jit:
        g = jax.jit(g)
    args = [a if problem.scalar else jnp.asarray(a) for a in problem.args()]

    def call():
        return jax.block_until_ready(g(*args))

    return call, (lambda: [np.asarray(a) for a in call()])


def jax_jit_peer(problem: Problem):
    return _jax_grad(problem, jit=True)


def jax_peer(problem: Problem):
    return _jax_grad(problem, jit=False)


PEERS = {
    "srcad": srcad_peer,
    "autograd": autograd_peer,
    "torch": torch_peer,
    "jax.jit": jax_jit_peer,
    "jax": jax_peer,
}
#: the module each peer needs: a peer that cannot be imported is reported and skipped
MODULES = {
    "srcad": "srcad",
    "autograd": "autograd",
    "torch": "torch",
    "jax.jit": "jax",
    "jax": "jax",
}
