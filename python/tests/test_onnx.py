"""triada.onnx_net: ONNX graphs built here with onnx.helper (Conv with every attribute,
Gemm, MatMul, a small CNN) run by both methods with the model's weights, each layer's
output against a direct convolution written here, its MACs against the closed form, the
layer's output size against ONNX's shape inference, and the network file round trip."""

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import BIN, clean_env, load_json, run_program, triada

onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from triada import onnx_net  # noqa: E402

F = TensorProto.FLOAT


def model_of(nodes, inputs, initializers, outputs=("y",)):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, F, None) for o in outputs],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def direct_conv(x, w, strides, pads, dilations, group):
    """Conv's definition as seven loops over (n, o, h_o, w_o) and the taps (c, h_f, w_f)
    (numpy over n, h_o, w_o): y = sum x[n, g C_g + c, h_o s_h - top + h_f d_h, ...] w."""
    n, ci, hi, wi = x.shape
    co, cg, hf, wf = w.shape
    (sh, sw), (dh, dw), (top, left, bottom, right) = strides, dilations, pads
    ho = (hi + top + bottom - dh * (hf - 1) - 1) // sh + 1
    wo = (wi + left + right - dw * (wf - 1) - 1) // sw + 1
    xp = np.zeros((n, ci, hi + top + bottom, wi + left + right))
    xp[:, :, top:top + hi, left:left + wi] = x
    y = np.zeros((n, co, ho, wo))
    for o in range(co):
        g = o // (co // group)
        for c in range(cg):
            for a in range(hf):
                for b in range(wf):
                    y[:, o] += w[o, c, a, b] * xp[:, g * cg + c, a * dh:a * dh + sh * (ho - 1) + 1:sh,
                                                   b * dw:b * dw + sw * (wo - 1) + 1:sw]
    return y


def assert_close(y, x, w, layer):
    """Within the bound of a sum of K = C_I/g H_F W_F products in fp64 (each output's
    error at most gamma_K sum |x w|; the reference's the same): 2 gamma_K sum |x w|."""
    _, _, _, _, _, hf, wf, s, p, d, g = layer
    ref = direct_conv(x, w, s, p, d, g)
    mag = direct_conv(np.abs(x), np.abs(w), s, p, d, g)
    k = x.shape[1] // g * hf * wf
    assert y.shape == ref.shape
    assert np.all(np.abs(y - ref) <= 2.2 * k * 2.0 ** -53 * mag)


def layer_macs(L):
    """N H_O W_O C_O H_F W_F C_I / g from the ONNX attributes' meaning."""
    n, ci, hi, wi, co, hf, wf, (sh, sw), (t, le, b, r), (dh, dw), g = L.layer
    ho = (hi + t + b - dh * (hf - 1) - 1) // sh + 1
    wo = (wi + le + r - dw * (wf - 1) - 1) // sw + 1
    return n * ho * wo * co * hf * wf * ci // g


# SAME pads split unevenly (an odd total) on some axis of the last two, so UPPER and LOWER
# differ; shape inference and the direct convolution see which end gets the extra pad.
CONV_CASES = [
    dict(strides=s, dilations=d, kernel=k, pads=p, group=g)
    for (s, d, k), (p, g) in itertools.product(
        [((1, 1), (2, 1), (3, 3)), ((2, 1), (1, 1), (3, 2)), ((1, 3), (1, 2), (2, 4))],
        [((0, 1, 2, 1), 1), ("SAME_UPPER", 2), ("SAME_LOWER", 1), ("VALID", 2), ("NOTSET", 1)])
]


