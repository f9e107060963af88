"""triada.onnx_net's execute=True / --execute: a small CNN and a transformer block built here
with onnx.helper, run whole. The oracle is a float64 forward pass written here (its own
convolution loop, np.matmul, its own pooling and normalisations); the host reference and
the run in fp64 cells must equal it to 1e-12 relative, a lower-precision cell mode differs
and says so, a layer's MXU output is triada.conv's on the same operands bit for bit, an op
outside the set is one line, and the command line runs with --input FILE.npy."""

import math
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import clean_env

onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from triada import onnx_net  # noqa: E402
from triada.conv import conv  # noqa: E402

F = TensorProto.FLOAT
# the attributes' epsilons as the model holds them (float32)
EPS_BN, EPS_LN = float(np.float32(1e-3)), float(np.float32(1e-5))
RNG = np.random.default_rng(37)


def init(name, *shape, scale=0.5):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32),
                                   name)


def value(t):
    return numpy_helper.to_array(t).astype(np.float64)


def make(nodes, inputs, inits, outputs=("y",), opset=17):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, F, None) for o in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


# -- the oracle: a float64 forward pass written here ------------------------------------------

def conv2d(x, w, b, stride, pad, group):
    """y[n, o, i, j] = b[o] + sum over c, a, e of x_pad[n, g C_g + c, i s + a, j s + e]
    w[o, c, a, e], by loops over the output channels and the taps."""
    n, ci, hi, wi = x.shape
    co, cg, hf, wf = w.shape
    xp = np.zeros((n, ci, hi + 2 * pad, wi + 2 * pad))
    xp[:, :, pad:pad + hi, pad:pad + wi] = x
    ho, wo = (hi + 2 * pad - hf) // stride + 1, (wi + 2 * pad - wf) // stride + 1
    y = np.zeros((n, co, ho, wo))
    for o in range(co):
        g = o // (co // group)
        for c in range(cg):
            for a in range(hf):
                for e in range(wf):
                    y[:, o] += w[o, c, a, e] * xp[:, g * cg + c, a:a + stride * (ho - 1) + 1:stride,
                                                   e:e + stride * (wo - 1) + 1:stride]
    return y + b.reshape(1, -1, 1, 1)


def maxpool2(x):
    n, c, h, w = x.shape
    return x[:, :, :h // 2 * 2, :w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def cnn():
    """Conv 3x3 pad 1 + BN + Relu + MaxPool 2 + Conv 3x3 stride 2 groups 2 +
    GlobalAveragePool + Flatten + Gemm (transB) + Softmax."""
    inits = [init("w1", 4, 3, 3, 3), init("b1", 4), init("s", 4), init("bb", 4),
             init("m", 4, scale=0.1), numpy_helper.from_array(
                 (RNG.random(4) + 0.5).astype(np.float32), "v"),
             init("w2", 6, 2, 3, 3), init("b2", 6), init("wg", 5, 6), init("bg", 5)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "s", "bb", "m", "v"], ["n1"],
                         epsilon=1e-3),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", strides=[2, 2],
                         pads=[1, 1, 1, 1], group=2),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["z"], name="fc", transB=1),
        helper.make_node("Softmax", ["z"], ["y"], axis=1)]
    return make(nodes, [("x", [2, 3, 10, 10])], inits), {t.name: value(t) for t in inits}


def cnn_forward(x, p):
    c1 = conv2d(x, p["w1"], p["b1"], 1, 1, 1)
    sh = (1, -1, 1, 1)
    n1 = (c1 - p["m"].reshape(sh)) / np.sqrt(p["v"].reshape(sh) + EPS_BN) * p["s"].reshape(sh) \
        + p["bb"].reshape(sh)
    p1 = maxpool2(np.maximum(n1, 0))
    c2 = conv2d(p1, p["w2"], p["b2"], 2, 1, 2)
    f = c2.mean(axis=(2, 3))
    return softmax(f @ p["wg"].T + p["bg"], axis=1)


