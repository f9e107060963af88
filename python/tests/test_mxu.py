"""triada.tcu and triada.conv: results against numpy (matmul, a direct convolution loop),
reports equal to the programs', errors with the programs' messages."""

import json
import os
import re
import sys
import tempfile
import threading

import numpy as np
import pytest

from conftest import call_error, comparable, load_json, run_program, triada, write_h5


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def direct_conv(x, w, stride, pad, dilation=1, groups=1):
    """The convolution's definition as loops over the filter taps (numpy, float64).
    stride and dilation: an int or (h, w); pad: an int, (h, w) or (top, left, bottom,
    right)."""
    n, ci, hi, wi = x.shape
    co, cg, hf, wf = w.shape
    (sh, sw), (dh, dw) = _pair(stride), _pair(dilation)
    pad = _pair(pad)
    top, left, bottom, right = pad * 2 if len(pad) == 2 else pad
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    ho = (hi + top + bottom - dh * (hf - 1) - 1) // sh + 1
    wo = (wi + left + right - dw * (wf - 1) - 1) // sw + 1
    y = np.zeros((n, co, ho, wo))
    per_group = co // groups
    for o in range(co):
        g = o // per_group
        for a in range(hf):
            for b in range(wf):
                window = xp[:, g * cg:(g + 1) * cg, a * dh:a * dh + sh * ho:sh,
                            b * dw:b * dw + sw * wo:sw]
                y[:, o] += np.einsum("nchw,c->nhw", window, w[o, :, a, b])
    return y


def test_tcu_matmul_returns_numpys_product_and_the_programs_report(tmp):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((12, 12)), rng.integers(-4, 5, (12, 12)).astype(np.int32)
    (c, cost), report = triada.tcu("matmul", m=16, latency=3, A=a, B=b)
    assert np.abs(c - a @ b).max() <= 1e-13 * np.abs(a).sum() * 4
    assert report["verified"] and report["input"] == "inputs"
    for k, v in cost.items():
        assert report["tcu"][k] == v, k
    write_h5(tmp / "ab.h5", A=a, B=b)
    code, _, err = run_program("triada-tcu", "--algo", "matmul", "--m", 16, "--latency", 3,
                               "--input", tmp / "ab.h5", "--report", tmp / "r.json")
    assert code == 0, err
    cli = load_json(tmp / "r.json")
    assert comparable(report) == comparable(cli)
    assert report["details"]["input"] == cli["details"]["input"].replace(str(tmp / "ab.h5"),
                                                                        "inputs")


def test_tcu_reads_its_arrays_from_memory_without_writing_a_file(monkeypatch, tmp):
    monkeypatch.setitem(sys.modules, "h5py", None)  # no HDF5 file can be written from Python
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # where a temporary file would go
    a = np.arange(16.0).reshape(4, 4) % 7
    (c, _), report = triada.tcu("matmul", m=4, A=a, B=a.T)
    assert np.array_equal(c, a @ a.T) and report["verified"] and report["input"] == "inputs"
    rng = np.random.default_rng(5)
    x = rng.standard_normal(16) + 1j * rng.standard_normal(16)
    _, report = triada.tcu("dft", m=16, inputs={"x": x})
    assert report["verified"] and report["size"] == 16
    assert not os.listdir(tmp)


def test_tcu_strassen_and_generated_inputs_and_sweeps():
    a = np.arange(64, dtype=np.int64).reshape(8, 8) % 5
    (c, _), report = triada.tcu("strassen", m=4, A=a, B=a.T)
    assert np.array_equal(c, (a @ a.T).astype(np.float64)) and report["verified"]
    product, report = triada.tcu("ge", 15, m=16, latency=1, seed=3)
    assert product is None and report["verified"] and report["size"] == 15
    _, report = triada.tcu("dft", m=16, latency=0, sweep=True, sizes=(16, 64))
    assert [r["size"] for r in report["sweep"]] == [16, 64]