def onnx_pads(case, sizes):
    """ONNX's pads for the case: SAME_* gives ceil(size / stride) outputs, the total pad
    (out - 1) s + (k - 1) d + 1 - size split with the odd one at the end (UPPER) or the
    beginning (LOWER)."""
    if not isinstance(case["pads"], str) or case["pads"] == "NOTSET":
        return case["pads"] if not isinstance(case["pads"], str) else (0, 0, 0, 0)
    if case["pads"] == "VALID":
        return (0, 0, 0, 0)
    totals = [max(0, (-(-n // s) - 1) * s + (k - 1) * d + 1 - n) for n, s, k, d in
              zip(sizes, case["strides"], case["kernel"], case["dilations"])]
    late = [t - t // 2 if case["pads"] == "SAME_UPPER" else t // 2 for t in totals]
    return (totals[0] - late[0], totals[1] - late[1], late[0], late[1])


def conv_model(case, n=2, c=4, h=10, w=11, co=6, rng=None):
    attrs = dict(strides=case["strides"], dilations=case["dilations"],
                 kernel_shape=case["kernel"], group=case["group"])
    if isinstance(case["pads"], str):
        attrs["auto_pad"] = case["pads"]
    else:
        attrs["pads"] = case["pads"]
    weights = rng.integers(-3, 4, (co, c // case["group"], *case["kernel"])).astype(np.float64)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    return model_of([node], [("x", [n, c, h, w])], {"w": weights}), weights


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c['strides']}{c['dilations']}"
                         f"{c['kernel']}{c['pads']}g{c['group']}")
def test_conv_attributes_run_as_onnx_defines_them(case):
    rng = np.random.default_rng(3)
    model, weights = conv_model(case, rng=rng)
    (L,) = onnx_net.onnx_layers(model)
    inferred = onnx.shape_inference.infer_shapes(model).graph.output[0]
    dims = tuple(d.dim_value for d in inferred.type.tensor_type.shape.dim)
    assert dims == (2, 6, *L.output_hw)  # ONNX's own output size, auto_pad included
    assert np.array_equal(L.weights, weights)
    assert L.layer[8] == onnx_pads(case, (10, 11))
    x = rng.standard_normal((2, 4, 10, 11))
    results, report = onnx_net.conv_onnx(model, mxu=4, inputs=[x])
    for method in ("explicit", "implicit"):
        assert_close(results[0]["outputs"][method], x, weights, L.layer)
    assert report["layers"][0]["macs"] == layer_macs(L) == L.macs
    assert report["layers"][0]["explicit"]["useful_macs"] == layer_macs(L)


@pytest.mark.parametrize("trans_b", [0, 1])
def test_gemm_and_matmul_run_as_1x1_convolutions(trans_b):
    rng = np.random.default_rng(5)
    b = rng.standard_normal((7, 5)).astype(np.float32).astype(np.float64)  # K x N, as stored
    nodes = [helper.make_node("Gemm", ["a", "b"], ["t"], name="fc", transB=trans_b, alpha=0.5),
             helper.make_node("MatMul", ["u", "m"], ["y"], name="mm")]
    model = model_of(nodes, [("a", [3, 7]), ("u", [2, 3, 5])],
                     {"b": b.T if trans_b else b, "m": b[:5, :4]}, ("t", "y"))
    fc, mm = onnx_net.onnx_layers(model)
    assert fc.gemm == (3, 5, 7) and mm.gemm == (6, 4, 5)
    a, u = rng.standard_normal((3, 7)), rng.standard_normal((2, 3, 5))
    results, report = onnx_net.conv_onnx(model, mxu=4, inputs={"fc": a, "mm": u})
    for method in ("explicit", "implicit"):  # N x C_O x M x 1: the product's transpose
        y = results[0]["outputs"][method][0, :, :, 0].T
        assert np.abs(y - 0.5 * a @ b).max() <= 1e-14 * np.abs(a).sum(1).max() * 7
        y = results[1]["outputs"][method][0, :, :, 0].T
        assert np.abs(y - u.reshape(6, 5) @ b[:5, :4]).max() <= 1e-13
    assert [L["macs"] for L in report["layers"]] == [3 * 5 * 7, 6 * 4 * 5]
    assert [L["kind"] for L in report["layers"]] == ["gemm", "gemm"]


@pytest.mark.parametrize("op,b_shape", [("Gemm", (6, 5)), ("MatMul", (6, 5))])
def test_a_product_whose_inner_dims_differ_is_refused_naming_its_node(op, b_shape):
    b = np.ones(b_shape)
    model = model_of([helper.make_node(op, ["a", "b"], ["y"], name="bad")], [("a", [3, 7])],
                     {"b": b}, ("y",))
    with pytest.raises(triada.ConfigError,
                       match=rf"node 'bad' \({op}\): {op} of 3x7 by 6x5: the inner dims 7 and 6"):
        onnx_net.onnx_layers(model)


def small_cnn(rng, batch_dim):
    w1 = rng.integers(-2, 3, (4, 3, 3, 3)).astype(np.float64)
    w2 = rng.integers(-2, 3, (6, 2, 3, 2)).astype(np.float64)
    fc = rng.standard_normal((6 * 4 * 4, 5)).astype(np.float32).astype(np.float64)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", strides=[2, 2],
                              group=2, auto_pad="SAME_UPPER"),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Flatten", ["r2"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc")]
    model = model_of(nodes, [("x", [batch_dim, 3, 8, 7])], {"w1": w1, "w2": w2, "fc": fc})
    return model, w1, w2, fc


def test_batch_changes_data_inputs_only_not_weights_given_as_inputs():
    # Weights as graph inputs (not initializers): batch= sets the data's dim 0, never a
    # weight's (it set every input's: a Conv's 4 filters became 2, a MatMul's 5 rows 2).
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("MatMul", ["f", "m"], ["y"], name="mm")]
    model = model_of(nodes, [("x", ["N", 3, 5, 5]), ("w", [4, 3, 3, 3]), ("b", [4]),
                             ("m", [4 * 5 * 5, 7])], {})
    layers = onnx_net.onnx_layers(model, batch=2)
    conv = next(L for L in layers if L.name == "conv")
    mm = next(L for L in layers if L.name == "mm")
    assert conv.layer[:7] == (2, 3, 5, 5, 4, 3, 3), conv.layer
    assert layer_macs(conv) == 2 * 5 * 5 * 4 * 3 * 3 * 3 == 5400
    assert mm.macs == 2 * (4 * 5 * 5) * 7, mm