def transformer():
    """One attention head and an MLP: x (S x D); Q, K, V = x Wq, x Wk, x Wv; softmax(Q K^T
    / sqrt(D)) V Wo + x; LayerNorm; an Erf-GELU MLP (Gemm up, MatMul down) + residual; the
    Reduce* layer norm at the end."""
    s_, d, hdim = 6, 8, 16
    inits = [init("wq", d, d), init("wk", d, d), init("wv", d, d), init("wo", d, d),
             init("g1", d), init("be1", d), init("w_up", d, hdim), init("b_up", hdim),
             init("w_dn", hdim, d),
             numpy_helper.from_array(np.array([1 / math.sqrt(d)], np.float32), "scale"),
             numpy_helper.from_array(np.array([math.sqrt(0.5)], np.float32), "rs2"),
             numpy_helper.from_array(np.array([1.0], np.float32), "one"),
             numpy_helper.from_array(np.array([0.5], np.float32), "half"),
             numpy_helper.from_array(np.array([1e-5], np.float32), "eps"),
             numpy_helper.from_array(np.array([2.0], np.float32), "two"),
             numpy_helper.from_array(np.array([-1], np.int64), "ax")]
    mk = helper.make_node
    nodes = [
        mk("MatMul", ["x", "wq"], ["q"], name="q"), mk("MatMul", ["x", "wk"], ["k"], name="k"),
        mk("MatMul", ["x", "wv"], ["v"], name="v"),
        mk("Transpose", ["k"], ["kt"], perm=[1, 0]),
        mk("MatMul", ["q", "kt"], ["sc0"], name="scores"),
        mk("Mul", ["sc0", "scale"], ["sc"]), mk("Softmax", ["sc"], ["pr"], axis=-1),
        mk("MatMul", ["pr", "v"], ["ctx"], name="context"),
        mk("MatMul", ["ctx", "wo"], ["att"], name="o"),
        mk("Add", ["att", "x"], ["h0"]),
        mk("LayerNormalization", ["h0", "g1", "be1"], ["h1"], axis=-1, epsilon=1e-5),
        mk("Gemm", ["h1", "w_up", "b_up"], ["u"], name="up"),
        mk("Mul", ["u", "rs2"], ["u2"]), mk("Erf", ["u2"], ["e"]),
        mk("Add", ["e", "one"], ["e1"]), mk("Mul", ["u", "e1"], ["ge0"]),
        mk("Mul", ["ge0", "half"], ["ge"]),
        mk("MatMul", ["ge", "w_dn"], ["dn"], name="down"),
        mk("Add", ["dn", "h1"], ["h2"]),
        mk("ReduceMean", ["h2", "ax"], ["mu"]), mk("Sub", ["h2", "mu"], ["dc"]),
        mk("Pow", ["dc", "two"], ["sq"]), mk("ReduceMean", ["sq", "ax"], ["var"]),
        mk("Add", ["var", "eps"], ["ve"]), mk("Sqrt", ["ve"], ["sd"]),
        mk("Div", ["dc", "sd"], ["y"])]
    return make(nodes, [("x", [s_, d])], inits, opset=18), {t.name: value(t) for t in inits}


def transformer_forward(x, p):
    d = x.shape[1]
    q, k, v = np.matmul(x, p["wq"]), np.matmul(x, p["wk"]), np.matmul(x, p["wv"])
    pr = softmax(np.matmul(q, k.T) * p["scale"][0])
    h0 = np.matmul(np.matmul(pr, v), p["wo"]) + x
    mu = h0.mean(axis=-1, keepdims=True)
    h1 = (h0 - mu) / np.sqrt(((h0 - mu) ** 2).mean(axis=-1, keepdims=True) + EPS_LN) * p["g1"] \
        + p["be1"]
    u = np.matmul(h1, p["w_up"]) + p["b_up"]
    erf = np.array([math.erf(t * p["rs2"][0]) for t in u.ravel()]).reshape(u.shape)
    h2 = np.matmul(u * (erf + 1) * 0.5, p["w_dn"]) + h1
    dc = h2 - h2.mean(axis=-1, keepdims=True)
    assert d == 8
    return dc / np.sqrt((dc ** 2).mean(axis=-1, keepdims=True) + p["eps"][0])


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


