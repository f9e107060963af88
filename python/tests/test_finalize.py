"""A call after MPI was finalized (mpi4py's MPI.Finalize()) raises triada.MPIError saying
so, from every entry point, and the process goes on and ends normally (Open MPI would abort
it on any MPI call)."""

import subprocess
import sys

from conftest import clean_env

SCRIPT = """
import numpy as np
from mpi4py import MPI
import triada
x = np.ones((2, 2, 2))
triada.transform(x, "dct")
MPI.Finalize()
calls = [lambda: triada.transform(x, "dct"), lambda: triada.gemt(x, [np.eye(2)] * 3),
         lambda: triada.layout((2, 2, 2)), lambda: triada.tcu("matmul", 4, m=4),
         lambda: triada.conv((1, 1, 3, 3, 1, 1, 1, 1, 0), mxu=2),
         lambda: triada.transform(x, "dct", comm=MPI.COMM_WORLD)]
for call in calls:
    try:
        call()
        print("no error")
    except triada.MPIError as e:
        print(type(e).__name__, e)
print("still running")
"""


def test_every_entry_point_raises_mpi_error_once_mpi_is_finalized():
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       env=clean_env(), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[-1] == "still running" and len(lines) == 7, p.stdout + p.stderr
    for line in lines[:-1]:
        assert line.startswith("MPIError MPI was finalized in this process"), line
