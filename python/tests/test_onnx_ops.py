"""triada.onnx_net: every MAC-bearing node accounted for. A 1-D Conv runs as H = 1 and a
3-D one is refused naming it; MatMul with batch dims, broadcasting and 1-D operands, and
the products of two activations (attention's scores and context); ConvTranspose with
strides, pads, output_padding, dilations and groups as the zero-inserted convolution a
systolic array runs; LSTM, GRU, RNN and Einsum listed as not modelled with their MACs.
The oracles are written here: direct loops in numpy, np.matmul, and the MAC formulas."""

import csv
import itertools
import subprocess
import sys

import numpy as np
import pytest

from conftest import clean_env, load_json, triada

onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from triada import onnx_net  # noqa: E402

F = TensorProto.FLOAT
METHODS = ("explicit", "implicit")


def model_of(nodes, inputs, initializers, outputs=("y",)):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, F, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v, np.float32), n) for n, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def inferred_shape(model, name="y"):
    graph = onnx.shape_inference.infer_shapes(model).graph
    for vi in list(graph.output) + list(graph.value_info):
        if vi.name == name:
            return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    raise KeyError(name)


def f32(a):
    return np.asarray(a, np.float32).astype(np.float64)


def close(y, ref, terms):
    """Within a few ulps of the sum of |terms| products (fp64 both ways)."""
    assert y.shape == ref.shape, (y.shape, ref.shape)
    assert np.all(np.abs(y - ref) <= 4 * terms * 2.0 ** -52 * (np.abs(ref).max() + 1))


# ---- (a) 1-D and 3-D convolutions -----------------------------------------------------

def direct_conv1d(x, w, s, pads, d, group):
    """y[n, o, t] = sum_c,j x[n, g C_g + c, t s - pad_begin + j d] w[o, c, j]."""
    n, ci, length = x.shape
    co, cg, k = w.shape
    xp = np.concatenate([np.zeros((n, ci, pads[0])), x, np.zeros((n, ci, pads[1]))], axis=2)
    wo = (length + pads[0] + pads[1] - d * (k - 1) - 1) // s + 1
    y = np.zeros((n, co, wo))
    for o, c, j, t in itertools.product(range(co), range(cg), range(k), range(wo)):
        g = o // (co // group)
        y[:, o, t] += xp[:, g * cg + c, t * s + j * d] * w[o, c, j]
    return y


@pytest.mark.parametrize("s,pads,d,group", [(1, (0, 0), 1, 1), (2, (1, 2), 2, 2),
                                            (3, (2, 0), 1, 4)])
def test_a_1d_conv_runs_as_h_1(s, pads, d, group):
    rng = np.random.default_rng(1)
    w = rng.integers(-3, 4, (8, 4 // group, 3)).astype(np.float64)
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="c1", strides=[s], pads=list(pads),
                            dilations=[d], group=group)
    model = model_of([conv], [("x", [2, 4, 13])], {"w": w})
    (L,) = onnx_net.onnx_layers(model)
    wo = (13 + sum(pads) - d * 2 - 1) // s + 1
    assert L.layer == (2, 4, 1, 13, 8, 1, 3, (1, s), (0, pads[0], 0, pads[1]), (1, d), group)
    assert inferred_shape(model) == (2, 8, wo) == (2, 8, *L.output_hw[1:])
    assert L.macs == 2 * 8 * wo * 3 * 4 // group
    x = rng.standard_normal((2, 4, 13))
    results, report = onnx_net.conv_onnx(model, mxu=4, inputs=[x])  # N x C x W, the model's
    for m in METHODS:
        close(results[0]["outputs"][m][:, :, 0, :], direct_conv1d(x, w, s, pads, d, group), 12)
    assert report["layers"][0]["macs"] == 2 * 8 * wo * 3 * 4 // group
    assert report["total"]["failed_layers"] == 0


def test_a_1d_conv_with_same_pads_and_a_3d_conv_refused_naming_it():
    w = np.ones((2, 3, 4))
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="same", strides=[2],
                            auto_pad="SAME_LOWER")
    model = model_of([conv], [("x", [1, 3, 9])], {"w": w})
    (L,) = onnx_net.onnx_layers(model)
    # ceil(9 / 2) = 5 outputs: total pad (5 - 1) 2 + 4 - 9 = 3, the odd one at the beginning
    assert L.layer[8] == (0, 2, 0, 1) and inferred_shape(model) == (1, 2, 5)
    conv3d = helper.make_node("Conv", ["x", "w"], ["y"], name="vol")
    model = model_of([conv3d], [("x", [1, 2, 4, 4, 4])], {"w": np.ones((3, 2, 2, 2, 2))})
    with pytest.raises(triada.ConfigError, match=r"^node 'vol' \(Conv\): a 3-D convolution "
                       r"\(input 1x2x4x4x4\); only 1-D \(as H = 1\) and 2-D convolutions run$"):
        onnx_net.onnx_layers(model)