@pytest.mark.parametrize("sweep", [False, True])
def test_tcu_report_to_a_target_not_read_back(tmp, sweep):
    """report="-" and a FIFO: the file gets the report, the call returns the same one."""
    kw = dict(sweep=True, sizes=(16,)) if sweep else dict(size=8)
    fd, out = os.dup(1), tmp / "stdout"
    with open(out, "w") as f:
        os.dup2(f.fileno(), 1)
        try:
            _, report = triada.tcu("matmul", m=16, report="-", **kw)
        finally:
            os.dup2(fd, 1)
            os.close(fd)
    assert json.loads(out.read_text()) == report
    fifo = tmp / "r.fifo"
    os.mkfifo(fifo)
    got = {}
    reader = threading.Thread(target=lambda: got.update(text=fifo.read_text()))
    reader.start()
    _, report = triada.tcu("matmul", m=16, report=fifo, **kw)
    reader.join()
    assert json.loads(got["text"]) == report


@pytest.mark.parametrize("kw, cli", [
    (dict(algo="matmul", size=8, m=15), ["--algo", "matmul", "--size", 8, "--m", 15]),
    (dict(algo="matmull", size=8, m=16), ["--algo", "matmull", "--size", 8, "--m", 16]),
    (dict(algo="matmul", m=16), ["--algo", "matmul", "--m", 16]),
])
def test_tcu_errors_are_the_programs(kw, cli):
    code, _, err = run_program("triada-tcu", *cli, "--latency", 0)
    with pytest.raises(triada.ConfigError) as e:
        triada.tcu(**kw)
    assert code == 2 and str(e.value) == call_error(err, "triada-tcu")


