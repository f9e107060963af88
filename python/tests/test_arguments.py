"""Strict argument types: every keyword of every entry point with a wrong type raises
TypeError naming it, before anything runs; values of every accepted type work and mean
what they say (esop=False is ESOP off). gemt refuses a matrix larger than memory up front
with the program's message; tcu's errors name its arrays as the arguments, not the
temporary file they travel in."""

import os

import numpy as np
import pytest

from argument_cases import BASE, C, LAYER, X, calls
from conftest import SRC, cli_error, run_program, triada, write_h5


@pytest.mark.parametrize("name, fn, kwargs, cls, start", list(calls()),
                         ids=[c[0] for c in calls()])
def test_wrong_types_and_values_raise_naming_the_argument(name, fn, kwargs, cls, start):
    with pytest.raises(Exception) as e:
        fn(**kwargs)
    assert type(e.value) is cls, (type(e.value), e.value)
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith(start) if start else "unknown_keyword" in text, text


def sparse_x():
    x = np.zeros((4, 3, 2))
    x[0, 0, 0], x[3, 2, 1] = 1.0, -2.0
    return x


def test_esop_is_a_bool_and_false_is_dense():
    off = triada.transform(sparse_x(), "dct", esop=False)[1]["counters"]
    on = triada.transform(sparse_x(), "dct", esop=np.bool_(True))[1]["counters"]
    assert off["macs"] == off["macs_dense"] and on["macs"] < on["macs_dense"]
    by_config = triada.transform(sparse_x(), "dct", config={"esop.enabled": False})[1]
    assert by_config["counters"]["macs"] == off["macs"]
    for word in ("off", "on", "false"):
        with pytest.raises(TypeError, match="^esop: True, False or None expected"):
            triada.transform(sparse_x(), "dct", esop=word)


# Values of each accepted type (numpy scalars, tuples, lists, arrays, paths): the call runs.
MESH = SRC / "meshcfg" / "default.ini"
ACCEPTED = {
    "transform": [
        dict(x=X.tolist()), dict(transform=["dct", "dft", "dht"]), dict(inverse=np.bool_(True)),
        dict(stage_order=123), dict(stage_order=(1, 2, 3)), dict(stage_order=np.array([2, 1, 3])),
        dict(esop=None), dict(cell_mode="fp32"), dict(mesh=MESH), dict(mesh=str(MESH)),
        dict(initial=X.astype(np.int16)), dict(shuffle_seed=np.int64(3)),
        dict(config={"mesh.cells": (2, 2, 2), "energy.mac_pj": 10, "esop.enabled": True,
                     "ranks.actuators": "colocated"}),
        dict(config={"energy.mac_pj": np.float64(2.5)}), dict(check=True),
        dict(distributed=True, shape=np.array([4, 3, 2]), gather=False)],
    "gemt": [dict(coeffs=tuple(c.tolist() for c in C)), dict(coeffs=(C[0], C[1], C[2]))],
    "layout": [dict(shape=[4, 3, 2], out_shape=np.array([2, 2, 2])), dict(mesh=MESH)],
    "tcu": [dict(size=np.int32(8), m=np.int64(16), latency=np.uint8(2)),
            dict(A=np.eye(8).tolist(), B=np.ones((8, 8), np.int32)),
            dict(inputs={"A": np.eye(8), "B": np.eye(8)}), dict(seed=7, weak=np.bool_(True)),
            dict(sweep=True, sizes=[8, 12], ms=(16,), size=None),
            dict(algo="stencil", size=9, kernel=[0.1] * 8 + [np.float32(0.2)], k=1),
            dict(cell_mode="fp32", executor="reference", mesh=MESH)],
    "conv": [dict(layer_or_network=list(LAYER)), dict(layer_or_network="1,2,5,5,2,3,3,1,0"),
             dict(mxu=np.int16(4), seed=np.int64(2), batch=2, verify_budget=0),
             dict(verify_budget=1e9, max_layers=1),
             dict(input=np.ones((1, 2, 5, 5), np.float32).tolist(),
                  weights=np.ones((2, 2, 3, 3), np.int8)),
             dict(layer_or_network="NETWORK", max_layers=1, verify_budget=0)],
}


@pytest.mark.parametrize("entry, changed", [(e, c) for e, cs in ACCEPTED.items() for c in cs],
                         ids=[f"{e}-{sorted(c)}" for e, cs in ACCEPTED.items() for c in cs])
def test_values_of_every_accepted_type_run(entry, changed, tmp):
    fn, base = BASE[entry]
    if changed.get("layer_or_network") == "NETWORK":  # a path-like network file
        changed = dict(changed, layer_or_network=tmp / "net.csv")
        changed["layer_or_network"].write_text(
            "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,"
            "Num Filter,Strides,Padding\na,6,6,3,3,2,4,1,1\n")
    result = fn(**dict(base, **changed))
    assert isinstance(result if entry == "layout" else result[1], dict)


