"""How every entry point of the package runs (README "Python"):

- one call at a time in the process: the module's lock, taken with the GIL released while
  it waits, held for the whole call, so calls from several threads are serialised;
- MPI started by the first call, and MPIError (not an abort) once it was finalized;
- the call's own checks on this rank (argument types, arrays, files it writes) and then one
  collective agreement over the call's communicator: an error found on any rank is raised
  on every rank, with the class and message of the lowest rank that found one, before any
  rank enters the job (the job's own errors are agreed by the programs' code).
"""

import atexit
import builtins
import contextlib
import functools
import sys

from . import _triada


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


def entry(local):
    """An entry point made of `local`: called with the entry point's arguments, it checks and
    prepares the call on this rank and returns run(comm_handle), the collective rest. Its
    errors, and those of its arguments' binding (an unknown keyword), are agreed."""
    @functools.wraps(local)
    def call(*args, **kwargs):
        with _triada.serialized():
            _start_mpi()
            comm = kwargs.get("comm")  # keyword-only in every entry point
            with agreed(_handle_or_world(comm)):
                run = local(*args, **kwargs)
                comm_handle = handle(comm)
            return run(comm_handle)
    return call
