"""Convolution layers on the planar MXU: triada-conv's job (``conv``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _calls
from ._calls import Job, entry
from .configs import Comm, PathArg, Report
from .errors import InputError

__all__ = ["conv"]

#: conv's result: per layer None or {method: NCHW output} (rank 0; None elsewhere), report.
Result = tuple[list[dict[str, np.ndarray] | None] | None, Report]


@entry
def conv(layer_or_network: PathArg | Sequence[int], *, method: str = "both", mxu: int = 16,
         input: ArrayLike | None = None, weights: ArrayLike | None = None,
         batch: int | None = None, latency: int = 0, cell_mode: str = "fp64",
         executor: str = "fused", mesh: PathArg | None = None, seed: int = 1,
         verify: bool = False, verify_budget: float | None = None,
         max_layers: int | None = None, report: PathArg | None = None,
         csv: PathArg | None = None, force: bool = False, verbose: bool = False,
         comm: Comm = None) -> Job[Result]:
    """Convolution layers on the planar MXU: triada-conv's job.

    Parameters
    ----------
    layer_or_network : str, path or sequence of int
        One layer ``(N, C_I, H_I, W_I, C_O, H_F, W_F, stride, pad[, dilation[, groups]])``
        (a sequence or the comma-separated string; ``--layer``), or a network CSV file
        (``data/networks/*.csv``, SCALE-Sim topologies; ``--network``). In the sequence,
        stride and dilation are an int or a pair ``(h, w)``, pad an int, a pair ``(h, w)``
        (symmetric per axis) or ``(top, left, bottom, right)``; the string takes
        ``--layer``'s forms ``SHxSW``, ``PHxPW``, ``T:L:B:R``, ``DHxDW``.
    method : {"both", "explicit", "implicit"}, default "both"
        Explicit im2col, implicit channel-first im2col, or both (``--method``).
    mxu : int, default 16
        The side S of the planar MXU: S x S cells (``--mxu``).
    input : array_like, optional
        One layer's input, N x C_I x H_I x W_I (NCHW), any real type; default: random
        values from ``seed`` (``--input``). Needed on rank 0 only.
    weights : array_like, optional
        One layer's weights, C_O x C_I/groups x H_F x W_F (``--weights``); rank 0's.
    batch : int, optional
        N for every layer (``--batch``).
    latency : int, default 0
        The latency l of one unit call (``--latency``).
    cell_mode : str, default "fp64"
        The cells' arithmetic, as for ``transform`` (``--cell-mode``).
    executor : {"fused", "reference"}, default "fused"
        How the MXU runs its calls (``--executor``); the same bits and counters.
    mesh : str or path, optional
        A mesh config INI whose [energy] and [mxu] keys apply (``--mesh``).
    seed : int, default 1
        The seed of the random operands (``--seed``).
    verify : bool, default False
        Check every layer against the direct convolution; otherwise only layers up to
        ``verify_budget`` MACs are checked (``--verify``, ``--verify-budget``).
    verify_budget : float, optional
        Direct-convolution MACs up to which a layer is checked (default 2e9).
    max_layers : int, optional
        Run only the first layers of the network (``--max-layers``).
    report, csv : str or path, optional
        Also write the JSON report / the per-layer CSV as the program does; ``force``
        replaces existing files.
    verbose : bool, default False
        Print the program's table (rank 0).
    comm : mpi4py.MPI.Comm, optional
        As for ``transform``: the layers' work units are split over the ranks.

    Returns
    -------
    outputs : list or None
        On rank 0 (None elsewhere), per layer: None if it was not checked, else
        ``{"explicit": y, "implicit": y}`` (the methods run) with y the layer's output
        N x C_O x H_O x W_O (NCHW, float64), as assembled for the check.
    report : dict
        The program's JSON report (``triada-conv-report/1``) on every rank. A layer that
        fails its check is reported (``verified`` false), not raised.
    """
    given_sequence = _args._is_sequence(layer_or_network)
    a = _args.checked(locals(), _CONV_KINDS)
    spec = a.layer_or_network
    network = not given_sequence and (spec.endswith(".csv") or os.path.isfile(spec))
    operands = []
    for name in ("input", "weights"):
        value = getattr(a, name)
        if value is not None:
            if value.ndim != 4 or value.dtype.kind not in "iuf":
                raise InputError(f"--{name} {name}: a rank-4 real array expected, got "
                                 f"{value.dtype.name} of shape {value.shape}")
            value = np.ascontiguousarray(value, dtype=np.float64)
        operands.append(value)

    settings = {n: getattr(a, n) for n in _CONV_KINDS
                if n not in ("layer_or_network", "input", "weights", "verbose")}
    settings["network" if network else "layer_spec"] = spec

    def run(handle):
        table, outputs, result = _calls.conv(settings, operands, handle)
        if a.verbose and table:
            print(table, end="", flush=True)
        if _calls.rank(handle) != 0:
            return None, result
        return [_nchw(o, L) for o, L in zip(outputs, result["layers"])], result
    return run


_CONV_KINDS = dict(
    layer_or_network=_args.layer, method=_args.word, mxu=_args.count,
    input=_args.optional(_args.array), weights=_args.optional(_args.array),
    batch=_args.optional(_args.count), latency=_args.count, cell_mode=_args.word,
    executor=_args.word, mesh=_args.optional(_args.path), seed=_args.count,
    verify=_args.flag, verify_budget=_args.optional(_args.number),
    max_layers=_args.optional(_args.count), report=_args.optional(_args.path),
    csv=_args.optional(_args.path), force=_args.flag, verbose=_args.flag)


def _nchw(outputs: dict[str, np.ndarray] | None,
          layer: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """A layer's NHWC output values as N x C_O x H_O x W_O."""
    if outputs is None:
        return None
    dims = (layer["N"], layer["H_O"], layer["W_O"], layer["C_O"])
    return {k: np.ascontiguousarray(v.reshape(dims).transpose(0, 3, 1, 2))
            for k, v in outputs.items()}
