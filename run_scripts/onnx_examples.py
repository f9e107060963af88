#!/usr/bin/env python3
"""Writes the two ONNX models of doc/conv.md's worked examples, as exporters write them:

- cnn.onnx: a small CNN with a symbolic batch and image size (N x 3 x H x W): Conv 3x3 ->
  Relu -> MaxPool -> depthwise Conv -> 1x1 Conv -> ConvTranspose (2x upsampling) ->
  GlobalAveragePool, then the exporter's computed flatten (Shape -> Gather -> Concat ->
  Reshape) and a classifier MatMul;
- block.onnx: a transformer encoder block on B x T x D (B, T symbolic): Q, K, V
  projections, attention scores Q K^T / sqrt(d), Softmax, context, output projection,
  residual Add and LayerNormalization.

Usage: run_scripts/onnx_examples.py [FOLDER] (default: the current folder). Needs
python3-onnx and numpy."""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def weight(rng, name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def cnn(rng):
    n = helper.make_node
    i64 = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)  # noqa: E731
    nodes = [
        n("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"], name="relu1"),
        n("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "wd"], ["c2"], name="dw2", group=8, pads=[1, 1, 1, 1]),
        n("Conv", ["c2", "w3"], ["c3"], name="pw3"),
        n("ConvTranspose", ["c3", "wt"], ["u4"], name="up4", strides=[2, 2]),
        n("GlobalAveragePool", ["u4"], ["g"], name="gap"),
        n("Shape", ["g"], ["s"], name="shape"),
        n("Gather", ["s", "zero"], ["batch"], name="batch_dim", axis=0),
        n("Unsqueeze", ["batch", "axes0"], ["b1"], name="b1"),
        n("Concat", ["b1", "minus1"], ["target"], name="target", axis=0),
        n("Reshape", ["g", "target"], ["f"], name="flatten"),
        n("MatMul", ["f", "wfc"], ["logits"], name="fc"),
    ]
    inits = [weight(rng, "w1", 8, 3, 3, 3), weight(rng, "wd", 8, 1, 3, 3),
             weight(rng, "w3", 16, 8, 1, 1), weight(rng, "wt", 16, 16, 2, 2),
             weight(rng, "wfc", 16, 10), i64("zero", 0), i64("axes0", [0]),
             i64("minus1", [-1])]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def block(rng, d=16):
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "wq"], ["q"], name="q_proj"),
        n("MatMul", ["x", "wk"], ["k"], name="k_proj"),
        n("MatMul", ["x", "wv"], ["v"], name="v_proj"),
        n("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["scores"], name="scores"),
        n("Div", ["scores", "sqrt_d"], ["scaled"], name="scale"),
        n("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1),
        n("MatMul", ["probs", "v"], ["ctx"], name="context"),
        n("MatMul", ["ctx", "wo"], ["o"], name="out_proj"),
        n("Add", ["o", "x"], ["res"], name="residual"),
        n("LayerNormalization", ["res", "gamma", "beta"], ["y"], name="norm", axis=-1),
    ]
    inits = [weight(rng, name, d, d) for name in ("wq", "wk", "wv", "wo")] + [
        numpy_helper.from_array(np.array(np.sqrt(d), np.float32), "sqrt_d"),
        numpy_helper.from_array(np.ones(d, np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(d, np.float32), "beta")]
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "T", d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    rng = np.random.default_rng(37)
    for name, model in (("cnn.onnx", cnn(rng)), ("block.onnx", block(rng))):
        save(model, os.path.join(folder, name))
        print(os.path.join(folder, name))


if __name__ == "__main__":
    main()
