"""Runs a whole ONNX model (triada.onnx_net's ``execute=True`` / ``--execute``).

The graph (after onnx_net's loading: shapes given, shape computations folded, nodes in
topological order) is interpreted twice with numpy: the reference, every node in float64 on
the host (Conv and ConvTranspose by im2col, Gemm and MatMul by np.matmul); and the
simulated run, where every Conv, ConvTranspose, Gemm and MatMul node runs through
``triada.conv`` on its actual operands (the layer onnx_net reads for it, in the chosen cell
mode; its bias added on the host), the other nodes by the same host ops. Per MAC-bearing
node and per graph output the report gives the largest relative difference
max |sim - ref| / max |ref| (max |sim - ref| where ref is all zero).
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable

import numpy as np

from . import onnx_net
from .conv import conv
from .errors import ConfigError, InputError

Array = np.ndarray


class UnknownOp(ConfigError):
    """A node whose op the host interpreter does not run."""


# -- host ops ---------------------------------------------------------------------------------

def _axis(a, x, name="axis", default=0):
    ax = int(a.get(name, default))
    return ax + x.ndim if ax < 0 else ax


def _axes_of(a, xs, since, opset):
    """An op's axes: the attribute before opset SINCE, the second input from it on."""
    if opset >= since:
        return None if len(xs) < 2 or xs[1] is None else [int(v) for v in xs[1]]
    v = a.get("axes")
    return None if v is None else list(v)


def _reduce(f):
    def op(a, xs, opset):
        x = xs[0]
        since = 13 if f is np.sum else 18
        axes = _axes_of(a, xs, since, opset)
        keep = bool(a.get("keepdims", 1))
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                return [x]
            axes = list(range(x.ndim))
        return [f(x, axis=tuple(ax % x.ndim for ax in axes), keepdims=keep)]
    return op


def _softmax(a, xs, opset):
    x = xs[0]
    ax = _axis(a, x, default=-1 if opset >= 13 else 1)
    if opset < 13:  # the input as 2-D: dims before axis by dims from it
        shape = x.shape
        x2 = x.reshape(int(np.prod(shape[:ax])), -1)
        e = np.exp(x2 - x2.max(axis=1, keepdims=True))
        return [(e / e.sum(axis=1, keepdims=True)).reshape(shape)]
    e = np.exp(x - x.max(axis=ax, keepdims=True))
    return [e / e.sum(axis=ax, keepdims=True)]


def _clip(a, xs, opset):
    lo = a.get("min") if opset < 11 else (xs[1] if len(xs) > 1 and xs[1] is not None else None)
    hi = a.get("max") if opset < 11 else (xs[2] if len(xs) > 2 and xs[2] is not None else None)
    x = xs[0]
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return [x]


def _batchnorm(a, xs, opset):
    x, s, b, m, v = xs[:5]
    shape = (1, -1) + (1,) * (x.ndim - 2)
    eps = float(a.get("epsilon", 1e-5))
    return [(x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + eps) * s.reshape(shape) +
            b.reshape(shape)]


def _layernorm(a, xs, opset):
    x = xs[0]
    ax = _axis(a, x, default=-1)
    axes = tuple(range(ax, x.ndim))
    eps = float(a.get("epsilon", 1e-5))
    m = x.mean(axis=axes, keepdims=True)
    d = x - m
    y = d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + eps) * xs[1]
    return [y + xs[2] if len(xs) > 2 and xs[2] is not None else y]


def _instancenorm(a, xs, opset):
    x, s, b = xs[:3]
    axes = tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    return [(x - m) / np.sqrt(v + float(a.get("epsilon", 1e-5))) * s.reshape(shape) +
            b.reshape(shape)]


