"""3D transforms and 3-mode products on the simulated TriADA mesh: triada-transform's job
on numpy arrays (``transform``, ``gemt``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _calls
from ._calls import Job, entry
from .configs import Comm, Config, PathArg, Report
from .errors import ConfigError
from .layouts import BrickArray, brick_array

__all__ = ["transform", "gemt"]

#: transform's result: y (whole on rank 0, a BrickArray part with gather=False, or None).
Result = tuple[np.ndarray | BrickArray | None, Report]


@entry
def transform(x: ArrayLike | None, transform: str | Sequence[str] = "dct", *,
              inverse: bool = False, norm: str = "ortho",
              stage_order: str | int | Sequence[int] = "312", esop: bool | None = None,
              cell_mode: str | None = None, mesh: PathArg | None = None,
              initial: ArrayLike | None = None, executor: str = "fused",
              transport: str = "auto", coeffs: Sequence[ArrayLike | None] | None = None,
              config: Config | None = None, check: bool = False, shuffle_seed: int = 0,
              report: PathArg | None = None, trace: PathArg | None = None,
              force: bool = False, verbose: bool = False, comm: Comm = None,
              distributed: bool = False, shape: Sequence[int] | None = None,
              gather: bool = True) -> Job[Result]:
    """A 3D transform or 3-mode product of ``x`` on the simulated TriADA mesh.

    The job of ``triada-transform`` (same options, same checks, same bits, counters and
    report) on an array instead of HDF5 files. Returns ``(y, report)``.

    Parameters
    ----------
    x : array_like, rank 3
        The input tensor X (N1, N2, N3): any integer type, float32, float64, complex64 or
        complex128 (the types the program reads from HDF5). Read once into the engine
        (converted there), never modified. With ``distributed=True``: this rank's part
        (see ``distributed``); otherwise needed on rank 0 only (others may pass None).
    transform : str or sequence of 3 str, default "dct"
        ``"dft"``, ``"dct"`` (DCT-II), ``"dht"`` (separable Hartley), ``"wht"``
        (Walsh-Hadamard, Sylvester order, power-of-two sizes), ``"gemt"`` (the matrices of
        ``coeffs``), or one per axis such as ``"dft,dct,wht"`` or ``("dft", "dct", "wht")``
        (``--transform``).
    inverse : bool, default False
        Stream the exact inverse matrices in the same norm (gemt: each matrix inverted by
        Gauss-Jordan elimination; it must be square and regular) (``--inverse``).
    norm : {"ortho", "backward", "forward"}, default "ortho"
        numpy/scipy's ``norm`` (``--norm``): ``"ortho"``: unitary matrices; ``"backward"``:
        the numpy/scipy default (the inverse scaled by 1/N, dct 1/2N); ``"forward"``: that
        scale on the forward transform instead, the inverse unscaled.
    stage_order : str, int or sequence, default "312"
        The order of the summation axes, any permutation of 1, 2, 3: ``"312"``, ``312`` or
        ``(3, 1, 2)`` (``--stage-order``).
    esop : bool or None, default None
        Elastic sparse outer-product processing on (True) or off (False, dense); None: the
        mesh config's ``[esop] enabled`` (on by default) (``--esop``).
    cell_mode : str or None, default None
        The cells' arithmetic, one of ``triada.CELL_MODES`` (``"fp64"``, ``"fp32"``,
        ``"tf32"``, ``"bf16"``, ``"fp16"``, ``"m3xu-fp32"``, ...; doc/precision.md); None:
        the mesh config's ``[cell] mode`` (fp64 by default) (``--cell-mode``).
    mesh : str or path, optional
        A mesh config INI file (see ``meshcfg/``) (``--mesh``).
    initial : array_like, optional
        The affine form's initial output Y0, of the output's shape (K1, K2, K3): computes
        Y = Y0 + X x1 C1 x2 C2 x3 C3 (``--initial``). Types as for ``x``; complex only if
        the output is. Distributed like ``x``.
    executor : {"fused", "reference"}, default "fused"
        The brick-wide kernels, or the cell rule cell by cell (slow); the same bits and
        counters (``--executor``).
    transport : {"auto", "broadcast", "shared"}, default "auto"
        How pivot planes travel between the bricks of a line: broadcast messages, or reads
        through an MPI shared-memory window on one node; the same bits, counters and MPI
        figures (``--transport``).
    coeffs : sequence of 3 array_like, optional
        gemt's matrices (C1, C2, C3), C_s of shape N_s x K_s, real or complex (``--coeffs``);
        needed on rank 0 only. Y[k1,k2,k3] = sum X[n1,n2,n3] C1[n1,k1] C2[n2,k2] C3[n3,k3],
        i.e. ``numpy.einsum("abc,ai,bj,ck->ijk", X, C1, C2, C3)``. With one transform per
        axis, the entries of non-gemt axes are ignored (may be None).
    config : dict, optional
        Mesh config keys as ``{"section.key": value}``, e.g. ``{"ranks.actuators":
        "colocated", "mesh.cells": (8, 8, 8), "energy.mac_pj": 10}``; they win over
        ``mesh`` (the program's ``--section.key`` options).
    check : bool, default False
        Rerun in fp64 and report the output's max and mean relative error (``--check``).
    shuffle_seed : int, default 0
        Stream coefficient rows in a seeded random order; 0: natural order
        (``--shuffle-seed``).
    report, trace : str or path, optional
        Also write the JSON report / the per-step CSV trace to this file, as the program
        does (``--report``, ``--trace``); an existing file is kept unless ``force``.
    force : bool, default False
        Replace an existing ``report`` or ``trace`` file (``--force``).
    verbose : bool, default False
        Print the program's summary (rank 0) and its progress line on a terminal; False is
        the program's ``--quiet``.
    comm : mpi4py.MPI.Comm, optional
        The communicator to run on (``MPI.COMM_WORLD`` under mpirun); None: MPI's world.
        Its ranks are laid out as the program's: brick ranks, plus three actuator ranks
        from 4 ranks on unless ``config={"ranks.actuators": "colocated"}``.
    distributed : bool, default False
        False: ``x`` and ``initial`` are whole, on rank 0 (sent from there to the brick
        ranks). True: each rank passes its own part, ``x[layout(...)["in_slices"]]`` and
        ``initial[...["out_slices"]]`` (None on actuator ranks), and ``shape``.
    shape : tuple of 3 int, optional
        With ``distributed=True``: the whole input's shape (N1, N2, N3).
    gather : bool, default True
        True: ``y`` whole on rank 0 (None on the other ranks). False: each brick rank gets
        its own part as a ``BrickArray`` (``y.lo``, ``y.hi``, ``y.slices``), actuator ranks
        None.

    Returns
    -------
    y : numpy.ndarray or BrickArray or None
        The output Y (K1, K2, K3), float64, or complex128 when the input or a matrix is
        complex; handed over from the engine without a copy where one brick holds it.
    report : dict
        The program's JSON report (schema ``triada-report/1``: problem, mesh, steps,
        counters, energy_pj, mpi, cycles, memory, ...) on every rank; the tensors are named
        ``x``, ``initial``, ``y`` where the program names files.

    Examples
    --------
    >>> y, r = triada.transform(x, "dct")
    >>> r["counters"]["macs"], r["energy_pj"]["saved_fraction"]
    """
    a = _args.checked(locals(), _TRANSFORM_KINDS)
    if a.distributed and a.shape is None:
        raise ConfigError("distributed=True needs shape=(N1, N2, N3), the whole input's")

    def run(handle):
        y, box, result, summary = _calls.transform(a, handle)
        if a.verbose and summary:
            print(summary, end="", flush=True)
        if y is not None and not a.gather:
            y = brick_array(y, box)
        return y, result
    return run


_TRANSFORM_KINDS = dict(
    x=_args.optional(_args.array), transform=_args.words, inverse=_args.flag,
    norm=_args.word, stage_order=_args.stage_order, esop=_args.optional_flag,
    cell_mode=_args.optional(_args.word), mesh=_args.optional(_args.path),
    initial=_args.optional(_args.array), executor=_args.word, transport=_args.word,
    coeffs=_args.optional(_args.matrices), config=_args.optional(_args.config),
    check=_args.flag, shuffle_seed=_args.count, report=_args.optional(_args.path),
    trace=_args.optional(_args.path), force=_args.flag, verbose=_args.flag,
    distributed=_args.flag, shape=_args.optional(_args.shape3), gather=_args.flag)


@entry
def gemt(x: ArrayLike | None, coeffs: Sequence[ArrayLike | None],
         **options: Any) -> Job[Result]:
    """The 3-mode product Y = X x1 C1 x2 C2 x3 C3 on the simulated mesh.

    ``transform(x, "gemt", coeffs=coeffs, **options)``: C_s of shape N_s x K_s (non-square
    allowed), Y[k1,k2,k3] = sum X[n1,n2,n3] C1[n1,k1] C2[n2,k2] C3[n3,k3], which is
    ``numpy.einsum("abc,ai,bj,ck->ijk", X, C1, C2, C3)`` and, in TensorLy's words,
    ``mode_dot`` with C_s transposed along each mode. See ``transform`` for the options
    (inverse, norm, esop, cell_mode, initial, comm, ...). Returns ``(y, report)``.
    """
    return transform.__wrapped__(x, "gemt", coeffs=coeffs, **options)  # type: ignore[attr-defined]
