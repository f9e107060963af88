"""Calls from several Python threads at once: serialised by the module, each result the
same bits, counters and report as the same call made alone, and the process ends cleanly
(threads_job.py, in a process of its own so that a crash fails the test). Under mpi4py at
MPI_THREAD_FUNNELED, a call from another thread than MPI's own raises MPIError."""

import pathlib
import subprocess
import sys

from conftest import clean_env

HERE = pathlib.Path(__file__).resolve().parent


def run(*command):
    p = subprocess.run([sys.executable, *map(str, command)], capture_output=True, text=True,
                       env=clean_env(), cwd=HERE, timeout=300)
    return p.returncode, p.stdout + p.stderr


def test_four_threads_calling_every_entry_point_get_the_serial_results():
    for _ in range(3):  # each a fresh process: MPI's start, the calls and the exit
        code, out = run(HERE / "threads_job.py", 10)
        assert code == 0 and out.strip() == "done", out


FUNNELED = """
import threading, numpy as np, mpi4py
mpi4py.rc.thread_level = "funneled"
from mpi4py import MPI
import triada
x = np.ones((2, 2, 2))
y, _ = triada.transform(x, "dct")  # MPI's own thread
errors = []
def other():
    try:
        triada.transform(x, "dct")
    except triada.MPIError as e:
        errors.append(str(e))
t = threading.Thread(target=other)
t.start()
t.join()
print(MPI.Query_thread() == MPI.THREAD_FUNNELED, errors)
"""


def test_a_funneled_mpi_refuses_calls_from_other_threads():
    code, out = run("-c", FUNNELED)
    assert code == 0, out
    assert out.startswith("True ['MPI runs at MPI_THREAD_FUNNELED: only the thread that "
                          "started it may call it"), out
