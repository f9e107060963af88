#!/usr/bin/env python3
"""Plot the input-sparsity sweep (triada-explore examples/explore/sparsity.toml, which runs
this script on its output folder) to PNG.

The sweep's transform workloads generate their inputs (triada-gen): "random" over
generate.sparsity, "lines" over generate.zero-lines, "planes" over generate.zero-planes,
each with ESOP on and off and repeated (the rep axis; the best simulation time is kept,
and the counters must agree between repetitions), and "representative", one input run
with --trace. Writes, into the output directory:
  sweep_macs.png    MACs (ESOP on, ESOP off, dense closed form) and simulation time vs the
                    input's zero fraction, per kind of sparsity (random, zero lines, zero planes)
  sweep_bus.png     x-bus sends, y-bus sends, y-bus receives and waits vs zero fraction
  sweep_energy.png  energy of the ESOP run vs the dense model, and the fraction saved
  activity.png      per-step MACs (= cells that updated) and y-bus sends of the representative
                    run, coloured by stage, with the ESOP-off run for reference
"""
import csv
import os
import sys

from plot_common import load_sweep, pyplot

plt = pyplot("plot_sweep.py")

KINDS = [("random", "random zeros", "C0", "o"), ("lines", "zero (i1,i2) lines", "C1", "s"),
         ("planes", "zero planes", "C2", "^")]


def series(recs, kind, esop, key):
    rs = sorted((r for r in recs if r["kind"] == kind and r["esop"] == esop),
                key=lambda r: r["input_zero_fraction"])
    return [r["input_zero_fraction"] for r in rs], [key(r) for r in rs]


def xaxis(ax):
    ax.set_xlabel("fraction of input elements that are zero")
    ax.set_xlim(-0.03, 1.03)
    ax.grid(True, alpha=0.3)


def records_of(rows):
    """One record per (kind, input, ESOP) of the ok rows: the plots' figures, from the
    reports; the simulation time the best of the repetitions."""
    groups = {}
    for r in rows:
        if r["status"] == "ok" and r["workload"] in {k[0] for k in KINDS}:
            g = r["generate"]
            key = (r["workload"], g["sparsity"], g["zero_lines"], g["zero_planes"], r["esop"])
            groups.setdefault(key, []).append(r)
    order = {k[0]: i for i, k in enumerate(KINDS)}
    records = [record_of(reps) for _, reps in sorted(groups.items(), key=lambda kv: (
        order[kv[0][0]], kv[0][1:4], kv[0][4] != "on"))]
    if not records:
        raise ValueError("no ok point of a random, lines or planes workload")
    return records


def record_of(reps):
    j, g = reps[0]["report"], reps[0]["generate"]
    for other in reps[1:]:  # the counters are exact: every repetition must agree
        if other["report"]["counters"] != j["counters"]:
            raise ValueError(f"point {other['point']}: counters differ from point "
                             f"{reps[0]['point']}, its repetition")
    c = j["counters"]
    kind = reps[0]["workload"]
    fraction = {"random": g["sparsity"], "lines": g["zero_lines"], "planes": g["zero_planes"]}
    return {"kind": kind, "fraction": fraction[kind], "esop": reps[0]["esop"] == "on",
            "shape": j["problem"]["in_shape"], "input_zero_fraction": g["zero_fraction"],
            "steps": j["steps"]["total"], "steps_dense": j["steps"]["dense"],
            "macs": c["macs"], "macs_dense": c["macs_dense"],
            **{k: c[k]["total"] for k in ("x_bus_sends", "y_bus_sends", "y_bus_receives", "waits")},
            "energy_pj": j["energy_pj"]["run"], "energy_pj_dense": j["energy_pj"]["dense"],
            "simulation_seconds": min(r["report"]["simulation_seconds"] for r in reps),
            "reps": len(reps)}


