"""triada.onnx_net's shapes (triada._onnx_shapes): graph inputs given their shapes
(input_shapes=, --input-shape, batch=), shape computations folded to constants (the
exporters' computed flatten, Reshape's 0 and -1, Slice / Squeeze / Unsqueeze in opset 9, 11 and
13), and the one-line errors. Models are built here with onnx.helper; each layer's shape
and MACs are checked against the convolution's output-size formula written here."""

import subprocess
import sys

import numpy as np
import pytest

from conftest import clean_env, triada

onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from triada import onnx_net  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def out_size(n, k, s=1, pads=(0, 0), d=1):
    """ONNX Conv's output size: floor((n + pad_begin + pad_end - d (k - 1) - 1) / s) + 1."""
    return (n + pads[0] + pads[1] - d * (k - 1) - 1) // s + 1


def conv_macs(n, ci, ho, wo, co, hf, wf, g=1):
    return n * ho * wo * co * hf * wf * ci // g


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


def model_of(nodes, inputs, initializers, opset=13, outputs=("y",), int_inputs=()):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, F, s) for n, s in inputs] +
        [helper.make_tensor_value_info(n, I64, s) for n, s in int_inputs],
        [helper.make_tensor_value_info(o, F, None) for o in outputs], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def weights(name, shape):
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def two_convs():
    """x (N, 3, H, W) -> Conv 3x3 s2 p1 to 8 -> Conv 3x2 dilation 2x1 pads 0:1:2:0 to 4."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["c1", "w2"], ["y"], name="conv2", dilations=[2, 1],
                              pads=[0, 1, 2, 0])]
    return model_of(nodes, [("x", ["N", 3, "H", "W"])],
                    [weights("w1", (8, 3, 3, 3)), weights("w2", (4, 8, 3, 2))])


@pytest.mark.parametrize("n,h,w", [(1, 17, 23), (3, 8, 5), (2, 640, 640)])
def test_input_shapes_fix_a_symbolic_batch_height_and_width(n, h, w):
    for shapes in ({"x": (n, 3, h, w)}, {"": (n, 3, h, w)}):
        conv1, conv2 = onnx_net.onnx_layers(two_convs(), input_shapes=shapes)
        h1, w1 = out_size(h, 3, 2, (1, 1)), out_size(w, 3, 2, (1, 1))
        h2, w2 = out_size(h1, 3, 1, (0, 2), 2), out_size(w1, 2, 1, (1, 0))
        assert conv1.output_shape == (n, 8, h1, w1) and conv1.output_hw == (h1, w1)
        assert conv2.output_shape == (n, 4, h2, w2) and conv2.output_hw == (h2, w2)
        assert conv1.macs == conv_macs(n, 3, h1, w1, 8, 3, 3)
        assert conv2.macs == conv_macs(n, 8, h2, w2, 4, 3, 2)
    # batch= with the other dims given: the same layers
    same = onnx_net.onnx_layers(two_convs(), batch=n, input_shapes={"x": (n, 3, h, w)})
    assert [L.layer for L in same] == [conv1.layer, conv2.layer]


def test_the_report_counts_the_given_shapes_macs():
    _, report = onnx_net.conv_onnx(two_convs(), mxu=4, input_shapes={"x": (2, 3, 9, 7)})
    h1, w1 = out_size(9, 3, 2, (1, 1)), out_size(7, 3, 2, (1, 1))
    h2, w2 = out_size(h1, 3, 1, (0, 2), 2), out_size(w1, 2, 1, (1, 0))
    assert [L["macs"] for L in report["layers"]] == [conv_macs(2, 3, h1, w1, 8, 3, 3),
                                                     conv_macs(2, 8, h2, w2, 4, 3, 2)]
    assert report["total"]["failed_layers"] == 0


def flatten_model(how, opset=13):
    """x (N, 3, 10, 9) -> Conv 3x3 s2 to 6 -> the flatten an exporter computes from the
    Conv's Shape -> MatMul by 6 H_O W_O x 5."""
    ho, wo = out_size(10, 3, 2), out_size(9, 3, 2)
    k = 6 * ho * wo
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 2]),
             helper.make_node("Shape", ["c"], ["s"])]
    inits = [weights("w", (6, 3, 3, 3)), weights("m", (k, 5))]
    if how == "gather":  # torch's x.view(x.size(0), -1)
        nodes += [helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
                  helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
                  helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0)]
        inits += [const("zero", 0), const("axes0", [0]), const("minus1", [-1])]
    elif how == "reduceprod":  # the product of dims 1.. (not data-propagated by onnx)
        nodes += [helper.make_node("Slice", ["s", "one", "big"], ["tail"]),
                  helper.make_node("ReduceProd", ["tail"], ["k"], keepdims=1),
                  helper.make_node("Slice", ["s", "zero1", "one"], ["n1"]),
                  helper.make_node("Cast", ["k"], ["kf"], to=TensorProto.FLOAT),
                  helper.make_node("Div", ["kf", "two"], ["half"]),
                  helper.make_node("Mul", ["half", "two"], ["kf2"]),
                  helper.make_node("Cast", ["kf2"], ["k2"], to=I64),
                  helper.make_node("Concat", ["n1", "k2"], ["shape"], axis=0)]
        inits += [const("one", [1]), const("big", [2 ** 62]), const("zero1", [0]),
                  const("two", [2.0], np.float32)]
    nodes += [helper.make_node("Reshape", ["c", "shape"], ["f"], name="flat"),
              helper.make_node("MatMul", ["f", "m"], ["y"], name="mm")]
    return model_of(nodes, [("x", ["N", 3, 10, 9])], inits, opset), k


