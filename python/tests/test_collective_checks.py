"""Under mpirun with mpi4py (np 2 and 3), every check of the package's own made on one rank
only (argument_cases.py: wrong types, unknown keywords, the wrapper's value checks; on rank
0 and on the last rank) raises on every rank, with the class and message the same call
raises in one process, instead of leaving the other ranks waiting (collective_job.py; a
job that hangs fails on its timeout)."""

import json
import pathlib
import subprocess
import sys

import pytest

from argument_cases import calls
from conftest import clean_env

HERE = pathlib.Path(__file__).resolve().parent
LIMIT = 60  # seconds: the job takes a few; a hang is ended here


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_check_failing_on_one_rank_raises_on_every_rank(ranks, tmp):
    out = tmp / "outcomes.json"
    command = ["timeout", "-k", "10", str(LIMIT), "mpirun", "-q", "--oversubscribe", "--mca",
               "pml", "ob1", "-np", str(ranks), sys.executable, HERE / "collective_job.py", out]
    p = subprocess.run(list(map(str, command)), capture_output=True, text=True,
                       env=clean_env(), cwd=HERE, timeout=LIMIT + 30)
    text = p.stdout + p.stderr
    assert p.returncode != 124, "hung after the case last printed:\n" + text[-2000:]
    assert p.returncode == 0, text[-4000:]
    expected = {name: (cls.__name__, start) for name, _, _, cls, start in calls()}
    results = json.loads(out.read_text())
    assert len(results) == 2 * len(expected)
    for name, bad, outcomes in results:
        assert len(outcomes) == ranks
        cls, start = expected[name]
        for rank, (got, message) in enumerate(outcomes):
            assert got == cls, (name, bad, rank, got, message)
            assert [got, message] == outcomes[bad], (name, bad, rank, outcomes)
            assert message.startswith(start) if start else "unknown_keyword" in message


GEMT = """
import numpy as np
from mpi4py import MPI
import triada
try:
    triada.gemt(np.ones((64, 2, 2)), [np.ones((64, 64)), np.eye(2), np.eye(2)])
    outcome = "no error"
except Exception as e:
    outcome = f"{type(e).__name__} {e}"
outcomes = MPI.COMM_WORLD.gather(outcome, root=0)
if MPI.COMM_WORLD.rank == 0:
    print("\\n".join(outcomes))
"""


def test_a_gemt_matrix_too_large_for_another_rank_is_refused_on_every_rank():
    """Rank 0's matrices fit its memory but not rank 1's (TRIADA_MEMORY_LIMIT there): every
    rank raises the program's memory error before any matrix is sent."""
    python = [sys.executable, "-c", GEMT]
    command = ["timeout", "-k", "10", str(LIMIT), "mpirun", "-q", "--oversubscribe", "--mca",
               "pml", "ob1", "-np", "1", *python, ":", "-np", "1", "env",
               "TRIADA_MEMORY_LIMIT=1000", *python]
    p = subprocess.run(command, capture_output=True, text=True, env=clean_env(),
                       timeout=LIMIT + 30)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines() == ["InputError C1: the 64x64 matrix: needs 0.0625 MiB, "
                                     "0.000954 MiB available (TRIADA_MEMORY_LIMIT)"] * 2, \
        p.stdout + p.stderr


INTERCOMM_JOB = """
import numpy as np
from mpi4py import MPI
import triada
w = MPI.COMM_WORLD
half = w.Split(w.rank % 2, w.rank)
inter = half.Create_intercomm(0, w, 1 - w.rank % 2, 7)
for call in (lambda: triada.transform(np.ones((4, 4, 4)), "dct", comm=inter),
             lambda: triada.layout((4, 4, 4), comm=inter)):
    try:
        call()
        outcome = f"{w.rank} no error"
    except triada.MPIError as e:
        outcome = f"{w.rank} MPIError {e}"
    for line in w.gather(outcome, root=0) or []:  # one writer: the ranks' lines never mix
        print(line, flush=True)
"""


def test_an_intercommunicator_raises_on_every_rank():
    # It hung every rank in the first collective call; now an MPIError before any.
    command = ["timeout", "-k", "10", str(LIMIT), "mpirun", "-q", "--oversubscribe", "--mca",
               "pml", "ob1", "-np", "2", sys.executable, "-c", INTERCOMM_JOB]
    p = subprocess.run(command, capture_output=True, text=True, env=clean_env(), cwd=HERE,
                       timeout=LIMIT + 30)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    lines = sorted(p.stdout.splitlines())
    assert len(lines) == 4 and all("MPIError an intercommunicator: a job runs on an "
                                   "intracommunicator" in line for line in lines), lines
