"""triada.onnx_net against an independent engine: ONNX Runtime (its Node.js package,
onnxruntime-node, CPU build) runs small models built here with onnx.helper, and each
node's output shape must be the one onnx_net's layer mapping gives, and each layer's
output from conv_onnx(model, inputs=...) ONNX Runtime's to float32 rounding.

Enabled by TRIADA_ORT_NODE, a node_modules folder holding onnxruntime-node
(``mkdir /tmp/ortnode && cd /tmp/ortnode && npm install --ignore-scripts
onnxruntime-node``: the package ships its Linux x64 binary, so its install script is not
needed; then TRIADA_ORT_NODE=/tmp/ortnode/node_modules). Skipped without node or it."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from triada import onnx_net  # noqa: E402

F = TensorProto.FLOAT
U = 2.0 ** -24  # float32's unit roundoff

RUNNER = r"""
const fs = require('fs');
const ort = require('onnxruntime-node');
(async () => {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(spec.model);
  const feeds = {};
  for (const [name, t] of Object.entries(spec.inputs))
    feeds[name] = new ort.Tensor('float32', Float32Array.from(t.data), t.dims);
  const result = await session.run(feeds);
  const out = {};
  for (const [name, t] of Object.entries(result))
    out[name] = {dims: Array.from(t.dims), data: Array.from(t.data)};
  fs.writeFileSync(process.argv[3], JSON.stringify(out));
})().catch(e => { console.error(String(e)); process.exit(3); });
"""


def ort_modules():
    where = os.environ.get("TRIADA_ORT_NODE")
    if not where:
        pytest.skip("TRIADA_ORT_NODE (a node_modules folder with onnxruntime-node) is not set")
    if shutil.which("node") is None:
        pytest.skip("needs node (Node.js) to run onnxruntime-node")
    if not os.path.isdir(os.path.join(where, "onnxruntime-node")):
        pytest.skip(f"TRIADA_ORT_NODE={where} holds no onnxruntime-node")
    return where


def run_ort(tmp, model, inputs):
    """ONNX Runtime's outputs of MODEL for INPUTS (float32), {name: array}."""
    modules = ort_modules()
    onnx.save(model, str(tmp / "m.onnx"))
    (tmp / "run.js").write_text(RUNNER)
    spec = {"model": str(tmp / "m.onnx"),
            "inputs": {n: {"dims": list(v.shape), "data": v.astype(np.float32).ravel()
                           .astype(float).tolist()} for n, v in inputs.items()}}
    (tmp / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, NODE_PATH=modules)
    p = subprocess.run(["node", str(tmp / "run.js"), str(tmp / "spec.json"),
                        str(tmp / "out.json")], capture_output=True, text=True, env=env,
                       timeout=120)
    if p.returncode != 0 and "Cannot find module" in p.stderr:
        pytest.skip(f"onnxruntime-node does not load: {p.stderr.strip().splitlines()[0]}")
    assert p.returncode == 0, p.stderr
    out = json.loads((tmp / "out.json").read_text())
    return {n: np.array(t["data"], dtype=np.float64).reshape(t["dims"]) for n, t in out.items()}


def model_of(nodes, inputs, initializers, outputs):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, F, None) for o in outputs],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             ir_version=8)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32).astype(np.float64)


def close(ours, theirs, k, bound):
    """ONNX Runtime sums K float32 products (float32 operands, exact in float64 here):
    each output is off the exact sum by at most gamma_K sum |x w| <= gamma_K BOUND (BOUND
    >= sum |x w|; gamma_K = K u / (1 - K u), u = 2^-24), plus its own rounding; ours, in
    float64, is within 2^-50 K BOUND. Twice gamma_{K+2} BOUND covers both."""
    g = (k + 2) * U / (1 - (k + 2) * U)
    assert ours.shape == theirs.shape
    err = np.abs(ours - theirs).max()
    assert err <= 2 * g * bound, (err, 2 * g * bound)


CONVS = [  # name, x shape, w shape, attributes
    ("strided", (2, 3, 9, 8), (4, 3, 3, 2), dict(strides=[2, 3], pads=[1, 0, 2, 1])),
    ("grouped", (1, 4, 7, 7), (6, 2, 3, 3), dict(group=2, pads=[1, 1, 1, 1], dilations=[2, 1])),
    ("depthwise", (2, 3, 6, 5), (3, 1, 3, 3), dict(group=3, strides=[1, 2], pads=[1, 1, 1, 1])),
]