def test_stage_order_forms_mean_the_same_order():
    for order in ("213", 213, (2, 1, 3), [2, 1, 3], np.array([2, 1, 3])):
        _, r = triada.transform(X, "dct", stage_order=order)
        assert r["problem"]["stage_order"] == "213", order


def test_gemt_refuses_a_matrix_larger_than_memory_as_the_program_does(tmp, monkeypatch):
    """A 65536 x 65536 matrix (2^32 elements, a zero-stride view of one value): refused
    before anything is allocated, with the program's check and message."""
    import h5py
    monkeypatch.setenv("TRIADA_MEMORY_LIMIT", str(1 << 20))
    n = 1 << 16
    x = np.broadcast_to(np.float64(1), (n, 1, 1))
    huge = np.broadcast_to(np.float64(1), (n, n))
    with pytest.raises(triada.InputError) as e:
        triada.gemt(x, (huge, np.ones((1, 1)), np.ones((1, 1))))
    with h5py.File(tmp / "c.h5", "w") as f:  # chunked and never written: no data on disk
        f.create_dataset("C1", shape=(n, n), dtype="f8", chunks=(64, 64))
        f["C2"], f["C3"] = np.ones((1, 1)), np.ones((1, 1))
    write_h5(tmp / "x.h5", x=np.ones((n, 1, 1)))
    code, _, err = run_program("triada-transform", "--input", tmp / "x.h5", "--output",
                               tmp / "y.h5", "--transform", "gemt", "--coeffs", tmp / "c.h5")
    assert code == 1
    assert cli_error(err, "triada-transform") == f"{tmp / 'c.h5'}:/{e.value}"
    assert str(e.value).startswith(f"C1: the {n}x{n} matrix: needs 65536.0 MiB")


def test_tcu_errors_name_the_arguments_not_the_temporary_file():
    before = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    cases = [
        (dict(A=np.ones((3, 4)), B=np.ones((3, 3))), "A: expected a non-empty square matrix"),
        (dict(A=np.ones((3, 3))), "B: missing"),
        (dict(inputs={"A": np.eye(3), "B": np.eye(3)}, algo="ge"), "b: "),
        (dict(A=np.eye(3), B=np.eye(4)), "A is 3x3 but B is 4x4"),
    ]
    for kwargs, start in cases:
        with pytest.raises(triada.InputError) as e:
            triada.tcu(**dict(dict(algo="matmul", m=16), **kwargs))
        assert str(e.value).startswith(start), e.value
        assert "triada-tcu-" not in str(e.value) and "inputs.h5" not in str(e.value)
    after = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    assert not [f for f in after - before if f.startswith("triada-tcu-")]


def test_messages_name_the_calls_arguments_not_the_programs_options(tmp):
    """The job's messages named the programs' options and datasets (missing --m, needs
    --coeffs FILE.h5, use --force, '----force' for a config key "--force", a missing x
    called "scalar"); now the call's own arguments, every other word the program's."""
    x = np.ones((4, 4, 4))
    (tmp / "r.json").write_text("{}")
    cases = [
        (lambda: triada.tcu("matmul"), triada.ConfigError, "missing m"),
        (lambda: triada.transform(x, "gemt"), triada.ConfigError,
         "transform='gemt' needs coeffs=(C1, C2, C3)"),
        (lambda: triada.transform(x, "dct", report=tmp / "r.json"), triada.InputError,
         f"{tmp / 'r.json'}: exists (use force=True to overwrite)"),
        (lambda: triada.transform(x, "dct", config={"--force": 1}), triada.ConfigError,
         "config: unknown key '--force'"),
        (lambda: triada.transform(x, "dct", config={"energy.nope": 1}), triada.ConfigError,
         "config: unknown key 'energy.nope'"),
        (lambda: triada.transform(x, "dct", config={"energy.mac_pj": -1}), triada.ConfigError,
         'config["energy.mac_pj"]: '),
        (lambda: triada.transform(None, "dct"), triada.InputError, "x: missing (no array given)"),
        (lambda: triada.transform(x, "dct", stage_order="112"), triada.ConfigError,
         "stage_order: expected a permutation"),
        (lambda: triada.tcu("stencil", m=16, size=8, kernel=[1, 2]), triada.ConfigError,
         "kernel: expected 9"),
        (lambda: triada.conv((1, 2, 5, 5, 2, 3, 3, 1, 1), mxu=4, input=np.ones((1, 3, 5, 5))),
         triada.InputError, "input: shape 1x3x5x5, the layer needs 1x2x5x5"),
        (lambda: triada.transform(np.ones((3, 3, 3)), "dct", distributed=True, shape=(4, 4, 4)),
         triada.InputError, "x (rank 0's part): shape 3x3x3, but this rank's brick is 4x4x4 at "
         "0x0x0 (the plan's bricks: triada.layout)"),
    ]
    for call, cls, start in cases:
        with pytest.raises(cls) as e:
            call()
        assert str(e.value).startswith(start), (start, str(e.value))
        assert "--" not in str(e.value).replace("'--force'", ""), str(e.value)
