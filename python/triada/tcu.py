"""The Tensor-Core-Unit algorithms on the planar MXU: triada-tcu's job (``tcu``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _args, _calls
from ._calls import Job, entry
from .configs import Comm, PathArg, Report
from .errors import ConfigError, InputError

__all__ = ["tcu"]

#: tcu's result: ((C, cost) for matmul and strassen given A and B, else None), report.
Result = tuple[tuple[np.ndarray, dict[str, int]] | None, Report]


@entry
def tcu(algo: str, size: int | None = None, *, m: int | None = None, latency: int = 0,
        A: ArrayLike | None = None, B: ArrayLike | None = None,
        inputs: Mapping[str, ArrayLike] | None = None, input: PathArg | None = None,
        seed: int | None = None, weak: bool = False, sweep: bool = False,
        sizes: Sequence[int] | None = None, ms: Sequence[int] | None = None,
        cell_mode: str | None = None, executor: str | None = None,
        mesh: PathArg | None = None, product: str | None = None, k: int | None = None,
        kernel: Sequence[float] | None = None, points: int | None = None,
        progress: str | None = None, report: PathArg | None = None, force: bool = False,
        verbose: bool = False, comm: Comm = None) -> Job[Result]:
    """A Tensor-Core-Unit algorithm on the planar MXU: triada-tcu's job.

    Every argument is the program's option of the same name (``triada-tcu --help``);
    None leaves an option to the program's default.

    Parameters
    ----------
    algo : str
        ``matmul``, ``strassen``, ``spmm``, ``ge``, ``tclosure``, ``apsd``, ``dft``,
        ``stencil``, ``intmul``, ``karatsuba``, ``polyeval`` (``--algo``).
    size : int, optional
        The natural size (matrix side, vertices, vector length, bits, coefficients;
        ``--size``); with inputs, their size.
    m : int, optional
        The tensor unit size, a perfect square (the unit is sqrt(m) x sqrt(m) cells; ``--m``).
    latency : int, default 0
        The latency l of one unit call (``--latency``).
    A, B : array_like, optional
        matmul, strassen, spmm: the square input matrices (shortcut for
        ``inputs={"A": A, "B": B}``). For matmul and strassen the product C is returned.
    inputs : dict of array_like, optional
        The algorithm's input datasets by name (``{"A": ..., "b": ...}`` for ge,
        ``{"adjacency": ...}`` for tclosure and apsd, ...), read from memory as the
        datasets of ``--input`` would be; needed on rank 0 only. Errors name them as the
        arguments (``A: expected a non-empty square matrix``).
    input : str or path, optional
        An HDF5 input file ``FILE[:/DSET]`` instead (``--input``).
    seed : int, optional
        The seed of the generated inputs (``--seed``; default 1).
    weak : bool, default False
        The weak TCU model (``--weak``).
    sweep : bool, default False
        A size series for each m of an m series, with the growth exponent's fit (``--sweep``).
    sizes, ms : sequence of int, optional
        The sweep's sizes and unit sizes (``--sizes``, ``--ms``).
    cell_mode : str, optional
        The cells' arithmetic, one of ``triada.CELL_MODES`` (``--cell-mode``; default fp64).
    executor : {"fused", "reference"}, optional
        How the unit runs its calls (``--executor``; default fused).
    mesh : str or path, optional
        A mesh config INI whose [mxu] keys give the memory side (``--mesh``).
    product : {"fast", "classical", "both"}, optional
        spmm and apsd: the matrix product (``--product``).
    k : int, optional
        stencil: the number of sweeps (``--k``).
    kernel : sequence of 9 float, optional
        stencil: the weights (``--kernel``).
    points : int, optional
        polyeval: the number of points (``--points``).
    progress : {"auto", "always", "never"}, optional
        A sweep's progress lines on stderr (``--progress``).
    report : str or path, optional
        Also write the JSON report to this file (``--report``); ``force`` replaces one.
    force : bool, default False
        Replace an existing ``report`` file (``--force``).
    verbose : bool, default False
        Print the program's summary or sweep table (rank 0).
    comm : mpi4py.MPI.Comm, optional
        As for ``transform``: a sweep's points are split over the ranks, a single run is
        rank 0's.

    Returns
    -------
    result : (C, cost) or None
        matmul and strassen on arrays (``A`` and ``B``, or ``inputs``; rank 0): the
        product C (float64) the job computed and checked, and the cost (calls, rows,
        cell_steps, macs, macs_dense, cycles) of the unit that computed it, the report's
        ``tcu`` figures. Otherwise None.
    report : dict
        The program's JSON report (``triada-tcu-report/1``) on every rank; arrays given
        are named ``inputs`` in it. A result that fails its fp64 check is
        reported (``verified`` false), not raised, as the program's exit code 4 does.
    """
    a = _args.checked(locals(), _TCU_KINDS)
    given = dict(a.inputs or {})
    for name in ("A", "B"):
        if getattr(a, name) is not None:
            given[name] = getattr(a, name)
    for name, values in given.items():
        if values.dtype.kind not in "iufc":  # what HDF5 and the program read
            raise InputError(f"{name}: unsupported element type ({values.dtype.name})")
    if given and a.input is not None:
        raise ConfigError("input: give an input file or arrays (A, B, inputs), not both")
    settings = {_SETTING.get(n, n): getattr(a, n) for n in _TCU_KINDS
                if n not in ("A", "B", "inputs", "verbose")}

    def run(handle):
        summary, product, result = _calls.tcu(settings, given, handle)
        if a.verbose and summary:
            print(summary, end="", flush=True)
        return product, result
    return run


#: The arguments named otherwise in the config (TcuConfig's fields).
_SETTING = {"k": "sweeps"}

_TCU_KINDS = dict(
    algo=_args.word, size=_args.optional(_args.count), m=_args.optional(_args.count),
    latency=_args.count, A=_args.optional(_args.array), B=_args.optional(_args.array),
    inputs=_args.optional(_args.arrays), input=_args.optional(_args.path),
    seed=_args.optional(_args.count), weak=_args.flag, sweep=_args.flag,
    sizes=_args.optional(_args.counts), ms=_args.optional(_args.counts),
    cell_mode=_args.optional(_args.word), executor=_args.optional(_args.word),
    mesh=_args.optional(_args.path), product=_args.optional(_args.word),
    k=_args.optional(_args.count), kernel=_args.optional(_args.numbers_),
    points=_args.optional(_args.count), progress=_args.optional(_args.word),
    report=_args.optional(_args.path), force=_args.flag, verbose=_args.flag)
