"""Under mpirun, a call whose arguments differ between ranks raises ConfigError on every
rank naming the argument (it was "rank 0's decide": a rank that asked for a DFT got a DCT
part; layout() did not even follow that); calls of two threads that cross between ranks
raise instead of returning the other thread's result; on a communicator other than the
world the ranks named are its own; a comm that differs between ranks
(COMM_SELF on one, the world on another) raises MPIError after TRIADA_JOIN_TIMEOUT instead
of hanging every rank."""

import subprocess
import sys
import time

import pytest

from conftest import clean_env

LIMIT = 90  # seconds; a hang is ended here

DIFFERING = """
import numpy as np
from mpi4py import MPI
import triada
w = MPI.COMM_WORLD
last = w.rank == w.size - 1
x = np.arange(60.0).reshape(4, 5, 3)
calls = {
    "norm": lambda: triada.transform(x, "dct", norm="backward" if last else "ortho"),
    "transform": lambda: triada.transform(x, "dft" if last else "dct"),
    "config": lambda: triada.transform(x, config={"energy.mac_pj": 10} if last else None),
    "gather": lambda: triada.transform(x, gather=not last),
    "shape": lambda: triada.layout((4, 4, 5 if last else 4)),
    "seed": lambda: triada.tcu("dft", size=16, m=16, sweep=False, seed=2 if last else 1),
    "mxu": lambda: triada.conv((1, 2, 5, 5, 2, 3, 3, 1, 1), mxu=8 if last else 4),
}
for name, call in calls.items():
    try:
        call()
        outcome = "no error"
    except Exception as e:
        outcome = f"{type(e).__name__}: {e}"
    for line in w.gather(outcome, root=0) or []:
        print(name, "|", line, flush=True)
# x differs on the last rank: arrays are rank 0's (not compared), the call runs
y, _ = triada.transform(x + (1.0 if last else 0.0), "dct")
for line in w.gather("ran" if (y is not None) == (w.rank == 0) else "wrong", root=0) or []:
    print("arrays", "|", line, flush=True)
"""

EXPECTED = {
    "norm": ("'ortho'", "'backward'"),
    "transform": ("'dct'", "'dft'"),
    "config": ("None", "{'energy.mac_pj': 10}"),
    "gather": ("True", "False"),
    "shape": ("(4, 4, 4)", "(4, 4, 5)"),
    "seed": ("1", "2"),
    "mxu": ("4", "8"),
}


def mpirun(ranks, *command, env=None):
    full = ["timeout", "-k", "10", str(LIMIT), "mpirun", "-q", "--oversubscribe", "--mca",
            "pml", "ob1", "-np", str(ranks), *command]
    return subprocess.run(full, capture_output=True, text=True, env=env or clean_env(),
                          timeout=LIMIT + 30)


@pytest.mark.parametrize("ranks", [2, 3])
def test_an_argument_differing_on_one_rank_raises_on_every_rank_naming_it(ranks):
    p = mpirun(ranks, sys.executable, "-c", DIFFERING)
    text = p.stdout + p.stderr
    assert p.returncode == 0, text[-3000:]
    lines = [line.split(" | ", 1) for line in p.stdout.splitlines() if " | " in line]
    for name, (value0, value) in EXPECTED.items():
        got = [outcome for n, outcome in lines if n == name]
        assert got == [f"ConfigError: the ranks disagree on {name}: rank 0 passed {value0}, "
                       f"rank {ranks - 1} passed {value} (every rank makes the same call; "
                       f"only arrays are each rank's own)"] * ranks, (name, got)
    assert [outcome for n, outcome in lines if n == "arrays"] == ["ran"] * ranks, text[-2000:]


