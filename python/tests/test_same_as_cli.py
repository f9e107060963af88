"""The module runs the programs' jobs: on the same input its report equals the program's
JSON report (but for run times, memory and the tensors' names), its result the program's
output bit for bit, and its errors carry the program's one-line messages."""

import numpy as np
import pytest

from conftest import (SRC, call_error, comparable, index_tensor, load_json, run_program, triada,
                      write_h5)


def h5_read(path, name="y"):
    import h5py
    with h5py.File(path, "r") as f:
        return f[name][()]


@pytest.mark.parametrize("case", ["dct", "dft_initial", "gemt", "dense_colocated_fp32"])
def test_transform_report_and_bits_equal_the_programs(tmp, case):
    x = index_tensor((8, 6, 5), sparsity=0.4)
    rng = np.random.default_rng(5)
    c = [rng.standard_normal((8, 3)), rng.standard_normal((6, 6)), rng.standard_normal((5, 9))]
    write_h5(tmp / "in.h5", x=x)
    write_h5(tmp / "y0.h5", y0=index_tensor((8, 6, 5)))
    write_h5(tmp / "c.h5", C1=c[0], C2=c[1], C3=c[2])
    cli = ["--input", tmp / "in.h5", "--output", tmp / "out.h5", "--report", tmp / "r.json",
           "--quiet"]
    kw = {}
    if case == "dct":
        cli += ["--transform", "dct"]
        kw = dict(transform="dct")
    elif case == "dft_initial":
        cli += ["--transform", "dft", "--initial", tmp / "y0.h5", "--norm", "backward"]
        kw = dict(transform="dft", initial=h5_read(tmp / "y0.h5", "y0"), norm="backward")
    elif case == "gemt":
        cli += ["--transform", "gemt", "--coeffs", tmp / "c.h5", "--stage-order", "213"]
        kw = dict(transform="gemt", coeffs=c, stage_order="213")
    else:
        cli += ["--transform", "dht", "--mesh", SRC / "meshcfg/dense.ini", "--cell-mode", "fp32",
                "--ranks.actuators", "colocated", "--mesh.cells", "4,6,5"]
        kw = dict(transform="dht", mesh=SRC / "meshcfg/dense.ini", cell_mode="fp32",
                  config={"ranks.actuators": "colocated", "mesh.cells": (4, 6, 5)})
    code, _, err = run_program("triada-transform", *cli)
    assert code == 0, err
    y, report = triada.transform(x, **kw)
    assert comparable(report) == comparable(load_json(tmp / "r.json"))
    assert np.array_equal(y.view(np.uint64), h5_read(tmp / "out.h5").view(np.uint64))
    assert report["problem"]["input"] == "x" and report["problem"]["output"] == "y"


def test_report_and_trace_files_are_written_as_the_program_writes_them(tmp):
    x = index_tensor((4, 4, 4))
    _, report = triada.transform(x, "wht", report=tmp / "r.json", trace=tmp / "t.csv")
    assert load_json(tmp / "r.json") == report
    assert (tmp / "t.csv").read_text().startswith("step,stage,axis,pivot")
    with pytest.raises(triada.InputError) as e:
        triada.transform(x, "wht", report=tmp / "r.json")
    write_h5(tmp / "x.h5", x=x)
    code, _, err = run_program("triada-transform", "--input", "x.h5", "--output", "o.h5",
                               "--transform", "wht", "--report", tmp / "r.json", cwd=tmp)
    assert code == 1 and str(e.value) == call_error(err, "triada-transform")


# (Python arguments, the program's extra arguments): both refuse them with one message.
OPTION_ERRORS = [
    (dict(transform="dct", norm="unitary"), ["--transform", "dct", "--norm", "unitary"]),
    (dict(transform="dct", stage_order="112"), ["--transform", "dct", "--stage-order", "112"]),
    (dict(transform="dtc"), ["--transform", "dtc"]),
    (dict(transform=("dct", "dft")), ["--transform", "dct,dft"]),
    (dict(transform="dct", executor="fast"), ["--transform", "dct", "--executor", "fast"]),
    (dict(transform="dct", cell_mode="fp8"), ["--transform", "dct", "--cell-mode", "fp8"]),
    (dict(transform="gemt"), ["--transform", "gemt"]),
    (dict(transform="dct", config={"energy.mac_pj": -1}),
     ["--transform", "dct", "--energy.mac_pj", "-1"]),
    (dict(transform="dct", config={"ranks.grid": "2,1,1"}),
     ["--transform", "dct", "--ranks.grid", "2,1,1"]),
    (dict(transform="dct", mesh="missing.ini"), ["--transform", "dct", "--mesh", "missing.ini"]),
]


@pytest.mark.parametrize("kw, cli", OPTION_ERRORS)
def test_option_errors_are_config_errors_with_the_programs_message(tmp, kw, cli):
    write_h5(tmp / "x.h5", x=index_tensor((4, 6, 5)))
    code, _, err = run_program("triada-transform", "--input", "x.h5", "--output", "o.h5", *cli,
                               cwd=tmp)
    with pytest.raises(triada.ConfigError) as e:
        triada.transform(index_tensor((4, 6, 5)), **kw)
    assert code == 2 and str(e.value) == call_error(err, "triada-transform")


def test_input_errors_name_the_argument_where_the_program_names_the_file(tmp):
    x = index_tensor((6, 4, 4))
    write_h5(tmp / "x.h5", x=x)
    write_h5(tmp / "c.h5", C1=np.ones((5, 2)), C2=np.eye(4), C3=np.eye(4))
    write_h5(tmp / "h.h5", x=x.astype(np.float16))
    cases = [  # (a call, the program's arguments, its file names -> the module's names)
        (lambda: triada.transform(x, "wht"), ["--input", "x.h5", "--transform", "wht"],
         {"x.h5": "x"}),
        (lambda: triada.gemt(x, [np.ones((5, 2)), np.eye(4), np.eye(4)]),
         ["--input", "x.h5", "--transform", "gemt", "--coeffs", "c.h5"],
         {"c.h5:/C1": "C1", "x.h5": "x"}),
        (lambda: triada.transform(x.astype(np.float16), "dct"),
         ["--input", "h.h5", "--transform", "dct"], {"h.h5:/x": "x"}),
        (lambda: triada.transform(x, "dct", initial=np.zeros((6, 4, 3))),
         ["--input", "x.h5", "--transform", "dct", "--initial", "y0.h5"], {"y0.h5:/y0": "initial"}),
    ]
    write_h5(tmp / "y0.h5", y0=np.zeros((6, 4, 3)))
    for call, cli, names in cases:
        code, _, err = run_program("triada-transform", *cli, "--output", "o.h5", cwd=tmp)
        with pytest.raises(triada.InputError) as e:
            call()
        assert code == 1
        expected = call_error(err, "triada-transform")
        for file_name, arg in names.items():
            expected = expected.replace(file_name, arg)
        assert str(e.value) == expected