@pytest.mark.parametrize("how", ["gather", "reduceprod"])
def test_a_computed_flatten_folds_and_the_matmul_gets_m_n_k(how):
    model, k = flatten_model(how)
    conv, mm = onnx_net.onnx_layers(model, input_shapes={"x": (3, 3, 10, 9)})
    assert conv.output_shape == (3, 6, out_size(10, 3, 2), out_size(9, 3, 2))
    assert mm.gemm == (3, 5, k) and mm.macs == 3 * 5 * k
    assert onnx_net.onnx_layers(model, batch=2)[1].gemm == (2, 5, k)


def test_reshape_with_0_and_minus_1_as_data_and_as_a_shape_computation():
    # c (2, 8, 6, 5); Reshape(c, [0, -1, 5]) keeps dim 0 and infers 48; its shape input is
    # itself a Reshape of a constant with -1, and [0, -1] of a 1 x 3 constant keeps the 1.
    ho, wo = out_size(8, 3, 1, (1, 1)), out_size(5, 3, 1, (1, 1))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Reshape", ["t", "row"], ["t2"]),  # (1, 3) by [0, -1]
             helper.make_node("Reshape", ["t2", "flat"], ["shape"]),  # (3,) by [-1]
             helper.make_node("Reshape", ["c", "shape"], ["f"], name="r"),
             helper.make_node("MatMul", ["f", "m"], ["y"], name="mm")]
    inits = [weights("w", (8, 3, 3, 3)), weights("m", (wo, 7)), const("t", [[0, -1, wo]]),
             const("row", [0, -1]), const("flat", [-1])]
    conv, mm = onnx_net.onnx_layers(model_of(nodes, [("x", ["N", 3, 8, 5])], inits),
                                    input_shapes={"x": (2, 3, 8, 5)})
    rows = 2 * 8 * ho  # dim 0 kept (2), -1 the rest: 8 ho of wo each
    assert conv.output_shape == (2, 8, ho, wo)
    assert mm.gemm == (rows, 7, wo) and mm.macs == rows * 7 * wo


