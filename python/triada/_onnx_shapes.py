"""An ONNX model's shapes before its layers are read (triada.onnx_net).

``set_inputs`` gives the graph inputs their shapes (``input_shapes=``, ``batch=``) and
refuses a dim left symbolic; ``resolve`` folds every shape-computing subgraph (Shape,
Gather, Slice, Concat, Reshape, ... on constants) to initializers with numpy, runs ONNX's
shape inference, and repeats while something folds (a Reshape's folded shape gives a later
Shape its input's dims); ``check_operands`` names, for an operand whose shape stays unknown,
the first node that blocks it. Messages use the command line's words under ``CLI``.
"""

from __future__ import annotations

import contextvars
import functools
import re
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from . import _args
from .errors import ConfigError

# True while the command line runs: messages then name --input-shape and --batch.
CLI: contextvars.ContextVar[bool] = contextvars.ContextVar("triada_onnx_cli", default=False)

# A folded value of more elements (a mask, a big table) is left for the run: shapes only
# need small ones, and memory stays bounded.
FOLD_LIMIT = 1 << 22

Shape = tuple  # of int, or None for an unknown dim


def label(node) -> str:
    """'name' (Op), or (Op -> 'output') for a node without a name."""
    if node.name:
        return f"'{node.name}' ({node.op_type})"
    return f"({node.op_type} -> '{node.output[0]}')" if node.output else f"({node.op_type})"


def _dims(s) -> str:
    return "x".join("?" if d is None else str(d) for d in s)


# -- the graph inputs' shapes ---------------------------------------------------------------

def _shape_words(name: str, dims) -> str:
    """A shape for an input as the caller gives it: --input-shape x=1,3 or input_shapes=."""
    if CLI.get():
        return f"--input-shape {name + '=' if name else ''}{','.join(map(str, dims))}"
    inner = ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "")
    return f"input_shapes={{{name!r}: ({inner})}}"


def batch_words(batch: int) -> str:
    return f"--batch {batch}" if CLI.get() else f"batch={batch}"


def _model_dims(vi) -> list[Any] | None:
    """An input's dims: an int where fixed, the dim_param (or '') where symbolic; None
    when the model gives no shape."""
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]


def graph_inputs(graph) -> list[Any]:
    """The tensor inputs a run gives (an initializer listed as an input is a constant)."""
    constants = {t.name for t in graph.initializer}
    return [vi for vi in graph.input
            if vi.name not in constants and vi.type.HasField("tensor_type")]


def checked_shapes(input_shapes: Any) -> dict[str, tuple[int, ...]]:
    """input_shapes as {name: dims}: a mapping of str to sequences of ints (TypeError
    otherwise), each dim at least 1."""
    if not isinstance(input_shapes, Mapping):
        raise TypeError(f"input_shapes: a dict of input name to shape expected, "
                        f"got {type(input_shapes).__name__}")
    out = {}
    for name, dims in input_shapes.items():
        _args.word("input_shapes key", name)
        dims = _args.sequence_of(_args.count)(f"input_shapes[{name!r}]", dims)
        if not dims or any(d < 1 for d in dims):
            raise ConfigError(f"{_shape_words(name, dims)}: each dim must be at least 1")
        out[name] = dims
    return out


def _named(shapes, inputs, data) -> dict[str, tuple[int, ...]]:
    """The given shapes by input name; '' is the model's one data input."""
    out = {}
    for name, dims in shapes.items():
        if name == "":
            if len(data) != 1:
                have = ", ".join(repr(vi.name) for vi in data) or "none"
                raise ConfigError(f"{_shape_words('', dims)} names no input, and the model "
                                  f"has {len(data)} data inputs ({have}): give NAME=D0,D1,...")
            name = data[0].name
        if name not in inputs:
            have = ", ".join(repr(n) for n in inputs) or "none"
            raise ConfigError(f"{_shape_words(name, dims)}: the model has no input {name!r} "
                              f"(its inputs: {have})")
        if name in out:
            raise ConfigError(f"{_shape_words(name, dims)}: input {name!r} given twice")
        out[name] = dims
    return out


