"""doc/conv.md's worked examples as a user runs them: run_scripts/onnx_examples.py writes a
small CNN and a transformer block as exporters write them (symbolic batch, image size and
sequence length; a computed flatten; a depthwise conv; a transposed conv; attention
MatMuls between activations), and `python3 -m triada.onnx_net` imports each with only
--input-shape. Every compute node is a layer, with the MACs of the definitions counted
here by hand."""

import re
import subprocess
import sys

import pytest

from conftest import SRC, clean_env

pytest.importorskip("onnx")


def run(*args, cwd):
    p = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                       env=clean_env(), cwd=cwd, timeout=300)
    return p.returncode, p.stdout + p.stderr


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx_examples")
    code, out = run(SRC / "run_scripts" / "onnx_examples.py", folder, cwd=folder)
    assert code == 0, out
    return folder


def layers_of(out):
    """{layer name: MACs} and the total line's MACs, from the printed table."""
    rows = dict(re.findall(r"^\s*\d+ (\S+)\s+\S+\s+.*?\s(\d+)  ok$", out, re.M))
    total = int(re.search(r"^total: \d+ layers, (\d+) MACs", out, re.M).group(1))
    return {k: int(v) for k, v in rows.items()}, total


def test_the_cnn_imports_with_only_its_input_shape(models):
    code, out = run("-m", "triada.onnx_net", "cnn.onnx", "--mxu", 8, cwd=models)
    assert code == 2 and "input 'x': dim 0 ('N') is symbolic" in out, out  # names it
    code, out = run("-m", "triada.onnx_net", "cnn.onnx", "--input-shape", "1,3,32,32",
                    "--mxu", 8, cwd=models)
    assert code == 0, out
    h = w = 32
    expected = {
        "conv1": 8 * h * w * 3 * 3 * 3,                    # 3 -> 8, 3x3, same padding
        "dw2": 8 * (h // 2) * (w // 2) * 3 * 3,            # depthwise after the 2x2 pool
        "pw3": 16 * (h // 2) * (w // 2) * 8,               # 1x1, 8 -> 16
        # 2x upsampling as the array runs it: the zero-inserted input, 2x2 taps a output
        "up4": 16 * h * w * 16 * 2 * 2,
        "fc": 16 * 10,                                     # after the computed flatten
    }
    layers, total = layers_of(out)
    assert layers == expected and total == sum(expected.values()), out


def test_the_transformer_block_imports_with_only_its_input_shape(models):
    b, t, d = 2, 12, 16
    code, out = run("-m", "triada.onnx_net", "block.onnx", "--input-shape", f"{b},{t},{d}",
                    "--mxu", 8, cwd=models)
    assert code == 0, out
    expected = {"q_proj": b * t * d * d, "k_proj": b * t * d * d, "v_proj": b * t * d * d,
                "scores": b * t * t * d, "context": b * t * d * t, "out_proj": b * t * d * d}
    layers, total = layers_of(out)
    assert layers == expected and total == sum(expected.values()), out