# ---- (b) MatMul: batch dims, broadcasting, two activations ----------------------------

def products_of(y, rec):
    """The layer's N x C_O x M x 1 output as the P products' M x N each."""
    m, n, _ = rec.gemm
    return y[0, :, :, 0].reshape(rec.products, n, m).transpose(0, 2, 1)


@pytest.mark.parametrize("sa,sb,weight", [
    ((2, 3, 4, 5), (3, 5, 6), True),       # B's batch broadcast over A's first dim
    ((2, 1, 4, 5), (1, 3, 5, 6), False),   # both broadcast: 2 x 3 products, B an activation
    ((4, 5), (3, 5, 6), True),             # A broadcast over B's batch
    ((7, 4, 5), (7, 5, 6), False),         # one batch dim, both activations
])
def test_a_batched_matmul_is_batch_products_of_m_n_k(sa, sb, weight):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(sa), f32(rng.standard_normal(sb))
    mm = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    inputs = [("a", list(sa))] + ([] if weight else [("b", list(sb))])
    model = model_of([mm], inputs, {"b": b} if weight else {})
    if not weight:  # an activation's dim 0 is symbolic, as an exporter writes it
        model.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "B"
    ref = np.matmul(a, b)
    batch = ref.shape[:-2]
    count = int(np.prod(batch))
    shapes = None if weight else {"a": sa, "b": sb}
    (L,) = onnx_net.onnx_layers(model, input_shapes=shapes)
    assert (L.gemm, L.products) == ((4, 6, 5), count)
    assert L.macs == count * 4 * 6 * 5
    given = {"mm": a} if weight else {"mm": {"A": a, "B": b}}
    results, report = onnx_net.conv_onnx(model, mxu=4, inputs=given, input_shapes=shapes)
    for m in METHODS:
        close(products_of(results[0]["outputs"][m], L), ref.reshape(count, 4, 6), 5)
    rep = report["layers"][0]
    assert rep["macs"] == count * 4 * 6 * 5 and rep["verified"] is True
    assert rep["gemm"] == {"M": 4, "N": 6, "K": 5, "batch": count}


def test_a_matmul_whose_b_is_one_matrix_folds_the_batch_into_m_and_1d_operands():
    rng = np.random.default_rng(3)
    b1, bv, b3 = f32(rng.standard_normal((5, 3))), f32(rng.standard_normal(5)), \
        f32(rng.standard_normal((1, 1, 5, 3)))
    nodes = [helper.make_node("MatMul", ["v", "b1"], ["y1"], name="row"),  # 1-D A
             helper.make_node("MatMul", ["a", "bv"], ["y2"], name="col"),  # 1-D B
             helper.make_node("MatMul", ["a", "b3"], ["y3"], name="ones")]  # B's batch all 1
    model = model_of(nodes, [("v", [5]), ("a", [2, 4, 5])], {"b1": b1, "bv": bv, "b3": b3},
                     ("y1", "y2", "y3"))
    row, col, ones = onnx_net.onnx_layers(model)
    assert (row.gemm, col.gemm, ones.gemm) == ((1, 3, 5), (8, 1, 5), (8, 3, 5))
    assert [L.products for L in (row, col, ones)] == [1, 1, 1]
    assert [L.macs for L in (row, col, ones)] == [15, 40, 120]
    v, a = rng.standard_normal(5), rng.standard_normal((2, 4, 5))
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={"row": v, "col": a, "ones": a})
    for m in METHODS:
        close(results[0]["outputs"][m][0, :, 0, 0], v @ b1, 5)
        close(results[1]["outputs"][m][0, 0, :, 0], (a @ bv).reshape(8), 5)
        close(results[2]["outputs"][m][0, :, :, 0].T, np.matmul(a, b3).reshape(8, 3), 5)