def _check_given(vi, dims, batch) -> None:
    """A given shape has the model's rank and keeps its fixed dims (and batch's dim 0)."""
    model = _model_dims(vi)
    said = f"input '{vi.name}': {_shape_words(vi.name, dims)}"
    if model is not None and len(model) != len(dims):
        raise ConfigError(f"{said} has {len(dims)} dims, the model's input has {len(model)} "
                          f"({_dims(d if isinstance(d, int) else None for d in model)})")
    for i, (d, m) in enumerate(zip(dims, model or [])):
        if isinstance(m, int) and m > 0 and d != m:
            raise ConfigError(f"{said} gives dim {i} = {d}, the model fixes it at {m}")
    if batch is not None and dims[0] != batch:
        raise ConfigError(f"{said} gives dim 0 = {dims[0]}, {batch_words(batch)} another")


def _write_dims(vi, dims) -> None:
    shape = vi.type.tensor_type.shape
    while len(shape.dim) < len(dims):
        shape.dim.add()
    for d, v in zip(shape.dim, dims):
        d.dim_value = v


def _placeholder(i: int, param: str) -> str:
    return param if re.fullmatch(r"[A-Za-z_]\w{0,15}", param or "") else f"D{i}"


def _check_fixed(vi) -> None:
    """Every dim of an input is fixed now; else one line naming the input and the dim."""
    model = _model_dims(vi)
    if model is None:
        raise ConfigError(f"input '{vi.name}': the model gives no shape; give "
                          f"{_shape_words(vi.name, ['D0', 'D1', '...'])}")
    for i, m in enumerate(model):
        if not (isinstance(m, int) and m > 0):
            what = f"('{m}') " if m else ""
            hint = [v if isinstance(v, int) and v > 0 else _placeholder(j, v)
                    for j, v in enumerate(model)]
            raise ConfigError(f"input '{vi.name}': dim {i} {what}is symbolic; give "
                              f"{_shape_words(vi.name, hint)}")


def set_inputs(graph, parameters: set[str], batch: int | None,
               shapes: dict[str, tuple[int, ...]]) -> None:
    """Gives the graph inputs the shapes asked for: shapes by name, batch as dim 0 of each
    other data input (parameters keep theirs); then every input dim must be fixed."""
    inputs = {vi.name: vi for vi in graph_inputs(graph)}
    data = [vi for vi in inputs.values() if vi.name not in parameters]
    given = _named(shapes, inputs, data)
    for name, dims in given.items():
        _check_given(inputs[name], dims, batch if name not in parameters else None)
        _write_dims(inputs[name], dims)
    if batch is not None:
        for vi in data:
            model = vi.type.tensor_type.shape.dim
            if vi.name not in given and len(model) > 0:
                model[0].dim_value = batch
    for vi in inputs.values():
        _check_fixed(vi)


# -- folding shape computations with numpy ----------------------------------------------------

def _np_dtype(onnx, elem_type: int):
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def _attrs(onnx, node) -> dict[str, Any]:
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = tensor_value(onnx, v, f"node {label(node)}: its {a.name}")
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def tensor_value(onnx, t, what: str) -> np.ndarray:
    """A TensorProto's values; one whose data do not fit its dims or whose element type is
    unknown (a corrupt model) is a ConfigError naming it."""
    try:
        return onnx.numpy_helper.to_array(t)
    except Exception as e:  # noqa: BLE001 (ValueError, KeyError, TypeError from onnx)
        why = (str(e).splitlines() or [""])[0].strip("'")
        raise ConfigError(f"{what}: its values do not fit its dims {list(t.dims)} and "
                          f"element type {t.data_type} ({type(e).__name__}: {why})") from None


def _axes(a, xs, opset, since) -> list[int] | None:
    """Axes of Squeeze / Unsqueeze / Reduce*: an attribute before opset `since`, then an
    optional input."""
    if opset < since:
        return list(a["axes"]) if "axes" in a else None
    return None if len(xs) < 2 or xs[1] is None else [int(v) for v in xs[1].reshape(-1)]


