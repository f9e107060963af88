#!/usr/bin/env python3
"""Slices of a triada-transform output and of its --activity file, to PNG (doc/transform.md "Looking
at a run"). Reads both with h5py; the XDMF sidecars are for ParaView, not needed here.

Usage: plot_look.py OUTPUT.h5[:/DSET] ACTIVITY.h5 [-o DIR] [--slice I1]

Writes, into DIR (default: the output's directory):
  look_output.png    the output's three middle slices (|y| for a complex output)
  look_activity.png  the plane i1 = I1 (default the middle) of every stage's MACs, waits and
                     Y-bus sends, and of the run's total MACs: where ESOP skipped work
"""
import argparse
import os
import sys

from plot_common import pyplot

PROG = "plot_look.py"
plt = pyplot(PROG)


def fail(msg):
    sys.exit(f"{PROG}: error: {msg}")


def read(spec):
    """FILE[:/DSET] -> (numpy array, its name); default dataset: the file's only rank-3 one."""
    import h5py
    fname, _, dset = spec.partition(":/")
    try:
        with h5py.File(fname, "r") as f:
            if not dset:
                found = []
                f.visititems(lambda n, o: found.append(n) if isinstance(o, h5py.Dataset) and o.ndim == 3 else None)
                if len(found) != 1:
                    fail(f"{fname}: name the dataset (rank-3 datasets: {', '.join(found) or 'none'})")
                dset = found[0]
            return f[dset][...], dset
    except (OSError, KeyError) as e:
        fail(f"{spec}: {e}")


def plot_output(spec, out):
    y, name = read(spec)
    if y.dtype.kind == "c":
        y, name = abs(y), f"|{name}|"
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    mids = [n // 2 for n in y.shape]
    cuts = [(y[mids[0], :, :], "i1", ("k3", "k2")), (y[:, mids[1], :], "i2", ("k3", "k1")),
            (y[:, :, mids[2]], "i3", ("k2", "k1"))]
    for ax, (plane, fixed, (xl, yl)), m in zip(axes, cuts, mids):
        im = ax.imshow(plane, origin="lower", cmap="RdBu_r" if plane.min() < 0 else "viridis")
        ax.set_title(f"{name}, {fixed.replace('i', 'k')} = {m}")
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle(f"{spec}: output {y.shape[0]}x{y.shape[1]}x{y.shape[2]}")
    fig.tight_layout()
    path = os.path.join(out, "look_output.png")
    fig.savefig(path, dpi=90)
    return path


def plot_activity(act_file, out, i1):
    import h5py
    kinds = [("macs", "MACs", "viridis"), ("waits", "waits", "magma"),
             ("y_bus_sends", "Y-bus sends", "Greys")]
    try:
        f = h5py.File(act_file, "r")
        stages = sorted(k for k in f if k.startswith("stage"))
        total = f["total/macs"][...]
    except (OSError, KeyError) as e:
        fail(f"{act_file}: not a triada-transform --activity file ({e})")
    i1 = total.shape[0] // 2 if i1 is None else i1
    if not 0 <= i1 < total.shape[0]:
        fail(f"--slice {i1}: the file has {total.shape[0]} cells along axis 1")
    fig, axes = plt.subplots(len(kinds), len(stages) + 1, figsize=(3.3 * (len(stages) + 1), 8.5))
    for col, st in enumerate(stages):
        g = f[st]
        for row, (key, label, cmap) in enumerate(kinds):
            data = g[key][i1, :, :]
            ax = axes[row][col]
            im = ax.imshow(data, origin="lower", cmap=cmap, vmin=0)
            ax.set_title(f"{st}, along axis {g.attrs['axis']} ({g.attrs['y_bus']}): {label}\n"
                         f"sum {int(g[key][...].sum())}", fontsize=9)
            fig.colorbar(im, ax=ax, shrink=0.8)
    for row, (key, label, cmap) in enumerate(kinds):
        ax = axes[row][-1]
        im = ax.imshow(f["total/" + key][i1, :, :], origin="lower", cmap=cmap, vmin=0)
        ax.set_title(f"total: {label}\nsum {int(f['total/' + key][...].sum())}", fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
    for ax in axes.flat:
        ax.set_xlabel("i3")
        ax.set_ylabel("i2")
    fig.suptitle(f"{act_file}: per-cell events on the plane i1 = {i1} "
                 f"(ESOP {f.attrs.get('esop', '?')}, {f.attrs.get('transform', '?')})")
    fig.tight_layout()
    path = os.path.join(out, "look_activity.png")
    fig.savefig(path, dpi=80)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", help="triada-transform's output FILE[:/DSET]")
    ap.add_argument("activity", help="its --activity FILE.h5")
    ap.add_argument("-o", "--out", default=None, help="output directory")
    ap.add_argument("--slice", type=int, default=None, help="plane i1 of the activity (default: middle)")
    a = ap.parse_args()
    out = a.out or os.path.dirname(os.path.abspath(a.output.partition(":/")[0]))
    os.makedirs(out, exist_ok=True)
    for p in (plot_output(a.output, out), plot_activity(a.activity, out, a.slice)):
        print(p)


if __name__ == "__main__":
    main()
