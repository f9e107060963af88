"""The TriADA simulator from Python.

The programs' jobs on numpy arrays, in one process or under ``mpirun``:

- ``transform`` and ``gemt``: triada-transform (3D DFT, DCT, DHT, WHT, 3-mode products)
  on the simulated 3D mesh;
- ``tcu``: triada-tcu (the Tensor-Core-Unit algorithms on the planar MXU);
- ``conv``: triada-conv (convolution layers on the planar MXU);
- ``layout``: which part of a tensor each rank holds (for distributed calls).

Each returns its result and the report the program writes with ``--report``, as a dict
with the same keys. Errors raise ``triada.ConfigError`` (a bad argument; the program's exit
code 2) or ``triada.InputError`` (a bad tensor; exit 1), both ``ValueError`` s, with the
program's one-line message; ``triada.Error`` is their base.

Arguments are typed strictly: a wrong type raises ``TypeError`` naming the argument (a bool
where a bool is meant, an int where a count is, a str for names, a dict for ``config``, an
mpi4py communicator or None for ``comm``, arrays or array-likes for arrays).

In one process MPI is started on the first call (and finalized at exit); a call after MPI
was finalized (mpi4py's ``MPI.Finalize()``) raises ``triada.MPIError``. Calls from several
threads are safe: they run one at a time (a process-wide lock, waited for with the GIL
released). Under ``mpirun -np K python3 script.py`` every rank calls the same function, in
the same order; rank 0's arguments decide (the other ranks may pass None for arrays rank 0
holds, and pass their own parts of distributed ones). Pass ``comm=MPI.COMM_WORLD``
(mpi4py) or leave ``comm=None`` for MPI's world. Every check, the wrapper's own (types,
arrays, on any rank's arguments) and the program's, is agreed by all ranks: an error found
on one rank is raised on every rank, with the same class and message. An error of one rank
alone inside a job (an internal error) is raised on that rank only: run such scripts as
``python3 -m mpi4py script.py`` so the job ends.
"""

import json
import os
import re

import numpy as np

from . import _args, _triada
from ._calls import entry
from ._triada import ConfigError, Error, HDF5Error, InputError, MPIError

__version__ = _triada.version()
#: The cells' arithmetic modes (``cell_mode`` of transform, tcu and conv).
CELL_MODES = tuple(_triada.cell_modes.split(", "))
__all__ = ["transform", "gemt", "layout", "tcu", "conv", "BrickArray", "CELL_MODES", "Error",
           "ConfigError", "InputError", "MPIError", "HDF5Error"]

def _word(value):
    """An option's value as the command line spells it (values checked by _args)."""
    if isinstance(value, (bool, np.bool_)):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _options(**named):
    """--name value for every given value (True: a flag, None and False: left out)."""
    args = []
    for name, value in named.items():
        if value is None or value is False:
            continue
        args.append("--" + name.replace("_", "-"))
        if value is not True:
            args.append(_word(value))
    return args


def _config_options(config):
    """Mesh config keys {"section.key": value} as --section.key value (they win over mesh)."""
    args = []
    for key, value in (config or {}).items():
        args += ["--" + key, _word(value)]
    return args


def _slices(lo, hi):
    """The index of the part [lo, hi) of a tensor."""
    return tuple(slice(a, b) for a, b in zip(lo, hi))


class BrickArray(np.ndarray):
    """One rank's part of a distributed tensor: an array with its place in the whole.

    ``lo`` and ``hi`` are the part's first and one-past-last indices per axis;
    ``slices`` selects the part in the whole tensor: ``whole[part.slices] == part``.
    """

    lo = (0, 0, 0)
    hi = (0, 0, 0)

    @property
    def slices(self):
        return _slices(self.lo, self.hi)


def _brick_array(values, box):
    part = values.view(BrickArray)
    part.lo, part.hi = box
    return part


@entry
def transform(x, transform="dct", *, inverse=False, norm="ortho", stage_order="312", esop=None,
              cell_mode=None, mesh=None, initial=None, executor="fused", transport="auto",
              coeffs=None, config=None, check=False, shuffle_seed=0, report=None, trace=None,
              force=False, verbose=False, comm=None, distributed=False, shape=None, gather=True):
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
    matrices = [None, None, None] if a.coeffs is None else list(a.coeffs)
    args = ["triada-transform", "--input", "x", "--output", "y"] + _options(
        transform=a.transform, inverse=a.inverse, norm=a.norm, stage_order=a.stage_order,
        esop=None if a.esop is None else _word(a.esop), cell_mode=a.cell_mode, mesh=a.mesh,
        initial=None if a.initial is None else "initial", executor=a.executor,
        transport=a.transport, coeffs=None if a.coeffs is None else "C1,C2,C3", check=a.check,
        shuffle_seed=a.shuffle_seed, report=a.report, trace=a.trace, force=a.force,
        quiet=not a.verbose) + _config_options(a.config)

    def run(handle):
        y, box, text, summary = _triada.transform(args, a.x, a.initial, matrices, handle,
                                                  a.distributed, a.shape, a.gather)
        if a.verbose and summary:
            print(summary, end="", flush=True)
        if y is not None and not a.gather:
            y = _brick_array(y, box)
        return y, json.loads(text)
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
def gemt(x, coeffs, **options):
    """The 3-mode product Y = X x1 C1 x2 C2 x3 C3 on the simulated mesh.

    ``transform(x, "gemt", coeffs=coeffs, **options)``: C_s of shape N_s x K_s (non-square
    allowed), Y[k1,k2,k3] = sum X[n1,n2,n3] C1[n1,k1] C2[n2,k2] C3[n3,k3], which is
    ``numpy.einsum("abc,ai,bj,ck->ijk", X, C1, C2, C3)`` and, in TensorLy's words,
    ``mode_dot`` with C_s transposed along each mode. See ``transform`` for the options
    (inverse, norm, esop, cell_mode, initial, comm, ...). Returns ``(y, report)``.
    """
    return transform.__wrapped__(x, "gemt", coeffs=coeffs, **options)