def _pool_geometry(a, x):
    nd = x.ndim - 2
    k = tuple(a["kernel_shape"])
    s = tuple(a.get("strides", (1,) * nd))
    d = tuple(a.get("dilations", (1,) * nd))
    mode = a.get("auto_pad", "NOTSET")
    if mode not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ConfigError(f"unknown auto_pad '{mode}'")
    if mode == "NOTSET":
        p = tuple(a.get("pads", (0,) * 2 * nd))
    else:
        p = onnx_net._auto_pads(None, mode, x.shape[2:], k, s, d)
    ceil = bool(a.get("ceil_mode", 0))
    out = []
    for i in range(nd):
        span = x.shape[2 + i] + p[i] + p[nd + i] - d[i] * (k[i] - 1) - 1
        o = (-(-span // s[i]) if ceil else span // s[i]) + 1
        if ceil and (o - 1) * s[i] >= x.shape[2 + i] + p[i]:
            o -= 1  # a window starting in the end padding is dropped
        out.append(o)
    return nd, k, s, d, p, out


def _windows(x, nd, k, s, d, p, out, fill):
    """x padded with FILL (room for ceil_mode's last window too); yields each kernel tap's
    strided view N x C x out..."""
    extra = [max(0, (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - (x.shape[2 + i] + p[i] +
                                                                       p[nd + i]))
             for i in range(nd)]
    width = [(0, 0), (0, 0)] + [(p[i], p[nd + i] + extra[i]) for i in range(nd)]
    xp = np.pad(x, width, constant_values=fill)
    for taps in np.ndindex(*k):
        idx = (slice(None), slice(None)) + tuple(
            slice(t * d[i], t * d[i] + s[i] * (out[i] - 1) + 1, s[i]) for i, t in enumerate(taps))
        yield xp[idx]


def _maxpool(a, xs, opset):
    x = xs[0]
    g = _pool_geometry(a, x)
    y = None
    for v in _windows(x, *g, -np.inf):
        y = v.copy() if y is None else np.maximum(y, v)
    return [y]


def _avgpool(a, xs, opset):
    x = xs[0]
    nd, k, s, d, p, out = g = _pool_geometry(a, x)
    total = sum(_windows(x, *g, 0.0))
    if a.get("count_include_pad", 0):
        # the count includes the pads but not ceil_mode's cells beyond them
        ones = np.pad(np.zeros((1, 1) + x.shape[2:]), [(0, 0), (0, 0)] +
                      [(p[i], p[nd + i]) for i in range(nd)], constant_values=0.0) + 1.0
        count = sum(_windows(ones, nd, k, s, d, (0,) * 2 * nd, out, 0.0))
    else:
        count = sum(_windows(np.ones((1, 1) + x.shape[2:]), *g, 0.0))
    return [total / count]


def _global_avg(a, xs, opset):
    return [xs[0].mean(axis=tuple(range(2, xs[0].ndim)), keepdims=True)]


def _global_max(a, xs, opset):
    return [xs[0].max(axis=tuple(range(2, xs[0].ndim)), keepdims=True)]


def _reshape(a, xs, opset):
    x, shape = xs[0], [int(v) for v in xs[1]]
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return [x.reshape(shape)]


def _flatten(a, xs, opset):
    x = xs[0]
    ax = _axis(a, x, default=1)
    return [x.reshape(int(np.prod(x.shape[:ax])), -1)]


def _split(a, xs, opset, outputs=1):
    x = xs[0]
    ax = _axis(a, x)
    sizes = (list(xs[1]) if opset >= 13 and len(xs) > 1 and xs[1] is not None
             else a.get("split"))
    if sizes is None:
        n = a.get("num_outputs", outputs)
        step = -(-x.shape[ax] // n)
        sizes = [min(step, x.shape[ax] - i * step) for i in range(n)]
    return np.split(x, np.cumsum(sizes)[:-1], axis=ax)


def _slice(a, xs, opset):
    x = xs[0]
    if opset < 10:
        starts, ends = a["starts"], a["ends"]
        axes, steps = a.get("axes", list(range(len(starts)))), [1] * len(starts)
    else:
        starts, ends = list(xs[1]), list(xs[2])
        axes = list(xs[3]) if len(xs) > 3 and xs[3] is not None else list(range(len(starts)))
        steps = list(xs[4]) if len(xs) > 4 and xs[4] is not None else [1] * len(starts)
    idx = [slice(None)] * x.ndim
    for b, e, ax, st in zip(starts, ends, axes, steps):
        n = x.shape[int(ax)]
        b, e, st = int(b), int(e), int(st)
        b = b + n if b < 0 else b
        e = e + n if e < 0 else e
        if st > 0:
            b, e = min(max(b, 0), n), min(max(e, 0), n)
        else:
            b, e = min(max(b, -1), n - 1), min(max(e, -1), n - 1)
        idx[int(ax)] = slice(b, None if e < 0 else e, st)
    return [x[tuple(idx)]]


def _squeeze(a, xs, opset):
    axes = _axes_of(a, xs, 13, opset)
    x = xs[0]
    return [np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(v % x.ndim
                                                                          for v in axes))]


def _unsqueeze(a, xs, opset):
    axes = _axes_of(a, xs, 13, opset)
    x = xs[0]
    n = x.ndim + len(axes)
    return [np.expand_dims(x, tuple(sorted(v % n for v in axes)))]


def _pad(a, xs, opset):
    x = xs[0]
    if opset < 11:
        pads, value = list(a["pads"]), float(a.get("value", 0.0))
    else:
        pads = [int(v) for v in xs[1]]
        value = float(xs[2].reshape(-1)[0]) if len(xs) > 2 and xs[2] is not None and \
            np.size(xs[2]) else 0.0
    axes = (list(range(x.ndim)) if len(xs) < 4 or xs[3] is None
            else [int(v) % x.ndim for v in xs[3]])
    n = len(axes)
    width = [(0, 0)] * x.ndim
    for i, ax in enumerate(axes):
        width[ax] = (pads[i], pads[n + i])
    if any(b < 0 or e < 0 for b, e in width):  # negative pads crop
        cut = tuple(slice(max(0, -b), x.shape[i] - max(0, -e)) for i, (b, e) in enumerate(width))
        x = x[cut]
        width = [(max(0, b), max(0, e)) for b, e in width]
    mode = a.get("mode", "constant")
    if mode == "constant":
        return [np.pad(x, width, constant_values=value)]
    return [np.pad(x, width, mode={"reflect": "reflect", "edge": "edge",
                                   "wrap": "wrap"}[mode])]


def _resize(a, xs, opset):
    """Resize (opset 11+; Upsample's scales too): nearest (round_prefer_floor /
    round_prefer_ceil / floor / ceil) and linear (separable, per axis), coordinate modes
    half_pixel, pytorch_half_pixel, align_corners, asymmetric."""
    x = xs[0]
    scales = sizes = None
    if len(xs) > 3 and xs[3] is not None and np.size(xs[3]):
        sizes = [int(v) for v in xs[3]]
    elif len(xs) > 2 and xs[2] is not None and np.size(xs[2]):
        scales = [float(v) for v in xs[2]]
    elif len(xs) == 2:  # Upsample: scales as input 1
        scales = [float(v) for v in xs[1]]
    if sizes is None:
        sizes = [int(math.floor(n * s)) for n, s in zip(x.shape, scales)]
    if scales is None:
        scales = [o / n for o, n in zip(sizes, x.shape)]
    mode = a.get("mode", "nearest")
    coord = a.get("coordinate_transformation_mode", "half_pixel" if opset >= 11 else
                  "asymmetric")
    nearest = a.get("nearest_mode", "round_prefer_floor")
    if mode not in ("nearest", "linear"):
        raise ConfigError(f"Resize mode '{mode}': only nearest and linear run on the host")
    for ax, (n, o, s) in enumerate(zip(x.shape, sizes, scales)):
        if n == o:
            continue
        i = np.arange(o, dtype=np.float64)
        if coord == "half_pixel":
            c = (i + 0.5) / s - 0.5
        elif coord == "pytorch_half_pixel":
            c = (i + 0.5) / s - 0.5 if o > 1 else np.zeros(o)
        elif coord == "align_corners":
            c = i * (n - 1) / (o - 1) if o > 1 else np.zeros(o)
        elif coord == "asymmetric":
            c = i / s
        else:
            raise ConfigError(f"Resize coordinate_transformation_mode '{coord}' does not "
                              "run on the host")
        if mode == "nearest":
            if nearest == "round_prefer_floor":
                j = np.ceil(c - 0.5)
            elif nearest == "round_prefer_ceil":
                j = np.floor(c + 0.5)
            elif nearest == "floor":
                j = np.floor(c)
            else:
                j = np.ceil(c)
            x = np.take(x, np.clip(j, 0, n - 1).astype(np.int64), axis=ax)
        else:
            c = np.clip(c, 0, n - 1)
            lo = np.floor(c).astype(np.int64)
            hi = np.minimum(lo + 1, n - 1)
            f = (c - lo).reshape([-1 if k == ax else 1 for k in range(x.ndim)])
            x = np.take(x, lo, axis=ax) * (1 - f) + np.take(x, hi, axis=ax) * f
    return [x]


def _cast(a, xs, opset):
    import onnx  # noqa: PLC0415
    to = int(a["to"])
    if to in (1, 10, 11, 16):  # float types: the run stays float64
        return [np.asarray(xs[0], dtype=np.float64)]
    return [np.asarray(xs[0]).astype(onnx.helper.tensor_dtype_to_np_dtype(to))]


def _gelu(a, xs, opset):
    x = xs[0]
    if a.get("approximate", "none") == "tanh":
        return [0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))]
    return [0.5 * x * (1 + _erf(x / math.sqrt(2)))]


def _erf(x):
    """erf in float64 (math.erf per element; numpy has none)."""
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _where(a, xs, opset):
    return [np.where(xs[0], xs[1], xs[2])]


def _unary(f):
    return lambda a, xs, opset: [f(xs[0])]


def _binary(f):
    return lambda a, xs, opset: [f(xs[0], xs[1])]


def _div(x, y):
    if np.asarray(x).dtype.kind in "iu" and np.asarray(y).dtype.kind in "iu":
        return np.trunc(x / y).astype(np.result_type(x, y))
    return x / y


HOST_OPS: dict[str, Callable[..., list[Array]]] = {
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply),
    "Div": _binary(_div), "Pow": _binary(np.power), "Max": lambda a, xs, o: [
        np.maximum.reduce(np.broadcast_arrays(*xs))],
    "Min": lambda a, xs, o: [np.minimum.reduce(np.broadcast_arrays(*xs))],
    "Sum": lambda a, xs, o: [sum(xs[1:], xs[0])],
    "Relu": _unary(lambda x: np.maximum(x, 0)),
    "LeakyRelu": lambda a, xs, o: [np.where(xs[0] >= 0, xs[0],
                                            float(a.get("alpha", 0.01)) * xs[0])],
    "PRelu": lambda a, xs, o: [np.where(xs[0] >= 0, xs[0], xs[1] * xs[0])],
    "Elu": lambda a, xs, o: [np.where(xs[0] >= 0, xs[0],
                                      float(a.get("alpha", 1.0)) * np.expm1(xs[0]))],
    "HardSigmoid": lambda a, xs, o: [np.clip(float(a.get("alpha", 0.2)) * xs[0] +
                                             float(a.get("beta", 0.5)), 0, 1)],
    "HardSwish": _unary(lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    "Sigmoid": _unary(lambda x: 1 / (1 + np.exp(-x))),
    "Softplus": _unary(lambda x: np.logaddexp(0, x)),
    "Tanh": _unary(np.tanh), "Exp": _unary(np.exp), "Log": _unary(np.log),
    "Sqrt": _unary(np.sqrt), "Reciprocal": _unary(lambda x: 1 / x), "Neg": _unary(np.negative),
    "Abs": _unary(np.abs), "Floor": _unary(np.floor), "Ceil": _unary(np.ceil),
    "Erf": _unary(_erf), "Gelu": _gelu, "Clip": _clip, "Where": _where,
    "Equal": _binary(np.equal), "Less": _binary(np.less), "Greater": _binary(np.greater),
    "Not": _unary(np.logical_not),
    "MaxPool": _maxpool, "AveragePool": _avgpool, "GlobalAveragePool": _global_avg,
    "GlobalMaxPool": _global_max,
    "BatchNormalization": _batchnorm, "LayerNormalization": _layernorm,
    "InstanceNormalization": _instancenorm,
    "Softmax": _softmax,
    "LogSoftmax": lambda a, xs, o: [np.log(_softmax(a, xs, o)[0])],
    "Transpose": lambda a, xs, o: [np.transpose(xs[0], a.get("perm"))],
    "Reshape": _reshape, "Flatten": _flatten,
    "Concat": lambda a, xs, o: [np.concatenate(xs, axis=_axis(a, xs[0]))],
    "Split": _split, "Slice": _slice,
    "Gather": lambda a, xs, o: [np.take(xs[0], np.asarray(xs[1], dtype=np.int64),
                                        axis=_axis(a, xs[0]))],
    "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Pad": _pad,
    "Resize": _resize, "Upsample": _resize,
    "Expand": lambda a, xs, o: [np.array(np.broadcast_to(xs[0], np.broadcast_shapes(
        np.shape(xs[0]), tuple(int(v) for v in xs[1]))))],
    "Tile": lambda a, xs, o: [np.tile(xs[0], [int(v) for v in xs[1]])],
    "ReduceMean": _reduce(np.mean), "ReduceSum": _reduce(np.sum), "ReduceMax": _reduce(np.max),
    "ReduceMin": _reduce(np.min),
    "Identity": lambda a, xs, o: [xs[0]],
    "Dropout": lambda a, xs, o: [xs[0], np.ones(np.shape(xs[0]), dtype=bool)],
    "Cast": _cast,
    "Shape": lambda a, xs, o: [np.asarray(np.shape(xs[0])[a.get("start", 0):a.get(
        "end", np.ndim(xs[0]))], dtype=np.int64)],
    "Einsum": lambda a, xs, o: [np.einsum(a["equation"], *xs)],
}


# -- the MAC ops in float64 on the host (the reference) ----------------------------------------

def _conv_ref(a, x, w, b):
    """Conv's definition by im2col in numpy: any number of spatial dims, groups."""
    nd = x.ndim - 2
    k = tuple(a.get("kernel_shape", w.shape[2:]))
    s = tuple(a.get("strides", (1,) * nd))
    d = tuple(a.get("dilations", (1,) * nd))
    mode = a.get("auto_pad", "NOTSET")
    p = (tuple(a.get("pads", (0,) * 2 * nd)) if mode == "NOTSET"
         else onnx_net._auto_pads(None, mode, x.shape[2:], k, s, d))
    g = int(a.get("group", 1))
    out = [(x.shape[2 + i] + p[i] + p[nd + i] - d[i] * (k[i] - 1) - 1) // s[i] + 1
           for i in range(nd)]
    taps = np.stack(list(_windows(x, nd, k, s, d, p, out, 0.0)), axis=2)  # N C T out...
    n, c = x.shape[:2]
    co = w.shape[0]
    cols = taps.reshape(n, g, c // g * int(np.prod(k)), -1)  # N g (C/g T) P
    wg = w.reshape(g, co // g, -1)  # g (C_O/g) (C/g T)
    y = np.matmul(wg[None], cols).reshape(n, co, *out)
    return y if b is None else y + b.reshape((1, -1) + (1,) * nd)


def _conv_transpose_ref(a, x, w, b):
    """ConvTranspose's definition: each input pixel scatters its kernel into the output."""
    nd = x.ndim - 2
    k = tuple(a.get("kernel_shape", w.shape[2:]))
    s = tuple(a.get("strides", (1,) * nd))
    d = tuple(a.get("dilations", (1,) * nd))
    op = tuple(a.get("output_padding", (0,) * nd))
    p = onnx_net._transpose_pads(None, a, x.shape[2:], k, s, d, op)
    g = int(a.get("group", 1))
    n, ci = x.shape[:2]
    cog = w.shape[1]
    full = [s[i] * (x.shape[2 + i] - 1) + op[i] + d[i] * (k[i] - 1) + 1 for i in range(nd)]
    lo = [max(0, -p[i]) for i in range(nd)]  # negative pads add outputs
    hi = [max(0, -p[nd + i]) for i in range(nd)]
    y = np.zeros((n, g * cog, *(f + lo[i] + hi[i] for i, f in enumerate(full))))
    xg = x.reshape(n, g, ci // g, *x.shape[2:])
    wg = w.reshape(g, ci // g, cog, *k)
    for t in np.ndindex(*k):
        contrib = np.einsum("ngc...,gco->ngo...", xg, wg[(slice(None),) * 3 + t])
        idx = (slice(None), slice(None)) + tuple(
            slice(lo[i] + t[i] * d[i], lo[i] + t[i] * d[i] + s[i] * (x.shape[2 + i] - 1) + 1,
                  s[i]) for i in range(nd))
        y[idx] += contrib.reshape(n, g * cog, *x.shape[2:])
    y = y[(slice(None), slice(None)) + tuple(
        slice(max(0, p[i]), y.shape[2 + i] - max(0, p[nd + i])) for i in range(nd))]
    return y if b is None else y + b.reshape((1, -1) + (1,) * nd)


def _gemm_ref(a, xa, xb, c):
    xa = xa.T if a.get("transA", 0) else xa
    xb = xb.T if a.get("transB", 0) else xb
    y = float(a.get("alpha", 1.0)) * np.matmul(xa, xb)
    return y if c is None else y + float(a.get("beta", 1.0)) * c


def _ref_mac(onnx, node, xs):
    a = onnx_net._attrs(onnx, node)
    bias = xs[2] if len(xs) > 2 else None
    if node.op_type == "Conv":
        return _conv_ref(a, xs[0], xs[1], bias)
    if node.op_type == "ConvTranspose":
        return _conv_transpose_ref(a, xs[0], xs[1], bias)
    if node.op_type == "Gemm":
        return _gemm_ref(a, xs[0], xs[1], bias)
    return np.matmul(xs[0], xs[1])


# -- the MAC ops on the simulated MXU ----------------------------------------------------------

def _sim_mac(rec, node, xs, shape, method, mxu, cell_mode, seed, conv_args):
    """The node run by triada.conv on its operands (rec: onnx_net's layer for it); the
    layer's output (its product) as the node's, the bias added. Returns (output, the layer's
    output as triada.conv gave it, its input, its weights)."""
    op = node.op_type
    x = onnx_net._layer_input(rec, {rec.name: xs[0]}, 0)
    w = rec.weights
    if w is None and rec.arrange_b is not None:  # B (or the weights) an activation
        w = onnx_net._arranged(rec, rec.arrange_b, np.asarray(xs[1], dtype=np.float64),
                               "B")
    elif w is None:  # a Conv's weights computed in the graph or a graph input
        co, hf, wf = rec.layer[4:7]
        w = np.asarray(xs[1], dtype=np.float64).reshape(co, -1, hf, wf)
    outputs, _ = conv(rec.layer, method=method, mxu=mxu, seed=seed, verify=True,
                      cell_mode=cell_mode, input=x, weights=w, **conv_args)
    if outputs is None or outputs[0] is None:
        raise ConfigError(f"layer {rec.name!r}: triada.conv returned no output")
    y = outputs[0][method]
    bias = xs[2] if len(xs) > 2 else None
    if op in ("Conv", "ConvTranspose"):
        out = y.reshape(shape)
        if bias is not None:
            out = out + bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    elif rec.products > 1:  # 1 x P N x M x 1: product p's filters p N + n
        m, nn, _ = rec.gemm
        out = y.reshape(rec.products, nn, m).transpose(0, 2, 1).reshape(shape)
    else:  # 1 x N x M x 1 -> M x N
        out = y[0, :, :, 0].T.reshape(shape)
        if op == "Gemm" and bias is not None:
            beta = next((float(at.f) for at in node.attribute if at.name == "beta"), 1.0)
            out = out + beta * bias
    return out, y, x, w


# -- the interpreter ---------------------------------------------------------------------------

def _read_input(spec: str) -> Array:
    """FILE.npy, or FILE.h5[:/DSET] (the one dataset where DSET is left out)."""
    path, dset = spec, None
    low = spec.lower()
    for ext in (".h5", ".hdf5"):
        i = low.find(ext + ":")
        if i >= 0:
            path, dset = spec[:i + len(ext)], spec[i + len(ext) + 1:]
    if not os.path.isfile(path):
        raise InputError(f"--input {spec}: no such file")
    if path.lower().endswith(".npy"):
        try:
            return np.asarray(np.load(path, allow_pickle=False))
        except Exception as e:  # noqa: BLE001
            raise InputError(f"--input {spec}: cannot read it ({e})") from None
    try:
        import h5py  # noqa: PLC0415
    except ImportError:
        raise InputError(f"--input {spec}: reading HDF5 needs h5py (python3-h5py)") from None
    with h5py.File(path, "r") as f:
        if dset is None:
            names: list[str] = []
            f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
            if len(names) != 1:
                raise InputError(f"--input {spec}: the file holds {len(names)} datasets; "
                                 f"name one as {path}:/DSET ({', '.join(names[:8])})")
            dset = names[0]
        if dset not in f:
            raise InputError(f"--input {spec}: no dataset '{dset}'")
        return np.asarray(f[dset][()])


def input_options(values: list[str]) -> dict[str, Any]:
    """--input [NAME=]FILE options as {name: array} ('' for the one data input)."""
    out: dict[str, Any] = {}
    for v in values:
        name, sep, spec = v.partition("=")
        if not sep or os.path.exists(v):
            name, spec = "", v
        if name in out:
            raise ConfigError(f"--input {v}: input {name or '(the one data input)'!r} "
                              "given twice")
        out[name] = _read_input(spec)
    return out


def _rel(sim, ref) -> float:
    sim, ref = np.asarray(sim, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if sim.shape != ref.shape:
        raise ConfigError(f"the simulated run's shape {sim.shape} is not the reference's "
                          f"{ref.shape}")
    if sim.size == 0:
        return 0.0
    diff = float(np.max(np.abs(sim - ref)))
    scale = float(np.max(np.abs(ref)))
    return diff / scale if scale > 0 else diff


# ONNX's integer and bool element types: such an input keeps integers.
_INTEGER_TYPES = {2, 3, 4, 5, 6, 7, 9, 12, 13}


def _float(v):
    v = np.asarray(v)
    return v.astype(np.float64) if v.dtype.kind == "f" else v


def execute(model_or_path: Any, *, cell_mode: str = "fp64", inputs: Any = None,
            seed: int = 1, batch: int | None = None, input_shapes: Any = None,
            method: str = "implicit", mxu: int = 16, keep: bool = False,
            **conv_args: Any) -> dict[str, Any]:
    """Runs the whole model twice (module docstring); returns the report
    {"schema", "model", "cell_mode", "method", "layers" (per MAC-bearing node: index, name,
    op, "on" ("mxu" or "host"), max_rel_diff), "not_modelled", "outputs" (per graph output:
    name, shape, max_rel_diff), "max_rel_diff"}; with keep, also "values": {"reference":
    {tensor: array}, "simulated": {...}, "mxu": {layer name: (y, x, w)}} (triada.conv's
    output and operands of each layer)."""
    if method not in ("explicit", "implicit"):
        raise ConfigError(f"method '{method}': the run takes explicit or implicit")
    onnx_net._args.flag("keep", keep)
    from .configs import CELL_MODES  # noqa: PLC0415
    if cell_mode not in CELL_MODES:
        raise ConfigError(f"cell mode: unknown '{cell_mode}' (expected "
                          f"{', '.join(CELL_MODES)})")
    shapes = onnx_net._onnx_shapes.checked_shapes({} if input_shapes is None else
                                                   input_shapes)
    layers, others = onnx_net.onnx_nodes(model_or_path, batch, shapes)
    onnx, model = onnx_net._load(model_or_path, batch, shapes)
    graph = onnx_net._Graph(onnx, model)
    opset = onnx_net._onnx_shapes.opset(model)
    nodes = list(model.graph.node)
    # the layer records, in onnx_nodes's order: the same nodes of the same loading
    mac_nodes = [(i, n) for i, n in enumerate(nodes) if n.op_type in onnx_net._READERS]
    if [n.name or f"{n.op_type.lower()}{i}" for i, n in mac_nodes] != \
            [rec.name for rec in layers]:
        raise ConfigError("the model's layers do not match its nodes (internal)")
    by_name: dict[int, Any] = {id(n): rec for (_, n), rec in zip(mac_nodes, layers)}
    not_modelled = {o.name for o in others}
    for node in nodes:  # an op outside the set: named before anything runs
        if node.op_type not in HOST_OPS and node.op_type not in onnx_net._READERS and \
                node.op_type != "Constant":
            raise UnknownOp(f"node {onnx_net._label(node)}: op {node.op_type} does not run "
                            "on the host (--execute runs the common CNN and transformer ops, "
                            "doc/conv.md)")
    ref: dict[str, Any] = {k: _float(v) for k, v in graph.constants.items()}
    data = [vi for vi in model.graph.input if vi.name not in graph.constants]
    given = dict(inputs or {})
    if "" in given:
        if len(data) != 1:
            raise ConfigError("an input without a name: the model has "
                              f"{len(data)} data inputs ({', '.join(v.name for v in data)})")
        given[data[0].name] = given.pop("")
    unknown = sorted(set(given) - {v.name for v in data})
    if unknown:
        raise ConfigError(f"inputs: the model has no data input {unknown[0]!r} (its inputs: "
                          f"{', '.join(repr(v.name) for v in data)})")
    rng = np.random.default_rng(seed)
    for vi in data:
        dims = tuple(graph.shapes.get(vi.name, ()))
        integer = vi.type.tensor_type.elem_type in _INTEGER_TYPES
        if vi.name in given:
            v = np.asarray(given[vi.name])
            v = v.astype(np.int64) if integer else v.astype(np.float64)
            if dims and v.shape != dims:
                raise InputError(f"input '{vi.name}': an array of shape "
                                 f"{'x'.join(map(str, v.shape))}, the model's is "
                                 f"{'x'.join(map(str, dims))}")
        elif integer:  # token ids, indices: 0 and 1 (give real ones with inputs=)
            v = rng.integers(0, 2, dims)
        else:
            v = rng.standard_normal(dims)
        ref[vi.name] = v
    sim = dict(ref)
    rows: list[dict[str, Any]] = []
    mxu_values: dict[str, Any] = {}
    for node in nodes:
        if node.op_type == "Constant" and node.output[0] in ref:
            continue
        a = onnx_net._attrs(onnx, node)
        label = onnx_net._label(node)
        xr = [ref[n] if n else None for n in node.input]
        xsim = [sim[n] if n else None for n in node.input]
        try:
            rec = by_name.get(id(node))
            if rec is not None:
                yr = [_ref_mac(onnx, node, xr)]
                out, y, x, w = _sim_mac(rec, node, xsim, yr[0].shape, method, mxu, cell_mode,
                                        seed, conv_args)
                ys = [out]
                rows.append({"index": len(rows) + 1, "name": rec.name, "op": node.op_type,
                             "on": "mxu", "max_rel_diff": _rel(out, yr[0])})
                if keep:
                    mxu_values[rec.name] = (y, x, w)
            else:
                f = HOST_OPS[node.op_type] if node.op_type != "Constant" else None
                if f is None:
                    raise ConfigError("a Constant node that does not fold")
                extra = {"outputs": len(node.output)} if node.op_type == "Split" else {}
                yr = [_float(v) for v in f(a, xr, opset, **extra)]
                ys = [_float(v) for v in f(a, xsim, opset, **extra)]
                name = node.name or f"{node.op_type.lower()}{nodes.index(node)}"
                if name in not_modelled:
                    rows.append({"index": len(rows) + 1, "name": name, "op": node.op_type,
                                 "on": "host", "max_rel_diff": _rel(ys[0], yr[0])})
        except (ConfigError, InputError) as e:  # the simulator's, or an attribute's refusal
            raise (InputError if isinstance(e, InputError) else ConfigError)(
                f"node {label}: {e}") from None
        except (ValueError, IndexError, KeyError, TypeError) as e:
            where = "" if by_name.get(id(node)) is not None else " on the host"
            raise ConfigError(f"node {label}: cannot run it{where} ({type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''})") from None
        for name, r, s in zip(node.output, yr, ys):
            if name:
                ref[name], sim[name] = r, s
    outputs = []
    for o in model.graph.output:
        outputs.append({"name": o.name, "shape": list(np.shape(ref[o.name])),
                        "max_rel_diff": _rel(sim[o.name], ref[o.name])})
    report: dict[str, Any] = {
        "schema": "triada-onnx-execute/1", "model": onnx_net._model_name(model_or_path),
        "cell_mode": cell_mode, "method": method, "mxu": mxu, "seed": seed,
        "difference": "max |sim - ref| / max |ref| (ref: float64 on the host)",
        "layers": rows, "not_modelled": [o.as_dict() for o in others],
        "outputs": outputs,
        "max_rel_diff": max([o["max_rel_diff"] for o in outputs], default=0.0)}
    if keep:
        report["values"] = {"reference": ref, "simulated": sim, "mxu": mxu_values}
    return report


def table(report: dict[str, Any]) -> str:
    """The CLI's table: per MAC-bearing node and per output, the relative difference."""
    lines = [f"executed in cell mode {report['cell_mode']} ({report['method']}, MXU "
             f"{report['mxu']}x{report['mxu']}); difference: max |sim - ref| / max |ref| "
             "against float64 on the host",
             f"{'#':>3} {'layer':<20} {'op':<13} {'on':<5} {'max rel diff':>14}"]
    for L in report["layers"]:
        lines.append(f"{L['index']:>3} {L['name'][:20]:<20} {L['op'][:13]:<13} "
                     f"{L['on']:<5} {L['max_rel_diff']:>14.3e}")
    if any(L["on"] == "host" for L in report["layers"]):
        lines.append("on host: not modelled, run in float64 on the host in both runs")
    for o in report["outputs"]:
        lines.append(f"output {o['name']} ({'x'.join(map(str, o['shape']))}): max rel diff "
                     f"{o['max_rel_diff']:.3e}")
    return "\n".join(lines)


def csv_text(report: dict[str, Any]) -> str:
    """The report as CSV: kind (layer / output), index, name, op, on, max_rel_diff,
    cell_mode."""
    import csv  # noqa: PLC0415
    import io  # noqa: PLC0415
    f = io.StringIO()
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["kind", "index", "name", "op", "on", "max_rel_diff", "cell_mode"])
    for L in report["layers"]:
        w.writerow(["layer", L["index"], L["name"], L["op"], L["on"],
                    repr(L["max_rel_diff"]), report["cell_mode"]])
    for o in report["outputs"]:
        w.writerow(["output", "", o["name"], "", "", repr(o["max_rel_diff"]),
                    report["cell_mode"]])
    return f.getvalue()


def from_conv_onnx(model_or_path: Any, *, method: str, mxu: int, inputs: Any, seed: int,
                   batch: int | None, input_shapes: Any, report: Any, csv: Any,
                   force: bool, comm: Any, use_weights: bool,
                   **conv_args: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """conv_onnx(..., execute=True): (the report's layers, the report); writes the JSON
    report and the CSV where given."""
    from ._files import write_atomically  # noqa: PLC0415
    import json  # noqa: PLC0415
    if comm is not None:
        raise ConfigError("execute=True runs on one process (comm= is not taken)")
    if not use_weights:
        raise ConfigError("execute=True runs the model's weights (use_weights=False is not "
                          "taken)")
    for name, v in (("report", report), ("csv", csv)):
        if v is not None and os.path.exists(v) and not force:
            raise ConfigError(f"{name} {v}: exists (force=True replaces it)")
    if inputs is not None and not isinstance(inputs, dict):
        inputs = {"": inputs}
    conv_args.pop("verify", None)
    rep = execute(model_or_path, method="implicit" if method == "both" else method, mxu=mxu,
                  inputs=inputs, seed=seed, batch=batch, input_shapes=input_shapes,
                  **conv_args)
    if report is not None:
        write_atomically(report, json.dumps({k: v for k, v in rep.items() if k != "values"},
                                            indent=1))
    if csv is not None:
        write_atomically(csv, csv_text(rep))
    return rep["layers"], rep
