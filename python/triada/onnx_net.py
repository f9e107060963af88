"""Convolution networks from ONNX models on the planar MXU.

``onnx_layers`` reads a model's Conv, ConvTranspose, Gemm and MatMul nodes (in graph order,
shapes from the inputs' shapes given, shape computations folded and ONNX's shape inference,
triada._onnx_shapes) as triada-conv layers; ``onnx_nodes`` also lists the MAC-bearing nodes
the MXU does not run (LSTM, GRU, RNN, Einsum, integer and quantised products) with their
MACs as not modelled; ``conv_onnx`` runs the layers, each with the model's weights where
they are initializers; ``to_network`` writes them as a network file for ``triada-conv
--network``. A 1-D Conv runs as H = 1. A ConvTranspose runs as a systolic array runs it:
the zero-inserted input convolved with the flipped kernel, its MACs those performed, the
inserted zeros included (ESOP skips them). Gemm and MatMul run as the 1x1 convolution
SCALE-Sim GEMM rows run as (N = 1, H_I = M, W_I = 1, C_I = K, C_O = N); a batched MatMul's
P products (of two activations too: attention's scores and context) as one of P groups.
Biases (Conv's B, Gemm's C) are noted, not added: a layer's output is its product.

Command line: ``python3 -m triada.onnx_net MODEL.onnx [--method both] [--mxu 16]
[--batch N] [--input-shape [NAME=]D0,D1,...] [--seed S] [--no-weights] [--csv F]
[--report F] [--to-network NET.csv] [--cell-mode M]``; ``--execute [--input
[NAME=]FILE.npy|FILE.h5[:/DSET]]`` runs the whole network (triada._onnx_execute).
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
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _args, _onnx_shapes
from .conv import conv
from ._files import write_atomically
from .errors import ConfigError, Error, InputError

__all__ = ["OnnxLayer", "NotModelled", "onnx_layers", "onnx_nodes", "conv_onnx", "to_network",
           "network_batch"]


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
    """One Conv, ConvTranspose, Gemm or MatMul node as a triada-conv layer.

    ``layer`` is (N, C_I, H_I, W_I, C_O, H_F, W_F, (stride_h, stride_w), (top, left,
    bottom, right), (dilation_h, dilation_w), groups) (a 1-D Conv's with H_I = H_F = 1; a
    ConvTranspose's that of its zero-inserted input and flipped kernel); ``weights`` the
    initializer's values as C_O x C_I/groups x H_F x W_F float64 (Gemm's alpha folded in),
    or None when the weights are not an initializer; ``gemm`` (M, N, K) for Gemm and
    MatMul, ``products`` the P products of a batched MatMul (P groups: P M N K MACs)."""
    name: str
    op: str
    layer: tuple
    weights: np.ndarray | None = None
    bias: bool = False
    gemm: tuple[int, int, int] | None = None
    output_shape: tuple[int, ...] = field(default_factory=tuple)
    trans_a: bool = False  # a Gemm's transA: the model's A is K x M
    products: int = 1  # a batched MatMul's products (groups of the 1x1 convolution)
    transposed_macs: int | None = None  # a ConvTranspose's own MACs (N C_I H_I W_I C_O/g H_F W_F)
    # The model's operand (inputs=) as the layer's NCHW input; its B as the layer's weights
    # (a product of two activations); None: the plain layouts.
    arrange: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    arrange_b: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    input_dims: tuple[int, ...] = ()  # a ConvTranspose's input as the model has it

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
    """Explicit pads (begin..., end...) of auto_pad SAME_UPPER / SAME_LOWER / VALID: SAME
    gives ceil(size / stride) outputs, the odd pad at the end (UPPER) or the beginning
    (LOWER)."""
    if mode == "VALID":
        return (0,) * (2 * len(sizes))
    if mode not in ("SAME_UPPER", "SAME_LOWER"):
        raise ConfigError(f"node {_label(node)}: unknown auto_pad '{mode}'")
    begin, end = [], []
    for n, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max(0, (math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n)
        small, large = total // 2, total - total // 2
        begin.append(small if mode == "SAME_UPPER" else large)
        end.append(large if mode == "SAME_UPPER" else small)
    return tuple(begin + end)


def _spatial(node, x, kernel, what="convolution"):
    """The number of spatial dims (1 or 2) of a convolution; a 1-D one runs as H = 1."""
    nd = len(x) - 2
    if nd not in (1, 2) or len(kernel) != nd:
        raise ConfigError(f"node {_label(node)}: a {nd}-D {what} (input {_dims(x)}); only "
                          f"1-D (as H = 1) and 2-D {what}s run")
    return nd


def _as_2d(nd, values, fill):
    """A 1-D convolution's per-axis attribute as the H = 1 layer's (fill, value)."""
    return tuple(values) if nd == 2 else (fill, *values)


def _pads_2d(nd, pads):
    """ONNX pads (begin..., end...) as (top, left, bottom, right); 1-D: (0, b, 0, e)."""
    return tuple(pads) if nd == 2 else (0, pads[0], 0, pads[1])


def _h1(nd, x):
    """A 1-D convolution's N x C x W operand as N x C x 1 x W."""
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(x.shape[0], x.shape[1], 1, x.shape[2]) if nd == 1 and x.ndim == 3 else x


def _kernel(node, a, wname, wshape):
    """The kernel's size: kernel_shape, which must be the weights' (their spatial dims)."""
    kernel = tuple(a.get("kernel_shape", wshape[2:] if wshape else ()))
    if wshape and len(wshape) > 2 and tuple(wshape[2:]) != kernel and \
            all(d is not None for d in wshape[2:]):
        raise ConfigError(f"node {_label(node)}: kernel_shape {list(kernel)} is not the "
                          f"weights' ('{wname}' {_dims(wshape)})")
    return kernel