def test_small_cnn_layer_by_layer_and_the_network_file_round_trip(tmp):
    rng = np.random.default_rng(7)
    model, w1, w2, fc = small_cnn(rng, "batch")
    with pytest.raises(triada.ConfigError, match=r"input 'x': dim 0 \('batch'\) is symbolic; "
                       r"give input_shapes=\{'x': \(batch, 3, 8, 7\)\}"):
        onnx_net.onnx_layers(model)
    layers = onnx_net.onnx_layers(model, batch=2)
    assert [(L.name, L.op) for L in layers] == [("conv1", "Conv"), ("conv2", "Conv"),
                                                ("fc", "Gemm")]
    x = rng.standard_normal((2, 3, 8, 7))
    y1 = np.maximum(direct_conv(x, w1, (1, 1), (1, 1, 1, 1), (1, 1), 1), 0)
    pads2 = layers[1].layer[8]
    y2 = np.maximum(direct_conv(y1, w2, (2, 2), pads2, (1, 1), 2), 0)
    assert y2.shape == (2, 6, 4, 4) and layers[2].gemm == (2, 5, 96)
    results, report = onnx_net.conv_onnx(model, batch=2, mxu=8, inputs=[x, y1, y2.reshape(2, -1)],
                                         report=tmp / "r.json", csv=tmp / "r.csv")
    for method in ("explicit", "implicit"):
        assert_close(results[0]["outputs"][method], x, w1, layers[0].layer)
        assert_close(results[1]["outputs"][method], y1, w2, layers[1].layer)
        y = results[2]["outputs"][method][0, :, :, 0].T
        assert np.abs(y - y2.reshape(2, -1) @ fc).max() <= 1e-12 * np.abs(y2).max() * 96
    macs = [L["macs"] for L in report["layers"]]
    assert macs == [layer_macs(L) for L in layers] == [2 * 56 * 4 * 27, 2 * 16 * 6 * 6 * 2, 960]
    assert load_json(tmp / "r.json")["layers"][2]["gemm"] == {"M": 2, "N": 5, "K": 96}
    rows = (tmp / "r.csv").read_text().splitlines()
    assert rows[0].startswith("index,layer,kind,shape,gemm_m,gemm_n,gemm_k,method")
    assert len(rows) == 7 and rows[5].startswith("3,fc,gemm,") and ",2,5,96,explicit," in rows[5]

    onnx.save(model, str(tmp / "cnn.onnx"))
    p = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(tmp / "cnn.onnx"),
                        "--batch", "2", "--to-network", str(tmp / "net.csv")],
                       capture_output=True, text=True, env=clean_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    before = (tmp / "net.csv").read_bytes()
    p = subprocess.run(p.args, capture_output=True, text=True, env=clean_env(), timeout=120)
    assert p.returncode == 2 and p.stderr.splitlines() == [
        f"triada.onnx_net: error: {tmp / 'net.csv'}: exists (force=True replaces it)"], p.stderr
    assert (tmp / "net.csv").read_bytes() == before
    p = subprocess.run(p.args + ["--force"], capture_output=True, text=True, env=clean_env(),
                       timeout=120)
    assert p.returncode == 0 and (tmp / "net.csv").read_bytes() == before, p.stderr
    code, _, err = run_program("triada-conv", "--network", tmp / "net.csv", "--batch", 2,
                               "--mxu", 8, "--verify-budget", 0, "--report", tmp / "n.json")
    assert code == 0, err
    net = load_json(tmp / "n.json")["layers"]
    assert [L["macs"] for L in net] == macs
    # The convolutions as they are; the Gemm's M = 2 rows as --batch 2 of one row.
    assert [L["shape"] for L in net[:2]] == [L["shape"] for L in report["layers"][:2]]
    assert (net[2]["N"], net[2]["H_I"]) == (2, 1)


