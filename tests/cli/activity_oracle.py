#!/usr/bin/env python3
"""Checks an --activity file, and the XDMF sidecars of a run, against independent oracles.

Usage:
  activity_oracle.py sums ACT.h5 REPORT.json
      every counter of the activity summed over cells equals the report's (per stage, per
      bus, in total), and /total is the sum of the stages;
  activity_oracle.py cells ACT.h5 X.h5 COEFFS.h5 ORDER ESOP
      every cell's events equal those of the cell rule (doc/design.md §3.2-3.4) replayed here
      step by step on the gemt run of X with /C1 /C2 /C3 (small integers, so every stage's
      values, and which of them are zero, are exact in numpy as in the engine);
  activity_oracle.py xdmf SIDECAR.xmf
      the sidecar parses, its grid has one cell per element, and each attribute's DataItem
      names a dataset of that shape and type (HDF), or the raw bytes of a complex one
      (Binary at Seek, read here with numpy, equal to h5py's values).
  activity_oracle.py run NAME ORDER ESOP
      all of them for the run NAME of tests/cli/test_xdmf.sh (NAME.json, NAME.xmf,
      NAME_act.h5, NAME_act.xmf; X in x.h5, the matrices in c.h5): one interpreter start.
Exit 1 with the first difference."""
import json
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

COUNTERS = ["macs", "y_bus_sends", "y_bus_receives", "waits"]
Y_BUS = {3: "H", 1: "L", 2: "F"}  # a stage's Y bus: the line along its axis


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_sums(act_file, report_file):
    r = json.load(open(report_file))
    c = r["counters"]
    with h5py.File(act_file, "r") as f:
        order = [int(a) for a in r["problem"]["stage_order"]]
        for name in COUNTERS:
            total = f["total/" + name][...].astype(np.uint64)
            stages = [f["stage%d/%s" % (s + 1, name)][...].astype(np.uint64) for s in range(3)]
            if not np.array_equal(total, sum(stages)):
                fail("/total/%s is not the sum of the stages" % name)
            want = c[name] if name == "macs" else c[name]["total"]
            if int(total.sum()) != want:
                fail("%s: cells sum to %d, the report says %d" % (name, total.sum(), want))
            for s, axis in enumerate(order):
                got = int(stages[s].sum())
                if got != c["per_stage"][s][name]:
                    fail("stage %d %s: %d, report %d" % (s + 1, name, got, c["per_stage"][s][name]))
                if name != "macs" and got != c[name][Y_BUS[axis]]:
                    fail("stage %d %s: %d, report's bus %s %d" % (s + 1, name, got, Y_BUS[axis],
                                                                  c[name][Y_BUS[axis]]))
                if int(f["stage%d" % (s + 1)].attrs["axis"]) != axis:
                    fail("stage %d: axis attribute" % (s + 1))
    print("sums ok: macs %d" % c["macs"])


def replay_stage(V, C, a, esop):
    """The cell rule, step by step, on stage along axis a (0-based): per cell counts over the
    stage's cells (extent max(N, K) along a), V's nonzeros and C's."""
    N, K = C.shape
    W = max(N, K)
    v = np.moveaxis(V, a, 0) != 0  # (N, lines...)
    lines = v.shape[1:]
    out = {n: np.zeros((W,) + lines, np.int64) for n in COUNTERS}
    cnz = C != 0
    for t in range(N):
        if esop and not cnz[t].any():
            continue  # an all-zero row is not streamed
        y = v[t] if esop else np.ones(lines, bool)  # the pivot drives its line
        out["y_bus_sends"][t] += y
        for k in range(min(W, K)):  # cells with a W register
            tag = k == t
            c_nonzero = cnz[t, k]
            if esop and not (c_nonzero or tag):
                continue  # no X element reached plane k
            # with y: W += y c (ESOP skips a zero c); without: a wait, or nothing (the tag)
            mac = y & (c_nonzero or not esop)
            out["macs"][k] += mac
            if not tag:
                out["y_bus_receives"][k] += mac
                out["waits"][k] += ~y
    return {n: np.moveaxis(x, 0, a) for n, x in out.items()}


def embed(x, shape):
    z = np.zeros(shape, np.int64)
    z[tuple(slice(0, e) for e in x.shape)] = x
    return z