def _kernel_operands(graph, node):
    """A Conv's or ConvTranspose's attributes, input shape, weights (name, constant or
    None, shape) and kernel size."""
    a = _attrs(graph.onnx, node)
    x = graph.shape(node, node.input[0], "input")
    wname = node.input[1]
    w = graph.constants.get(wname)
    wshape = w.shape if w is not None else graph.shapes.get(wname)
    return a, x, wname, w, wshape, _kernel(node, a, wname, wshape)


def _conv_layer(graph, node):
    a, x, wname, w, wshape, kernel = _kernel_operands(graph, node)
    nd = _spatial(node, x, kernel)
    if not wshape or wshape[0] in (None, 0):
        raise ConfigError(f"node {_label(node)}: the number of filters is unknown (weights "
                          f"'{wname}' have no shape)")
    strides = tuple(a.get("strides", (1,) * nd))
    dilations = tuple(a.get("dilations", (1,) * nd))
    mode = a.get("auto_pad", "NOTSET")
    pads = (tuple(a.get("pads", (0,) * (2 * nd))) if mode == "NOTSET"
            else _auto_pads(node, mode, x[2:], kernel, strides, dilations))
    group = int(a.get("group", 1))
    if x[1] % group or (len(wshape) > 1 and wshape[1] not in (None, x[1] // group)) or \
            int(wshape[0]) % group:
        raise ConfigError(f"node {_label(node)}: weights {_dims(wshape)} do not fit an input "
                          f"of {x[1]} channels in {group} group(s) (C_O x C_I/group x H_F x "
                          "W_F, both divisible by the groups)")
    hi, wi = _as_2d(nd, x[2:], 1)
    hf, wf = _as_2d(nd, kernel, 1)
    layer = (x[0], x[1], hi, wi, int(wshape[0]), hf, wf, _as_2d(nd, strides, 1),
             _pads_2d(nd, pads), _as_2d(nd, dilations, 1), group)
    weights = None if w is None else _h1(nd, w)
    return OnnxLayer(node.name, "Conv", layer, weights,
                     len(node.input) > 2 and bool(node.input[2]),
                     arrange=None if nd == 2 else lambda v: _h1(1, v))


def _transpose_pads(node, a, sizes, kernel, strides, dilations, out_pad):
    """ConvTranspose's pads (begin..., end...) per the ONNX spec: the pads given; or, with
    output_shape or auto_pad SAME_* (output size input x stride), the total padding
    s (n - 1) + output_padding + (k - 1) d + 1 - out split with the odd one at the end
    (SAME_UPPER) or the beginning (otherwise)."""
    mode = a.get("auto_pad", "NOTSET")
    out = a.get("output_shape")
    if out is None and mode in ("NOTSET", "VALID"):
        nd = len(sizes)
        return tuple(a.get("pads", (0,) * (2 * nd))) if mode == "NOTSET" else (0,) * (2 * nd)
    if out is None:
        if mode not in ("SAME_UPPER", "SAME_LOWER"):
            raise ConfigError(f"node {_label(node)}: unknown auto_pad '{mode}'")
        out = [n * s for n, s in zip(sizes, strides)]
    out = list(out)[-len(sizes):]
    begin, end = [], []
    for n, k, s, d, o, t in zip(sizes, kernel, strides, dilations, out_pad, out):
        total = s * (n - 1) + o + (k - 1) * d + 1 - t  # below 0: pads that add outputs
        small, large = total // 2, total - total // 2
        begin.append(small if mode == "SAME_UPPER" else large)
        end.append(large if mode == "SAME_UPPER" else small)
    return tuple(begin + end)


def _conv_transpose(graph, node):
    """ConvTranspose as a systolic array runs it: the input with s - 1 zeros inserted
    between its pixels, padded by d (k - 1) - pad (output_padding more at the end; a
    negative pad crops), convolved at stride 1 with the kernel flipped and its channel axes
    swapped per group. The layer's MACs are those the array performs, the inserted zeros
    included (ESOP skips them as zero operands)."""
    a, x, wname, w, wshape, kernel = _kernel_operands(graph, node)
    nd = _spatial(node, x, kernel, "transposed convolution")
    group = int(a.get("group", 1))
    if not wshape or any(d is None for d in wshape[:2]) or wshape[0] != x[1] or x[1] % group:
        raise ConfigError(f"node {_label(node)}: weights "
                          f"{_dims(wshape) if wshape else 'of unknown shape'} do not fit an "
                          f"input of {x[1]} channels in {group} group(s) (C_I x C_O/group x "
                          "H_F x W_F, C_I divisible by the groups)")
    strides = tuple(a.get("strides", (1,) * nd))
    dilations = tuple(a.get("dilations", (1,) * nd))
    out_pad = tuple(a.get("output_padding", (0,) * nd))
    pads = _transpose_pads(node, a, x[2:], kernel, strides, dilations, out_pad)
    ci, cog = x[1], int(wshape[1])
    co, cig = cog * group, ci // group
    begin, end, crops, sizes = [], [], [], []
    for i, (n, k, s, d, o) in enumerate(zip(x[2:], kernel, strides, dilations, out_pad)):
        b, e = d * (k - 1) - pads[i], d * (k - 1) - pads[nd + i] + o
        z = s * (n - 1) + 1 - max(0, -b) - max(0, -e)
        if z + max(0, b) + max(0, e) - d * (k - 1) < 1:
            raise ConfigError(f"node {_label(node)}: pads {list(pads)} leave no output")
        begin.append(max(0, b))
        end.append(max(0, e))
        crops.append((max(0, -b), max(0, -e)))
        sizes.append(z)
    layer = (x[0], ci, *_as_2d(nd, sizes, 1), co, *_as_2d(nd, kernel, 1),
             (1, 1), _pads_2d(nd, begin + end), _as_2d(nd, dilations, 1), group)
    spatial = list(x[2:])

    def flipped(v):  # C_I x C_O/g x K... -> C_O x C_I/g x K..., each kernel reversed
        v = np.asarray(v, dtype=np.float64).reshape(group, cig, cog, *kernel)
        v = v.transpose(0, 2, 1, *range(3, 3 + nd)).reshape(co, cig, *kernel)
        return _h1(nd, np.ascontiguousarray(v[(...,) + (slice(None, None, -1),) * nd]))

    def zero_inserted(v):
        v = np.asarray(v, dtype=np.float64).reshape(x[0], ci, *spatial)
        full = np.zeros((x[0], ci, *(s * (n - 1) + 1 for s, n in zip(strides, spatial))))
        full[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)] = v
        cut = tuple(slice(b, full.shape[2 + i] - e) for i, (b, e) in enumerate(crops))
        return _h1(nd, np.ascontiguousarray(full[(slice(None), slice(None)) + cut]))

    rec = OnnxLayer(node.name, "ConvTranspose", layer, None if w is None else flipped(w),
                    len(node.input) > 2 and bool(node.input[2]), arrange=zero_inserted)
    rec.transposed_macs = int(np.prod(x, dtype=object) * cog * np.prod(kernel, dtype=object))
    rec.arrange_b = flipped
    rec.input_dims = tuple(x)
    return rec


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
    alpha, trans_b = float(a.get("alpha", 1.0)), bool(a.get("transB", 0))

    def b_kn(b):  # the model's B (N x K under transB) times alpha, as K x N
        b = np.asarray(b, dtype=np.float64).reshape(sb)
        return (b.T if trans_b else b) * alpha
    b = graph.constants.get(node.input[1])
    layer = _gemm_layer(node, m, k, n, None if b is None else b_kn(b),
                        len(node.input) > 2 and bool(node.input[2]))
    layer.trans_a = bool(a.get("transA", 0))
    layer.arrange_b = lambda v: _gemm_layer(node, m, k, n, b_kn(v), False).weights
    return layer


def _matmul(graph, node):
    """MatMul as numpy's matmul: a 1-D A or B is a row or column; the batch dims broadcast.
    Where B is one matrix (no batch dims, or all 1), A's batch dims are rows of one M x K by
    K x N product; else each batch index is a product of its own, P of them run as one
    1x1 convolution of P groups (C_I = P K, C_O = P N, H_I = M): P M N K MACs."""
    sa, sb = graph.shape(node, node.input[0], "A"), graph.shape(node, node.input[1], "B")
    ea = (1, *sa) if len(sa) == 1 else tuple(sa)
    eb = (*sb, 1) if len(sb) == 1 else tuple(sb)
    m, k, kb, n = ea[-2], ea[-1], eb[-2], eb[-1]
    _check_inner(node, sa, sb, k, kb)
    try:
        batch = tuple(np.broadcast_shapes(ea[:-2], eb[:-2]))
    except ValueError:
        raise ConfigError(f"node {_label(node)}: MatMul of {_dims(sa)} by {_dims(sb)}: the "
                          "batch dims do not broadcast") from None
    count = int(np.prod(batch, dtype=np.int64))
    b = graph.constants.get(node.input[1])
    if all(d == 1 for d in eb[:-2]):
        def rows(v):  # the model's A as (batch M) x K
            v = np.asarray(v, dtype=np.float64).reshape(ea)
            a2 = np.broadcast_to(v, (*batch, m, k)).reshape(count * m, k)
            return np.ascontiguousarray(a2.T.reshape(1, k, count * m, 1))

        def kn(v):
            return np.asarray(v, dtype=np.float64).reshape(kb, n)
        rec = _gemm_layer(node, count * m, k, n, None if b is None else kn(b), False)
        rec.arrange = rows
        rec.arrange_b = lambda v: _gemm_layer(node, count * m, k, n, kn(v), False).weights
        return rec

    def grouped_a(v):  # A_p (M x K) as channels p K + k, rows m
        v = np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(ea), (*batch, m, k))
        return np.ascontiguousarray(v.reshape(count, m, k).transpose(0, 2, 1)
                                    .reshape(1, count * k, m, 1))

    def grouped_b(v):  # B_p (K x N) as filters p N + n of K channels
        v = np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(eb), (*batch, k, n))
        return np.ascontiguousarray(v.reshape(count, k, n).transpose(0, 2, 1)
                                    .reshape(count * n, k, 1, 1))
    layer = (1, count * k, m, 1, count * n, 1, 1, (1, 1), (0, 0, 0, 0), (1, 1), count)
    return OnnxLayer(node.name, "MatMul", layer, None if b is None else grouped_b(b), False,
                     (m, n, k), products=count, arrange=grouped_a, arrange_b=grouped_b)


