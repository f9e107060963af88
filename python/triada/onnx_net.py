"""Convolution networks from ONNX models on the planar MXU.

``onnx_layers`` reads a model's Conv, Gemm and MatMul nodes (in graph order, shapes from
the inputs' shapes given, shape computations folded and ONNX's shape inference,
triada._onnx_shapes) as triada-conv layers; ``conv_onnx`` runs them, each with the
model's weights where they are initializers; ``to_network`` writes them as a network file
for ``triada-conv --network``. Gemm and MatMul run as the 1x1 convolution SCALE-Sim GEMM
rows run as (N = 1, H_I = M, W_I = 1, C_I = K, C_O = N). Biases (Conv's B, Gemm's C) are
noted, not added: a layer's output is its product.

Command line: ``python3 -m triada.onnx_net MODEL.onnx [--method both] [--mxu 16]
[--batch N] [--input-shape [NAME=]D0,D1,...] [--seed S] [--no-weights] [--csv F]
[--report F] [--to-network NET.csv]``.
Needs the onnx package (Debian: python3-onnx), imported on first use.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _args, _onnx_shapes
from .conv import conv
from ._files import write_atomically
from .errors import ConfigError, Error, InputError

__all__ = ["OnnxLayer", "onnx_layers", "conv_onnx", "to_network", "network_batch"]


def _onnx():
    try:
        import onnx  # noqa: PLC0415 (optional: the package works without it)
        import onnx.numpy_helper  # noqa: PLC0415
        import onnx.shape_inference  # noqa: PLC0415
    except ImportError:
        raise ImportError("triada.onnx_net needs the onnx package (Debian: apt-get install "
                          "python3-onnx)") from None
    return onnx


@dataclass
class OnnxLayer:
    """One Conv, Gemm or MatMul node as a triada-conv layer.

    ``layer`` is (N, C_I, H_I, W_I, C_O, H_F, W_F, (stride_h, stride_w), (top, left,
    bottom, right), (dilation_h, dilation_w), groups); ``weights`` the initializer's values
    as C_O x C_I/groups x H_F x W_F float64 (Gemm's alpha folded in), or None when the
    weights are not an initializer; ``gemm`` (M, N, K) for Gemm and MatMul."""
    name: str
    op: str
    layer: tuple
    weights: np.ndarray | None = None
    bias: bool = False
    gemm: tuple[int, int, int] | None = None
    output_shape: tuple[int, ...] = field(default_factory=tuple)
    trans_a: bool = False  # a Gemm's transA: the model's A is K x M

    @property
    def macs(self) -> int:
        """N H_O W_O C_O H_F W_F C_I / groups."""
        n, ci, _, _, co, hf, wf, _, _, _, g = self.layer
        ho, wo = self.output_hw
        return n * ho * wo * co * hf * wf * ci // g

    @property
    def output_hw(self) -> tuple[int, int]:
        _, _, hi, wi, _, hf, wf, (sh, sw), (t, le, b, r), (dh, dw), _ = self.layer
        return ((hi + t + b - dh * (hf - 1) - 1) // sh + 1,
                (wi + le + r - dw * (wf - 1) - 1) // sw + 1)


class _Graph:
    """A model after folding and shape inference: its tensors' shapes and constant values."""

    def __init__(self, onnx, model):
        self.onnx = onnx
        known = _onnx_shapes.Shapes(onnx, model)
        self.constants = known.constants
        self.shapes = {n: s for n, s in known.dims.items() if s is not None}
        _onnx_shapes.check_operands(known, model.graph.node)

    def shape(self, node, name, what):
        s = self.shapes.get(name)
        if s is None or any(d is None or d <= 0 for d in s):
            raise ConfigError(f"node {_label(node)}: the shape of its {what} '{name}' is "
                              f"unknown or empty ({'no shape' if s is None else _dims(s)})")
        return s


def _label(node):
    return f"'{node.name}' ({node.op_type})" if node.name else f"({node.op_type})"


def _dims(s):
    return "x".join("?" if d is None else str(d) for d in s)


def _attrs(onnx, node):
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def _auto_pads(node, mode, sizes, kernel, strides, dilations):
    """Explicit pads (top, left, bottom, right) of auto_pad SAME_UPPER / SAME_LOWER /
    VALID: SAME gives ceil(size / stride) outputs, the odd pad at the end (UPPER) or the
    beginning (LOWER)."""
    if mode == "VALID":
        return (0, 0, 0, 0)
    if mode not in ("SAME_UPPER", "SAME_LOWER"):
        raise ConfigError(f"node {_label(node)}: unknown auto_pad '{mode}'")
    begin, end = [], []
    for n, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max(0, (math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n)
        small, large = total // 2, total - total // 2
        begin.append(small if mode == "SAME_UPPER" else large)
        end.append(large if mode == "SAME_UPPER" else small)
    return (begin[0], begin[1], end[0], end[1])


def _conv_layer(graph, node):
    a = _attrs(graph.onnx, node)
    x = graph.shape(node, node.input[0], "input")
    wname = node.input[1]
    w = graph.constants.get(wname)
    wshape = w.shape if w is not None else graph.shapes.get(wname)
    kernel = tuple(a.get("kernel_shape", wshape[2:] if wshape else ()))
    if len(x) != 4 or len(kernel) != 2:
        raise ConfigError(f"node {_label(node)}: a {len(x) - 2}-D convolution (input "
                          f"{_dims(x)}); only 2-D convolutions run")
    if not wshape or wshape[0] in (None, 0):
        raise ConfigError(f"node {_label(node)}: the number of filters is unknown (weights "
                          f"'{wname}' have no shape)")
    strides = tuple(a.get("strides", (1, 1)))
    dilations = tuple(a.get("dilations", (1, 1)))
    mode = a.get("auto_pad", "NOTSET")
    pads = (tuple(a.get("pads", (0, 0, 0, 0))) if mode == "NOTSET"
            else _auto_pads(node, mode, x[2:], kernel, strides, dilations))
    group = int(a.get("group", 1))
    if x[1] % group or (len(wshape) > 1 and wshape[1] not in (None, x[1] // group)) or \
            int(wshape[0]) % group:
        raise ConfigError(f"node {_label(node)}: weights {_dims(wshape)} do not fit an input "
                          f"of {x[1]} channels in {group} group(s) (C_O x C_I/group x H_F x "
                          "W_F, both divisible by the groups)")
    layer = (x[0], x[1], x[2], x[3], int(wshape[0]), kernel[0], kernel[1], strides, pads,
             dilations, group)
    weights = None if w is None else np.asarray(w, dtype=np.float64)
    return OnnxLayer(node.name, "Conv", layer, weights, len(node.input) > 2 and bool(node.input[2]))


def _gemm_layer(node, m, k, n, weights, bias):
    layer = (1, k, m, 1, n, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), 1)
    w = None if weights is None else np.ascontiguousarray(weights.T.reshape(n, k, 1, 1),
                                                          dtype=np.float64)
    return OnnxLayer(node.name, node.op_type, layer, w, bias, (m, n, k))


def _gemm(graph, node):
    a = _attrs(graph.onnx, node)
    sa, sb = graph.shape(node, node.input[0], "A"), graph.shape(node, node.input[1], "B")
    if len(sa) != 2 or len(sb) != 2:
        raise ConfigError(f"node {_label(node)}: Gemm of {_dims(sa)} by {_dims(sb)}; 2-D "
                          "operands expected")
    m, k = sa[::-1] if a.get("transA", 0) else sa
    kb, n = sb[::-1] if a.get("transB", 0) else sb
    _check_inner(node, sa, sb, k, kb)
    b = graph.constants.get(node.input[1])
    if b is not None:
        b = (b.T if a.get("transB", 0) else b) * float(a.get("alpha", 1.0))
    layer = _gemm_layer(node, m, k, n, b, len(node.input) > 2 and bool(node.input[2]))
    layer.trans_a = bool(a.get("transA", 0))
    return layer


def _matmul(graph, node):
    sa, sb = graph.shape(node, node.input[0], "A"), graph.shape(node, node.input[1], "B")
    if len(sa) < 2 or len(sb) != 2:
        raise ConfigError(f"node {_label(node)}: MatMul of {_dims(sa)} by {_dims(sb)}; A of "
                          "2 or more dims by a 2-D B expected")
    _check_inner(node, sa, sb, sa[-1], sb[0])
    return _gemm_layer(node, int(np.prod(sa[:-1])), sa[-1], sb[1],
                       graph.constants.get(node.input[1]), False)


def _check_inner(node, sa, sb, k, kb):
    """A product's inner dims agree (shape inference does not check a Gemm's)."""
    if k != kb:
        raise ConfigError(f"node {_label(node)}: {node.op_type} of {_dims(sa)} by {_dims(sb)}: "
                          f"the inner dims {k} and {kb} differ")


_READERS = {"Conv": _conv_layer, "Gemm": _gemm, "MatMul": _matmul}


# The operands of these ops after the first are parameters (weights, biases, statistics),
# never data: a graph input in one of those places keeps its dim 0 under batch=.
_PARAMETER_OPERANDS = {"Conv", "ConvTranspose", "Gemm", "BatchNormalization",
                       "InstanceNormalization", "LayerNormalization", "PRelu"}


def _parameter_names(graph) -> set[str]:
    """Initializers, and graph inputs a node takes as a parameter: a weight, bias or
    statistic slot, or a MatMul's B whose dims are all fixed (an activation's are not)."""
    names = {t.name for t in graph.initializer}
    fixed = {vi.name for vi in graph.input
             if all(d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)}
    for node in graph.node:
        if node.op_type in _PARAMETER_OPERANDS:
            names.update(node.input[1:])
        elif node.op_type == "MatMul" and len(node.input) > 1 and node.input[1] in fixed:
            names.add(node.input[1])
    return names


# Integer attributes a kernel's geometry takes, and the least value each may have: ONNX's
# shape inference divides by strides (a 0 kills the process with SIGFPE), so they are
# checked before it runs.
_GEOMETRY = {"strides": 1, "dilations": 1, "kernel_shape": 1, "pads": 0, "group": 1,
             "output_padding": 0}
_KERNEL_OPS = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "ConvInteger",
               "QLinearConv"}


def _subgraphs(attr) -> list[Any]:
    """The graphs an attribute holds: an If's branch, a Loop's or Scan's body."""
    return ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)


def _all_nodes(graph):
    """The nodes of a graph and of its subgraphs, depth first."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for g in _subgraphs(attr):
                yield from _all_nodes(g)


def _check_subgraphs(graph) -> None:
    """Refuses a node whose subgraph (If, Loop, Scan) holds a Conv, Gemm or MatMul: those
    run conditionally or repeatedly, which the layer list cannot count."""
    for node in graph.node:
        for attr in node.attribute:
            for g in _subgraphs(attr):
                ops = sorted({n.op_type for n in _all_nodes(g)} & set(_READERS))
                if ops:
                    raise ConfigError(f"node {_label(node)}: its {attr.name} holds "
                                      f"{', '.join(ops)} nodes, which run conditionally or "
                                      "in a loop: not modelled")


def _check_geometry(graph) -> None:
    """Refuses, naming the node, a kernel attribute below its least value, in the graph
    and in every subgraph (If, Loop, Scan bodies)."""
    onnx = _onnx()
    for node in _all_nodes(graph):
        if node.op_type not in _KERNEL_OPS:
            continue
        for attr in node.attribute:
            if attr.name in _GEOMETRY:
                values = list(attr.ints) if attr.type == onnx.AttributeProto.INTS else [attr.i]
                if any(v < _GEOMETRY[attr.name] for v in values):
                    raise ConfigError(f"node {_label(node)}: {node.op_type} {attr.name} = "
                                      f"{values}: each must be at least {_GEOMETRY[attr.name]}")


def _read_model(onnx, path: str):
    """The model file at path; a FIFO or device (which would block or never end) refused."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise InputError(f"{path}: cannot read the ONNX model ({e.strerror})") from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: not a regular file (an ONNX model is read from a file)")
    try:
        return onnx.load(path)
    except Exception as e:  # noqa: BLE001 (onnx raises several kinds)
        raise ConfigError(f"{path}: cannot read the ONNX model ({e})") from None


