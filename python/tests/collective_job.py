"""Run by test_collective_checks.py as `mpirun -np K python3 collective_job.py OUT`: every
case of argument_cases.py made on one rank only (rank 0, then the last rank), the other
ranks making the valid call; each rank records what it raised. Rank 0 writes OUT, a JSON
list of [case, bad rank, [[class, message] per rank]]. A case that is not agreed leaves
ranks waiting for each other: the job hangs and its timeout fails the test."""

import json
import sys

from mpi4py import MPI

from argument_cases import BASE, calls

comm = MPI.COMM_WORLD
results = []
for name, fn, kwargs, cls, start in calls():
    for bad in (0, comm.size - 1):
        entry = name.split("-")[0]
        try:
            fn(**(kwargs if comm.rank == bad else BASE[entry][1]))
            outcome = ["no error", ""]
        except Exception as e:
            outcome = [type(e).__name__, str(e)]
        outcomes = comm.gather(outcome, root=0)
        if comm.rank == 0:
            results.append([name, bad, outcomes])
            print(name, bad, flush=True)  # the last case begun, should one hang
if comm.rank == 0:
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(results, f)
