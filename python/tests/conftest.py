"""Shared by the Python tests: where the programs are, running them (and mpirun) in a clean
environment, tensors of exact small values, and reports compared without what differs
between any two runs (times, memory) or between files and arrays (the tensors' names)."""

import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

SRC = pathlib.Path(os.environ.get("TRIADA_SRC", pathlib.Path(__file__).resolve().parents[2]))
BIN = pathlib.Path(os.environ.get("TRIADA_BIN", SRC / "build"))
sys.path.insert(0, str(BIN / "python"))  # the built package, before any installed one

import triada  # noqa: E402

# Variables that tie a process to an MPI job: this test process is an MPI singleton once
# triada has run, and a program or mpirun started from it must not join that job.
_KEEP = {"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
         "OMPI_MCA_rmaps_base_oversubscribe", "OMPI_MCA_pml"}


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if k in _KEEP or not k.startswith(("OMPI_", "PMIX_", "ORTE_", "OPAL_"))}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_pml="ob1",
               PYTHONPATH=str(BIN / "python"))
    return env


def run_program(name, *args, cwd=None):
    """A program of the build, in one process: (exit code, stdout, stderr)."""
    p = subprocess.run([str(BIN / name), *map(str, args)], capture_output=True, text=True,
                       env=clean_env(), cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


def mpirun(np_, *command, cwd=None):
    """mpirun -np NP COMMAND: (exit code, stdout + stderr)."""
    p = subprocess.run(["mpirun", "-q", "--oversubscribe", "--mca", "pml", "ob1",
                        "-np", str(np_), *map(str, command)], capture_output=True, text=True,
                       env=clean_env(), cwd=cwd, timeout=180)
    return p.returncode, p.stdout + p.stderr


def index_tensor(shape, dtype=np.float64, sparsity=0.0, seed=1):
    """Small exact values (the flat index mod 7, minus 3), a fraction of them zero."""
    x = (np.arange(int(np.prod(shape))) % 7 - 3).reshape(shape).astype(np.float64)
    if sparsity:
        x[np.random.default_rng(seed).random(shape) < sparsity] = 0
    return x.astype(dtype)


def write_h5(path, **datasets):
    import h5py
    with h5py.File(path, "w") as f:
        for name, values in datasets.items():
            f[name] = values
    return path


# Keys that differ between any two runs, or name files where the module names arrays.
_RUN_KEYS = {"wall_seconds", "simulation_seconds", "stage_seconds", "stage_time",
             "direct_seconds", "memory",
             "provenance"}  # the command line and date differ; test_provenance.py checks it
_NAME_KEYS = {"input", "output", "coeffs", "initial", "weights"}


def comparable(report, names=True):
    """The report without run-to-run figures (and, if names, without tensor names)."""
    if isinstance(report, dict):
        return {k: comparable(v, names) for k, v in report.items()
                if k not in _RUN_KEYS and not (names and k in _NAME_KEYS)}
    if isinstance(report, list):
        return [comparable(v, names) for v in report]
    return report


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cli_error(stderr, app):
    """The message of the program's one error line."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    prefix = app + ": error: "
    assert lines[0].startswith(prefix), stderr
    return lines[0][len(prefix):]


# The programs' words that a call says as its arguments (doc/python.md "Messages"), for
# the options these tests give; longer ones first.
CALL_WORDS = [
    ("--transform gemt needs --coeffs FILE.h5 with datasets /C1 /C2 /C3",
     "transform='gemt' needs coeffs=(C1, C2, C3)"),
    ("(use --force to overwrite)", "(use force=True to overwrite)"), (" (see --help)", ""),
    ("--energy.mac_pj", 'config["energy.mac_pj"]'), ("--ranks.grid", 'config["ranks.grid"]'),
    ("--stage-order", "stage_order"), ("--cell-mode", "cell_mode"), ("--transform", "transform"),
    ("--executor", "executor"), ("--initial", "initial"), ("--norm", "norm"),
    ("--mesh", "mesh"), ("--algo", "algo"), ("--size", "size"), ("--layer", "layer"),
    ("--mxu", "mxu"), ("--batch", "batch"), ("--m", "m"),
]


def call_error(stderr, app):
    """The program's one error line as a call's message says it."""
    message = cli_error(stderr, app)
    for program, call in CALL_WORDS:
        message = re.sub(re.escape(program) + r"(?![\w-])", lambda _: call, message)
    return message


@pytest.fixture
def tmp(tmp_path):
    return tmp_path