def _load(model_or_path, batch, input_shapes):
    onnx = _onnx()
    if isinstance(model_or_path, (str, os.PathLike)):
        model = _read_model(onnx, os.fspath(model_or_path))
    else:
        model = onnx.ModelProto()
        model.CopyFrom(model_or_path)
    _check_geometry(model.graph)
    _check_subgraphs(model.graph)
    _onnx_shapes.set_inputs(model.graph, _parameter_names(model.graph), batch, input_shapes)
    return onnx, _onnx_shapes.resolve(onnx, model)


def onnx_layers(model_or_path: Any, batch: int | None = None,
                input_shapes: Any = None) -> list[OnnxLayer]:
    """The Conv, Gemm and MatMul nodes of an ONNX model (a path or a ModelProto), in graph
    order, as layers. input_shapes: {input name: dims} for the graph inputs ('' names the
    one data input); batch: dim 0 of the other data inputs. Shape computations are folded
    first (triada._onnx_shapes). A symbolic dim left, or a node that cannot run (not 2-D,
    unknown shapes), raises ConfigError naming it."""
    if batch is not None and _args.count("batch", batch) < 1:
        raise ConfigError(f"{_onnx_shapes.batch_words(batch)}: the batch must be at least 1")
    shapes = _onnx_shapes.checked_shapes({} if input_shapes is None else input_shapes)
    onnx, model = _load(model_or_path, batch, shapes)
    graph = _Graph(onnx, model)
    layers = []
    for i, node in enumerate(model.graph.node):
        if node.op_type in _READERS:
            rec = _READERS[node.op_type](graph, node)
            rec.name = rec.name or f"{node.op_type.lower()}{i}"
            rec.output_shape = graph.shapes.get(node.output[0], ())
            layers.append(rec)
    if not layers:
        raise ConfigError("the ONNX model has no Conv, Gemm or MatMul node")
    return layers