CASES = {"cnn": (cnn, cnn_forward, (2, 3, 10, 10)),
         "transformer": (transformer, transformer_forward, (6, 8))}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fp64_run_equals_the_forward_pass(case):
    build, forward, shape = CASES[case]
    model, params = build()
    x = np.random.default_rng(5).standard_normal(shape)
    want = forward(x, params)
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs={"x": x}, cell_mode="fp64",
                             keep=True)
    values = rep["values"]
    assert rel(values["reference"]["y"], want) < 1e-12
    assert rel(values["simulated"]["y"], want) < 1e-12
    assert rep["outputs"][0]["max_rel_diff"] < 1e-12
    assert rep["cell_mode"] == "fp64"
    assert all(L["on"] == "mxu" and L["max_rel_diff"] < 1e-12 for L in rep["layers"])
    ops = {"cnn": ["Conv", "Conv", "Gemm"],
           "transformer": ["MatMul"] * 4 + ["MatMul", "MatMul", "Gemm", "MatMul"]}[case]
    assert sorted(L["op"] for L in rep["layers"]) == sorted(ops)


@pytest.mark.parametrize("mode", ["fp16", "bf16"])
def test_a_lower_precision_differs_and_says_so(mode):
    model, params = cnn()
    x = np.random.default_rng(6).standard_normal((2, 3, 10, 10))
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs={"x": x}, cell_mode=mode)
    assert rep["cell_mode"] == mode
    d = rep["outputs"][0]["max_rel_diff"]
    assert 0 < d < 0.5
    assert all(L["max_rel_diff"] > 0 for L in rep["layers"])


def test_a_layers_mxu_output_is_triada_convs_bitwise():
    model, params = transformer()
    x = np.random.default_rng(7).standard_normal((6, 8))
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs={"x": x}, cell_mode="bf16",
                             keep=True)
    values = rep["values"]
    sim = values["simulated"]
    for name, a_name, b_name in (("scores", "q", "kt"), ("up", "h1", "w_up"),
                                 ("q", "x", "wq")):
        y, xin, w = values["mxu"][name]
        a = sim[a_name]
        b = sim[b_name] if b_name in sim and b_name not in params else params[b_name]
        m, k = a.shape
        n = b.shape[1]
        # the 1x1 convolution of M rows: input 1 x K x M x 1, weights N x K x 1 x 1
        x_own = np.ascontiguousarray(a.T.reshape(1, k, m, 1))
        w_own = np.ascontiguousarray(b.T.reshape(n, k, 1, 1))
        np.testing.assert_array_equal(xin, x_own)
        np.testing.assert_array_equal(w, w_own)
        out, _ = conv((1, k, m, 1, n, 1, 1, 1, 0), method="implicit", input=x_own,
                      weights=w_own, cell_mode="bf16", verify=True)
        assert np.array_equal(out[0]["implicit"], y)
    cnn_model, _ = cnn()
    xc = np.random.default_rng(8).standard_normal((2, 3, 10, 10))
    _, rc = onnx_net.conv_onnx(cnn_model, execute=True, inputs={"x": xc}, cell_mode="fp16",
                            keep=True)
    y, xin, w = rc["values"]["mxu"]["conv2"]
    np.testing.assert_array_equal(xin, rc["values"]["simulated"]["p1"])
    out, _ = conv((2, 4, 5, 5, 6, 3, 3, 2, 1, 1, 2), method="implicit", input=xin,
                  weights=w, cell_mode="fp16", verify=True)
    assert np.array_equal(out[0]["implicit"], y)


def test_an_op_outside_the_set_is_one_line(tmp_path):
    model = make([helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                  helper.make_node("Hardmax", ["h"], ["y"], name="odd")],
                 [("x", [2, 3])], [init("w", 3, 4)])
    with pytest.raises(onnx_net.ConfigError, match=r"'odd' \(Hardmax\).*Hardmax"):
        onnx_net.conv_onnx(model, execute=True)
    path = tmp_path / "odd.onnx"
    onnx.save(model, str(path))
    r = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(path), "--execute"],
                       capture_output=True, text=True, env=clean_env(), check=False)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Hardmax" in r.stderr and "'odd'" in r.stderr