@pytest.mark.parametrize("layer", [
    (2, 3, 9, 8, 5, 3, 3, 2, 1), (1, 4, 7, 7, 6, 3, 2, 1, 2, 2, 2),
    (2, 6, 11, 9, 9, 3, 2, (2, 1), (1, 0, 2, 1), (1, 2), 3),
    [1, 4, 10, 13, 6, 3, 3, [1, 3], np.array([0, 2]), (2, 1), 2],
    (1, 5, 7, 12, 5, 2, 4, (3, 2), (3, 0, 0, 4)),
])
def test_conv_layer_equals_the_direct_loop_for_both_methods(layer):
    n, ci, hi, wi, co, hf, wf, stride, pad = layer[:9]
    dilation, groups = (tuple(layer[9:]) + (1, 1))[:2]
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, ci, hi, wi))
    w = rng.integers(-3, 4, (co, ci // groups, hf, wf)).astype(np.int16)
    outputs, report = triada.conv(layer, mxu=4, input=x, weights=w)
    ref = direct_conv(x, w.astype(np.float64), stride, pad, dilation, groups)
    for method in ("explicit", "implicit"):
        y = outputs[0][method]
        assert y.shape == ref.shape
        assert np.abs(y - ref).max() <= 1e-12 * np.abs(ref).max()
    assert report["layers"][0]["verified"] is True
    # The MACs of the definition: every output times its C_I / groups H_F W_F taps.
    assert report["layers"][0]["macs"] == ref.size * (ci // groups) * hf * wf


def test_conv_layer_forms_are_the_programs():
    """A per-axis sequence and its --layer string are the same layer; wrong shapes of a
    field are a TypeError naming it."""
    _, a = triada.conv((1, 6, 16, 17, 4, 3, 2, (2, 1), (1, 0, 2, 3), (1, 2), 2), mxu=4)
    _, b = triada.conv("1,6,16,17,4,3,2,2x1,1:0:2:3,1x2,2", mxu=4)
    code, _, err = run_program("triada-conv", "--layer", "1,6,16,17,4,3,2,2x1,1:0:2:3,1x2,2",
                               "--mxu", 4)
    assert code == 0, err
    assert a["layers"][0]["shape"] == b["layers"][0]["shape"] == \
        "1x6x16x17 -> 4 3x2 s2x1 p1:0:2:3 d1x2 g2"
    assert comparable(a, names=False) == comparable(b, names=False)
    for bad, where in [((1, 3, 8, 8, 4, 3, 3, (1, 1, 1), 1), "[7]"),
                       ((1, 3, 8, 8, 4, 3, 3, 1, (1, 1, 1)), "[8]"),
                       ((1, 3, 8, 8, 4, 3, 3, 1, 1, (1, 1, 1, 1)), "[9]"),
                       (((1, 1), 3, 8, 8, 4, 3, 3, 1, 1), "[0]"),
                       ((1, 3, 8, 8, 4, 3, 3, (1, 1.5), 1), "[7]")]:
        with pytest.raises(TypeError, match=re.escape(f"layer_or_network{where}")):
            triada.conv(bad, mxu=4)


def test_conv_report_equals_the_programs_for_a_layer_and_a_network(tmp):
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((1, 4, 10, 10)), rng.standard_normal((8, 4, 3, 3))
    write_h5(tmp / "x.h5", x=x)
    write_h5(tmp / "w.h5", w=w)
    layer = "1,4,10,10,8,3,3,1,1"
    _, report = triada.conv(layer, mxu=8, input=x, weights=w, latency=2, method="implicit")
    code, _, err = run_program("triada-conv", "--layer", layer, "--mxu", 8, "--input",
                               tmp / "x.h5", "--weights", tmp / "w.h5", "--latency", 2,
                               "--method", "implicit", "--report", tmp / "r.json")
    assert code == 0, err
    assert comparable(report) == comparable(load_json(tmp / "r.json"))
    (tmp / "net.csv").write_text("Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,"
                                 "Channels,Num Filter,Strides,Padding\n"
                                 "a,12,12,3,3,3,8,1,1\nb,12,12,1,1,8,4,1,0\n")
    outputs, report = triada.conv(tmp / "net.csv", mxu=4, verify_budget=0, seed=5)
    assert outputs == [None, None]  # not checked, so not assembled
    code, _, err = run_program("triada-conv", "--network", tmp / "net.csv", "--mxu", 4,
                               "--verify-budget", 0, "--seed", 5, "--report", tmp / "n.json")
    assert code == 0, err
    assert comparable(report, names=False) == comparable(load_json(tmp / "n.json"), names=False)


def test_conv_errors_are_the_programs():
    code, _, err = run_program("triada-conv", "--layer", "1,2,3", "--mxu", 4)
    with pytest.raises(triada.ConfigError) as e:
        triada.conv("1,2,3", mxu=4)
    assert code == 2 and str(e.value) == call_error(err, "triada-conv")
    with pytest.raises(triada.InputError) as e:
        triada.conv((1, 2, 5, 5, 2, 3, 3, 1, 0), input=np.zeros((1, 3, 5, 5)))
    assert str(e.value).startswith("input: shape 1x3x5x5, the layer needs 1x2x5x5")


def test_the_module_takes_typed_settings_not_command_line_words():
    """_triada.tcu and _triada.conv take the configs' fields by name with typed values."""
    module = triada._calls._triada
    triada._calls._start_mpi()
    assert "settings" in module.tcu.__doc__ and "settings" in module.conv.__doc__
    words = ["triada-tcu", "--algo", "matmul", "--size", "8", "--m", "16", "--latency", "0"]
    with pytest.raises(TypeError):
        module.tcu(words, {}, None)
    with pytest.raises(TypeError, match="unknown setting 'k'"):
        module.tcu({"algo": "matmul", "k": 2}, {}, None)
    _, code, product, text = module.tcu({"algo": "matmul", "size": 8, "m": 16, "latency": 1},
                                        {}, None)
    assert code == 0 and product is None and json.loads(text)["latency"] == 1
    a = np.arange(36.0).reshape(6, 6) % 5 - 2
    (c, cost), report = triada.tcu("strassen", m=4, inputs={"A": a, "B": a.T})
    assert np.array_equal(c, a @ a.T) and cost["calls"] == report["tcu"]["calls"]
    text, _, code, _ = module.conv({"layer_spec": (1, 2, 5, 5, 2, 3, 3, 1, 0), "mxu": 4}, None,
                                   None, None)
    assert code == 0 and json.loads(text)["layers"][0]["C_I"] == 2