def sliced_flatten(opset):
    """The flatten from Slice, Squeeze, Mul and Unsqueeze of the Conv's shape: axes and
    bounds are attributes in opset 9, inputs in opset 13; opset 11 mixes them (Slice's
    bounds inputs, Squeeze's and Unsqueeze's axes still attributes)."""
    attrs = opset < 10
    axes_attr = opset < 13
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[0, 0, 1, 1]),
             helper.make_node("Shape", ["c"], ["s"])]

    def piece(lo, out):  # s[lo:lo + 1], squeezed to a scalar
        if attrs:
            nodes.append(helper.make_node("Slice", ["s"], [out + "1"], starts=[lo],
                                          ends=[lo + 1], axes=[0]))
            nodes.append(helper.make_node("Squeeze", [out + "1"], [out], axes=[0]))
        else:
            nodes.append(helper.make_node("Slice", ["s", f"b{lo}", f"b{lo + 1}", "axis0"],
                                          [out + "1"]))
            nodes.append(helper.make_node("Squeeze", [out + "1"], [out], axes=[0]) if axes_attr
                         else helper.make_node("Squeeze", [out + "1", "axis0"], [out]))
    for i in range(4):
        piece(i, f"d{i}")
    nodes += [helper.make_node("Mul", ["d1", "d2"], ["p"]),
              helper.make_node("Mul", ["p", "d3"], ["k"])]
    for name in ("d0", "k"):
        nodes.append(helper.make_node("Unsqueeze", [name] if axes_attr else [name, "axis0"],
                                      [name + "u"], **({"axes": [0]} if axes_attr else {})))
    ho, wo = out_size(7, 2, 1, (0, 1)), out_size(6, 2, 1, (0, 1))
    nodes += [helper.make_node("Concat", ["d0u", "ku"], ["shape"], axis=0),
              helper.make_node("Reshape", ["c", "shape"], ["f"]),
              helper.make_node("MatMul", ["f", "m"], ["y"], name="mm")]
    inits = [weights("w", (5, 2, 2, 2)), weights("m", (5 * ho * wo, 3)), const("axis0", [0])]
    inits += [const(f"b{i}", [i]) for i in range(5)]
    return model_of(nodes, [("x", ["N", 2, "H", "W"])], inits, opset), 5 * ho * wo


@pytest.mark.parametrize("opset", [9, 11, 13])
def test_slice_squeeze_unsqueeze_fold_in_opsets_9_11_and_13(opset):
    model, k = sliced_flatten(opset)
    conv, mm = onnx_net.onnx_layers(model, input_shapes={"x": (4, 2, 7, 6)})
    assert conv.macs == conv_macs(4, 2, out_size(7, 2, 1, (0, 1)), out_size(6, 2, 1, (0, 1)),
                                  5, 2, 2)
    assert mm.gemm == (4, 3, k) and mm.macs == 4 * 3 * k


def error(model, **kwargs):
    with pytest.raises(triada.ConfigError) as e:
        onnx_net.onnx_layers(model, **kwargs)
    return str(e.value)


def test_a_dim_left_symbolic_is_one_line_naming_the_input_and_the_dim():
    assert error(two_convs(), batch=2) == (
        "input 'x': dim 2 ('H') is symbolic; give input_shapes={'x': (2, 3, H, W)}")
    assert error(two_convs()) == (
        "input 'x': dim 0 ('N') is symbolic; give input_shapes={'x': (N, 3, H, W)}")


@pytest.mark.parametrize("shapes,message", [
    ({"x": (1, 4, 8, 8)}, "input 'x': input_shapes={'x': (1, 4, 8, 8)} gives dim 1 = 4, the "
     "model fixes it at 3"),
    ({"x": (1, 3, 8)}, "input 'x': input_shapes={'x': (1, 3, 8)} has 3 dims, the model's "
     "input has 4 (?x3x?x?)"),
    ({"y": (1, 3, 8, 8)}, "input_shapes={'y': (1, 3, 8, 8)}: the model has no input 'y' "
     "(its inputs: 'x')"),
    ({"x": (1, 3, 0, 8)}, "input_shapes={'x': (1, 3, 0, 8)}: each dim must be at least 1"),
])
def test_a_given_shape_that_cannot_be_the_inputs_is_one_line(shapes, message):
    assert error(two_convs(), input_shapes=shapes) == message


def test_batch_against_input_shapes_and_no_name_for_two_inputs():
    assert error(two_convs(), batch=2, input_shapes={"x": (1, 3, 8, 8)}) == (
        "input 'x': input_shapes={'x': (1, 3, 8, 8)} gives dim 0 = 1, batch=2 another")
    nodes = [helper.make_node("Add", ["a", "b"], ["t"]),
             helper.make_node("Conv", ["t", "w"], ["y"], name="conv")]
    two = model_of(nodes, [("a", [1, 3, 4, 4]), ("b", [1, 3, 4, 4])], [weights("w", (2, 3, 1, 1))])
    assert error(two, input_shapes={"": (1, 3, 4, 4)}) == (
        "input_shapes={'': (1, 3, 4, 4)} names no input, and the model has 2 data inputs "
        "('a', 'b'): give NAME=D0,D1,...")
    with pytest.raises(TypeError, match=r"input_shapes\['a'\]\[1\]: an int expected"):
        onnx_net.onnx_layers(two, input_shapes={"a": (1, 3.0, 4, 4)})