def _unsqueeze(onnx, a, xs, opset):
    x, axes = xs[0], _axes(a, xs, opset, 13) or []
    rank = x.ndim + len(axes)
    where = {v % rank for v in axes}
    it = iter(x.shape)
    return [x.reshape([1 if i in where else next(it) for i in range(rank)])]


def _squeeze(onnx, a, xs, opset):
    axes = _axes(a, xs, opset, 13)
    return [np.squeeze(xs[0], axis=None if axes is None else tuple(axes))]


def _reshape(onnx, a, xs, opset):
    x = xs[0]
    target = [int(v) for v in (xs[1].reshape(-1) if len(xs) > 1 and xs[1] is not None
                               else a["shape"])]
    if not a.get("allowzero", 0):  # 0 copies the input's dim
        target = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    return [x.reshape(target)]


def _slice(onnx, a, xs, opset):
    x = xs[0]
    if opset < 10:  # starts, ends, axes were attributes
        starts, ends = list(a["starts"]), list(a["ends"])
        axes, steps = list(a.get("axes", range(len(starts)))), [1] * len(starts)
    else:
        def arg(i, default):
            return default if len(xs) <= i or xs[i] is None else [int(v) for v in xs[i]]
        starts, ends = arg(1, None), arg(2, None)
        axes = arg(3, list(range(len(starts))))
        steps = arg(4, [1] * len(starts))
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        index[ax] = slice(int(s), int(e), int(st))  # numpy clamps as ONNX does
    return [x[tuple(index)]]


def _gather(onnx, a, xs, opset):
    axis = a.get("axis", 0) % xs[0].ndim
    idx = xs[1].astype(np.int64)
    return [np.take(xs[0], np.where(idx < 0, idx + xs[0].shape[axis], idx), axis=axis)]


def _div(x, y):
    if np.issubdtype(x.dtype, np.integer):  # ONNX truncates toward zero
        if np.any(y == 0):
            raise ZeroDivisionError("integer division by zero")
        q = np.abs(x) // np.abs(y)
        return (np.sign(x) * np.sign(y) * q).astype(x.dtype)
    return (x / y).astype(x.dtype)


def _mod(onnx, a, xs, opset):
    return [(np.fmod if a.get("fmod", 0) else np.mod)(xs[0], xs[1])]


def _range(onnx, a, xs, opset):
    start, limit, delta = (v.reshape(()).item() for v in xs[:3])
    return [np.arange(start, limit, delta, dtype=xs[0].dtype)]


def _constant_of_shape(onnx, a, xs, opset):
    v = np.asarray(a.get("value", np.zeros(1, np.float32)))
    return [np.full([int(d) for d in xs[0].reshape(-1)], v.reshape(-1)[0], dtype=v.dtype)]


def _expand(onnx, a, xs, opset):
    shape = np.broadcast_shapes(xs[0].shape, tuple(int(d) for d in xs[1].reshape(-1)))
    return [np.array(np.broadcast_to(xs[0], shape))]


def _reduce_prod(onnx, a, xs, opset):
    axes = _axes(a, xs, opset, 18)
    return [np.prod(xs[0], axis=None if axes is None else tuple(axes),
                    keepdims=bool(a.get("keepdims", 1))).astype(xs[0].dtype)]


def _typed(f: Callable[..., Any]) -> Callable[..., list[np.ndarray]]:
    """An elementwise numpy function as an op: the first input's type kept."""
    def op(onnx, a, xs, opset):
        return [np.asarray(f(*xs)).astype(xs[0].dtype)]
    return op


def _logical(f: Callable[..., Any]) -> Callable[..., list[np.ndarray]]:
    def op(onnx, a, xs, opset):
        return [np.asarray(f(*xs), dtype=bool)]
    return op