def doc_of(rows, sweep):
    """The records and the settings the titles name (from the first record's report)."""
    records = records_of(rows)
    j = next(r["report"] for r in rows if r["status"] == "ok" and r["workload"] == records[0]["kind"])
    settings = {"transform": j["problem"]["transform"], "shape": j["problem"]["in_shape"],
                "stage_order": j["problem"]["stage_order"],
                "ranks": j["provenance"]["ranks"], "reps": max(r["reps"] for r in records)}
    traces = {r["esop"]: os.path.join(sweep, r["session"], "trace.csv") for r in rows
              if r["workload"] == "representative" and r["status"] == "ok"}
    if "on" not in traces:
        raise ValueError("no ok point of the representative workload with ESOP on")
    g = next(r["generate"] for r in rows if r["workload"] == "representative" and r["esop"] == "on"
             and r["status"] == "ok")
    kind, fraction = next(((k, g[f]) for k, f in (("lines", "zero_lines"), ("planes", "zero_planes"),
                                                   ("random", "sparsity")) if g[f] > 0), ("random", 0))
    representative = {"kind": kind, "fraction": fraction, "trace_esop_on": traces["on"],
                      "trace_esop_off": traces.get("off", "")}
    return {"settings": settings, "records": records, "representative": representative}


def title_of(doc):
    s = doc["settings"]
    return (f"triada-transform {s['transform']} of a {'x'.join(map(str, s['shape']))} tensor, "
            f"stage order {s['stage_order']}, {s['ranks']} rank(s)")


