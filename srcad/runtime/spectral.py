"""Shape bookkeeping for the rules of np.fft: the lengths and axes a transform works on,
and the norm whose scale is that of the adjoint of an inverse transform."""

from __future__ import annotations

from typing import Any

_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def swapped_norm(norm: Any) -> str:
    """The norm giving a forward transform the scale ``norm`` gives the inverse one."""
    if norm not in _SWAPPED:
        raise ValueError(f'norm must be "backward", "ortho" or "forward", got {norm!r}')
    return _SWAPPED[norm]


def transform_axes(x: Any, s: Any = None, axes: Any = None) -> tuple[int, ...]:
    """The axes ``fftn(x, s, axes)`` transforms, non-negative (the last ``len(s)`` without
    ``axes``, every axis without either)."""
    ndim = len(x.shape)
    if axes is None:
        axes = range(ndim - len(s), ndim) if s is not None else range(ndim)
    elif isinstance(axes, int):
        axes = (axes,)
    return tuple(a % ndim for a in axes)


def real_lengths(x: Any, s: Any = None, axes: Any = None) -> tuple[int, ...]:
    """The lengths of the real signal ``irfftn(x, s, axes)`` returns along its axes."""
    if s is not None:
        return tuple(s)
    axes = transform_axes(x, s, axes)
    return (*(x.shape[a] for a in axes[:-1]), 2 * (x.shape[axes[-1]] - 1))


def real_length(x: Any, n: Any = None, axis: int = -1) -> int:
    """The length of the real signal ``irfft(x, n, axis)`` returns."""
    return n if n is not None else 2 * (x.shape[axis] - 1)


def signal_lengths(x: Any, s: Any = None, axes: Any = None) -> tuple[int, ...]:
    """The lengths ``rfftn(x, s, axes)`` transforms along its axes (x's, without ``s``)."""
    if s is not None:
        return tuple(s)
    return tuple(x.shape[a] for a in transform_axes(x, s, axes))


def signal_length(x: Any, n: Any = None, axis: int = -1) -> int:
    """The length ``rfft(x, n, axis)`` transforms."""
    return n if n is not None else x.shape[axis]