_EVAL: dict[str, Callable[..., list[np.ndarray]]] = {
    "Identity": lambda onnx, a, xs, opset: [xs[0]],
    "Cast": lambda onnx, a, xs, opset: [xs[0].astype(_np_dtype(onnx, a["to"]))],
    "Gather": _gather, "Slice": _slice, "Reshape": _reshape, "Expand": _expand,
    "Concat": lambda onnx, a, xs, opset: [np.concatenate([x for x in xs if x is not None],
                                                         axis=a["axis"])],
    "Unsqueeze": _unsqueeze, "Squeeze": _squeeze, "Range": _range,
    "ConstantOfShape": _constant_of_shape, "ReduceProd": _reduce_prod, "Mod": _mod,
    "Transpose": lambda onnx, a, xs, opset: [np.transpose(xs[0], a.get("perm"))],
    "Add": _typed(np.add), "Sub": _typed(np.subtract), "Mul": _typed(np.multiply),
    "Div": _typed(_div), "Neg": _typed(np.negative), "Abs": _typed(np.abs),
    "Floor": _typed(np.floor), "Ceil": _typed(np.ceil), "Sqrt": _typed(np.sqrt),
    "Min": _typed(lambda *xs: functools.reduce(np.minimum, xs)),
    "Max": _typed(lambda *xs: functools.reduce(np.maximum, xs)),
    "Equal": _logical(np.equal), "Less": _logical(np.less), "Greater": _logical(np.greater),
    "Not": _logical(np.logical_not), "And": _logical(np.logical_and),
    "Or": _logical(np.logical_or),
    "Where": lambda onnx, a, xs, opset: [np.where(xs[0], xs[1], xs[2])],
}
# Ops whose output is one of their input's shape, folded once that shape is known.
_SHAPE_OPS = {"Shape", "Size"}
FOLDED_OPS = sorted(set(_EVAL) | _SHAPE_OPS | {"Constant"})


def opset(model) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return int(o.version)
    return 1


def _default_domain(node) -> bool:
    return node.domain in ("", "ai.onnx")


def _subgraphs(node):
    for attr in node.attribute:
        yield from ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)


def _used_names(graph) -> set[str]:
    """The tensors the nodes of a graph and its subgraphs read."""
    used = set()
    for node in graph.node:
        used.update(node.input)
        for g in _subgraphs(node):
            used |= _used_names(g)
    return used


def _constant_node(onnx, node) -> np.ndarray | None:
    a = _attrs(onnx, node)
    for key, kind in (("value", None), ("value_float", np.float32), ("value_floats", np.float32),
                      ("value_int", np.int64), ("value_ints", np.int64)):
        if key in a:
            return np.asarray(a[key], dtype=kind)
    return None  # a sparse or string constant stays a node


def _shape_of(node, x, a) -> np.ndarray | None:
    """Shape's (start, end of opset 15) or Size's value from its input's dims, when the
    dims it takes are known."""
    if x is None:
        return None
    if node.op_type == "Size":
        return None if None in x else np.asarray(int(np.prod(x, dtype=np.int64)), np.int64)
    dims = list(x)[a.get("start", 0):a.get("end", len(x))]
    return None if None in dims else np.asarray(dims, dtype=np.int64)


def topological(nodes) -> list[Any]:
    """The nodes, each after those producing its inputs (graph order where it is one);
    iterative, for deep graphs."""
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    done: set[int] = set()
    order: list[Any] = []
    for root in range(len(nodes)):
        stack, entered = [root], set()
        while stack:
            i = stack[-1]
            if i in done:
                stack.pop()
                continue
            if i not in entered:  # first its producers (a cycle is cut where it closes)
                entered.add(i)
                stack.extend(producer[x] for x in reversed(nodes[i].input)
                             if x in producer and producer[x] not in entered)
                continue
            stack.pop()
            done.add(i)
            order.append(nodes[i])
    return order


