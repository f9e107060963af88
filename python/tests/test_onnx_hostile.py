"""triada.onnx_net on hostile model files: each bad input is one line and its exit code
on the command line (1: the file is not a readable ONNX model; 2: the model or an option
is wrong) and one exception from Python, never a traceback or a wait."""

import os
import subprocess
import sys

import numpy as np
import pytest

import triada
from conftest import clean_env

onnx = pytest.importorskip("onnx", reason="needs python3-onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from triada import onnx_net  # noqa: E402

F = TensorProto.FLOAT


def conv_model(extra=(), opsets=(("", 13),), output="y"):
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3])
    graph = helper.make_graph(
        [conv, *extra], "g", [helper.make_tensor_value_info("x", F, [1, 2, 6, 6])],
        [helper.make_tensor_value_info(output, F, None)],
        [numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])


def onnx_cli(*args):
    return subprocess.run([sys.executable, "-m", "triada.onnx_net", *map(str, args),
                           "--mxu", "4"], capture_output=True, text=True, env=clean_env(),
                          timeout=60)


def refused(path, code, words, exc):
    """One line with WORDS and exit CODE from the CLI; EXC with WORDS from Python."""
    p = onnx_cli(path)
    assert p.returncode == code, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith("triada.onnx_net: error: ") and words in p.stderr, p.stderr
    with pytest.raises(exc) as e:
        onnx_net.onnx_layers(path)
    assert words in str(e.value)