def _network_name(name):
    """A layer name the network file reads back (no commas, not a comment)."""
    return name.replace(",", "_").replace("\n", " ").lstrip("#").strip() or "layer"


def network_batch(layers: list[OnnxLayer]) -> int:
    """The --batch the layers' network file runs with (their convolutions' N, else 1)."""
    batches = {L.layer[0] for L in layers if L.gemm is None} or {1}
    if len(batches) != 1:
        raise ConfigError(f"layers of different batch sizes {sorted(batches)}: one network "
                          "file runs with one --batch")
    return batches.pop()


def to_network(layers: list[OnnxLayer], path: str | os.PathLike, force: bool = False) -> int:
    """Writes the layers as our network file (an existing file only with force); returns
    the batch to run it with (``triada-conv --network path --batch B``): Gemm and MatMul
    rows hold M / B rows."""
    _args.flag("force", force)
    if os.path.exists(path) and not force:
        raise ConfigError(f"{os.fspath(path)}: exists (force=True replaces it)")
    b = network_batch(layers)
    rows = []
    for L in layers:
        n, ci, hi, wi, co, hf, wf, s, p, d, g = L.layer
        if L.gemm is not None:
            if hi % b:
                raise ConfigError(f"{L.name}: M = {hi} is not a multiple of the batch {b}")
            hi //= b
        rows.append([_network_name(L.name), hi, wi, hf, wf, ci, co, "x".join(map(str, s)),
                     ":".join(map(str, p)), "x".join(map(str, d)), g])
    f = io.StringIO()
    f.write(f"# from an ONNX model: triada-conv --network {os.path.basename(path)} "
            f"--batch {b}\n")
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["Layer name", "IFMAP Height", "IFMAP Width", "Filter Height",
                "Filter Width", "Channels", "Num Filter", "Strides", "Padding",
                "Dilation", "Groups"])
    w.writerows(rows)
    write_atomically(path, f.getvalue())
    return b


