"""Run by test_threads.py in a process of its own (a crash must fail the test, not end
pytest): every entry point called from four threads at once, each thread in its own order,
for ROUNDS rounds; every result compared bitwise with the same call made before in this
thread alone. Prints each mismatch or error, then "done"; usage: threads_job.py ROUNDS."""

import sys
import threading
import traceback

import numpy as np

from conftest import comparable, triada

rng = np.random.default_rng(5)
x = rng.standard_normal((6, 5, 4)) * (rng.random((6, 5, 4)) < 0.5)
c = [rng.standard_normal((6, 3)), rng.standard_normal((5, 5)), rng.standard_normal((4, 2))]
a, b = rng.standard_normal((8, 8)), rng.integers(-3, 4, (8, 8))
CALLS = {
    "transform": lambda: triada.transform(x, "dft"),
    "gemt": lambda: triada.gemt(x, c, esop=False),
    "layout": lambda: triada.layout(x.shape, (3, 5, 2)),
    "tcu": lambda: triada.tcu("matmul", m=16, latency=1, A=a, B=b),
    "conv": lambda: triada.conv((1, 2, 6, 6, 3, 3, 3, 1, 1), mxu=4, verify=True),
    "conv_axes": lambda: triada.conv((1, 4, 7, 8, 2, 2, 3, (2, 1), (1, 0, 0, 2), (1, 2), 2),
                                     mxu=4, verify=True),
}
try:  # an ONNX model's layers, each a conv call of its own (python3-onnx)
    from onnx import TensorProto, helper, numpy_helper

    w1 = numpy_helper.from_array(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "w1")
    wg = numpy_helper.from_array(rng.standard_normal((60, 3)).astype(np.float32), "wg")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["h"], strides=[1, 2], pads=[1, 0, 0, 1]),
         helper.make_node("Flatten", ["h"], ["f"]), helper.make_node("Gemm", ["f", "wg"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w1, wg])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    CALLS["conv_onnx"] = lambda: triada.conv_onnx(model, mxu=4)
except ImportError:
    pass


def digest(value):
    """A result as comparable values: arrays as their type, shape and bytes; reports
    without their run-to-run figures."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return {k: digest(v) for k, v in comparable(value, names=False).items()}
    if isinstance(value, (list, tuple)):
        return [digest(v) for v in value]
    return value


def worker(order, serial, problems):
    try:
        for name in order:
            if digest(CALLS[name]()) != serial[name]:
                problems.append(f"{name}: differs from the serial call")
    except Exception:
        problems.append(traceback.format_exc())


def main(rounds):
    serial = {name: digest(call()) for name, call in CALLS.items()}
    names = list(CALLS)
    problems = []
    for r in range(rounds):
        threads = [threading.Thread(target=worker, args=(names[t:] + names[:t], serial, problems))
                   for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for p in problems:
        print(p)
    print("done")


main(int(sys.argv[1]))