CROSSING = """
import threading
import numpy as np
from mpi4py import MPI
import triada
w = MPI.COMM_WORLD
x = np.arange(60.0).reshape(4, 5, 3)
outcomes = []
def call(kind):
    for _ in range(5):
        try:
            _, r = triada.transform(x, kind)
            got = r["problem"]["transform"]
            outcomes.append("ok" if got == ",".join([kind] * 3) else f"WRONG {kind} got {got}")
        except triada.ConfigError as e:
            outcomes.append("refused" if "the ranks disagree on" in str(e) else f"other {e}")
threads = [threading.Thread(target=call, args=(k,)) for k in ("dct", "dft")]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(w.rank, sorted(set(outcomes)), len(outcomes), flush=True)
"""


@pytest.mark.parametrize("ranks", [2, 3])
def test_calls_of_two_threads_crossing_between_ranks_never_return_the_others_result(ranks):
    p = mpirun(ranks, sys.executable, "-c", CROSSING)
    text = p.stdout + p.stderr
    assert p.returncode == 0, text[-3000:]
    lines = p.stdout.splitlines()
    assert len(lines) == ranks, text[-3000:]
    for line in lines:
        rank, rest = line.split(" ", 1)
        assert rest.endswith(" 10"), line  # every call returned or raised
        assert "WRONG" not in rest and "other" not in rest, line


SUB_COMM = """
import numpy as np
from mpi4py import MPI
import triada
w = MPI.COMM_WORLD
reversed_ = w.Split(0, w.size - w.rank)  # the world's last rank is its rank 0
last = w.rank == w.size - 1
try:
    triada.transform(np.ones((4, 4, 4)), "dft" if last else "dct", comm=reversed_)
    outcome = "no error"
except triada.ConfigError as e:
    outcome = str(e)
y, _ = triada.transform(np.ones((4, 4, 4)), "dct", comm=reversed_)
for line in w.gather(f"{outcome} | {y is not None}", root=0) or []:
    print(line, flush=True)
"""


@pytest.mark.parametrize("ranks", [2, 3])
def test_on_a_communicator_other_than_the_world_its_ranks_are_named(ranks):
    p = mpirun(ranks, sys.executable, "-c", SUB_COMM)
    text = p.stdout + p.stderr
    assert p.returncode == 0, text[-3000:]
    expected = ("the ranks disagree on transform: rank 0 passed 'dft', rank 1 passed 'dct' "
                "(every rank makes the same call; only arrays are each rank's own)")
    # every rank refused; then the agreeing call gathers y on the communicator's rank 0
    assert p.stdout.splitlines() == [f"{expected} | {r == ranks - 1}" for r in range(ranks)], \
        text[-3000:]


DIFFERENT_COMM = """
import numpy as np
from mpi4py import MPI
import triada
w = MPI.COMM_WORLD
comm = MPI.COMM_SELF if w.rank == 1 else w
try:
    triada.transform(np.ones((4, 4, 4)), "dct", comm=comm)
    print(w.rank, "ran", flush=True)
except triada.MPIError as e:
    print(w.rank, "MPIError", e, flush=True)
"""


def test_a_comm_that_differs_between_ranks_raises_instead_of_hanging():
    env = dict(clean_env(), TRIADA_JOIN_TIMEOUT="3")
    start = time.monotonic()
    p = mpirun(2, "-x", "TRIADA_JOIN_TIMEOUT", sys.executable, "-c", DIFFERENT_COMM, env=env)
    took = time.monotonic() - start
    text = p.stdout + p.stderr
    assert p.returncode not in (124, 137), "hung:\n" + text[-3000:]
    assert took < LIMIT, took
    lines = sorted(p.stdout.splitlines())
    # Rank 1 ran on its own COMM_SELF, as it asked; rank 0 waited for rank 1 in the world.
    assert "1 ran" in lines, text[-3000:]
    assert any(line.startswith("0 MPIError rank 0 of 2: the other ranks of the call's "
                               "communicator did not join the call within 3 s") for line in lines), \
        text[-3000:]
    assert p.returncode != 0  # the process ended by MPI_Abort: every rank gone