def test_the_command_line_with_an_npy_input(tmp_path):
    model, params = cnn()
    path = tmp_path / "cnn.onnx"
    onnx.save(model, str(path))
    x = np.random.default_rng(9).standard_normal((2, 3, 10, 10))
    np.save(tmp_path / "x.npy", x)
    r = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(path), "--execute",
                        "--input", str(tmp_path / "x.npy"), "--cell-mode", "bf16",
                        "--report", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")],
                       capture_output=True, text=True, env=clean_env(), check=False)
    assert r.returncode == 0, r.stderr
    assert "cell mode bf16" in r.stdout and "max rel diff" in r.stdout
    for name in ("conv1", "conv2", "fc"):
        assert name in r.stdout
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["cell_mode"] == "bf16" and rep["outputs"][0]["max_rel_diff"] > 0
    text = (tmp_path / "r.csv").read_text()
    assert text.startswith("kind,index,name,op,on,max_rel_diff,cell_mode")
    # the same input in fp64 cells: the output's difference printed, below 1e-12
    r = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(path), "--execute",
                        "--input", f"x={tmp_path / 'x.npy'}"],
                       capture_output=True, text=True, env=clean_env(), check=False)
    assert r.returncode == 0, r.stderr
    line = [s for s in r.stdout.splitlines() if s.startswith("output y")][0]
    assert float(line.split()[-1]) < 1e-12


def test_not_modelled_runs_on_the_host():
    model = make([helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                  helper.make_node("Einsum", ["h", "w2"], ["y"], name="ein",
                                   equation="ij,jk->ik")],
                 [("x", [2, 3])], [init("w", 3, 4), init("w2", 4, 5)])
    params = {"w": value(model.graph.initializer[0]), "w2": value(model.graph.initializer[1])}
    x = np.random.default_rng(10).standard_normal((2, 3))
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs={"x": x}, keep=True)
    on = {L["name"]: L["on"] for L in rep["layers"]}
    assert on == {"ein": "host", "mm": "mxu"}
    assert rel(rep["values"]["simulated"]["y"], x @ params["w"] @ params["w2"]) < 1e-12


def decoder():
    """Conv, ConvTranspose (stride 2, pads, output_padding), Resize nearest, Concat, Pad,
    AveragePool, Slice, Reshape, a batched product of two activations (5 products),
    Softmax, Split, ReduceMax; and a second input through a 1-D Conv (stride 2, dilation 2)."""
    inits = [init("w1", 4, 2, 3, 3), init("wt", 4, 3, 3, 3), init("bt", 3),
             init("w3", 3, 2, 3), init("b3", 3),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
             numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array([1], np.int64), "s0"),
             numpy_helper.from_array(np.array([5], np.int64), "s1"),
             numpy_helper.from_array(np.array([3], np.int64), "s2"),
             numpy_helper.from_array(np.array([5, 6, 4], np.int64), "shp"),
             numpy_helper.from_array(np.array([2, 3], np.int64), "sp")]
    mk = helper.make_node
    nodes = [
        mk("Conv", ["x", "w1"], ["c1"], name="c1", pads=[1, 1, 1, 1]),
        mk("ConvTranspose", ["c1", "wt", "bt"], ["ct"], name="ct", strides=[2, 2],
           pads=[1, 1, 1, 1], output_padding=[1, 1]),
        mk("Resize", ["x", "", "sc"], ["rx"], mode="nearest"),
        mk("Concat", ["ct", "rx"], ["cat"], axis=1),
        mk("Pad", ["cat", "pads"], ["pd"]),
        mk("AveragePool", ["pd"], ["ap"], kernel_shape=[3, 3], strides=[2, 2]),
        mk("Slice", ["ap", "s0", "s1", "s2"], ["sl"]),
        mk("Reshape", ["sl", "shp"], ["r"]),
        mk("Transpose", ["r"], ["rt"], perm=[0, 2, 1]),
        mk("MatMul", ["r", "rt"], ["sc2"], name="bscores"),
        mk("Softmax", ["sc2"], ["pr"], axis=-1),
        mk("MatMul", ["pr", "r"], ["cx"], name="bcontext"),
        mk("Split", ["cx", "sp"], ["y1", "cb"], axis=0),
        mk("ReduceMax", ["cb"], ["y2"], axes=[2], keepdims=0),
        mk("Conv", ["z", "w3", "b3"], ["y3"], name="c1d", strides=[2], dilations=[2])]
    model = make(nodes, [("x", [1, 2, 6, 6]), ("z", [1, 2, 9])], inits, ("y1", "y2", "y3"))
    return model, {t.name: value(t) for t in inits}


