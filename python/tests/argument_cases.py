"""Every entry point's keywords with values of a wrong type (TypeError) and the wrapper's own
value checks (ConfigError, InputError), from one valid call of each: shared by
test_arguments.py (one process) and collective_job.py (one rank wrong under mpirun)."""

import numpy as np

import triada

X = (np.arange(24) % 7 - 3.0).reshape(4, 3, 2)
C = [np.eye(4), np.ones((3, 2)), np.eye(2)]
LAYER = (1, 2, 5, 5, 2, 3, 3, 1, 0)
RAGGED = [[1.0, 2.0], [3.0]]

# Valid calls, all arguments as keywords: (function, keywords).
BASE = {
    "transform": (triada.transform, dict(x=X, transform="dct")),
    "gemt": (triada.gemt, dict(x=X, coeffs=C)),
    "layout": (triada.layout, dict(shape=(4, 3, 2))),
    "tcu": (triada.tcu, dict(algo="matmul", size=8, m=16)),
    "conv": (triada.conv, dict(layer_or_network=LAYER, mxu=4)),
}

# Wrong types: entry -> [(keyword, value)], each raising TypeError whose message starts
# with the keyword (or names it, for an unknown one).
_COMMON = [("comm", 5), ("comm", "world"), ("unknown_keyword", 1)]
WRONG_TYPES = {
    "transform": _COMMON + [("verbose", 1),
        ("x", "abc"), ("x", RAGGED), ("x", {"a": 1}), ("transform", 3),
        ("transform", ("dct", 3)), ("inverse", "yes"), ("inverse", 1), ("inverse", None),
        ("norm", 1), ("norm", None), ("stage_order", 312.0), ("stage_order", [3.0, 1, 2]),
        ("esop", "off"), ("esop", "on"), ("esop", 0), ("cell_mode", 16), ("mesh", 3),
        ("initial", "y0"), ("initial", RAGGED), ("executor", None), ("transport", 1),
        ("coeffs", 5), ("coeffs", C[:2]), ("coeffs", ["C1", None, None]),
        ("config", [("mesh.cells", 8)]), ("config", {1: "x"}),
        ("config", {"energy.mac_pj": None}), ("config", {"mesh.cells": [8, None, 8]}),
        ("check", "no"), ("shuffle_seed", 1.5), ("shuffle_seed", True), ("report", 1),
        ("trace", 1.0), ("force", 1), ("distributed", 1), ("shape", (4, 3)),
        ("shape", (4.0, 3, 2)), ("gather", 0)],
    "gemt": _COMMON + [("coeffs", 3), ("coeffs", [np.eye(4), RAGGED, np.eye(2)]),
                       ("esop", "off"), ("inverse", "true")],
    "layout": _COMMON + [
        ("shape", (4, 3)), ("shape", "432"), ("shape", (4, 3, 2.5)), ("out_shape", 5),
        ("mesh", 1), ("config", [])],
    "tcu": _COMMON + [
        ("algo", 1), ("size", 8.0), ("size", True), ("m", 16.0), ("latency", None),
        ("latency", 1.5), ("A", "A"), ("B", RAGGED), ("inputs", [1]),
        ("inputs", {1: np.eye(2)}), ("inputs", {"A": RAGGED}), ("input", 3), ("seed", 1.5),
        ("weak", "yes"), ("sweep", 1), ("sizes", 8), ("sizes", (8.0,)), ("ms", "4"),
        ("cell_mode", 1), ("executor", 1), ("mesh", 1), ("product", 1), ("k", 2.0),
        ("kernel", "1,2"), ("kernel", (1, "a")), ("points", 1.5), ("progress", 1),
        ("report", 1), ("force", 1), ("verbose", "yes")],
    "conv": _COMMON + [
        ("layer_or_network", 5), ("layer_or_network", (1.0, 2, 5, 5, 2, 3, 3, 1, 0)),
        ("method", 1), ("mxu", 4.0), ("mxu", True), ("input", "x"), ("weights", RAGGED),
        ("batch", 1.5), ("latency", None), ("cell_mode", None), ("executor", 1),
        ("mesh", 1), ("seed", 1.5), ("verify", 1), ("verify_budget", "1e9"),
        ("verify_budget", True), ("max_layers", 1.0), ("report", 1), ("csv", 1),
        ("force", 1), ("verbose", 1)],
}

# The wrapper's own value checks: (entry, keywords changed, class, message start).
WRONG_VALUES = [
    ("transform", dict(distributed=True), triada.ConfigError, "distributed=True needs shape"),
    ("conv", dict(input=np.zeros((2, 5, 5))), triada.InputError, "--input input: a rank-4"),
    ("conv", dict(weights=np.ones((2, 2, 3, 3), complex)), triada.InputError,
     "--weights weights: a rank-4 real array"),
    ("tcu", dict(A=np.array([[None, 1], [2, 3]]), B=np.eye(2)), triada.InputError,
     "A: unsupported element type (object)"),
    ("tcu", dict(A=np.eye(2), B=np.eye(2), input="ab.h5"), triada.ConfigError,
     "input: give an input file or arrays"),
]


def calls():
    """Every case: (name, function, keywords, expected class, expected message start)."""
    for entry, cases in WRONG_TYPES.items():
        fn, base = BASE[entry]
        for key, value in cases:
            yield f"{entry}-{key}={value!r:.30}", fn, dict(base, **{key: value}), TypeError, \
                key if key != "unknown_keyword" else None
    for entry, changed, cls, start in WRONG_VALUES:
        fn, base = BASE[entry]
        yield f"{entry}-{sorted(changed)}", fn, dict(base, **changed), cls, start