def plot_macs(doc, path):
    recs = doc["records"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    dense = max(r["macs_dense"] for r in recs)
    ax.axhline(dense / 1e6, color="k", ls=":", label="dense closed form (macs_dense)")
    for kind, label, c, m in KINDS:
        x, y = series(recs, kind, True, lambda r: r["macs"] / 1e6)
        if x:
            ax.plot(x, y, m + "-", color=c, label=f"{label}, ESOP on")
        x, y = series(recs, kind, False, lambda r: r["macs"] / 1e6)
        if x:
            ax.plot(x, y, m, color=c, mfc="none", ms=9, label=f"{label}, ESOP off")
    ax.set_ylabel("multiply-adds (millions)")
    ax.set_ylim(bottom=0)
    ax.set_title("MACs executed")
    xaxis(ax)
    ax.legend(fontsize=7)
    ax = axes[1]
    for kind, label, c, m in KINDS:
        x, y = series(recs, kind, True, lambda r: r["simulation_seconds"] * 1e3)
        if x:
            ax.plot(x, y, m + "-", color=c, label=f"{label}, ESOP on")
        x, y = series(recs, kind, False, lambda r: r["simulation_seconds"] * 1e3)
        if x:
            ax.plot(x, y, m + "--", color=c, mfc="none", label=f"{label}, ESOP off")
    ax.set_ylabel("simulation time (ms, engine only)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"simulator time (best of {doc['settings'].get('reps', 1)} runs)")
    xaxis(ax)
    ax.legend(fontsize=7)
    fig.suptitle(title_of(doc))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bus(doc, path):
    recs = doc["records"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.8))
    panels = [("x_bus_sends", "X-bus sends (coefficient elements)"),
              ("y_bus_sends", "Y-bus sends (pivot cells driving their line)"),
              ("y_bus_receives", "Y-bus receives (cells taking a value off their line)"),
              ("waits", "waits (coefficient but empty Y line)")]
    for ax, (key, ttl) in zip(axes.flat, panels):
        for kind, label, c, m in KINDS:
            x, y = series(recs, kind, True, lambda r: r[key])
            if x:
                ax.plot(x, y, m + "-", color=c, label=f"{label}, ESOP on")
            x, y = series(recs, kind, False, lambda r: r[key])
            if x:
                ax.plot(x, y, m + "--", color=c, mfc="none", label=f"{label}, ESOP off")
        ax.set_title(ttl, fontsize=10)
        ax.set_ylabel("events (summed over the run)")
        ax.set_ylim(0, max([r[key] for r in recs] + [1]) * 1.08)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 3))
        xaxis(ax)
    h, l = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, l, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("bus events vs input sparsity; " + title_of(doc))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_energy(doc, path):
    recs = doc["records"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    for kind, label, c, m in KINDS:
        x, y = series(recs, kind, True, lambda r: r["energy_pj"] / 1e6)
        if x:
            ax.plot(x, y, m + "-", color=c, label=f"{label}, ESOP on (run)")
        x, y = series(recs, kind, False, lambda r: r["energy_pj"] / 1e6)
        if x:
            ax.plot(x, y, m, color=c, mfc="none", ms=9, label=f"{label}, ESOP off (run)")
    dense = max(r["energy_pj_dense"] for r in recs)
    ax.axhline(dense / 1e6, color="k", ls=":", label="dense model (energy_pj.dense)")
    ax.set_ylabel("energy (uJ)")
    ax.set_ylim(bottom=0)
    ax.set_title("energy per transform (default per-event model)")
    xaxis(ax)
    ax.legend(fontsize=7)
    ax = axes[1]
    for kind, label, c, m in KINDS:
        x, y = series(recs, kind, True, lambda r: 100 * (1 - r["energy_pj"] / r["energy_pj_dense"]))
        if x:
            ax.plot(x, y, m + "-", color=c, label=label)
    ax.set_ylabel("energy saved by ESOP vs dense (%)")
    ax.set_ylim(0, 100)
    ax.set_title("ESOP saving")
    xaxis(ax)
    ax.legend(fontsize=8)
    fig.suptitle(title_of(doc))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def read_trace(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: empty trace")
    # Counters are integers; time_ps (the physical model's step time) is a real number.
    return [{k: float(v) if k == "time_ps" else int(v) for k, v in r.items()} for r in rows]


def plot_activity(doc, path):
    rep = doc["representative"]
    on = read_trace(rep["trace_esop_on"])
    off_path = rep["trace_esop_off"]
    off = read_trace(off_path) if os.path.exists(off_path) else None
    rec = next((r for r in doc["records"] if r["kind"] == rep["kind"] and r["fraction"] == rep["fraction"]
                and r["esop"]), None)
    fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    stages = sorted({r["stage"] for r in on})
    for ax, key, ttl in ((axes[0], "macs", "MACs per step (= cells that updated W)"),
                         (axes[1], "y_bus_sends", "Y-bus sends per step (pivot cells driving their line)")):
        if off:
            ax.step([r["step"] for r in off], [r[key] for r in off], where="mid", color="0.6", lw=1,
                    label="ESOP off (dense), same input")
        for s in stages:
            rs = [r for r in on if r["stage"] == s]
            ax.bar([r["step"] for r in rs], [r[key] for r in rs], width=1.0, color=f"C{s}",
                   label=f"stage {s + 1}: sum over axis {rs[0]['axis']}, ESOP on")
        ax.set_ylabel(ttl.split(" (")[0].replace(" per step", "") + " per step")
        ax.set_title(ttl, fontsize=10)
        top = max([r[key] for r in on] + ([r[key] for r in off] if off else []) + [1])
        ax.set_ylim(0, top * 1.3)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", ncol=4)
    axes[1].set_xlabel("time step (ESOP on; an all-zero coefficient row would be skipped)")
    extra = ""
    if rec:
        extra = (f"; ESOP MACs {rec['macs'] / rec['macs_dense']:.1%} of dense, "
                 f"{rec['steps']} of {rec['steps_dense']} steps")
    fig.suptitle(f"per-step activity, {rep['kind']} {rep['fraction']:g}: " + title_of(doc) + extra,
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    rows, sweep, out = load_sweep("plot_sweep.py", __doc__)
    try:
        doc = doc_of(rows, sweep)
    except (ValueError, KeyError, TypeError) as e:
        sys.exit(f"plot_sweep.py: error: {sweep}: {e}")
    written = []
    for name, fn in (("sweep_macs.png", plot_macs), ("sweep_bus.png", plot_bus),
                     ("sweep_energy.png", plot_energy)):
        p = os.path.join(out, name)
        fn(doc, p)
        written.append(p)
    p = os.path.join(out, "activity.png")
    try:
        plot_activity(doc, p)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"plot_sweep.py: error: representative trace: {e}")
    written.append(p)
    for p in written:
        print(f"wrote {p}")


if __name__ == "__main__":
    main()