def decoder_forward(x, z, p):
    c1 = conv2d(x, p["w1"], np.zeros(4), 1, 1, 1)
    # ConvTranspose: input pixel (i, j) adds x w[c, o] at (2 i - 1 + a, 2 j - 1 + e)
    wt = p["wt"]
    full = np.zeros((1, 3, 2 * 5 + 3 + 1, 2 * 5 + 3 + 1))
    for c in range(4):
        for o in range(3):
            for a in range(3):
                for e in range(3):
                    full[0, o, a:a + 11:2, e:e + 11:2] += c1[0, c] * wt[c, o, a, e]
    ct = full[:, :, 1:13, 1:13] + p["bt"].reshape(1, -1, 1, 1)
    rx = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)
    pd = np.pad(np.concatenate([ct, rx], axis=1), [(0, 0), (0, 0), (1, 1), (1, 1)])
    ap = np.zeros((1, 5, 6, 6))
    for i in range(6):
        for j in range(6):
            ap[:, :, i, j] = pd[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].mean(axis=(2, 3))
    r = ap[:, :, :, 1:5].reshape(5, 6, 4)
    pr = softmax(np.matmul(r, r.transpose(0, 2, 1)))
    cx = np.matmul(pr, r)
    y3 = np.zeros((1, 3, 3))
    for o in range(3):
        for c in range(2):
            for t in range(3):
                y3[0, o] += p["w3"][o, c, t] * z[0, c, 2 * t:2 * t + 5:2]
    return cx[:2], cx[2:].max(axis=2), y3 + p["b3"].reshape(1, -1, 1)


def test_decoder_ops_and_two_inputs():
    model, params = decoder()
    rng = np.random.default_rng(11)
    x, z = rng.standard_normal((1, 2, 6, 6)), rng.standard_normal((1, 2, 9))
    want = decoder_forward(x, z, params)
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs={"x": x, "z": z}, keep=True)
    values = rep["values"]
    for name, w in zip(("y1", "y2", "y3"), want):
        assert rel(values["reference"][name], w) < 1e-12, name
        assert rel(values["simulated"][name], w) < 1e-12, name
    assert [o["name"] for o in rep["outputs"]] == ["y1", "y2", "y3"]
    assert [(L["name"], L["op"]) for L in rep["layers"]] == [
        ("c1", "Conv"), ("ct", "ConvTranspose"), ("bscores", "MatMul"),
        ("bcontext", "MatMul"), ("c1d", "Conv")]
    _, low = onnx_net.conv_onnx(model, execute=True, inputs={"x": x, "z": z},
                                cell_mode="bf16")
    assert all(o["max_rel_diff"] > 0 for o in low["outputs"])
    with pytest.raises(onnx_net.ConfigError, match="no data input 'q'"):
        onnx_net.conv_onnx(model, execute=True, inputs={"q": x})


def test_the_command_line_with_named_h5_and_npy_inputs(tmp_path):
    h5py = pytest.importorskip("h5py")
    model, params = decoder()
    path = tmp_path / "dec.onnx"
    onnx.save(model, str(path))
    rng = np.random.default_rng(12)
    x, z = rng.standard_normal((1, 2, 6, 6)), rng.standard_normal((1, 2, 9))
    with h5py.File(tmp_path / "in.h5", "w") as f:
        f["x"] = x
        f["other"] = z
    np.save(tmp_path / "z.npy", z)
    r = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(path), "--execute",
                        "--input", f"x={tmp_path / 'in.h5'}:/x",
                        "--input", f"z={tmp_path / 'z.npy'}", "--cell-mode", "fp16"],
                       capture_output=True, text=True, env=clean_env(), check=False)
    assert r.returncode == 0, r.stderr
    assert "cell mode fp16" in r.stdout
    for name in ("y1", "y2", "y3"):
        line = [s for s in r.stdout.splitlines() if s.startswith(f"output {name} ")][0]
        assert float(line.split()[-1]) > 0
    # an HDF5 file of two datasets without one named: one line, exit 1
    r = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(path), "--execute",
                        "--input", f"x={tmp_path / 'in.h5'}"],
                       capture_output=True, text=True, env=clean_env(), check=False)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "2 datasets" in r.stderr