def _check_inner(node, sa, sb, k, kb):
    """A product's inner dims agree (shape inference does not check a Gemm's)."""
    if k != kb:
        raise ConfigError(f"node {_label(node)}: {node.op_type} of {_dims(sa)} by {_dims(sb)}: "
                          f"the inner dims {k} and {kb} differ")


_READERS = {"Conv": _conv_layer, "ConvTranspose": _conv_transpose, "Gemm": _gemm,
            "MatMul": _matmul}


@dataclass
class NotModelled:
    """A MAC-bearing node the MXU does not run: its MACs (None where the shapes do not
    give them) and why it is not modelled."""
    name: str
    op: str
    macs: int | None
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "op": self.op, "macs": self.macs, "reason": self.reason}


def _known(graph, name):
    s = graph.shapes.get(name)
    return None if s is None or any(d is None or d < 0 for d in s) else tuple(s)


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=object)) if dims else 1


def _recurrent_macs(gates):
    def macs(graph, node):
        # X (seq x batch x I, or batch x seq x I under layout 1), W (D x gates H x I),
        # R (D x gates H x H): the gate products x W^T and h R^T of every step.
        x, w, r = (_known(graph, n) for n in node.input[:3])
        if x is None or w is None or r is None or len(x) != 3 or len(w) != 3:
            return None
        d, gh, i = w
        return d * x[0] * x[1] * gh * (i + r[-1])
    return macs, f"a recurrent cell ({gates} gate products a step), not run on the MXU"


