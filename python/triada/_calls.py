"""How every entry point reaches the extension _triada, its one caller (README "Python"):

- one call at a time in the process: the module's lock, taken with the GIL released while
  it waits, held for the whole call, so calls from several threads are serialised;
- MPI started by the first call, and MPIError (not an abort) once it was finalized;
- the call's own checks on this rank (argument types, arrays, files it writes) and then one
  collective agreement over the call's communicator: an error found on any rank is raised
  on every rank, with the class and message of the lowest rank that found one, before any
  rank enters the job (the job's own errors are agreed by the programs' code);
- the ranks' arguments compared (all but the arrays and comm, with the calling thread's
  name): ConfigError on every rank naming the first that differs (_args.described);
- each job's checked arguments handed over as typed settings keyed by its config's fields,
  from which the module fills the config with the program's
  value parsers and builds the job, so the checks and messages are the program's; the
  arrays with them (no command line is built or parsed);
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

from . import _args, _triada

#: The library's version, and the cells' arithmetic modes it knows.
VERSION: str = _triada.version()
CELL_MODES: tuple[str, ...] = tuple(_triada.cell_modes.split(", "))


_exit_hooked = False


def _start_mpi():
    """MPI running (MPIError if it was finalized); finalized at exit if this started it,
    and ended by MPI_Abort at exit if a call gave up waiting for its ranks (whoever
    finalizes: atexit runs this hook before mpi4py's)."""
    global _exit_hooked
    if _triada.mpi_start():
        atexit.register(_triada.mpi_finalize)
    if not _exit_hooked:
        atexit.register(_triada.abort_if_abandoned)
        _exit_hooked = True


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


#: Options named otherwise by an entry point's arguments.
_RENAMED = {"transform": {"input": "x", "quiet": "verbose"}, "gemt": {"input": "x"}}

P = ParamSpec("P")
R = TypeVar("R")
#: The collective rest of an entry point's call: run(comm_handle) -> its result.
Job = Callable[[Optional[int]], R]


def entry(local: Callable[P, Job[R]]) -> Callable[P, R]:
    """An entry point made of `local`: called with the entry point's arguments, it checks and
    prepares the call on this rank and returns run(comm_handle), the collective rest. Its
    errors, and those of its arguments' binding (an unknown keyword), are agreed. The entry
    point's signature is local's, returning what run returns."""
    renamed = _RENAMED.get(local.__name__, {})

    @functools.wraps(local)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with _triada.serialized():
            _start_mpi()
            comm = kwargs.get("comm")  # keyword-only in every entry point
            token = _args.call_arguments.set([])
            try:
                with agreed(_handle_or_world(comm)):
                    run = local(*args, **kwargs)
                    comm_handle = handle(comm)
                _triada.agree_call(_args.call_arguments.get(), comm_handle)
            finally:
                _args.call_arguments.reset(token)
            try:
                return run(comm_handle)
            except _triada.Error as e:
                error = _reworded(e, renamed)
                if error is e:
                    raise
                raise error from None
    call.__annotations__ = dict(local.__annotations__)
    result = call.__annotations__.get("return")
    if isinstance(result, str) and result.startswith("Job[") and result.endswith("]"):
        call.__annotations__["return"] = result[4:-1]  # as help() and inspect show it
    return call


# The programs' words in a job's messages, as the package's arguments spell them (most
# options are their argument with "-" as "_": --stage-order is stage_order).
_SPELLED = [
    (re.compile(r"unrecognised option '--([^']*)'"), r"config: unknown key '\1'"),
    (re.compile(r"--coeffs FILE\.h5 with datasets /C1 /C2 /C3"), "coeffs=(C1, C2, C3)"),
    (re.compile(r"--transform (\S+) needs"), r"transform='\1' needs"),
    (re.compile(r"--(input|weights) \1(?=[:\s])"), r"\1"),  # conv's operands, named as such
    (re.compile(r" \(see --help\)"), ""),
    (re.compile(r": no such dataset\b"), ": missing"),  # tcu's arrays by name
    (re.compile(r"TransformJob::plan"), "triada.layout"),
    (re.compile(r"(?<![\w'-])--([a-z][a-z0-9_]*\.[a-z0-9_]+)"), r'config["\1"]'),  # --s.key
]
# An option outside quotes (a quoted one is a value the caller gave, as a config key).
_OPTION = re.compile(r"(?<![\w'-])--([a-z][a-z0-9-]*)")


def in_python_words(message, renamed=None):
    """A job's message with the programs' options named as the call's arguments
    (`renamed`: {option: argument} where they differ, as transform's --input is x)."""
    for pattern, words in _SPELLED:
        message = pattern.sub(words, message)
    renamed = renamed or {}
    return _OPTION.sub(lambda m: renamed.get(m.group(1), m.group(1).replace("-", "_")), message)


def _reworded(error, renamed):
    """The job's error of the package's class, its message in the call's words."""
    words = in_python_words(str(error), renamed)
    if words == str(error):
        return error
    try:
        return type(error)(words)
    except Exception:  # a class that takes other arguments
        return error


def rank(comm_handle):
    """This rank's number in the call's communicator."""
    return _triada.rank(comm_handle)


# ---- The jobs: checked arguments (an _args namespace) to the module ----

def _word(value):
    """A mesh key's value as the INI file writes it (values checked by _args)."""
    if isinstance(value, (bool, np.bool_)):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


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
    text = re.sub(re.escape(named) + r":/+([^\s:]+)", r"\1", str(error))
    prefix = named + ": /"
    if text.startswith(prefix):  # "inputs: /A is 8x8 but /B is 16x16": A and B
        text = re.sub(r"(?<![\w/])/([A-Za-z]\w*)\b", r"\1", text[len(prefix) - 1:])
    return type(error)(text)


def tcu(settings, given, comm_handle):
    """triada-tcu's job with `settings` (TcuConfig's fields by name) and the arrays `given`
    ({dataset: array}, read from memory as the datasets of an input named "inputs" would
    be, named as the arguments in errors): (summary, product, report dict)."""
    root = _triada.rank(comm_handle) == 0  # rank 0's settings and arrays are the call's
    named = _triada.bcast_text("inputs" if given and root else "", comm_handle)
    if given:
        settings = dict(settings, input="inputs")
    try:
        summary, _, product, text = _triada.tcu(settings, given if root else {}, comm_handle)
    except _triada.Error as e:
        if not named:
            raise
        raise _named_as_arguments(e, named) from None
    return summary, product, json.loads(text)


def conv(settings, operands, comm_handle):
    """triada-conv's job with `settings` (ConvConfig's fields by name) and the layer's
    operands (input, weights; float64 or None, rank 0's, named "input" and "weights"):
    (table, outputs, report dict)."""
    for name, value in zip(("input", "weights"), operands):
        if value is not None:
            settings = dict(settings, **{name: name})
    text, table, _, outputs = _triada.conv(settings, *operands, comm_handle)
    return table, outputs, json.loads(text)