def test_a_truncated_model_is_bad_input(tmp):
    onnx.save(conv_model(), str(tmp / "good.onnx"))
    data = (tmp / "good.onnx").read_bytes()
    (tmp / "cut.onnx").write_bytes(data[:len(data) // 2])
    refused(tmp / "cut.onnx", 1, "cut.onnx: not an ONNX model (it does not parse",
            triada.InputError)


@pytest.mark.parametrize("content, words", [
    (b"", "an empty file, not an ONNX model"),
    (b"hello\nnot a model\n", "not an ONNX model (it does not parse"),
    (b"\x89PNG\r\n\x1a\n", "not an ONNX model"),
])
def test_a_file_that_is_not_onnx_is_bad_input(tmp, content, words):
    # Protobuf printed a RuntimeWarning line before the error for the text; an empty file
    # parsed as an empty model and was "no Conv ... node" with exit 2.
    (tmp / "m.onnx").write_bytes(content)
    refused(tmp / "m.onnx", 1, words, triada.InputError)


def test_a_directory_or_fifo_is_bad_input_without_waiting(tmp):
    (tmp / "d.onnx").mkdir()
    refused(tmp / "d.onnx", 1, "not a regular file", triada.InputError)
    os.mkfifo(tmp / "f.onnx")
    refused(tmp / "f.onnx", 1, "not a regular file", triada.InputError)


def save_external(model, tmp, name="m.onnx", location="m.data"):
    onnx.save(model, str(tmp / name), save_as_external_data=True,
              all_tensors_to_one_file=True, location=location, size_threshold=0)


def test_missing_or_hostile_external_data_is_bad_input(tmp):
    save_external(conv_model(), tmp)
    assert len(onnx_net.onnx_layers(tmp / "m.onnx")) == 1
    os.remove(tmp / "m.data")
    refused(tmp / "m.onnx", 1, "tensor 'w': its external data 'm.data': No such file",
            triada.InputError)
    (tmp / "m.data").write_bytes(b"\0" * 10)  # the tensor's 288 bytes are not there
    refused(tmp / "m.onnx", 1, "'m.data' ends at byte 10, the tensor needs 288",
            triada.InputError)
    os.remove(tmp / "m.data")
    os.mkfifo(tmp / "m.data")  # reading it would wait for a writer
    refused(tmp / "m.onnx", 1, "'m.data' is not a regular file", triada.InputError)
    model = onnx.load(str(tmp / "m.onnx"), load_external_data=False)
    for t in model.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../../etc/passwd"
    onnx.save(model, str(tmp / "out.onnx"))
    refused(tmp / "out.onnx", 1, "'../../etc/passwd' is not a file beside the model",
            triada.InputError)


def test_an_input_shape_against_the_models_fixed_dims_is_a_bad_option(tmp):
    onnx.save(conv_model(), str(tmp / "m.onnx"))
    p = onnx_cli(tmp / "m.onnx", "--input-shape", "1,3,6,6")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "gives dim 1 = 3, the model fixes it at 2" in p.stderr, p.stderr
    with pytest.raises(triada.ConfigError, match="dim 1 = 3, the model fixes it at 2"):
        onnx_net.onnx_layers(tmp / "m.onnx", input_shapes={"x": (1, 3, 6, 6)})


def test_an_op_of_an_unknown_domain_that_shape_inference_rejects_is_a_bad_model(tmp):
    foo = helper.make_node("Foo", ["y"], ["z"], name="foo", domain="com.nowhere")
    onnx.save(conv_model([foo], output="z"), str(tmp / "m.onnx"))  # no opset import for it
    refused(tmp / "m.onnx", 2, "ONNX shape inference failed", triada.ConfigError)
    # Imported, it is a node shape inference does not know, after the Conv: the Conv runs.
    onnx.save(conv_model([foo], (("", 13), ("com.nowhere", 1)), "z"), str(tmp / "ok.onnx"))
    assert [r.name for r in onnx_net.onnx_layers(tmp / "ok.onnx")] == ["c"]
    # Before the Conv, it leaves the Conv's input unknown: one line naming both.
    foo = helper.make_node("Foo", ["x0"], ["x"], name="foo", domain="com.nowhere")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3])
    graph = helper.make_graph(
        [foo, conv], "g", [helper.make_tensor_value_info("x0", F, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.nowhere", 1)])
    onnx.save(model, str(tmp / "before.onnx"))
    refused(tmp / "before.onnx", 2, "node 'c' (Conv): the shape of its input 'x' is unknown: "
            "node 'foo' (Foo) blocks it", triada.ConfigError)
    # An unknown op of ONNX's own domain, under opset 13 or an opset that does not exist.
    for version in (13, 99):
        foo = helper.make_node("FooBar", ["x0"], ["x"], name="foo")
        graph = helper.make_graph(
            [foo, conv], "g", [helper.make_tensor_value_info("x0", F, [1, 2, 6, 6])],
            [helper.make_tensor_value_info("y", F, None)],
            [numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
        onnx.save(model, str(tmp / "own.onnx"))
        refused(tmp / "own.onnx", 2, "node 'c' (Conv): the shape of its input 'x' is unknown: "
                "node 'foo' (FooBar) blocks it (ONNX's shape inference gives no shape for its "
                "output)", triada.ConfigError)


def test_a_tensor_whose_data_do_not_fit_its_dims_or_type_is_a_bad_model(tmp):
    # Found by flipping bytes of a model: numpy's ValueError, a KeyError for an unknown
    # element type, a TypeError for type 0, onnx's ValueError for an attribute of type 0,
    # a TypeError for pads of another type came out as tracebacks.
    for change, words in [(lambda t: t.dims.__setitem__(3, 91),
                           "dims [4, 2, 3, 91] and element type 1 (ValueError: cannot reshape"),
                          (lambda t: setattr(t, "data_type", 116),
                           "dims [4, 2, 3, 3] and element type 116 (KeyError: 116)"),
                          (lambda t: setattr(t, "data_type", 0),
                           "dims [4, 2, 3, 3] and element type 0 (TypeError")]:
        model = conv_model()
        change(model.graph.initializer[0])
        onnx.save(model, str(tmp / "m.onnx"))
        refused(tmp / "m.onnx", 2, "initializer 'w': its values do not fit its " + words,
                triada.ConfigError)
    weights = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "wv")
    weights.dims[0] = 5
    const = helper.make_node("Constant", [], ["w2"], name="k", value=weights)
    conv = helper.make_node("Conv", ["x", "w2"], ["y"], name="c", kernel_shape=[3, 3])
    graph = helper.make_graph([const, conv], "g",
                              [helper.make_tensor_value_info("x", F, [1, 2, 6, 6])],
                              [helper.make_tensor_value_info("y", F, None)])
    model = conv_model()
    model.graph.node[0].attribute[0].type = onnx.AttributeProto.UNDEFINED  # kernel_shape
    onnx.save(model, str(tmp / "m.onnx"))
    refused(tmp / "m.onnx", 2, "node 'c' (Conv): its attribute 'kernel_shape' has no known "
            "type (0)", triada.ConfigError)
    model = conv_model()
    pads = model.graph.node[0].attribute.add()
    pads.CopyFrom(helper.make_attribute("pads", [1, 1, 1, 1]))
    pads.type = onnx.AttributeProto.SPARSE_TENSOR  # was read as Conv's pads: a TypeError
    onnx.save(model, str(tmp / "m.onnx"))
    refused(tmp / "m.onnx", 2, "node 'c' (Conv): its attribute 'pads' is of type "
            "SPARSE_TENSOR, Conv takes INTS", triada.ConfigError)
    for op, shape in (("Conv", (4, 2, 3, 3)), ("ConvTranspose", (2, 4, 3, 3))):
        # A kernel_shape that is not the weights' (a ValueError from a reshape before)
        node = helper.make_node(op, ["x", "w"], ["y"], name="k", kernel_shape=[5, 3])
        g = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("x", F, [1, 2, 6, 6])],
            [helper.make_tensor_value_info("y", F, None)],
            [numpy_helper.from_array(np.ones(shape, np.float32), "w")])
        with pytest.raises(triada.ConfigError, match=rf"node 'k' \({op}\): kernel_shape "
                           rf"\[5, 3\] is not the weights' \('w' {'x'.join(map(str, shape))}\)"):
            onnx_net.conv_onnx(helper.make_model(
                g, opset_imports=[helper.make_opsetid("", 13)]), mxu=4)
    with pytest.raises(triada.ConfigError, match="node 'k' .*its value: its values do not fit"):
        onnx_net.onnx_layers(helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 13)]))