def test_more_host_ops():
    """Resize linear (half_pixel, align_corners), MaxPool with pads, InstanceNormalization,
    LeakyRelu, Clip, Sigmoid, Tanh, Gather, Unsqueeze, Squeeze, ReduceSum, Expand, Where,
    and a Gemm with transA, alpha and beta, against a forward pass written here."""
    inits = [init("wa", 12, 6), init("cb", 6), init("isc", 3), init("ibi", 3),
             numpy_helper.from_array(np.array([1, 1, 2, 1.5], np.float32), "up"),
             numpy_helper.from_array(np.array([1, 3, 7, 5], np.int64), "size"),
             numpy_helper.from_array(np.array([0], np.int64), "a0"),
             numpy_helper.from_array(np.array([2, 0], np.int64), "idx"),
             numpy_helper.from_array(np.array([-0.5], np.float32), "lo"),
             numpy_helper.from_array(np.array([0.75], np.float32), "hi"),
             numpy_helper.from_array(np.array([12, 4], np.int64), "eshape"),
             numpy_helper.from_array(np.array([0.0], np.float32), "zero")]
    mk = helper.make_node
    nodes = [
        mk("Resize", ["x", "", "up"], ["r1"], mode="linear"),
        mk("Resize", ["x", "", "", "size"], ["r2"], mode="linear",
           coordinate_transformation_mode="align_corners"),
        mk("MaxPool", ["r2"], ["mp"], kernel_shape=[3, 2], pads=[1, 0, 1, 1], strides=[2, 2]),
        mk("InstanceNormalization", ["mp", "isc", "ibi"], ["inn"], epsilon=0.25),
        mk("LeakyRelu", ["inn"], ["lr"], alpha=0.2),
        mk("Clip", ["r1", "lo", "hi"], ["cl"]),
        mk("Sigmoid", ["cl"], ["sg"]), mk("Tanh", ["lr"], ["th"]),
        mk("ReduceSum", ["sg", "a0"], ["rs"], keepdims=0),            # 3 x 8 x 6
        mk("Gather", ["rs", "idx"], ["ga"], axis=2),                  # 3 x 8 x 2
        mk("Squeeze", ["th", "a0"], ["sq"]),                          # 3 x 4 x 3
        mk("Unsqueeze", ["sq", "a0"], ["y2"]),
        mk("Transpose", ["ga"], ["gt"], perm=[2, 0, 1]),              # 2 x 3 x 8
        mk("Reshape", ["gt", "eshape"], ["g2"]),                      # 12 x 4
        mk("Less", ["g2", "hi"], ["m"]),
        mk("Where", ["m", "g2", "zero"], ["wh"]),
        mk("Gemm", ["wh", "wa", "cb"], ["y1"], name="fc", transA=1, alpha=0.5, beta=2.0)]
    model = make(nodes, [("x", [1, 3, 4, 4])], inits, ("y1", "y2"), opset=13)
    p = {t.name: value(t) for t in model.graph.initializer}
    x = np.random.default_rng(13).standard_normal((1, 3, 4, 4))

    def lin(v, axis, coords):  # linear interpolation at the given source coordinates
        n = v.shape[axis]
        c = np.clip(coords, 0, n - 1)
        lo = np.floor(c).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        f = (c - lo).reshape([-1 if k == axis else 1 for k in range(v.ndim)])
        return np.take(v, lo, axis) * (1 - f) + np.take(v, hi, axis) * f
    r1 = lin(lin(x, 2, (np.arange(8) + 0.5) / 2 - 0.5), 3, (np.arange(6) + 0.5) / 1.5 - 0.5)
    r2 = lin(lin(x, 2, np.arange(7) * 3 / 6), 3, np.arange(5) * 3 / 4)
    xp = np.full((1, 3, 9, 6), -np.inf)
    xp[:, :, 1:8, 0:5] = r2
    mp = np.array([[[[xp[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 2].max() for j in range(3)]
                     for i in range(4)] for c in range(3)]])
    mu = mp.mean(axis=(2, 3), keepdims=True)
    var = ((mp - mu) ** 2).mean(axis=(2, 3), keepdims=True)
    inn = (mp - mu) / np.sqrt(var + 0.25) * p["isc"].reshape(1, -1, 1, 1) + \
        p["ibi"].reshape(1, -1, 1, 1)
    th = np.tanh(np.where(inn >= 0, inn, float(np.float32(0.2)) * inn))  # alpha as held
    sg = 1 / (1 + np.exp(-np.clip(r1, -0.5, 0.75)))
    ga = sg.sum(axis=0)[:, :, [2, 0]]
    g2 = ga.transpose(2, 0, 1).reshape(12, 4)
    wh = np.where(g2 < 0.75, g2, 0.0)
    y1 = 0.5 * wh.T @ p["wa"] + 2.0 * p["cb"]
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs=x, keep=True)
    for name, want in (("y1", y1), ("y2", th)):
        assert rel(rep["values"]["reference"][name], want) < 1e-12, name
        assert rel(rep["values"]["simulated"][name], want) < 1e-12, name