@entry
def layout(shape, out_shape=None, *, mesh=None, config=None, comm=None):
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
    args = ["triada-transform", "--input", "x", "--output", "y", "--transform", "dct"] + \
        _options(mesh=a.mesh) + _config_options(a.config)

    def run(handle):
        d = _triada.layout(args, a.shape, out, handle)
        mine = d["bricks"][d["rank"]] if d["rank"] < len(d["bricks"]) else None
        d["in_slices"] = None if mine is None else _slices(*mine[0])
        d["out_slices"] = None if mine is None else _slices(*mine[1])
        return d
    return run


_LAYOUT_KINDS = dict(shape=_args.shape3, out_shape=_args.optional(_args.shape3),
                     mesh=_args.optional(_args.path), config=_args.optional(_args.config))


def _named_as_arguments(error, named):
    """The error with the datasets of the arrays given as the input `named` ("inputs")
    named as the arguments that gave them ("A: ..." for inputs:/A)."""
    return type(error)(re.sub(re.escape(named) + r":/+([^\s:]+)", r"\1", str(error)))


@entry
def tcu(algo, size=None, *, m=None, latency=0, A=None, B=None, inputs=None, input=None,
        seed=None, weak=False, sweep=False, sizes=None, ms=None, cell_mode=None, executor=None,
        mesh=None, product=None, k=None, kernel=None, points=None, progress=None, report=None,
        force=False, verbose=False, comm=None):
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
        matmul and strassen with ``A`` and ``B``: the product C (float64) and the cost
        (calls, rows, cell_steps, macs, macs_dense, cycles) of the unit that computed it,
        run again on the same unit as the job's (the job reports, does not keep, C); the
        cost equals the report's ``tcu`` figures. Otherwise None.
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
    options = {n: getattr(a, n) for n in _TCU_KINDS
               if n not in ("A", "B", "inputs", "input", "verbose")}

    def run(handle):
        root = _triada.rank(handle) == 0  # rank 0's arguments and arrays are the call's
        named = _triada.bcast_text("inputs" if given and root else "", handle)
        in_path = "inputs" if given else a.input  # the arrays' name as --input
        args = ["triada-tcu"] + _options(**dict(options, input=in_path))
        try:
            summary, code, product, text = _triada.tcu(args, handle, a.A, a.B,
                                                       given if root else {})
        except Error as e:
            if not named:
                raise
            raise _named_as_arguments(e, named) from None
        report = json.loads(text)
        if a.verbose and summary:
            print(summary, end="", flush=True)
        return product, report
    return run


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


@entry
def conv(layer_or_network, *, method="both", mxu=16, input=None, weights=None, batch=None,
         latency=0, cell_mode="fp64", executor="fused", mesh=None, seed=1, verify=False,
         verify_budget=None, max_layers=None, report=None, csv=None, force=False,
         verbose=False, comm=None):
    """Convolution layers on the planar MXU: triada-conv's job.

    Parameters
    ----------
    layer_or_network : str, path or sequence of int
        One layer ``(N, C_I, H_I, W_I, C_O, H_F, W_F, stride, pad[, dilation[, groups]])``
        (a sequence or the comma-separated string; ``--layer``), or a network CSV file
        (``data/networks/*.csv``, SCALE-Sim topologies; ``--network``).
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
    a = _args.checked(locals(), _CONV_KINDS)
    spec = a.layer_or_network
    network = isinstance(spec, str) and (spec.endswith(".csv") or os.path.isfile(spec))
    operands = []
    for name in ("input", "weights"):
        value = getattr(a, name)
        if value is not None:
            if value.ndim != 4 or value.dtype.kind not in "iuf":
                raise InputError(f"--{name} {name}: a rank-4 real array expected, got "
                                 f"{value.dtype.name} of shape {value.shape}")
            value = np.ascontiguousarray(value, dtype=np.float64)
        operands.append(value)
    args = ["triada-conv"] + _options(
        network=spec if network else None, layer=None if network else _word(spec),
        method=a.method, mxu=a.mxu, batch=a.batch, latency=a.latency, cell_mode=a.cell_mode,
        executor=a.executor, mesh=a.mesh, seed=a.seed, verify=a.verify,
        verify_budget=a.verify_budget, max_layers=a.max_layers, report=a.report, csv=a.csv,
        force=a.force, input=None if a.input is None else "input",
        weights=None if a.weights is None else "weights")

    def run(handle):
        text, table, code, outputs = _triada.conv(args, handle, operands[0], operands[1])
        if a.verbose and table:
            print(table, end="", flush=True)
        result = json.loads(text)
        if _triada.rank(handle) != 0:
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


def _nchw(outputs, layer):
    """A layer's NHWC output values as N x C_O x H_O x W_O."""
    if outputs is None:
        return None
    dims = (layer["N"], layer["H_O"], layer["W_O"], layer["C_O"])
    return {k: np.ascontiguousarray(v.reshape(dims).transpose(0, 3, 1, 2))
            for k, v in outputs.items()}
