"""Under mpirun with mpi4py (mpi_job.py) at 1, 2, 3 and 5 ranks (5: two brick ranks and three
actuator ranks): input on rank 0 or in per-rank parts, output gathered or left in parts,
give the same bits and counters at every rank count, equal to a run in this process."""

import json
import pathlib
import sys

import numpy as np
import pytest

from conftest import comparable, mpirun, triada

HERE = pathlib.Path(__file__).resolve().parent
RANKS = (1, 2, 3, 5)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpi")
    for np_ in RANKS:
        code, text = mpirun(np_, sys.executable, HERE / "mpi_job.py", out)
        assert code == 0, text
    return {n: (np.load(out / f"np{n}.npz"), json.loads((out / f"np{n}.json").read_text()))
            for n in RANKS}


def bits(a):
    return a.view(np.uint64)


# What does not depend on the rank count (the mpi section and the layout do).
def counted(report):
    return {k: report[k] for k in ("steps", "counters", "cycles", "energy_pj", "physical")}


def test_every_rank_count_gives_the_same_bits_and_counters(runs):
    ref, ref_reports = runs[1]
    for n in RANKS:
        res, reports = runs[n]
        for name in ref.files:
            assert np.array_equal(bits(res[name]), bits(ref[name])), (n, name)
        for name in ("dct", "dct_distributed", "gemt", "gemt_distributed"):
            assert counted(reports[name]) == counted(ref_reports[name]), (n, name)
        for name in ("conv", "conv_axes"):
            assert comparable(reports[name])["layers"] == comparable(ref_reports[name])["layers"]
        assert reports["conv_axes"]["layers"][0]["verified"] is True
        assert [r["macs"] for r in reports["tcu"]["sweep"]] == \
            [r["macs"] for r in ref_reports["tcu"]["sweep"]]


def test_parts_in_and_out_give_the_gathered_bits(runs):
    for n in RANKS:
        res, reports = runs[n]
        assert np.array_equal(bits(res["dct_distributed"]), bits(res["dct"]))
        assert np.array_equal(bits(res["gemt_distributed"]), bits(res["gemt"]))
        assert reports["dct"]["mesh"]["world_size"] == n


def test_the_layout_is_the_programs(runs):
    _, reports = runs[5]
    assert reports["dct"]["mesh"]["actuator_ranks"] == 3
    assert reports["dct"]["mesh"]["brick_ranks"] == [2, 1, 1]
    assert reports["gemt"]["mesh"]["actuator_ranks"] == 0  # colocated
    assert np.prod(reports["gemt"]["mesh"]["brick_ranks"]) == 5


def test_the_same_calls_in_this_process_give_the_same_bits(runs):
    res, reports = runs[2]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((9, 7, 5)) * (rng.random((9, 7, 5)) < 0.6)
    y, r = triada.transform(x, "dct")
    assert np.array_equal(bits(y), bits(res["dct"]))
    assert counted(r) == counted(reports["dct"])