def attention(heads=2, seq=4, dk=8):
    """scores = Q K^T (K transposed by a Transpose node), softmax, context = P V: two
    MatMuls of activations."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
             helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"], name="context")]
    shape = ["N", heads, seq, dk]
    return model_of(nodes, [("q", shape), ("k", shape), ("v", shape)], {})


def test_attention_scores_and_context_are_batched_products_of_two_activations():
    model = attention()
    layers = onnx_net.onnx_layers(model, batch=3)  # N = 3 on every data input
    assert [(L.name, L.gemm, L.products) for L in layers] == [
        ("scores", (4, 4, 8), 6), ("context", (4, 8, 4), 6)]
    assert [L.macs for L in layers] == [6 * 4 * 4 * 8, 6 * 4 * 8 * 4]
    assert all(L.weights is None for L in layers)  # B random from the seed unless given
    results, report = onnx_net.conv_onnx(model, batch=3, mxu=4)
    assert report["total"]["failed_layers"] == 0 and report["total"]["macs"] == 2 * 768
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((3, 2, 4, 8)) for _ in range(3))
    s = np.matmul(q, k.transpose(0, 1, 3, 2))
    p = np.exp(s) / np.exp(s).sum(-1, keepdims=True)
    given = {"scores": {"A": q, "B": k.transpose(0, 1, 3, 2)}, "context": {"A": p, "B": v}}
    results, report = onnx_net.conv_onnx(model, batch=3, mxu=4, inputs=given)
    for m in METHODS:
        close(products_of(results[0]["outputs"][m], layers[0]), s.reshape(6, 4, 4), 8)
        close(products_of(results[1]["outputs"][m], layers[1]), np.matmul(p, v).reshape(6, 4, 8),
              4)
    with pytest.raises(triada.ConfigError, match="'scores': its B of shape"):
        onnx_net.conv_onnx(model, batch=3, mxu=4, inputs={"scores": {"B": np.ones(7)}})


def test_a_gemm_of_two_activations_takes_its_b_with_trans_b_and_alpha():
    rng = np.random.default_rng(5)
    gemm = helper.make_node("Gemm", ["a", "b"], ["y"], name="fc", transB=1, alpha=0.25)
    model = model_of([gemm], [("a", [3, 7]), ("b", [5, 7])], {})
    (L,) = onnx_net.onnx_layers(model)
    assert L.gemm == (3, 5, 7) and L.weights is None and L.macs == 105
    a, b = rng.standard_normal((3, 7)), rng.standard_normal((5, 7))
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs={"fc": {"A": a, "B": b}})
    for m in METHODS:
        close(results[0]["outputs"][m][0, :, :, 0].T, 0.25 * a @ b.T, 7)


# ---- (c) ConvTranspose ----------------------------------------------------------------

def direct_conv_transpose(x, w, strides, pads, out_pad, dils, group):
    """ConvTranspose's definition as a scatter: input pixel p times tap t lands on output
    p s + t d - pad_begin; output_padding adds rows at the end."""
    n, ci, *sp = x.shape
    _, cog, *ks = w.shape
    nd, cig = len(sp), ci // group
    full = [s * (i - 1) + o + (k - 1) * d + 1 for s, i, o, k, d in
            zip(strides, sp, out_pad, ks, dils)]
    y = np.zeros((n, cog * group, *full))
    for p in itertools.product(*map(range, sp)):
        for t in itertools.product(*map(range, ks)):
            at = tuple(pi * s + ti * d for pi, ti, s, d in zip(p, t, strides, dils))
            for g in range(group):
                y[(slice(None), slice(g * cog, (g + 1) * cog)) + at] += \
                    x[(slice(None), slice(g * cig, (g + 1) * cig)) + p] @ \
                    w[(slice(g * cig, (g + 1) * cig), slice(None)) + t]
    # a negative pad (a total padding below 0 from output_shape) adds zero outputs
    grow = [(max(0, -pads[i]), max(0, -pads[nd + i])) for i in range(nd)]
    y = np.pad(y, [(0, 0), (0, 0)] + grow)
    keep = tuple(slice(max(0, pads[i]), y.shape[2 + i] - max(0, pads[nd + i]))
                 for i in range(nd))
    return y[(slice(None), slice(None)) + keep]


TRANSPOSE_CASES = [
    dict(strides=[2, 2], pads=[0, 0, 0, 0], output_padding=[0, 0], dilations=[1, 1], group=1),
    dict(strides=[2, 3], pads=[1, 0, 2, 1], output_padding=[1, 2], dilations=[1, 1], group=2),
    dict(strides=[1, 2], pads=[3, 1, 0, 2], output_padding=[0, 1], dilations=[2, 1], group=1),
    dict(strides=[3, 1], pads=[0, 2, 1, 0], output_padding=[2, 0], dilations=[1, 2], group=4),
    # pads above d (k - 1): the zero-inserted input is cropped (top by 1, right by 1)
    dict(strides=[2, 2], pads=[3, 1, 0, 2], output_padding=[1, 0], dilations=[1, 1], group=1),
    dict(strides=[2], pads=[1, 2], output_padding=[1], dilations=[2], group=2),  # 1-D
    dict(strides=[3], pads=[4, 3], output_padding=[0], dilations=[1], group=1),  # 1-D, cropped
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=lambda c: "s{strides}p{pads}o"
                         "{output_padding}d{dilations}g{group}".format(**c))
def test_conv_transpose_runs_as_the_zero_inserted_convolution(case):
    rng = np.random.default_rng(6)
    nd = len(case["strides"])
    sp, ks = [5, 4][:nd] if nd == 2 else [6], [3, 2][:nd] if nd == 2 else [3]
    ci, cog, g = 4, 3, case["group"]
    w = rng.integers(-2, 3, (ci, cog, *ks)).astype(np.float64)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **case)
    model = model_of([node], [("x", [2, ci, *sp])], {"w": w})
    x = rng.standard_normal((2, ci, *sp))
    ref = direct_conv_transpose(x, w, case["strides"], case["pads"], case["output_padding"],
                                case["dilations"], g)
    assert inferred_shape(model) == ref.shape  # ONNX's own output size
    (L,) = onnx_net.onnx_layers(model)
    out = ref.shape[2:]
    # The MACs the array performs: the stride-1 convolution of the zero-inserted input,
    # N C_O (output pixels) C_I / g (kernel taps); the transposed conv's own N C_I (input
    # pixels) C_O / g (kernel taps).
    performed = 2 * cog * g * int(np.prod(out)) * ci // g * int(np.prod(ks))
    assert L.macs == performed
    assert L.transposed_macs == 2 * ci * int(np.prod(sp)) * cog * int(np.prod(ks))
    results, report = onnx_net.conv_onnx(model, mxu=4, inputs=[x])
    for m in METHODS:
        y = results[0]["outputs"][m]
        close(y if nd == 2 else y[:, :, 0, :], ref, ci * int(np.prod(ks)))
    rep = report["layers"][0]
    assert rep["op"] == "ConvTranspose" and rep["verified"] is True
    assert rep["macs"] == performed and rep["transposed_macs"] == L.transposed_macs
    if max(case["strides"]) > 1:  # ESOP skips the inserted zeros: fewer MACs done
        assert rep["explicit"]["macs"] < rep["explicit"]["useful_macs"] == performed
    # Without inputs the random input has its zeros inserted too, and verifies.
    _, report = onnx_net.conv_onnx(model, mxu=4)
    assert report["layers"][0]["verified"] is True
    if max(case["strides"]) > 1:
        assert report["layers"][0]["implicit"]["macs"] < performed


@pytest.mark.parametrize("attrs", [dict(auto_pad="SAME_UPPER", strides=[2, 2]),
                                   dict(auto_pad="SAME_LOWER", strides=[3, 2]),
                                   dict(output_shape=[9, 12], strides=[2, 3])])
def test_conv_transpose_output_shape_and_same_pads_give_onnxs_output_size(attrs):
    w = np.ones((2, 3, 3, 2))
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", **attrs)
    model = model_of([node], [("x", [1, 2, 4, 4])], {"w": w})
    (L,) = onnx_net.onnx_layers(model)
    s = attrs["strides"]
    want = tuple(attrs.get("output_shape", [4 * s[0], 4 * s[1]]))
    assert inferred_shape(model)[2:] == want == L.output_hw
    # total padding s (n - 1) + (k - 1) + 1 - out per axis, split as the spec says
    totals = [s[0] * 3 + 3 - want[0], s[1] * 3 + 2 - want[1]]
    upper = attrs.get("auto_pad") == "SAME_UPPER"
    begin = [t // 2 if upper else t - t // 2 for t in totals]
    end = [t - b for t, b in zip(totals, begin)]
    x = np.random.default_rng(7).standard_normal((1, 2, 4, 4))
    results, _ = onnx_net.conv_onnx(model, mxu=4, inputs=[x])
    ref = direct_conv_transpose(x, w, s, begin + end, [0, 0], [1, 1], 1)
    close(results[0]["outputs"]["explicit"], ref, 12)


def test_a_3d_conv_transpose_is_refused_naming_it():
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="vol")
    model = model_of([node], [("x", [1, 2, 3, 3, 3])], {"w": np.ones((2, 2, 2, 2, 2))})
    with pytest.raises(triada.ConfigError, match=r"^node 'vol' \(ConvTranspose\): a 3-D "
                       r"transposed convolution \(input 1x2x3x3x3\); only 1-D"):
        onnx_net.onnx_layers(model)


# ---- (d) MAC-bearing nodes not modelled -----------------------------------------------

def recurrent_model(seq=5, batch=2, inp=6, hidden=4):
    """A Conv, then an LSTM (bidirectional), a GRU, an RNN and two Einsums."""
    rng = np.random.default_rng(8)
    inits = {"cw": rng.standard_normal((3, 2, 1, 1)),
             "lw": rng.standard_normal((2, 4 * hidden, inp)),
             "lr": rng.standard_normal((2, 4 * hidden, hidden)),
             "gw": rng.standard_normal((1, 3 * hidden, inp)),
             "gr": rng.standard_normal((1, 3 * hidden, hidden)),
             "rw": rng.standard_normal((1, hidden, inp)),
             "rr": rng.standard_normal((1, hidden, hidden)),
             "e": rng.standard_normal((inp, 7))}
    nodes = [helper.make_node("Conv", ["img", "cw"], ["c"], name="conv"),
             helper.make_node("LSTM", ["x", "lw", "lr"], ["l"], name="lstm", hidden_size=hidden,
                              direction="bidirectional"),
             helper.make_node("GRU", ["x", "gw", "gr"], ["g"], name="gru", hidden_size=hidden),
             helper.make_node("RNN", ["x", "rw", "rr"], ["r"], hidden_size=hidden),
             helper.make_node("Einsum", ["x", "e"], ["es"], name="ein", equation="sbi,ij->sbj"),
             helper.make_node("Einsum", ["x"], ["tr"], name="sum", equation="sbi->s")]
    model = model_of(nodes, [("img", [1, 2, 3, 3]), ("x", [seq, batch, inp])], inits,
                     ("c", "l", "g", "r", "es", "tr"))
    return model


def test_lstm_gru_rnn_and_einsum_are_listed_as_not_modelled_with_their_macs(tmp):
    seq, batch, inp, hidden = 5, 2, 6, 4
    model = recurrent_model(seq, batch, inp, hidden)
    layers, others = onnx_net.onnx_nodes(model)
    assert [L.name for L in layers] == ["conv"]
    # per step and direction: gates x hidden x (input + hidden) products
    want = [("lstm", "LSTM", 2 * seq * batch * 4 * hidden * (inp + hidden)),
            ("gru", "GRU", seq * batch * 3 * hidden * (inp + hidden)),
            ("rnn3", "RNN", seq * batch * hidden * (inp + hidden)),
            ("ein", "Einsum", seq * batch * inp * 7)]  # the one-operand Einsum has no MACs
    assert [(o.name, o.op, o.macs) for o in others] == want
    assert all(o.reason for o in others)
    _, report = onnx_net.conv_onnx(model, mxu=4, report=tmp / "r.json", csv=tmp / "r.csv")
    t = report["total"]
    assert (t["layers"], t["macs"]) == (1, 9 * 3 * 2)
    assert (t["not_modelled_nodes"], t["not_modelled_macs"]) == (4, sum(m for *_, m in want))
    assert t["not_modelled_unknown_macs"] == 0
    assert [(o["name"], o["macs"]) for o in load_json(tmp / "r.json")["not_modelled"]] == \
        [(n, m) for n, _, m in want]
    with open(tmp / "r.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 + 4  # the conv's two methods, the four not modelled
    assert [(r["index"], r["layer"], r["kind"], r["useful_macs"]) for r in rows[2:]] == \
        [(str(i + 2), n, "not_modelled", str(m)) for i, (n, _, m) in enumerate(want)]
    assert rows[2]["shape"].startswith("LSTM: a recurrent cell")

    onnx.save(model, str(tmp / "rnn.onnx"))
    p = subprocess.run([sys.executable, "-m", "triada.onnx_net", str(tmp / "rnn.onnx"), "--mxu",
                        "4"], capture_output=True, text=True, env=clean_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(line.split()[1:3] == ["lstm", "LSTM"] and str(want[0][2]) in line
               for line in lines), p.stdout
    assert lines[-1] == f"not modelled: 4 nodes, {sum(m for *_, m in want)} MACs"


def test_not_modelled_macs_unknown_are_null_and_a_model_of_only_those_is_one_line():
    nodes = [helper.make_node("Einsum", ["a", "b", "c"], ["y"], name="three",
                              equation="ij,jk,kl->il"),
             helper.make_node("MatMul", ["a", "b"], ["z"], name="mm")]
    model = model_of(nodes, [("a", [2, 3]), ("b", [3, 4]), ("c", [4, 5])], {}, ("y", "z"))
    _, others = onnx_net.onnx_nodes(model)
    assert [(o.name, o.macs) for o in others] == [("three", None)]
    assert "order" in others[0].reason
    _, report = onnx_net.conv_onnx(model, mxu=4)
    assert report["total"]["not_modelled_unknown_macs"] == 1
    assert report["not_modelled"][0]["macs"] is None
    lstm = helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="only", hidden_size=2)
    model = model_of([lstm], [("x", [3, 1, 2])], {"w": np.ones((1, 8, 2)), "r": np.ones((1, 8, 2))})
    with pytest.raises(triada.ConfigError, match=r"no Conv, ConvTranspose, Gemm or MatMul node "
                       r"\(not modelled: 'only' \(LSTM\) 96 MACs\)"):
        onnx_net.onnx_layers(model)


def test_an_lstm_inside_a_loop_body_is_refused_naming_the_loop():
    lstm = helper.make_node("LSTM", ["x", "w", "r"], ["h"], hidden_size=2)
    branch = helper.make_graph([lstm], "then", [], [helper.make_tensor_value_info("h", F, None)])
    cond = helper.make_node("If", ["c"], ["y"], name="when", then_branch=branch,
                            else_branch=branch)
    model = model_of([cond], [("x", [3, 1, 2])], {"w": np.ones((1, 8, 2)), "r": np.ones((1, 8, 2))})
    model.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    with pytest.raises(triada.ConfigError, match="node 'when' .*holds LSTM nodes"):
        onnx_net.onnx_layers(model)


def test_the_network_file_holds_the_products_and_the_transposed_convolution(tmp):
    from conftest import run_program
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["u"], name="up", strides=[2, 2],
                              pads=[1, 1, 0, 0], output_padding=[1, 1]),
             helper.make_node("Reshape", ["u", "shape"], ["q"]),
             helper.make_node("MatMul", ["q", "kt"], ["y"], name="scores")]
    rng = np.random.default_rng(9)
    model = model_of(nodes, [("x", [3, 2, 3, 3]), ("kt", [3, 2, 7, 5])],
                     {"w": rng.standard_normal((2, 4, 3, 3))})
    model.graph.initializer.append(numpy_helper.from_array(np.array([3, 2, 14, 7]), "shape"))
    layers = onnx_net.onnx_layers(model)
    # output 2 (3 - 1) + 1 + 3 - 1 - 0 = 7 a side: 3 x 4 x 7 x 7 read as 3 x 2 x 14 x 7
    assert layers[1].products == 6 and layers[1].gemm == (14, 5, 7)
    assert onnx_net.to_network(layers, tmp / "net.csv") == 3
    code, _, err = run_program("triada-conv", "--network", tmp / "net.csv", "--batch", 3,
                               "--mxu", 4, "--verify-budget", 0, "--report", tmp / "n.json")
    assert code == 0, err
    # 3 images x 2 groups per product row; the transposed conv at its performed MACs
    assert [L["macs"] for L in load_json(tmp / "n.json")["layers"]] == \
        [L.macs for L in layers] == [3 * 4 * 7 * 7 * 2 * 9, 6 * 14 * 5 * 7]


def test_attention_and_other_domains_multiplying_ops_are_listed_as_not_modelled():
    rng = np.random.default_rng(10)
    nodes = [helper.make_node("Conv", ["img", "cw"], ["c"], name="conv"),
             helper.make_node("FusedConv", ["img", "cw"], ["fc"], name="fused",
                              domain="com.microsoft", strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("MyMatMul", ["q", "k"], ["mm"], name="mine", domain="vendor.ops"),
             helper.make_node("Attention", ["q", "k", "v"], ["att"], name="att"),
             helper.make_node("MyRelu", ["q"], ["r"], name="act", domain="vendor.ops")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("img", F, [1, 2, 5, 5])] +
        [helper.make_tensor_value_info(n, F, [2, 3, 4, 8]) for n in "qkv"],
        [helper.make_tensor_value_info(o, F, None) for o in ("c", "fc", "mm", "att", "r")],
        [numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "cw")])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1),
        helper.make_opsetid("vendor.ops", 1)])
    layers, others = onnx_net.onnx_nodes(model)
    assert [L.name for L in layers] == ["conv"]
    # FusedConv as Conv: (5 + 2 - 3) // 2 + 1 = 3 a side; attention: B H S_q S_kv (d + d_v)
    assert [(o.name, o.macs) for o in others] == [
        ("fused", 1 * 3 * 3 * 3 * 2 * 3 * 3), ("mine", None), ("att", 2 * 3 * 4 * 4 * (8 + 8))]
    assert "'vendor.ops'" in others[1].reason  # MyRelu does not multiply: not listed


def test_a_one_operand_einsum_inside_a_branch_multiplies_nothing_and_is_not_refused():
    ein = helper.make_node("Einsum", ["x"], ["h"], equation="ij->i")
    branch = helper.make_graph([ein], "then", [], [helper.make_tensor_value_info("h", F, None)])
    cond = helper.make_node("If", ["c"], ["t"], name="when", then_branch=branch,
                            else_branch=branch)
    mm = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    model = model_of([cond, mm], [("x", [3, 4])], {"w": np.ones((4, 2))}, ("t", "y"))
    model.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    assert [L.macs for L in onnx_net.onnx_layers(model)] == [3 * 2 * 4]