def blocked_flatten(shape_from):
    """Conv -> Reshape(c, shape) -> MatMul, the shape from a graph input or an op that is
    not folded (Sign)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv")]
    int_inputs = []
    if shape_from == "input":
        int_inputs, shape = [("s", [2])], "s"
    else:
        nodes.append(helper.make_node("Sign", ["s"], ["shape"], name="sg"))
        shape = "shape"
    nodes += [helper.make_node("Reshape", ["c", shape], ["f"], name="r"),
              helper.make_node("MatMul", ["f", "m"], ["y"], name="mm")]
    inits = [weights("w", (4, 3, 1, 1)), weights("m", (64, 2))]
    if shape_from != "input":
        inits.append(const("s", [1, 64]))
    return model_of(nodes, [("x", [1, 3, 4, 4])], inits, int_inputs=int_inputs)


def test_a_shape_that_stays_unknown_names_the_node_and_op_that_block_it():
    assert error(blocked_flatten("input")) == (
        "node 'mm' (MatMul): the shape of its A 'f' is unknown: node 'r' (Reshape) blocks it "
        "(its input 's' is a graph input, known at run time only)")
    assert error(blocked_flatten("sign")) == (
        "node 'mm' (MatMul): the shape of its A 'f' is unknown: node 'sg' (Sign) blocks it "
        "(Sign is not folded to a constant)")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Mystery", ["c"], ["f"], name="my", domain="vendor.ops"),
             helper.make_node("MatMul", ["f", "m"], ["y"], name="mm")]
    model = model_of(nodes, [("x", [1, 3, 4, 4])], [weights("w", (4, 3, 1, 1)),
                                                    weights("m", (4, 2))])
    model.opset_import.append(helper.make_opsetid("vendor.ops", 1))
    assert error(model) == (
        "node 'mm' (MatMul): the shape of its A 'f' is unknown: node 'my' (Mystery) blocks it "
        "(an op of domain 'vendor.ops', which shape inference does not know)")
    # the model's own shape of the custom op's output is kept
    model.graph.value_info.append(helper.make_tensor_value_info("f", F, [16, 4]))
    assert onnx_net.onnx_layers(model)[1].gemm == (16, 2, 4)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "triada.onnx_net", *map(str, args)],
                          capture_output=True, text=True, env=clean_env(), timeout=120)


def network_rows(path):
    """The network file's rows: name, H, W, H_F, W_F, C_I, C_O."""
    lines = [r for r in path.read_text().splitlines() if not r.startswith("#")][1:]
    return [r.split(",")[:7] for r in lines]


def test_the_command_line_takes_input_shapes(tmp):
    # Two data inputs of their own sizes (repeated --input-shape), and a one-input model
    # without NAME; --to-network's rows hold the given sizes.
    nodes = [helper.make_node("Conv", ["a", "wa"], ["ya"], name="ca", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["b", "wb"], ["yb"], name="cb", strides=[2, 2])]
    two = model_of(nodes, [("a", ["N", 3, "H", "W"]), ("b", ["N", 2, "H2", "W2"])],
                   [weights("wa", (4, 3, 3, 3)), weights("wb", (5, 2, 3, 3))],
                   outputs=("ya", "yb"))
    onnx.save(two, str(tmp / "two.onnx"))
    p = cli(tmp / "two.onnx", "--input-shape", "a=2,3,9,7", "--input-shape", "b=2,2,11,13",
            "--to-network", tmp / "two.csv")
    assert p.returncode == 0, p.stderr
    assert network_rows(tmp / "two.csv") == [["ca", "9", "7", "3", "3", "3", "4"],
                                             ["cb", "11", "13", "3", "3", "2", "5"]]
    onnx.save(two_convs(), str(tmp / "one.onnx"))
    p = cli(tmp / "one.onnx", "--input-shape", "1,3,12,10", "--mxu", "4",
            "--report", tmp / "one.json")
    assert p.returncode == 0, p.stderr
    h1, w1 = out_size(12, 3, 2, (1, 1)), out_size(10, 3, 2, (1, 1))
    h2, w2 = out_size(h1, 3, 1, (0, 2), 2), out_size(w1, 2, 1, (1, 0))
    macs = conv_macs(1, 3, h1, w1, 8, 3, 3) + conv_macs(1, 8, h2, w2, 4, 3, 2)
    assert f"total: 2 layers, {macs} MACs, 2 verified, 0 failed" in p.stdout, p.stdout