def test_the_command_line_runs_a_model_and_refuses_what_cannot_run(tmp):
    rng = np.random.default_rng(2)
    model, _ = conv_model(CONV_CASES[6], rng=rng)
    onnx.save(model, str(tmp / "m.onnx"))
    command = [sys.executable, "-m", "triada.onnx_net", str(tmp / "m.onnx"), "--mxu", "4",
               "--csv", str(tmp / "m.csv"), "--report", str(tmp / "m.json")]
    p = subprocess.run(command, capture_output=True, text=True, env=clean_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert load_json(tmp / "m.json")["layers"][0]["verified"] is True
    conv3d = helper.make_node("Conv", ["x", "w"], ["y"], name="c3", kernel_shape=[1, 1, 1])
    onnx.save(model_of([conv3d], [("x", [1, 2, 3, 3, 3])], {"w": np.ones((2, 2, 1, 1, 1))}),
              str(tmp / "3d.onnx"))
    p = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(tmp / "3d.onnx")],
                       capture_output=True, text=True, env=clean_env(), timeout=120)
    assert p.returncode == 2
    assert p.stderr.strip() == ("triada.onnx_net: error: node 'c3' (Conv): a 3-D convolution "
                                "(input 1x2x3x3x3); only 1-D (as H = 1) and 2-D convolutions "
                                "run")


def onnx_cli(*args):
    return subprocess.run([sys.executable, "-m", "triada.onnx_net", *map(str, args)],
                          capture_output=True, text=True, env=clean_env(), timeout=60)


def inside_if(node, name, x_shape, w):
    """A model whose only node is an If (named NAME) running NODE in both branches."""
    branch = helper.make_graph([node], "then", [], [helper.make_tensor_value_info("y", F, None)])
    cond = helper.make_node("If", ["c"], ["y"], name=name, then_branch=branch,
                            else_branch=branch)
    model = model_of([cond], [("x", x_shape)], {"w": w})
    model.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    return model


@pytest.mark.parametrize("attrs, what", [
    (dict(strides=[0, 1]), "strides = [0, 1]"), (dict(dilations=[1, -2]), "dilations = [1, -2]"),
    (dict(pads=[0, -1, 0, 0]), "pads = [0, -1, 0, 0]"), (dict(group=0), "group = [0]"),
])
def test_a_bad_kernel_attribute_is_one_line_before_shape_inference(tmp, attrs, what):
    # strides=[0, 1] killed the process with SIGFPE inside ONNX's shape inference; the same
    # Conv inside an If's branch too. One line naming the node, exit 2.
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="bad", kernel_shape=[3, 3], **attrs)
    model = model_of([conv], [("x", [1, 2, 6, 6])], {"w": np.ones((2, 2, 3, 3))})
    onnx.save(model, str(tmp / "bad.onnx"))
    p = onnx_cli(tmp / "bad.onnx")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"node 'bad' (Conv): Conv {what}: each must be at least" in p.stderr, p.stderr
    nested = inside_if(conv, "if", [1, 2, 6, 6], np.ones((2, 2, 3, 3)))
    with pytest.raises(triada.ConfigError, match="node 'bad'"):
        onnx_net.onnx_layers(nested)


def test_gemm_transa_takes_the_models_a_and_silent_mismodels_are_refused():
    # inputs= gives the model's A as the node sees it: K x M under transA (it was reshaped
    # as M x K and the wrong product reported verified). A weight whose channels do not fit
    # the input, and a Conv inside an If (its MACs were dropped), are refused by node.
    rng = np.random.default_rng(11)
    b = rng.standard_normal((4, 6))  # K x N
    gemm = helper.make_node("Gemm", ["a", "b"], ["y"], name="fc", transA=1)
    model = model_of([gemm], [("a", [4, 3])], {"b": b})  # A is K x M = 4 x 3
    a = rng.standard_normal((4, 3))
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={"fc": a})
    for method in ("explicit", "implicit"):
        y = results[0]["outputs"][method][0, :, :, 0].T
        assert np.abs(y - a.T @ b.astype(np.float32).astype(np.float64)).max() <= 1e-13
    with pytest.raises(triada.ConfigError, match="'fc': 13 values, its A has 3 x 4"):
        onnx_net.conv_onnx(model, mxu=4, inputs={"fc": np.ones(13)})
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3])
    wrong = model_of([conv], [("x", [1, 3, 6, 6])], {"w": np.ones((2, 4, 3, 3))})
    with pytest.raises(triada.ConfigError, match="node 'c' .*weights 2x4x3x3 do not fit"):
        onnx_net.onnx_layers(wrong)
    nested = inside_if(conv, "when", [1, 3, 6, 6], np.ones((2, 3, 3, 3)))
    with pytest.raises(triada.ConfigError, match="node 'when' .*_branch holds Conv nodes"):
        onnx_net.onnx_layers(nested)