def _layer_input(rec, inputs, i):
    if inputs is None:
        return None
    x = inputs.get(rec.name, inputs.get(i)) if isinstance(inputs, dict) else inputs[i]
    if x is None:
        return None
    x = np.asarray(x, dtype=np.float64)
    if rec.gemm is not None:  # the model's A (M x K, K x M with transA) as N x K x M x 1
        m, _, k = rec.gemm
        if x.size != m * k:
            raise ConfigError(f"inputs: layer {rec.name!r}: {x.size} values, its A has "
                              f"{m} x {k}")
        a = x.reshape(k, m).T if rec.trans_a else x.reshape(m, k)
        x = np.ascontiguousarray(a.T.reshape(1, k, m, 1))
    return x


def _merged_csv(per_layer, layers):
    """The per-layer CSV rows of the runs, numbered and named as the model's layers."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for i, (text, rec) in enumerate(zip(per_layer, layers)):
        rows = list(csv.reader(io.StringIO(text)))
        if i == 0:
            w.writerow(rows[0])
        for row in rows[1:]:
            row[0], row[1] = str(i + 1), rec.name
            if rec.gemm is not None:
                row[2], row[4:7] = "gemm", [str(v) for v in rec.gemm]
            w.writerow(row)
    return out.getvalue()


def conv_onnx(model_or_path: Any, *, method: str = "both", mxu: int = 16,
              use_weights: bool = True, inputs: Any = None, seed: int = 1,
              batch: int | None = None, input_shapes: Any = None, verify: bool = True,
              report: Any = None,
              csv: Any = None, force: bool = False, comm: Any = None,
              **conv_args: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Runs every Conv, Gemm and MatMul node of an ONNX model through ``triada.conv``.

    The model's weights are the layer's weights where they are initializers (and
    ``use_weights``), else random from ``seed``; ``inputs`` (a list by layer index or a dict
    by layer name; None entries random) gives a layer's input, NCHW for Conv, A (M x K or
    its leading dims by K) for Gemm and MatMul. ``batch`` and ``input_shapes`` as for
    ``onnx_layers``. ``conv_args`` go to ``triada.conv``
    (latency, cell_mode, executor, mesh, ...). Returns per layer {"name", "op", "layer",
    "outputs" ({method: NCHW array}, rank 0), "report" (its layer object)}, and the report
    {"model", "layers", "total"}; writes the report (JSON) and the per-layer CSV
    (triada-conv's columns) where given, on rank 0 under ``comm``."""
    _args.flag("use_weights", use_weights)
    for name, value in (("report", report), ("csv", csv)):
        if value is not None and os.path.exists(value) and not force:
            raise ConfigError(f"{name} {value}: exists (force=True replaces it)")
    layers = onnx_layers(model_or_path, batch, input_shapes)
    root = comm is None or comm.Get_rank() == 0  # conv writes its CSV on rank 0 only
    results, objects, csvs = [], [], []
    with tempfile.TemporaryDirectory(prefix="triada-onnx-") as own:
        # Rank 0's folder named on every rank: the ranks make the same calls (conv writes
        # the CSV on rank 0, which reads it back).
        tmp = own if comm is None else comm.bcast(own, root=0)
        for i, rec in enumerate(layers):
            part = os.path.join(tmp, f"{i}.csv")
            outputs, rep = conv(rec.layer, method=method, mxu=mxu, seed=seed, verify=verify,
                                weights=rec.weights if use_weights else None,
                                input=_layer_input(rec, inputs, i), csv=part, comm=comm,
                                **conv_args)
            L = dict(rep["layers"][0], index=i + 1, name=rec.name, op=rec.op)
            if rec.gemm is not None:
                L["kind"], L["gemm"] = "gemm", dict(zip("MNK", rec.gemm))
            objects.append(L)
            results.append({"name": rec.name, "op": rec.op, "layer": rec.layer,
                            "outputs": None if outputs is None else outputs[0], "report": L})
            if root:
                with open(part, encoding="utf-8") as f:
                    csvs.append(f.read())
    total = {"layers": len(objects), "macs": sum(L["macs"] for L in objects),
             "verified_layers": sum(L["verified"] is True for L in objects),
             "failed_layers": sum(L["verified"] is False for L in objects)}
    summary = {"schema": "triada-conv-onnx/1", "model": _model_name(model_or_path),
               "config": rep["config"], "layers": objects, "total": total}
    if report is not None and root:
        write_atomically(report, json.dumps(summary, indent=1))
    if csv is not None and root:
        write_atomically(csv, _merged_csv(csvs, layers))
    return results, summary


