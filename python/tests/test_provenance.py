"""The module's reports record their provenance as the programs' do (doc/design.md §5.6):
the same keys, build, libraries and host, with the interpreter's own command line."""

import shlex
import socket
import sys

from conftest import index_tensor, load_json, run_program, triada

KEYS = {"program", "version", "commit", "command_line", "host", "date", "ranks", "mpi_library",
        "hdf5_library", "kernels"}


def python_words():
    return list(getattr(sys, "orig_argv", [sys.executable] + sys.argv))


def version_lines():
    code, out, err = run_program("triada-transform", "--version")
    assert code == 0, err
    lines = out.splitlines()
    return {"version": lines[0].split()[1], "commit": lines[1].split()[1],
            "mpi_library": lines[2][len("MPI: "):], "hdf5_library": lines[3][len("HDF5: "):],
            "kernels": lines[4].split()[1]}


def check(p, program, ranks=1):
    assert set(p) == KEYS, sorted(p)
    assert p["program"] == program
    assert shlex.split(p["command_line"]) == python_words()
    assert p["host"] == socket.gethostname()
    assert p["ranks"] == ranks
    assert p["version"] == triada.__version__
    for k, v in version_lines().items():  # the programs' build and libraries
        assert p[k] == v, (k, p[k], v)


def test_transform_report_records_the_interpreters_command_line():
    _, report = triada.transform(index_tensor((4, 3, 2)), "dct")
    check(report["provenance"], "triada-transform")


def test_tcu_and_conv_reports_record_it_too(tmp):
    _, report = triada.tcu("matmul", size=8, m=4, latency=0, report=tmp / "t.json")
    check(load_json(tmp / "t.json")["provenance"], "triada-tcu")
    _, report = triada.conv("1,2,5,5,3,3,3,1,1", mxu=4)
    check(report["provenance"], "triada-conv")
