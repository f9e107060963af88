"""How every entry point reaches the extension _triada, its one caller (README "Python"):

- one call at a time in the process: the module's lock, taken with the GIL released while
  it waits, held for the whole call, so calls from several threads are serialised;
- MPI started by the first call, and MPIError (not an abort) once it was finalized;
- the call's own checks on this rank (argument types, arrays, files it writes) and then one
  collective agreement over the call's communicator: an error found on any rank is raised
  on every rank, with the class and message of the lowest rank that found one, before any
  rank enters the job (the job's own errors are agreed by the programs' code);
- the transform's checked arguments handed over as typed settings keyed by its config's
  fields (the module fills the config with the program's value parsers, so the checks and
  messages are the program's); the other jobs' spelled as the program's command line (the
  module parses them with the program's own parser); the arrays with them.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import functools
import json
import re
import sys
from collections.abc import Callable
from typing import Optional, ParamSpec, TypeVar

import numpy as np

from . import _triada

#: The library's version, and the cells' arithmetic modes it knows.
VERSION: str = _triada.version()
CELL_MODES: tuple[str, ...] = tuple(_triada.cell_modes.split(", "))


def _start_mpi():
    """MPI running (MPIError if it was finalized); finalized at exit if this started it."""
    if _triada.mpi_start():
        atexit.register(_triada.mpi_finalize)


def handle(comm):
    """The Fortran handle of an mpi4py communicator; None (MPI's world) for None."""
    if comm is None:
        return None
    mpi = sys.modules.get("mpi4py.MPI")  # imported wherever a Comm exists
    if mpi is None or not isinstance(comm, mpi.Comm):
        raise TypeError(f"comm: an mpi4py communicator (MPI.Comm) or None expected, got "
                        f"{type(comm).__name__}")
    if comm == mpi.COMM_NULL:
        raise _triada.ConfigError("comm: MPI.COMM_NULL is not a communicator to run on")
    return int(comm.py2f())


def _handle_or_world(comm):
    """comm's handle, or None where comm is not one: its error is then agreed over MPI's
    world, which holds every rank that may be waiting."""
    try:
        return handle(comm)
    except Exception:
        return None


def _class_name(error):
    cls = type(error)
    return cls.__qualname__ if cls.__module__ == "builtins" else \
        f"{cls.__module__}.{cls.__qualname__}"


def _class_of(name):
    """The exception class named so (triada's or a built-in one); None for any other."""
    module, _, qualname = name.rpartition(".")
    cls = getattr(_triada, qualname, None) if module == "triada" else \
        getattr(builtins, name, None) if not module else None
    return cls if isinstance(cls, type) and issubclass(cls, Exception) else None


def _rebuilt(name, message):
    """The agreed error as this rank raises it: its class with its message, or
    triada.Error naming a class of another package."""
    cls = _class_of(name)
    if cls is not None:
        try:
            return cls(message)
        except Exception:  # a class that takes other arguments
            pass
    return _triada.Error(f"{name}: {message}")


def _raise_agreed(comm_handle, failure):
    """Agrees with the other ranks on `failure` (this rank's exception or None) and raises
    the lowest failing rank's on every rank; returns if no rank failed."""
    mine = None if failure is None else (_class_name(failure), str(failure))
    first = _triada.agree(mine, comm_handle)
    if first is None:
        return
    if first == mine and _class_of(first[0]) is type(failure):
        raise failure  # this rank's own, with its traceback
    raise _rebuilt(*first) from failure


@contextlib.contextmanager
def agreed(comm_handle):
    """The block runs on this rank alone; leaving it, every rank of the communicator agrees
    (collective: every rank must enter such a block at the same point)."""
    try:
        yield
    except Exception as e:
        _raise_agreed(comm_handle, e)
        raise  # not reached: this rank failed, so the agreement raised
    _raise_agreed(comm_handle, None)


P = ParamSpec("P")
R = TypeVar("R")
#: The collective rest of an entry point's call: run(comm_handle) -> its result.
Job = Callable[[Optional[int]], R]


def entry(local: Callable[P, Job[R]]) -> Callable[P, R]:
    """An entry point made of `local`: called with the entry point's arguments, it checks and
    prepares the call on this rank and returns run(comm_handle), the collective rest. Its
    errors, and those of its arguments' binding (an unknown keyword), are agreed. The entry
    point's signature is local's, returning what run returns."""
    @functools.wraps(local)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with _triada.serialized():
            _start_mpi()
            comm = kwargs.get("comm")  # keyword-only in every entry point
            with agreed(_handle_or_world(comm)):
                run = local(*args, **kwargs)
                comm_handle = handle(comm)
            return run(comm_handle)
    call.__annotations__ = dict(local.__annotations__)
    result = call.__annotations__.get("return")
    if isinstance(result, str) and result.startswith("Job[") and result.endswith("]"):
        call.__annotations__["return"] = result[4:-1]  # as help() and inspect show it
    return call


def rank(comm_handle):
    """This rank's number in the call's communicator."""
    return _triada.rank(comm_handle)


# ---- The jobs: checked arguments (an _args namespace) as settings or as a command line ----

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


def _mesh_keys(config):
    """Mesh config keys {"section.key": value} with their values as the INI file writes
    them (they win over mesh)."""
    return {key: _word(value) for key, value in (config or {}).items()}


def transform(a, comm_handle):
    """TransformJob on a's arrays, its settings keyed by the config's fields:
    (y, y's box, report dict, summary)."""
    settings = dict(
        transform_spec=a.transform, inverse=a.inverse, norm=a.norm, stage_order=a.stage_order,
        esop=a.esop, cell_mode=a.cell_mode, mesh=a.mesh, config=_mesh_keys(a.config),
        initial=a.initial is not None, coeffs=a.coeffs is not None, executor=a.executor,
        transport=a.transport, check=a.check, shuffle_seed=a.shuffle_seed, report=a.report,
        trace=a.trace, force=a.force, quiet=not a.verbose)
    matrices = [None, None, None] if a.coeffs is None else list(a.coeffs)
    y, box, text, summary = _triada.transform(settings, a.x, a.initial, matrices, comm_handle,
                                              a.distributed, a.shape, a.gather)
    return y, box, json.loads(text), summary


def layout(a, out_shape, comm_handle):
    """The brick layout of a run with a's mesh and config (the module's dict)."""
    settings = dict(mesh=a.mesh, config=_mesh_keys(a.config))
    return _triada.layout(settings, a.shape, out_shape, comm_handle)


def _named_as_arguments(error, named):
    """The error with the datasets of the arrays given as the input `named` ("inputs")
    named as the arguments that gave them ("A: ..." for inputs:/A)."""
    return type(error)(re.sub(re.escape(named) + r":/+([^\s:]+)", r"\1", str(error)))


def tcu(a, options, given, comm_handle):
    """triada-tcu's job with `options` (its option values by name) and the arrays `given`
    ({dataset: array}, read from memory as the datasets of an input named "inputs" would
    be, named as the arguments in errors): (summary, product, report dict)."""
    root = _triada.rank(comm_handle) == 0  # rank 0's arguments and arrays are the call's
    named = _triada.bcast_text("inputs" if given and root else "", comm_handle)
    in_path = "inputs" if given else a.input  # the arrays' name as --input
    args = ["triada-tcu"] + _options(**dict(options, input=in_path))
    try:
        summary, _, product, text = _triada.tcu(args, comm_handle, a.A, a.B,
                                                given if root else {})
    except _triada.Error as e:
        if not named:
            raise
        raise _named_as_arguments(e, named) from None
    return summary, product, json.loads(text)


def conv(a, network, operands, comm_handle):
    """triada-conv's job on one layer or a network file (`network`), with the layer's
    operands (input, weights; float64 or None): (table, outputs, report dict)."""
    spec = a.layer_or_network
    args = ["triada-conv"] + _options(
        network=spec if network else None, layer=None if network else _word(spec),
        method=a.method, mxu=a.mxu, batch=a.batch, latency=a.latency, cell_mode=a.cell_mode,
        executor=a.executor, mesh=a.mesh, seed=a.seed, verify=a.verify,
        verify_budget=a.verify_budget, max_layers=a.max_layers, report=a.report, csv=a.csv,
        force=a.force, input=None if a.input is None else "input",
        weights=None if a.weights is None else "weights")
    text, table, _, outputs = _triada.conv(args, comm_handle, operands[0], operands[1])
    return table, outputs, json.loads(text)