def test_a_fifo_or_a_missing_model_is_one_line_without_waiting(tmp):
    os.mkfifo(tmp / "model.onnx")
    p = onnx_cli(tmp / "model.onnx")  # onnx.load would wait for a writer forever
    assert p.returncode == 1 and p.stderr.strip().endswith("not a regular file (an ONNX model "
                                                           "is read from a file)"), p.stderr
    p = onnx_cli(tmp / "none.onnx")
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and "No such file" in p.stderr


def test_without_onnx_the_package_imports_and_the_error_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match="python3-onnx"):
        onnx_net.onnx_layers("any.onnx")
    assert BIN.is_dir()


MPI_JOB = """
import sys, numpy as np, onnx
from mpi4py import MPI
import triada
from triada import onnx_net
out = sys.argv[1]
comm = MPI.COMM_WORLD
results, report = onnx_net.conv_onnx(onnx.load(out + "/cnn.onnx"), batch=2, mxu=8, comm=comm,
                                     report=f"{out}/np{comm.size}.json",
                                     csv=f"{out}/np{comm.size}.csv")
assert all((r["outputs"] is None) == (comm.rank != 0) for r in results)
assert report["total"]["failed_layers"] == 0, report["total"]
if comm.rank == 0:
    np.savez(f"{out}/np{comm.size}.npz",
             *[r["outputs"][m] for r in results for m in sorted(r["outputs"])])
"""


@pytest.mark.parametrize("ranks", [2, 3])
def test_under_mpirun_every_rank_runs_and_rank_0_writes_what_one_process_does(tmp, ranks):
    """conv_onnx under mpirun: the files are written once, on rank 0 (the others have no
    CSV of their own to read), with the outputs and MACs of a run in this process."""
    from conftest import mpirun
    model, *_ = small_cnn(np.random.default_rng(7), "batch")
    onnx.save(model, tmp / "cnn.onnx")
    results, report = onnx_net.conv_onnx(model, batch=2, mxu=8, csv=tmp / "np1.csv")
    code, text = mpirun(ranks, sys.executable, "-c", MPI_JOB, tmp)
    assert code == 0, text
    mine = [r["outputs"][m] for r in results for m in sorted(r["outputs"])]
    theirs = np.load(tmp / f"np{ranks}.npz")
    assert len(theirs.files) == len(mine)
    for i, y in enumerate(mine):
        assert np.array_equal(theirs[f"arr_{i}"], y)
    assert load_json(tmp / f"np{ranks}.json")["total"] == report["total"]
    assert (tmp / f"np{ranks}.csv").read_text().count("\n") == \
        (tmp / "np1.csv").read_text().count("\n")


def test_the_network_totals_are_each_methods_sums_over_the_layers():
    """The report's total per method, as SCALE-Sim reports a topology: cycles, time,
    energy and DRAM traffic summed over the layers, the utilisations of the sums."""
    rng = np.random.default_rng(9)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((6, 4, 1, 1)).astype(np.float32), "w2")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["h"], name="c1", strides=[2, 1]),
         helper.make_node("Conv", ["h", "w2"], ["y"], name="c2")],
        "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 9, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    _, summary = triada.conv_onnx(model, mxu=4)
    layers, total = summary["layers"], summary["total"]
    # The definition: N C_O H_O W_O C_I H_F W_F per layer; c1's output is 4x5 (stride 2 in
    # H, no pads), c2 a 1x1 conv on it.
    ho, wo = (9 - 3) // 2 + 1, 7 - 3 + 1
    useful = 4 * ho * wo * 2 * 9 + 6 * ho * wo * 4
    assert [L["macs"] for L in layers] == [4 * ho * wo * 2 * 9, 6 * ho * wo * 4]
    for method in ("explicit", "implicit"):
        t = total[method]
        for key in ("cycles", "model_time", "dram_read_bytes", "dram_write_bytes", "macs_dense"):
            assert t[key] == sum(L[method][key] for L in layers), (method, key)
        assert t["energy_pj"] == pytest.approx(sum(L[method]["energy_pj"] for L in layers),
                                               rel=1e-15)
        assert t["utilisation"] == useful / t["macs_dense"]
        assert t["effective_utilisation"] == useful / (t["model_time"] * 4)