class Shapes:
    """A model's tensors after shape inference: dims (None unknown) and constant values."""

    def __init__(self, onnx, model):
        g = model.graph
        self.constants = {t.name: tensor_value(onnx, t, f"initializer '{t.name}'")
                          for t in g.initializer}
        self.types = {t.name: t.data_type for t in g.initializer}
        self.dims: dict[str, Shape | None] = {}
        for n, v in self.constants.items():
            self.dims[n] = tuple(v.shape)
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            t = vi.type.tensor_type
            if vi.name in self.dims or not vi.type.HasField("tensor_type"):
                continue
            self.dims[vi.name] = None if not t.HasField("shape") else tuple(
                d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        self.producer = {o: n for n in g.node for o in n.output if o}

    def known(self, name: str) -> bool:
        s = self.dims.get(name)
        return s is not None and None not in s


def infer(onnx, model, given=()):
    """ONNX's shape inference (with data propagation where this onnx has it). Earlier
    shapes are dropped so that a folded value's shape replaces them, but for GIVEN: the
    model's own shapes of custom ops' outputs, which inference cannot derive."""
    del model.graph.value_info[:]
    model.graph.value_info.extend(given)
    try:
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001 (no data_prop before onnx 1.10, and it fails more)
        pass
    try:
        return onnx.shape_inference.infer_shapes(model)
    except Exception as e:  # noqa: BLE001 (onnx raises several kinds)
        raise ConfigError(f"ONNX shape inference failed: {str(e).splitlines()[0]}") from None


# Element types that numpy holds as ONNX does (bfloat16, strings and float8 are not
# folded: their values would come back as another type).
_PLAIN_TYPES = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13}


def _plain(node, shapes) -> bool:
    """The node's tensor attributes, its Cast's target and its constant inputs are of
    plain types."""
    types = [a.t.data_type for a in node.attribute if a.HasField("t")]
    types += [a.i for a in node.attribute if node.op_type == "Cast" and a.name == "to"]
    types += [shapes.types[x] for x in node.input if x in shapes.types]
    return all(t in _PLAIN_TYPES for t in types)


def _planned_size(op: str, xs) -> float:
    """The elements an op that makes a value from a shape would make, known before it is
    made (0 for other ops, or where the op itself will say what is wrong)."""
    try:
        if op == "ConstantOfShape":
            return float(np.prod(xs[0], dtype=np.float64))
        if op == "Expand":
            dims = tuple(int(d) for d in xs[1].reshape(-1))
            return float(np.prod(np.broadcast_shapes(xs[0].shape, dims), dtype=np.float64))
        if op == "Range":
            start, limit, delta = (float(v.reshape(())) for v in xs[:3])
            return max((limit - start) / delta, 0.0)
    except (ValueError, TypeError, ZeroDivisionError):
        pass
    return 0.0


def _fold_node(onnx, node, shapes, version) -> list[np.ndarray] | None:
    """The node's outputs as values, or None where it does not fold."""
    if not _default_domain(node) or len(node.output) != 1 or not _plain(node, shapes):
        return None
    if node.op_type == "Constant":
        v = _constant_node(onnx, node)
        return None if v is None else [v]
    if node.op_type in _SHAPE_OPS:
        v = _shape_of(node, shapes.dims.get(node.input[0]), _attrs(onnx, node))
        return None if v is None else [v]
    if node.op_type not in _EVAL:
        return None
    if any(x and x not in shapes.constants for x in node.input):
        return None
    xs = [shapes.constants[x] if x else None for x in node.input]
    if max([np.size(x) for x in xs if x is not None] + [_planned_size(node.op_type, xs)]) > \
            FOLD_LIMIT:
        return None  # a big weight or mask: not a shape, and memory stays bounded
    try:
        out = _EVAL[node.op_type](onnx, _attrs(onnx, node), xs, version)
    except Exception as e:  # noqa: BLE001 (numpy's errors: a model that cannot run)
        raise ConfigError(f"node {label(node)}: cannot compute it from its constant inputs "
                          f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                          ) from None
    return None if any(np.size(v) > FOLD_LIMIT for v in out) else out


def _fold_pass(onnx, model, shapes) -> bool:
    """Folds, in topological order, every node whose value is known; True if any."""
    version = opset(model)
    folded: dict[str, np.ndarray] = {}
    keep = []
    for node in topological(list(model.graph.node)):
        out = _fold_node(onnx, node, shapes, version)
        if out is None:
            keep.append(node)
            continue
        for name, v in zip(node.output, out):
            folded[name] = shapes.constants[name] = np.asarray(v)
            shapes.dims[name] = tuple(np.shape(v))
    if not folded:
        return False
    del model.graph.node[:]
    model.graph.node.extend(keep)
    used = _used_names(model.graph) | {o.name for o in model.graph.output}
    model.graph.initializer.extend(onnx.numpy_helper.from_array(v, name)
                                   for name, v in folded.items() if name in used)
    return True


