"""Which part of the tensors each rank holds in a distributed call: ``layout`` and
``BrickArray`` (one rank's part, with its place in the whole)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _args, _calls
from ._calls import Job, entry
from .configs import Comm, Config, PathArg

__all__ = ["layout", "BrickArray"]


def _slices(lo: Sequence[int], hi: Sequence[int]) -> tuple[slice, ...]:
    """The index of the part [lo, hi) of a tensor."""
    return tuple(slice(a, b) for a, b in zip(lo, hi))


class BrickArray(np.ndarray):
    """One rank's part of a distributed tensor: an array with its place in the whole.

    ``lo`` and ``hi`` are the part's first and one-past-last indices per axis;
    ``slices`` selects the part in the whole tensor: ``whole[part.slices] == part``.
    """

    lo: tuple[int, ...] = (0, 0, 0)
    hi: tuple[int, ...] = (0, 0, 0)

    @property
    def slices(self) -> tuple[slice, ...]:
        return _slices(self.lo, self.hi)


def brick_array(values: np.ndarray, box: tuple[tuple[int, ...], tuple[int, ...]]) -> BrickArray:
    """values as a BrickArray at box = (lo, hi)."""
    part = values.view(BrickArray)
    part.lo, part.hi = box
    return part


@entry
def layout(shape: Sequence[int], out_shape: Sequence[int] | None = None, *,
           mesh: PathArg | None = None, config: Config | None = None,
           comm: Comm = None) -> Job[dict[str, Any]]:
    """Which part of the tensors each rank holds in a run on ``comm``.

    Parameters
    ----------
    shape : tuple of 3 int
        The input's shape (N1, N2, N3).
    out_shape : tuple of 3 int, optional
        The output's (gemt: the matrices' columns); default ``shape``.
    mesh, config, comm
        As for ``transform`` (they decide the mesh, the brick grid and the actuators).

    Returns
    -------
    dict
        ``rank``, ``world_size``, ``brick_ranks`` (the grid p1, p2, p3), ``actuator_ranks``
        (0 or 3), ``mesh`` (cells), ``bricks`` (per brick rank: ((lo, hi) of the input,
        (lo, hi) of the output)), and this rank's ``in_slices`` and ``out_slices`` (None on
        an actuator rank): ``transform(x[in_slices], ..., distributed=True, shape=shape)``.
    """
    a = _args.checked(locals(), _LAYOUT_KINDS)
    out = a.shape if a.out_shape is None else a.out_shape

    def run(handle):
        d = _calls.layout(a, out, handle)
        mine = d["bricks"][d["rank"]] if d["rank"] < len(d["bricks"]) else None
        d["in_slices"] = None if mine is None else _slices(*mine[0])
        d["out_slices"] = None if mine is None else _slices(*mine[1])
        return d
    return run


_LAYOUT_KINDS = dict(shape=_args.shape3, out_shape=_args.optional(_args.shape3),
                     mesh=_args.optional(_args.path), config=_args.optional(_args.config))