def check_cells(act_file, x_file, coeff_file, order, esop):
    with h5py.File(x_file, "r") as f:
        V = f[[k for k in f.keys()][0]][...].astype(np.float64)
    with h5py.File(coeff_file, "r") as f:
        Cs = {a: f["C%d" % a][...].astype(np.float64) for a in (1, 2, 3)}
    with h5py.File(act_file, "r") as f:
        cells = tuple(f["total/macs"].shape)
        got = {(s, n): f["stage%d/%s" % (s + 1, n)][...] for s in range(3) for n in COUNTERS}
    for s, axis in enumerate(int(a) for a in order):
        a = axis - 1
        want = replay_stage(V, Cs[axis], a, esop)
        for n in COUNTERS:
            if not np.array_equal(embed(want[n], cells), got[(s, n)]):
                bad = np.argwhere(embed(want[n], cells) != got[(s, n)])[0]
                fail("stage %d %s at cell %s: file %d, cell rule %d" % (
                    s + 1, n, tuple(bad), got[(s, n)][tuple(bad)], embed(want[n], cells)[tuple(bad)]))
        V = np.moveaxis(np.tensordot(V, Cs[axis], axes=([a], [0])), -1, a)  # exact: integers
    print("cells ok: %s" % (cells,))


def check_xdmf(sidecar):
    root = ET.parse(sidecar).getroot()
    grid = root.find("Domain/Grid")
    topo = grid.find("Topology")
    if topo.get("TopologyType") != "3DCoRectMesh":
        fail("topology " + topo.get("TopologyType"))
    points = [int(d) for d in topo.get("Dimensions").split()]
    cells = tuple(p - 1 for p in points)
    here = os.path.dirname(os.path.abspath(sidecar))
    attrs = grid.findall("Attribute")
    if not attrs:
        fail("no attribute")
    for at in attrs:
        if at.get("Center") != "Cell":
            fail(at.get("Name") + ": not cell-centred")
        item = at.find("DataItem")
        dims = tuple(int(d) for d in item.get("Dimensions").split())
        nt, prec = item.get("NumberType"), int(item.get("Precision"))
        if item.get("Format") == "HDF":
            fname, dset = item.text.strip().split(":", 1)
            with h5py.File(os.path.join(here, fname), "r") as f:
                d = f[dset]
                if d.shape != cells or dims != cells:
                    fail("%s: %s, dataset %s, grid %s" % (at.get("Name"), dims, d.shape, cells))
                kind = {"f": "Float", "u": "UInt", "i": "Int"}[d.dtype.kind]
                if (kind, d.dtype.itemsize) != (nt, prec):
                    fail("%s: %s %d for a %s dataset" % (at.get("Name"), nt, prec, d.dtype))
        elif item.get("Format") == "Binary":
            if at.get("AttributeType") != "Matrix" or dims != cells + (2,):
                fail("%s: a complex array is a Matrix of %s, got %s" % (at.get("Name"), cells + (2,), dims))
            if (nt, prec, item.get("Endian")) != ("Float", 8, "Little"):
                fail("%s: %s %d %s" % (at.get("Name"), nt, prec, item.get("Endian")))
            path = os.path.join(here, item.text.strip())
            raw = np.fromfile(path, dtype="<f8", count=int(np.prod(dims)),
                              offset=int(item.get("Seek"))).reshape(dims)
            with h5py.File(path, "r") as f:
                ds = [f[k] for k in f if isinstance(f[k], h5py.Dataset) and f[k].dtype.kind == "c"]
                y = ds[0][...]
            if y.shape != cells or not (np.array_equal(raw[..., 0], y.real) and
                                        np.array_equal(raw[..., 1], y.imag)):
                fail("%s: the bytes at Seek are not the dataset's {r, i}" % at.get("Name"))
        else:
            fail("format " + str(item.get("Format")))
    print("xdmf ok: %s, %d arrays over %s cells" % (sidecar, len(attrs), cells))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "sums":
        check_sums(sys.argv[2], sys.argv[3])
    elif what == "cells":
        check_cells(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6] == "on")
    elif what == "xdmf":
        check_xdmf(sys.argv[2])
    elif what == "run":
        name = sys.argv[2]
        check_sums(name + "_act.h5", name + ".json")
        check_cells(name + "_act.h5", "x.h5", "c.h5", sys.argv[3], sys.argv[4] == "on")
        check_xdmf(name + ".xmf")
        check_xdmf(name + "_act.xmf")
    else:
        fail("unknown check " + what)