def resolve(onnx, model):
    """The model with its shape computations folded and its shapes inferred, repeated
    while something folds; its nodes in topological order (shape inference goes in graph
    order; a valid model's order is one already)."""
    nodes = topological(list(model.graph.node))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    custom = {o for n in nodes if not _default_domain(n) for o in n.output}
    given = []
    for vi in model.graph.value_info:
        if vi.name in custom:
            given.append(onnx.ValueInfoProto())
            given[-1].CopyFrom(vi)
    for _ in range(len(model.graph.node) + 1):
        model = infer(onnx, model, given)
        if not _fold_pass(onnx, model, Shapes(onnx, model)):
            return model
    return infer(onnx, model, given)


# -- an operand whose shape stays unknown -----------------------------------------------------

# Inputs whose values (not only shapes) give an op's output shape: from this index on.
_VALUE_INPUTS = {"Reshape": 1, "Expand": 1, "Tile": 1, "Slice": 1, "Resize": 1,
                 "Upsample": 1, "Pad": 1, "Unsqueeze": 1, "Squeeze": 1, "TopK": 1,
                 "OneHot": 1, "Split": 1, "ReduceSum": 1, "ReduceMean": 1, "ReduceMax": 1,
                 "ReduceMin": 1, "ReduceProd": 1, "ConstantOfShape": 0, "Range": 0}


def _shape_step(s: Shapes, name: str, user):
    """Walking back from a tensor of unknown shape: the first input of unknown shape, a
    value its producer needs that is not a constant, or the producer as the blocker."""
    node = s.producer.get(name)
    if node is None:
        return "done", user, f"'{name}' has no full shape"
    for x in node.input:
        if x and not s.known(x):
            return "shape", x, node
    if not _default_domain(node):
        return "done", node, f"an op of domain '{node.domain}', which shape inference does not know"
    start = _VALUE_INPUTS.get(node.op_type)
    for x in node.input[start:] if start is not None else ():
        if x and x not in s.constants:
            return "value", x, node
    return "done", node, "ONNX's shape inference gives no shape for its output"


def _value_step(s: Shapes, name: str, user):
    """Walking back from a value that is not a constant: the first node that does not fold."""
    node = s.producer.get(name)
    if node is None:
        return "done", user, f"its input '{name}' is a graph input, known at run time only"
    if node.op_type in _SHAPE_OPS and _default_domain(node) and not s.known(node.input[0]):
        return "shape", node.input[0], node
    if node.op_type not in _EVAL or not _default_domain(node):
        return "done", node, f"{node.op_type} is not folded to a constant"
    for x in node.input:
        if x and x not in s.constants:
            return "value", x, node
    return "done", node, f"its value is larger than the {FOLD_LIMIT} elements folded"


def blocker(s: Shapes, name: str):
    """(node, why) of the first node that leaves the shape of tensor NAME unknown."""
    step = ("shape", name, None)
    for _ in range(len(s.producer) + 1):  # each step goes back one node; the graph is acyclic
        mode, name, user = step
        step = (_shape_step if mode == "shape" else _value_step)(s, name, user)
        if step[0] == "done":
            return step[1], step[2]
    return None, "the graph has a cycle"


# The operands each layer op needs the shape of.
OPERANDS = {"Conv": ("input", "weights"), "ConvTranspose": ("input", "weights"),
            "Gemm": ("A", "B"), "MatMul": ("A", "B")}


def check_operands(shapes: Shapes, nodes) -> None:
    """Every layer node's operands have known shapes; else one line naming the first node
    that blocks one, and why."""
    for node in nodes:
        for what, name in zip(OPERANDS.get(node.op_type, ()), node.input):
            if shapes.known(name):
                continue
            stop, why = blocker(shapes, name)
            where = f"node {label(stop)} blocks it" if stop is not None else "unknown"
            raise ConfigError(f"node {label(node)}: the shape of its {what} '{name}' is "
                              f"unknown: {where} ({why})")