def test_flipped_bytes_give_a_model_or_one_error(tmp):
    # 300 models with 1 to 3 bytes of a good one replaced: each is read, or refused with
    # triada's InputError or ConfigError (one line on the command line), never another.
    conv = helper.make_node("Conv", ["x", "w"], ["c"], name="c", kernel_shape=[3, 3],
                            strides=[2, 2], pads=[1, 1, 1, 1])
    up = helper.make_node("ConvTranspose", ["c", "wt"], ["u"], name="u", kernel_shape=[2, 2],
                          strides=[2, 2])
    flat = helper.make_node("Reshape", ["u", "sh"], ["f"])
    fc = helper.make_node("Gemm", ["f", "g"], ["y"], name="fc", transB=1, alpha=0.5)
    mm = helper.make_node("MatMul", ["y", "m"], ["z"], name="mm")
    inits = [numpy_helper.from_array(v, n) for n, v in [
        ("w", np.ones((4, 2, 3, 3), np.float32)), ("wt", np.ones((4, 3, 2, 2), np.float32)),
        ("sh", np.array([1, -1], np.int64)), ("g", np.ones((5, 108), np.float32)),
        ("m", np.ones((5, 2), np.float32))]]
    graph = helper.make_graph([conv, up, flat, fc, mm], "g",
                              [helper.make_tensor_value_info("x", F, [1, 2, 6, 6])],
                              [helper.make_tensor_value_info("z", F, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert len(onnx_net.onnx_layers(model)) == 4
    onnx.save(model, str(tmp / "good.onnx"))
    good = bytearray((tmp / "good.onnx").read_bytes())
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = bytearray(good)
        for _ in range(rng.integers(1, 4)):
            m[rng.integers(0, len(m))] = rng.integers(0, 256)
        (tmp / "m.onnx").write_bytes(m)
        try:
            onnx_net.conv_onnx(tmp / "m.onnx", mxu=4)
        except (triada.InputError, triada.ConfigError):
            pass
