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