@pytest.mark.parametrize("args,code,message", [
    ([], 2, "input 'x': dim 0 ('N') is symbolic; give --input-shape x=N,3,H,W"),
    (["--batch", "2"], 2, "input 'x': dim 2 ('H') is symbolic; give --input-shape x=2,3,H,W"),
    (["--input-shape", "x=1,4,8,8"], 2,
     "input 'x': --input-shape x=1,4,8,8 gives dim 1 = 4, the model fixes it at 3"),
    (["--input-shape", "z=1,3,8,8"], 2,
     "--input-shape z=1,3,8,8: the model has no input 'z' (its inputs: 'x')"),
    (["--input-shape", "x=1,3,8"], 2,
     "input 'x': --input-shape x=1,3,8 has 3 dims, the model's input has 4 (?x3x?x?)"),
    (["--input-shape", "x=1,3,a,8"], 2,
     "--input-shape x=1,3,a,8: expected [NAME=]D0,D1,... with integer dims"),
    (["--input-shape", "1,3,8,8", "--input-shape", "2,3,8,8"], 2,
     "--input-shape 2,3,8,8: input '(the one data input)' given twice"),
    (["--input-shape", "1,3,8,8", "--batch", "2"], 2,
     "input 'x': --input-shape x=1,3,8,8 gives dim 0 = 1, --batch 2 another"),
])
def test_the_command_line_refuses_a_bad_input_shape_in_one_line(tmp, args, code, message):
    onnx.save(two_convs(), str(tmp / "one.onnx"))
    p = cli(tmp / "one.onnx", *args, "--to-network", tmp / "n.csv")
    assert p.returncode == code and p.stderr.splitlines() == [
        f"triada.onnx_net: error: {message}"], p.stderr
    assert not (tmp / "n.csv").exists()


def test_a_missing_model_with_input_shapes_is_exit_1(tmp):
    p = cli(tmp / "none.onnx", "--input-shape", "1,3,8,8")
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr


def test_nodes_out_of_order_and_weights_behind_a_cast_or_constant():
    # Shape inference goes in graph order: the nodes are sorted first. Weights stored as
    # float16 behind a Cast, or in a Constant node, fold to the layer's weights.
    model, k = flatten_model("gather")
    nodes = list(model.graph.node)[::-1]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    assert onnx_net.onnx_layers(model, batch=2)[1].gemm == (2, 5, k)
    w = np.arange(24, dtype=np.float16).reshape(2, 3, 2, 2)
    nodes = [helper.make_node("Cast", ["w16"], ["w"], to=F),
             helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Constant", [], ["w2"], value=numpy_helper.from_array(
                 np.full((4, 2, 1, 1), 0.5, np.float32))),
             helper.make_node("Conv", ["c", "w2"], ["y"], name="conv2")]
    conv, conv2 = onnx_net.onnx_layers(model_of(nodes, [("x", [1, 3, 5, 5])],
                                                [numpy_helper.from_array(w, "w16")]))
    assert np.array_equal(conv.weights, w.astype(np.float64))
    assert np.array_equal(conv2.weights, np.full((4, 2, 1, 1), 0.5))


def test_a_big_mask_is_not_folded_and_its_conv_still_reads():
    # ConstantOfShape of 1x3x4096x4096 (50M elements) is left for the run, never made.
    nodes = [helper.make_node("ConstantOfShape", ["big"], ["mask"]),
             helper.make_node("Mul", ["x", "mask"], ["xm"]),
             helper.make_node("Conv", ["xm", "w"], ["y"], name="conv")]
    model = model_of(nodes, [("x", [1, 3, 4096, 4096])],
                     [const("big", [1, 3, 4096, 4096]), weights("w", (2, 3, 1, 1))])
    (conv,) = onnx_net.onnx_layers(model)
    assert conv.macs == conv_macs(1, 3, 4096, 4096, 2, 1, 1)
