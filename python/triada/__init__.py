"""The TriADA simulator from Python.

The programs' jobs on numpy arrays, in one process or under ``mpirun``:

- ``transform`` and ``gemt``: triada-transform (3D DFT, DCT, DHT, WHT, 3-mode products)
  on the simulated 3D mesh;
- ``tcu``: triada-tcu (the Tensor-Core-Unit algorithms on the planar MXU);
- ``conv``: triada-conv (convolution layers on the planar MXU);
- ``conv_onnx``, ``onnx_layers``: an ONNX model's Conv, ConvTranspose, Gemm and MatMul
  nodes as those layers (``triada.onnx_net``; needs python3-onnx, imported on first use);
- ``layout``: which part of a tensor each rank holds (for distributed calls).

Each lives in a submodule by concern (``triada.transform``: transform, gemt;
``triada.tcu``; ``triada.conv``; ``triada.layouts``: layout, BrickArray;
``triada.errors``: the exception classes; ``triada.configs``: CELL_MODES and the types of
the hints), and every public name is importable from ``triada`` itself. The functions
shadow their submodules' names as attributes of ``triada``: import a submodule's other
names with ``from triada.transform import gemt``.

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

from typing import TYPE_CHECKING, Any

from . import _calls, data
from .configs import CELL_MODES
from .conv import conv
from .errors import ConfigError, Error, HDF5Error, InputError, MPIError
from .layouts import BrickArray, layout
from .tcu import tcu
from .transform import gemt, transform

__version__: str = _calls.VERSION
__all__ = ["transform", "gemt", "layout", "tcu", "conv", "conv_onnx", "onnx_layers",
           "OnnxLayer", "to_network", "BrickArray", "CELL_MODES", "Error", "ConfigError",
           "InputError", "MPIError", "HDF5Error"]

if TYPE_CHECKING:
    from .onnx_net import OnnxLayer, conv_onnx, onnx_layers, to_network

_ONNX_NAMES = ("OnnxLayer", "conv_onnx", "onnx_layers", "to_network")


def __getattr__(name: str) -> Any:
    """triada.onnx_net's names, loaded on first use (so ``python3 -m triada.onnx_net``
    runs the module once)."""
    if name in _ONNX_NAMES:
        from . import onnx_net
        return getattr(onnx_net, name)
    raise AttributeError(f"module 'triada' has no attribute {name!r}")
