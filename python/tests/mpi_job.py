"""Run by test_mpi.py as `mpirun -np K python3 mpi_job.py OUTDIR`: the same calls at any
rank count, with mpi4py's communicator; rank 0 saves every result and report in
OUTDIR/npK.npz and OUTDIR/npK.json."""

import json
import pathlib
import sys

import numpy as np
from mpi4py import MPI

import triada

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
rng = np.random.default_rng(11)
x = rng.standard_normal((9, 7, 5)) * (rng.random((9, 7, 5)) < 0.6)
c = [rng.standard_normal((9, 4)), rng.standard_normal((7, 7)) + 1j * rng.standard_normal((7, 7)),
     rng.standard_normal((5, 6))]
y0 = rng.standard_normal((4, 7, 6))
results, reports = {}, {}


def assemble(part, shape, dtype):
    """Every brick rank's part (a BrickArray) put together on rank 0."""
    parts = comm.gather(None if part is None else (part.lo, part.hi, np.asarray(part)), root=0)
    if rank != 0:
        return None
    whole = np.full(shape, np.nan, dtype=dtype)
    for p in parts:
        if p is not None:
            whole[tuple(slice(a, b) for a, b in zip(p[0], p[1]))] = p[2]
    return whole


# Input on rank 0, output gathered there.
results["dct"], reports["dct"] = triada.transform(x if rank == 0 else None, "dct", comm=comm)
# Each rank's own parts in and out.
lay = triada.layout(x.shape, comm=comm)
part = None if lay["in_slices"] is None else x[lay["in_slices"]]
yp, reports["dct_distributed"] = triada.transform(part, "dct", comm=comm, distributed=True,
                                                  shape=x.shape, gather=False)
results["dct_distributed"] = assemble(yp, x.shape, np.float64)
# gemt, complex, with an initial output, on the world (comm=None), actuators colocated.
results["gemt"], reports["gemt"] = triada.gemt(
    x if rank == 0 else None, c if rank == 0 else None, initial=y0 if rank == 0 else None,
    config={"ranks.actuators": "colocated"})
# Y0 distributed as well: its parts are the output's.
lay = triada.layout(x.shape, (4, 7, 6), config={"ranks.actuators": "colocated"}, comm=comm)
parts = [None if lay[k] is None else a[lay[k]] for k, a in (("in_slices", x),
                                                             ("out_slices", y0))]
yp, reports["gemt_distributed"] = triada.gemt(
    parts[0], c if rank == 0 else None, initial=parts[1], config={"ranks.actuators": "colocated"},
    distributed=True, shape=x.shape, gather=False, comm=comm)
results["gemt_distributed"] = assemble(yp, (4, 7, 6), np.complex128)
# The planar MXU: a layer's work units and a sweep's points over the ranks.
outputs, reports["conv"] = triada.conv((2, 3, 9, 9, 5, 3, 3, 1, 1), mxu=4, verify=True,
                                       comm=comm)
# Per-axis strides and dilations, asymmetric pads, groups: ONNX's Conv attributes.
axes_out, reports["conv_axes"] = triada.conv(
    (2, 4, 9, 10, 4, 3, 2, (2, 1), (1, 0, 2, 1), (1, 2), 2), mxu=4, verify=True, comm=comm)
_, reports["tcu"] = triada.tcu("matmul", m=16, latency=2, sweep=True, sizes=(8, 12), comm=comm)
if rank == 0:
    results["conv_explicit"] = outputs[0]["explicit"]
    results["conv_implicit"] = outputs[0]["implicit"]
    results["conv_axes_explicit"] = axes_out[0]["explicit"]
    results["conv_axes_implicit"] = axes_out[0]["implicit"]
    out = pathlib.Path(sys.argv[1])
    np.savez(out / f"np{size}.npz", **results)
    (out / f"np{size}.json").write_text(json.dumps(reports))