@pytest.mark.parametrize("name, xs, ws, attrs", CONVS, ids=[c[0] for c in CONVS])
def test_conv_against_onnx_runtime(tmp, name, xs, ws, attrs):
    rng = np.random.default_rng(5)
    x, w = f32(rng, *xs), f32(rng, *ws)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name=name,
                            kernel_shape=list(ws[2:]), **attrs)
    model = model_of([node], [("x", list(xs))], {"w": w}, ["y"])
    y = run_ort(tmp, model, {"x": x})["y"]
    [rec] = onnx_net.onnx_layers(model)
    n, _, _, _, co = rec.layer[:5]
    assert y.shape == (n, co, *rec.output_hw) == tuple(rec.output_shape)
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={name: x})
    k = ws[1] * ws[2] * ws[3]
    for method in ("explicit", "implicit"):
        close(results[0]["outputs"][method], y, k, k * np.abs(x).max() * np.abs(w).max())


def test_conv_transpose_against_onnx_runtime(tmp):
    rng = np.random.default_rng(6)
    x, w = f32(rng, 1, 4, 4, 5), f32(rng, 4, 3, 3, 3)  # C_I x C_O/g x k x k, g = 2
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", group=2,
                            kernel_shape=[3, 3], strides=[2, 3], pads=[1, 0, 0, 1],
                            output_padding=[1, 2])
    model = model_of([node], [("x", [1, 4, 4, 5])], {"w": w}, ["y"])
    y = run_ort(tmp, model, {"x": x})["y"]
    [rec] = onnx_net.onnx_layers(model)
    n, _, _, _, co = rec.layer[:5]
    assert y.shape == (n, co, *rec.output_hw) == tuple(rec.output_shape)
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={"up": x})
    k = 2 * 3 * 3  # C_I/g k k taps, the inserted zeros among them
    for method in ("explicit", "implicit"):
        close(results[0]["outputs"][method], y, k, k * np.abs(x).max() * np.abs(w).max())


@pytest.mark.parametrize("ta, tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_gemm_against_onnx_runtime(tmp, ta, tb):
    # The layer is alpha A B (the MXU's product); beta C is added to ours here.
    rng = np.random.default_rng(7 + 2 * ta + tb)
    m, k, n, alpha, beta = 5, 7, 3, 0.75, -1.5
    a, b, c = f32(rng, *((k, m) if ta else (m, k))), f32(rng, *((n, k) if tb else (k, n))), \
        f32(rng, n)
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="fc", transA=ta, transB=tb,
                            alpha=alpha, beta=beta)
    model = model_of([node], [("a", list(a.shape))], {"b": b, "c": c}, ["y"])
    y = run_ort(tmp, model, {"a": a})["y"]
    [rec] = onnx_net.onnx_layers(model)
    assert y.shape == rec.gemm[:2] == tuple(rec.output_shape) == (m, n)
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={"fc": a})
    bound = k * abs(alpha) * np.abs(a).max() * np.abs(b).max() + abs(beta) * np.abs(c).max()
    for method in ("explicit", "implicit"):
        ours = results[0]["outputs"][method][0, :, :, 0].T + beta * c
        close(ours, y, k + 1, bound)


def test_batched_matmul_against_onnx_runtime(tmp):
    # A P x M x K by B P x K x N (an initializer), and the same with B a graph input.
    rng = np.random.default_rng(8)
    p, m, k, n = 3, 4, 6, 5
    a, b = f32(rng, p, m, k), f32(rng, p, k, n)
    for given in (False, True):
        node = helper.make_node("MatMul", ["a", "b"], ["y"], name="bmm")
        ins = [("a", [p, m, k])] + ([("b", [p, k, n])] if given else [])
        model = model_of([node], ins, {} if given else {"b": b}, ["y"])
        feeds = {"a": a, "b": b} if given else {"a": a}
        y = run_ort(tmp, model, feeds)["y"]
        [rec] = onnx_net.onnx_layers(model)
        assert y.shape == (rec.products, *rec.gemm[:2]) == tuple(rec.output_shape)
        operands = {"A": a, "B": b} if given else a
        results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={"bmm": operands})
        for method in ("explicit", "implicit"):
            out = results[0]["outputs"][method]  # 1 x P N x M x 1: filter p N + n, row m
            ours = out[0, :, :, 0].reshape(p, n, m).transpose(0, 2, 1)
            close(ours, y, k, k * np.abs(a).max() * np.abs(b).max())