def _model_name(model_or_path):
    if isinstance(model_or_path, (str, os.PathLike)):
        return os.fspath(model_or_path)
    return model_or_path.graph.name or "(ModelProto)"


def _table(summary):
    lines = [f"{'#':>3} {'layer':<16} {'op':<7} {'shape':<40} {'MACs':>12}  check"]
    for L in summary["layers"]:
        lines.append(f"{L['index']:>3} {L['name'][:16]:<16} {L['op']:<7} {L['shape'][:40]:<40} "
                     f"{L['macs']:>12}  {'ok' if L['verified'] else L['check']}")
    t = summary["total"]
    lines.append(f"total: {t['layers']} layers, {t['macs']} MACs, {t['verified_layers']} "
                 f"verified, {t['failed_layers']} failed")
    return "\n".join(lines)


def _input_shape_options(values: list[str]) -> dict[str, tuple[int, ...]]:
    """--input-shape [NAME=]D0,D1,... options as {name: dims} ('' for no NAME)."""
    shapes: dict[str, tuple[int, ...]] = {}
    for value in values:
        name, _, dims = value.rpartition("=")
        try:
            shape = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise ConfigError(f"--input-shape {value}: expected [NAME=]D0,D1,... with integer "
                              "dims") from None
        if name in shapes:
            raise ConfigError(f"--input-shape {value}: input "
                              f"{name or '(the one data input)'!r} given twice")
        shapes[name] = shape
    return shapes