def _product_macs(ia, ib):
    def macs(graph, node):  # as MatMul: batch M N K
        sa, sb = _known(graph, node.input[ia]), _known(graph, node.input[ib])
        if sa is None or sb is None:
            return None
        ea = (1, *sa) if len(sa) == 1 else sa
        eb = (*sb, 1) if len(sb) == 1 else sb
        try:
            batch = np.broadcast_shapes(ea[:-2], eb[:-2])
        except ValueError:
            return None
        return _prod(batch) * ea[-2] * ea[-1] * eb[-1]
    return macs


def _conv_macs(ix, iw):
    def macs(graph, node):  # N C_O (output pixels) C_I/g (kernel taps), any rank
        x, w = _known(graph, node.input[ix]), _known(graph, node.input[iw])
        y = _known(graph, node.output[0])
        if y is None and x is not None and w is not None and len(x) == len(w) > 2:
            y = _conv_output(graph, node, x, w)  # an op shape inference does not know
        if x is None or w is None or y is None or len(y) < 3:
            return None
        return _prod(y) * _prod(w[1:])
    return macs


def _conv_output(graph, node, x, w):
    """N x C_O x output sizes of a convolution with Conv's attributes."""
    a = _attrs(graph.onnx, node)
    nd = len(x) - 2
    k = tuple(a.get("kernel_shape", w[2:]))
    s, d = tuple(a.get("strides", (1,) * nd)), tuple(a.get("dilations", (1,) * nd))
    mode = a.get("auto_pad", "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        return (x[0], w[0], *(-(-n // si) for n, si in zip(x[2:], s)))
    p = tuple(a.get("pads", (0,) * 2 * nd)) if mode == "NOTSET" else (0,) * 2 * nd
    return (x[0], w[0], *((n + p[i] + p[nd + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1
                          for i, n in enumerate(x[2:])))


def _einsum_macs(graph, node):
    """A contraction of two operands: the product of every index's size."""
    eq = _attrs(graph.onnx, node).get("equation", "").replace(" ", "")
    terms = eq.split("->")[0].split(",")
    shapes = [_known(graph, n) for n in node.input]
    if "..." in eq or len(terms) != 2 or any(s is None for s in shapes):
        return None
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        if len(term) != len(shape):
            return None
        for c, d in zip(term, shape):
            sizes[c] = d
    return _prod(list(sizes.values()))


# MAC-bearing ops the MXU does not run: how their MACs follow from the shapes, and why.
_NOT_MODELLED = {
    "LSTM": _recurrent_macs(4), "GRU": _recurrent_macs(3), "RNN": _recurrent_macs(1),
    "Einsum": (_einsum_macs, "an Einsum contraction, not mapped to the MXU"),
    "MatMulInteger": (_product_macs(0, 1), "an integer product, not modelled"),
    "QLinearMatMul": (_product_macs(0, 3), "a quantised product, not modelled"),
    "ConvInteger": (_conv_macs(0, 1), "an integer convolution, not modelled"),
    "QLinearConv": (_conv_macs(0, 3), "a quantised convolution, not modelled"),
    "DeformConv": (_conv_macs(0, 1), "a deformable convolution, not modelled"),
}


def _attention_macs(graph, node):
    """Attention of 4-D Q (B x H x S_q x d), K (B x H_kv x S_kv x d), V (B x H_kv x S_kv x
    d_v): the scores Q K^T and the context P V, B H S_q S_kv (d + d_v)."""
    q, k, v = (_known(graph, n) for n in node.input[:3])
    if q is None or k is None or v is None or not len(q) == len(k) == len(v) == 4:
        return None
    return q[0] * q[1] * q[2] * k[2] * (q[3] + v[3])


def _unknown(graph, node):
    return None


_NOT_MODELLED["Attention"] = (_attention_macs, "an attention block, not mapped to the MXU")

# Ops of other domains that multiply (ONNX Runtime's contrib ops): listed as not modelled;
# any other op of a domain not ONNX's whose name says it multiplies too, its MACs unknown.
_VENDOR_MODELLED = {
    "FusedConv": (_conv_macs(0, 1), "a fused convolution (ONNX Runtime), not modelled"),
    "FusedMatMul": (_unknown, "a fused product (ONNX Runtime), not modelled"),
    "FusedGemm": (_unknown, "a fused product (ONNX Runtime), not modelled"),
    "MatMulIntegerToFloat": (_product_macs(0, 1), "an integer product, not modelled"),
    "DynamicQuantizeMatMul": (_product_macs(0, 1), "a quantised product, not modelled"),
}
_MULTIPLYING = ("conv", "matmul", "gemm", "attention", "lstm", "gru", "rnn", "einsum")


def _not_modelled(graph, node, i) -> NotModelled | None:
    default = node.domain in ("", "ai.onnx")
    if default and node.op_type in _NOT_MODELLED:
        f, reason = _NOT_MODELLED[node.op_type]
    elif not default and node.op_type in _VENDOR_MODELLED:
        f, reason = _VENDOR_MODELLED[node.op_type]
    elif not default and any(w in node.op_type.lower() for w in _MULTIPLYING):
        f, reason = _unknown, f"an op of domain '{node.domain}', not modelled"
    else:
        return None
    if default and node.op_type == "Einsum" and len(node.input) < 2:
        return None  # one operand: a transpose, trace or sum, no products
    macs = f(graph, node)
    if default and node.op_type == "Einsum" and macs is None and len(node.input) > 2:
        reason += " (its MACs depend on the order of its products)"
    return NotModelled(node.name or f"{node.op_type.lower()}{i}", node.op_type,
                       None if macs is None else int(macs), reason)


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


def _multiplies(node) -> bool:
    """A node of a layer op or of a not-modelled op of ONNX's domain (an Einsum of two or
    more operands)."""
    if node.domain not in ("", "ai.onnx"):
        return False
    if node.op_type == "Einsum":
        return len(node.input) > 1
    return node.op_type in _READERS or node.op_type in _NOT_MODELLED


def _check_subgraphs(graph) -> None:
    """Refuses a node whose subgraph (If, Loop, Scan) holds a MAC-bearing node: those
    run conditionally or repeatedly, which the layer list cannot count."""
    for node in graph.node:
        for attr in node.attribute:
            for g in _subgraphs(attr):
                ops = sorted({n.op_type for n in _all_nodes(g) if _multiplies(n)})
                if ops:
                    raise ConfigError(f"node {_label(node)}: its {attr.name} holds "
                                      f"{', '.join(ops)} nodes, which run conditionally or "
                                      "in a loop: not modelled")


def _schema(onnx, node, version):
    if node.domain not in ("", "ai.onnx"):
        return None
    try:
        return onnx.defs.get_schema(node.op_type, version, "")
    except Exception:  # noqa: BLE001 (an op ONNX does not define)
        return None


def _check_geometry(graph, version: int = 1 << 30) -> None:
    """Refuses, naming the node, a kernel attribute below its least value, in the graph
    and in every subgraph (If, Loop, Scan bodies), an attribute of no known type, and one
    of ONNX's domain whose type is not its op's (a corrupt model: onnx's helpers raised
    ValueError, or a SparseTensorProto stood for Conv's pads)."""
    onnx = _onnx()
    kind = onnx.AttributeProto.AttributeType
    kinds = set(kind.values()) - {onnx.AttributeProto.UNDEFINED}
    for node in _all_nodes(graph):
        schema = _schema(onnx, node, version)
        for attr in node.attribute:
            if attr.type not in kinds:
                raise ConfigError(f"node {_label(node)}: its attribute '{attr.name}' has no "
                                  f"known type ({attr.type})")
            spec = None if schema is None else schema.attributes.get(attr.name)
            if spec is not None and int(spec.type) != attr.type:
                raise ConfigError(f"node {_label(node)}: its attribute '{attr.name}' is of "
                                  f"type {kind.Name(attr.type)}, {node.op_type} takes "
                                  f"{kind.Name(int(spec.type))}")
        if node.op_type not in _KERNEL_OPS:
            continue
        for attr in node.attribute:
            if attr.name in _GEOMETRY:
                values = list(attr.ints) if attr.type == onnx.AttributeProto.INTS else [attr.i]
                if any(v < _GEOMETRY[attr.name] for v in values):
                    raise ConfigError(f"node {_label(node)}: {node.op_type} {attr.name} = "
                                      f"{values}: each must be at least {_GEOMETRY[attr.name]}")


def _external_files(onnx, model, path: str) -> None:
    """Each external-data file the model names: a regular file in the model's folder that
    holds the tensor's bytes (a missing, non-regular or short one is bad input)."""
    base = os.path.dirname(os.path.abspath(path))
    helper = onnx.external_data_helper
    every = getattr(helper, "_get_all_tensors", None)  # onnx's own walk, subgraphs included
    for t in every(model) if every is not None else model.graph.initializer:
        if not helper.uses_external_data(t):
            continue
        info = {e.key: e.value for e in t.external_data}
        where = info.get("location", "")
        full = os.path.join(base, where)
        said = f"{path}: tensor '{t.name}': its external data '{where}'"
        if not where or os.path.isabs(where) or ".." in where.replace("\\", "/").split("/"):
            raise InputError(f"{said} is not a file beside the model")
        try:
            st = os.stat(full)
        except OSError as e:
            raise InputError(f"{said}: {e.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{said} is not a regular file")
        try:
            end = int(info.get("offset", 0)) + int(info.get("length", 0))
        except ValueError:
            raise InputError(f"{said}: offset or length is not an integer") from None
        if end > st.st_size:
            raise InputError(f"{said} ends at byte {st.st_size}, the tensor needs {end}")


def _read_model(onnx, path: str):
    """The model file at path; a FIFO or device (which would block or never end), an empty
    or unparsable file (truncated, another format) and missing external data refused as
    bad input."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"{path}: cannot read the ONNX model ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: not a regular file (an ONNX model is read from a file)")
    if st.st_size == 0:
        raise InputError(f"{path}: an empty file, not an ONNX model")
    try:
        with warnings.catch_warnings():  # protobuf warns of a bad tag, then raises
            warnings.simplefilter("ignore")
            model = onnx.load(path, load_external_data=False)
    except OSError as e:
        raise InputError(f"{path}: cannot read the ONNX model ({e.strerror})") from None
    except Exception:  # noqa: BLE001 (protobuf's DecodeError and others)
        raise InputError(f"{path}: not an ONNX model (it does not parse: truncated, or "
                         f"another format)") from None
    if not model.HasField("graph") or not model.ir_version:
        raise InputError(f"{path}: not an ONNX model (no graph or IR version)")
    _external_files(onnx, model, path)
    try:
        onnx.external_data_helper.load_external_data_for_model(
            model, os.path.dirname(os.path.abspath(path)))
    except OSError as e:
        raise InputError(f"{path}: cannot read its external data ({e.strerror})") from None
    except Exception as e:  # noqa: BLE001 (onnx raises several kinds)
        raise InputError(f"{path}: cannot read its external data ({e})") from None
    return model


def _load(model_or_path, batch, input_shapes):
    onnx = _onnx()
    if isinstance(model_or_path, (str, os.PathLike)):
        model = _read_model(onnx, os.fspath(model_or_path))
    else:
        model = onnx.ModelProto()
        model.CopyFrom(model_or_path)
    _check_geometry(model.graph, _onnx_shapes.opset(model))
    _check_subgraphs(model.graph)
    _onnx_shapes.set_inputs(model.graph, _parameter_names(model.graph), batch, input_shapes)
    return onnx, _onnx_shapes.resolve(onnx, model)


def onnx_nodes(model_or_path: Any, batch: int | None = None,
               input_shapes: Any = None) -> tuple[list[OnnxLayer], list[NotModelled]]:
    """The layers of an ONNX model (as ``onnx_layers``) and its MAC-bearing nodes the MXU
    does not run (LSTM, GRU, RNN, Einsum, integer and quantised products, ...), each with
    its MACs where the shapes give them and why it is not modelled."""
    if batch is not None and _args.count("batch", batch) < 1:
        raise ConfigError(f"{_onnx_shapes.batch_words(batch)}: the batch must be at least 1")
    shapes = _onnx_shapes.checked_shapes({} if input_shapes is None else input_shapes)
    onnx, model = _load(model_or_path, batch, shapes)
    graph = _Graph(onnx, model)
    layers, others = [], []
    for i, node in enumerate(model.graph.node):
        if node.op_type in _READERS:
            rec = _READERS[node.op_type](graph, node)
            rec.name = rec.name or f"{node.op_type.lower()}{i}"
            rec.output_shape = graph.shapes.get(node.output[0], ())
            layers.append(rec)
        else:
            other = _not_modelled(graph, node, i)
            if other is not None:
                others.append(other)
    if not layers:
        listed = "; ".join(f"{o.name!r} ({o.op}) {o.macs} MACs" for o in others)
        raise ConfigError("the ONNX model has no Conv, ConvTranspose, Gemm or MatMul node" +
                          (f" (not modelled: {listed})" if others else ""))
    return layers, others


def onnx_layers(model_or_path: Any, batch: int | None = None,
                input_shapes: Any = None) -> list[OnnxLayer]:
    """The Conv, ConvTranspose, Gemm and MatMul nodes of an ONNX model (a path or a
    ModelProto), in graph order, as layers. input_shapes: {input name: dims} for the graph
    inputs ('' names the one data input); batch: dim 0 of the other data inputs. Shape
    computations are folded first (triada._onnx_shapes). A symbolic dim left, or a node
    that cannot run (3-D, unknown shapes), raises ConfigError naming it. The MAC-bearing
    nodes the MXU does not run are ``onnx_nodes``'s second list."""
    return onnx_nodes(model_or_path, batch, input_shapes)[0]


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
    rows hold M / B rows, a batched MatMul's P products P / B groups where B divides P. A
    ConvTranspose is its zero-inserted convolution (whose random input there has no
    inserted zeros: the same MACs, not the same ESOP MACs)."""
    _args.flag("force", force)
    if os.path.exists(path) and not force:
        raise ConfigError(f"{os.fspath(path)}: exists (force=True replaces it)")
    b = network_batch(layers)
    rows = []
    for L in layers:
        n, ci, hi, wi, co, hf, wf, s, p, d, g = L.layer
        if L.products > 1 and g % b == 0:  # the P products as B images of P / B groups
            ci, co, g = ci // b, co // b, g // b
        elif L.gemm is not None:
            if hi % b:
                raise ConfigError(f"{L.name}: M = {hi} is not a multiple of the batch {b}" +
                                  (f" nor its {L.products} products" if L.products > 1
                                   else ""))
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


def _operands(rec, inputs, i):
    """A layer's entry of inputs=: its input (the model's operand), and for a product whose
    B is no initializer its B, given as {"A": ..., "B": ...}."""
    if inputs is None:
        return None, None
    x = inputs.get(rec.name, inputs.get(i)) if isinstance(inputs, dict) else inputs[i]
    if isinstance(x, dict):
        unknown = sorted(set(x) - {"A", "B"})
        if unknown or rec.gemm is None:
            raise ConfigError(f"inputs: layer {rec.name!r}: a dict of operands is for a "
                              f"Gemm or MatMul (keys 'A', 'B'), got {sorted(x)}")
        return x.get("A"), x.get("B")
    return x, None


def _arranged(rec, f, x, what):
    try:
        return f(x)
    except ValueError:
        raise ConfigError(f"inputs: layer {rec.name!r}: its {what} of shape "
                          f"{np.shape(x)} does not fit the node's") from None


def _layer_input(rec, inputs, i):
    x = _operands(rec, inputs, i)[0]
    if x is None:
        return None
    x = np.asarray(x, dtype=np.float64)
    if rec.arrange is not None:
        return _arranged(rec, rec.arrange, x, "input")
    if rec.gemm is not None:  # the model's A (M x K, K x M with transA) as N x K x M x 1
        m, _, k = rec.gemm
        if x.size != m * k:
            raise ConfigError(f"inputs: layer {rec.name!r}: {x.size} values, its A has "
                              f"{m} x {k}")
        a = x.reshape(k, m).T if rec.trans_a else x.reshape(m, k)
        x = np.ascontiguousarray(a.T.reshape(1, k, m, 1))
    return x


def _layer_weights(rec, inputs, i):
    """The layer's weights: a B given in inputs=, else the model's (None: random)."""
    b = _operands(rec, inputs, i)[1]
    if b is None or rec.arrange_b is None:
        return rec.weights
    if rec.weights is not None:
        raise ConfigError(f"inputs: layer {rec.name!r}: its B is the model's initializer")
    return _arranged(rec, rec.arrange_b, np.asarray(b, dtype=np.float64), "B")


def _merged_csv(per_layer, layers, others=()):
    """The per-layer CSV rows of the runs, numbered and named as the model's layers; then a
    row per node not modelled (kind not_modelled, its op and reason as the shape, its MACs
    as useful_macs, empty where unknown)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    header: list[str] = []
    for i, (text, rec) in enumerate(zip(per_layer, layers)):
        rows = list(csv.reader(io.StringIO(text)))
        if i == 0:
            header = rows[0]
            w.writerow(header)
        for row in rows[1:]:
            row[0], row[1] = str(i + 1), rec.name
            if rec.gemm is not None:
                row[2], row[4:7] = "gemm", [str(v) for v in rec.gemm]
            w.writerow(row)
    for j, o in enumerate(others):
        row = [""] * len(header)
        row[:4] = [str(len(layers) + j + 1), o.name, "not_modelled", f"{o.op}: {o.reason}"]
        row[header.index("useful_macs")] = "" if o.macs is None else str(o.macs)
        w.writerow(row)
    return out.getvalue()


def conv_onnx(model_or_path: Any, *, method: str = "both", mxu: int = 16,
              use_weights: bool = True, inputs: Any = None, seed: int = 1,
              batch: int | None = None, input_shapes: Any = None, verify: bool = True,
              report: Any = None,
              csv: Any = None, force: bool = False, comm: Any = None,
              execute: bool = False,
              **conv_args: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Runs every Conv, ConvTranspose, Gemm and MatMul node of an ONNX model through
    ``triada.conv``; the MAC-bearing nodes it does not run are the report's
    ``not_modelled`` (name, op, MACs or None, reason), counted in its ``total``.

    The model's weights are the layer's weights where they are initializers (and
    ``use_weights``), else random from ``seed``; ``inputs`` (a list by layer index or a dict
    by layer name; None entries random) gives a layer's input, NCHW for Conv, A (M x K or
    its leading dims by K) for Gemm and MatMul, the model's operand for a batched MatMul,
    a 1-D Conv and a ConvTranspose; a product whose B is no initializer takes
    ``{"A": a, "B": b}`` (either may be left out). ``batch`` and ``input_shapes`` as for
    ``onnx_layers``. ``conv_args`` go to ``triada.conv``
    (latency, cell_mode, executor, mesh, ...). Returns per layer {"name", "op", "layer",
    "outputs" ({method: NCHW array}, rank 0), "report" (its layer object)}, and the report
    {"model", "layers", "total"}; writes the report (JSON) and the per-layer CSV
    (triada-conv's columns) where given, on rank 0 under ``comm``.

    ``execute=True`` runs the whole network instead (triada._onnx_execute): every layer
    on the MXU in ``cell_mode`` on the operands the graph computes, the other nodes with
    numpy, against the same graph in float64 on the host; ``inputs`` then gives the graph's
    data inputs ({name: array}, or one array for the one data input; random from ``seed``
    where left out), ``keep=True`` keeps the values. Returns (the report's "layers", the
    report: per layer and per output the largest relative difference max |sim - ref| /
    max |ref|)."""
    _args.flag("use_weights", use_weights)
    if _args.flag("execute", execute):
        from . import _onnx_execute  # noqa: PLC0415
        return _onnx_execute.from_conv_onnx(
            model_or_path, method=method, mxu=mxu, inputs=inputs, seed=seed, batch=batch,
            input_shapes=input_shapes, report=report, csv=csv, force=force, comm=comm,
            use_weights=use_weights, **conv_args)
    for name, value in (("report", report), ("csv", csv)):
        if value is not None and os.path.exists(value) and not force:
            raise ConfigError(f"{name} {value}: exists (force=True replaces it)")
    layers, others = onnx_nodes(model_or_path, batch, input_shapes)
    root = comm is None or comm.Get_rank() == 0  # conv writes its CSV on rank 0 only
    results, objects, csvs = [], [], []
    with tempfile.TemporaryDirectory(prefix="triada-onnx-") as own:
        # Rank 0's folder named on every rank: the ranks make the same calls (conv writes
        # the CSV on rank 0, which reads it back).
        tmp = own if comm is None else comm.bcast(own, root=0)
        for i, rec in enumerate(layers):
            part = os.path.join(tmp, f"{i}.csv")
            x = _layer_input(rec, inputs, i)
            if x is None and rec.input_dims and rec.arrange is not None:
                # a ConvTranspose's random input, its zeros inserted
                x = rec.arrange(np.random.default_rng([seed, i]).standard_normal(
                    rec.input_dims))
            w = _layer_weights(rec, inputs, i)
            outputs, rep = conv(rec.layer, method=method, mxu=mxu, seed=seed, verify=verify,
                                weights=w if use_weights or rec.weights is None else None,
                                input=x, csv=part, comm=comm, **conv_args)
            L = dict(rep["layers"][0], index=i + 1, name=rec.name, op=rec.op)
            if rec.gemm is not None:
                L["kind"], L["gemm"] = "gemm", dict(zip("MNK", rec.gemm))
                if rec.products > 1:
                    L["gemm"]["batch"] = rec.products
            if rec.transposed_macs is not None:
                L["transposed_macs"] = rec.transposed_macs
            objects.append(L)
            results.append({"name": rec.name, "op": rec.op, "layer": rec.layer,
                            "outputs": None if outputs is None else outputs[0], "report": L})
            if root:
                with open(part, encoding="utf-8") as f:
                    csvs.append(f.read())
    total = {"layers": len(objects), "macs": sum(L["macs"] for L in objects),
             "verified_layers": sum(L["verified"] is True for L in objects),
             "failed_layers": sum(L["verified"] is False for L in objects),
             "not_modelled_nodes": len(others),
             "not_modelled_macs": sum(o.macs for o in others if o.macs is not None),
             "not_modelled_unknown_macs": sum(o.macs is None for o in others),
             **_method_totals(objects, rep["config"]["methods"], rep["config"]["mxu"])}
    summary = {"schema": "triada-conv-onnx/1", "model": _model_name(model_or_path),
               "config": rep["config"], "layers": objects,
               "not_modelled": [o.as_dict() for o in others], "total": total}
    if report is not None and root:
        write_atomically(report, json.dumps(summary, indent=1))
    if csv is not None and root:
        write_atomically(csv, _merged_csv(csvs, layers, others))
    return results, summary


#: A method's figures that add up over the layers (doc/conv.md "What is counted").
_SUMMED = ("macs", "macs_dense", "useful_macs", "cycles", "model_time", "energy_pj",
           "dram_read_bytes", "dram_write_bytes", "dram_cycles", "stall_cycles")


def _method_totals(layers, methods, side):
    """Each method's network totals, as SCALE-Sim reports a topology's: the summed figures
    and the utilisations of the sums (useful MACs / dense MACs, and / (model time x S))."""
    out = {}
    for method in methods:
        t = {key: sum(L[method][key] for L in layers) for key in _SUMMED}
        t["utilisation"] = t["useful_macs"] / t["macs_dense"] if t["macs_dense"] else None
        time = t["model_time"] * side
        t["effective_utilisation"] = t["useful_macs"] / time if time else None
        out[method] = t
    return out


def _model_name(model_or_path):
    if isinstance(model_or_path, (str, os.PathLike)):
        return os.fspath(model_or_path)
    return model_or_path.graph.name or "(ModelProto)"


def _table(summary):
    lines = [f"{'#':>3} {'layer':<16} {'op':<13} {'shape':<40} {'MACs':>12}  check"]
    for L in summary["layers"]:
        lines.append(f"{L['index']:>3} {L['name'][:16]:<16} {L['op'][:13]:<13} "
                     f"{L['shape'][:40]:<40} {L['macs']:>12}  "
                     f"{'ok' if L['verified'] else L['check']}")
    for j, o in enumerate(summary["not_modelled"]):
        macs = "?" if o["macs"] is None else o["macs"]
        lines.append(f"{len(summary['layers']) + j + 1:>3} {o['name'][:16]:<16} "
                     f"{o['op'][:13]:<13} {'(not modelled)':<40} {macs:>12}  {o['reason']}")
    t = summary["total"]
    lines.append(f"total: {t['layers']} layers, {t['macs']} MACs, {t['verified_layers']} "
                 f"verified, {t['failed_layers']} failed")
    for method in summary["config"]["methods"]:
        m = t[method]
        util = "-" if m["utilisation"] is None else f"{m['utilisation']:.3f}"
        lines.append(f"  {method}: {m['cycles']} cycles, {m['model_time']} time units, "
                     f"utilisation {util}, {m['energy_pj'] * 1e-6:.6g} uJ, DRAM "
                     f"{m['dram_read_bytes']} B read, {m['dram_write_bytes']} B written")
    if t["not_modelled_nodes"]:
        unknown = t["not_modelled_unknown_macs"]
        lines.append(f"not modelled: {t['not_modelled_nodes']} nodes, "
                     f"{t['not_modelled_macs']} MACs" +
                     (f" (and {unknown} nodes of unknown MACs)" if unknown else ""))
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
    table (and the nodes not modelled); exit 0, 1 (bad input), 2 (bad option or model), 4
    (a layer failed its check)."""
    p = argparse.ArgumentParser(prog="python3 -m triada.onnx_net",
                                description="Run an ONNX model's Conv (1-D as H = 1, "
                                "2-D), ConvTranspose (the zero-inserted convolution a systolic "
                                "array runs, its MACs the performed ones), Gemm and MatMul "
                                "(batched, of two activations too) layers on the planar MXU "
                                "(triada-conv's job). MAC-bearing nodes the MXU does not run "
                                "(LSTM, GRU, RNN, Einsum, integer and quantised products) are "
                                "listed as not modelled with their MACs, in the table, the "
                                "CSV and the report. The model's shape computations (Shape, "
                                "Gather, Slice, Concat, Reshape, ...) are folded before ONNX's "
                                "shape inference (doc/conv.md, ONNX models).")
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
    p.add_argument("--csv", help="the per-layer CSV (triada-conv's columns; a not_modelled "
                   "row per node not modelled)")
    p.add_argument("--report", help="the JSON report (layers, not_modelled, total)")
    p.add_argument("--force", action="store_true",
                   help="replace --csv, --report and --to-network")
    p.add_argument("--to-network", metavar="NET.csv",
                   help="only write the layers as a network file for triada-conv --network")
    p.add_argument("--execute", action="store_true",
                   help="run the whole network: each layer on the MXU in --cell-mode on the "
                   "operands the graph computes, the other ops with numpy (the common CNN and "
                   "transformer ops); print per layer and per output the largest relative "
                   "difference max|sim - ref| / max|ref| against float64 on the host "
                   "(--method both: the implicit method's outputs)")
    p.add_argument("--input", action="append", default=[],
                   metavar="[NAME=]FILE.npy|FILE.h5[:/DSET]",
                   help="with --execute: a graph input's values (repeatable; NAME may be left "
                   "out for the one data input); default random from --seed")
    p.add_argument("--cell-mode", default="fp64",
                   help="the cells' arithmetic (fp64, fp32, tf32, bf16, fp16, m3xu...)")
    a = p.parse_args(argv)
    prog = "triada.onnx_net"
    cli = _onnx_shapes.CLI.set(True)
    try:
        shapes = _input_shape_options(a.input_shape)
        if a.execute or a.input:
            from . import _onnx_execute  # noqa: PLC0415
            if not a.execute:
                raise ConfigError("--input is for --execute (a layer's operands: inputs= "
                                  "from Python)")
            if a.to_network:
                raise ConfigError("--to-network only writes the layers; --execute runs the "
                                  "network: one or the other")
            _, result = conv_onnx(a.model, method=a.method, mxu=a.mxu, batch=a.batch,
                                  input_shapes=shapes, seed=a.seed, csv=a.csv,
                                  report=a.report, force=a.force, execute=True,
                                  inputs=_onnx_execute.input_options(a.input) or None,
                                  use_weights=not a.no_weights, cell_mode=a.cell_mode)
            print(_onnx_execute.table(result))
            return 0
        if a.to_network:
            b = to_network(onnx_layers(a.model, a.batch, shapes), a.to_network,
                           force=a.force)
            print(f"{prog}: wrote {a.to_network}: triada-conv --network {a.to_network} "
                  f"--batch {b}")
            return 0
        _, summary = conv_onnx(a.model, method=a.method, mxu=a.mxu, batch=a.batch,
                               input_shapes=shapes, seed=a.seed,
                               use_weights=not a.no_weights, csv=a.csv, report=a.report,
                               force=a.force, cell_mode=a.cell_mode)
    except (Error, ImportError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1 if isinstance(e, (InputError, OSError)) else 2
    finally:
        _onnx_shapes.CLI.reset(cli)
    print(_table(summary))
    return 4 if summary["total"]["failed_layers"] else 0


if __name__ == "__main__":
    sys.exit(main())