def test_an_unsupported_attribute_and_an_unknown_cell_mode_are_one_line():
    model = make([helper.make_node("Resize", ["x", "", "s"], ["r"], name="rz", mode="cubic"),
                  helper.make_node("MatMul", ["r", "w"], ["y"], name="mm")],
                 [("x", [1, 1, 2, 2])],
                 [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s"),
                  init("w", 4, 3)], opset=13)
    with pytest.raises(onnx_net.ConfigError) as e:
        onnx_net.conv_onnx(model, execute=True)
    assert str(e.value) == ("node 'rz' (Resize): Resize mode 'cubic': only nearest and "
                            "linear run on the host")
    with pytest.raises(onnx_net.ConfigError, match="cell mode: unknown 'fp7'"):
        onnx_net.conv_onnx(cnn()[0], execute=True, cell_mode="fp7")


def test_weights_given_as_graph_inputs():
    """A Conv's and a ConvTranspose's (stride 2, groups 2) weights as graph inputs, given
    in inputs=: the layers take them as the run's values."""
    mk = helper.make_node
    model = make([mk("Conv", ["x", "wx"], ["c"], name="c", pads=[0, 1, 0, 1]),
                  mk("ConvTranspose", ["c", "wtx"], ["y"], name="t", strides=[2, 2],
                     group=2)],
                 [("x", [1, 2, 4, 4]), ("wx", [4, 2, 2, 3]), ("wtx", [4, 1, 2, 2])], [])
    rng = np.random.default_rng(14)
    x, wx, wtx = (rng.standard_normal(s) for s in ((1, 2, 4, 4), (4, 2, 2, 3), (4, 1, 2, 2)))
    c = np.zeros((1, 4, 3, 4))
    xp = np.pad(x, [(0, 0), (0, 0), (0, 0), (1, 1)])
    for o in range(4):
        for i in range(3):
            for j in range(4):
                c[0, o, i, j] = np.sum(xp[0, :, i:i + 2, j:j + 3] * wx[o])
    y = np.zeros((1, 2, 8, 10))  # group g: input channels 2g, 2g + 1 to output channel g
    for ch in range(4):
        g = ch // 2
        for i in range(3):
            for j in range(4):
                y[0, g, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += c[0, ch, i, j] * wtx[ch, 0]
    y = y[:, :, :6, :8]
    for mode in ("fp64", "bf16"):
        _, rep = onnx_net.conv_onnx(model, execute=True, cell_mode=mode,
                                    inputs={"x": x, "wx": wx, "wtx": wtx}, keep=True)
        assert rel(rep["values"]["reference"]["y"], y) < 1e-12
        d = rel(rep["values"]["simulated"]["y"], y)
        assert d < 1e-12 if mode == "fp64" else 0 < d < 0.05


def test_token_ids_and_an_embedding():
    """An int64 input of token ids through Gather (an embedding table), then a MatMul."""
    model = make([helper.make_node("Gather", ["emb", "ids"], ["e"], axis=0),
                  helper.make_node("MatMul", ["e", "w"], ["y"], name="proj")],
                 [], [init("emb", 7, 4), init("w", 4, 3)])
    model.graph.input.append(helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5]))
    p = {t.name: value(t) for t in model.graph.initializer}
    ids = np.array([[0, 6, 3, 3, 1], [2, 5, 4, 0, 6]])
    _, rep = onnx_net.conv_onnx(model, execute=True, inputs=ids, keep=True)
    assert rel(rep["values"]["simulated"]["y"], np.matmul(p["emb"][ids], p["w"])) < 1e-12
    _, rep = onnx_net.conv_onnx(model, execute=True, seed=3)  # random ids: 0 and 1
    assert rep["outputs"][0]["shape"] == [2, 5, 3]