def main(argv: list[str] | None = None) -> int:
    """``python3 -m triada.onnx_net MODEL.onnx ...``: runs the model's layers, prints a
    table; exit 0, 1 (bad input), 2 (bad option or model), 4 (a layer failed its check)."""
    p = argparse.ArgumentParser(prog="python3 -m triada.onnx_net",
                                description="Run an ONNX model's Conv, Gemm and MatMul "
                                "layers on the planar MXU (triada-conv's job). The model's "
                                "shape computations (Shape, Gather, Slice, Concat, Reshape, "
                                "...) are folded before ONNX's shape inference "
                                "(doc/conv.md, ONNX models).")
    p.add_argument("model", help="the ONNX model file")
    p.add_argument("--method", default="both", help="explicit, implicit or both")
    p.add_argument("--mxu", type=int, default=16, help="the unit is S x S cells")
    p.add_argument("--batch", type=int,
                   help="dim 0 of the data inputs (weights given as inputs keep theirs)")
    p.add_argument("--input-shape", action="append", default=[], metavar="[NAME=]D0,D1,...",
                   help="a graph input's whole shape (repeatable; NAME may be left out when "
                   "the model has one data input); a dim left symbolic is an error")
    p.add_argument("--seed", type=int, default=1, help="seed of the random operands")
    p.add_argument("--no-weights", action="store_true",
                   help="random weights instead of the model's")
    p.add_argument("--csv", help="the per-layer CSV (triada-conv's columns)")
    p.add_argument("--report", help="the JSON report")
    p.add_argument("--force", action="store_true",
                   help="replace --csv, --report and --to-network")
    p.add_argument("--to-network", metavar="NET.csv",
                   help="only write the layers as a network file for triada-conv --network")
    a = p.parse_args(argv)
    prog = "triada.onnx_net"
    cli = _onnx_shapes.CLI.set(True)
    try:
        shapes = _input_shape_options(a.input_shape)
        if a.to_network:
            b = to_network(onnx_layers(a.model, a.batch, shapes), a.to_network,
                           force=a.force)
            print(f"{prog}: wrote {a.to_network}: triada-conv --network {a.to_network} "
                  f"--batch {b}")
            return 0
        _, summary = conv_onnx(a.model, method=a.method, mxu=a.mxu, batch=a.batch,
                               input_shapes=shapes, seed=a.seed,
                               use_weights=not a.no_weights, csv=a.csv, report=a.report,
                               force=a.force)
    except (Error, ImportError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1 if isinstance(e, (InputError, OSError)) else 2
    finally:
        _onnx_shapes.CLI.reset(cli)
    print(_table(summary))
    return 4 if summary["total"]["failed_layers"] else 0


if __name__ == "__main__":
    sys.exit(main())
