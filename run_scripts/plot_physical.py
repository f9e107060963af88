#!/usr/bin/env python3
"""Plot the physical-model sweep of the 3D DCT (triada-explore examples/explore/physical.toml,
which runs this script on its output folder) to PNG and print where the one-step
assumption stops holding.

It reads every ok triada-transform --model-only DCT point of the sweep (cubic N x N x N
and N x N/2 x 2N shapes; bus model, node, layout and bus energy model from each report)
and every triada-bench row (fftw-dct, openblas) of one cubic size. Writes, into the
output directory:
  physical_period.png  clock period vs N per bus model, one panel per node, with the MAC
                       latency as reference; filled markers where the X + Y bus delay exceeds
                       the MAC latency, a star and N* where that first happens
  physical_time.png    modelled time per 3D DCT vs N per bus model and node, beside FFTW's 3D
                       DCT and an OpenBLAS 3-mode product measured on this machine and an
                       A100 memory-bandwidth bound of a 3D FFT (a bound, not a measurement)
  physical_energy.png  energy per transform vs N and its split (MAC, X bus, Y bus, cells,
                       leakage), repeated bus, per node; default per-event and wire bus energy
  physical_area.png    total area and footprint vs N, stacked and planar, per node
  physical_crossover.txt  the crossover table (also printed): per shape family, bus model
                       and node, the first swept N where X + Y bus delay > MAC latency, and N*
  physical_summary.txt the repeated-bus numbers per N and node beside the measured times
"""
import math
import os
import sys

from plot_common import load_sweep, pyplot

plt = pyplot("plot_physical.py")

BUSES = [("ideal", "C0", "o"), ("repeated", "C1", "s"), ("rc", "C2", "^"), ("tree", "C3", "D"),
         ("pipelined", "C4", "v")]
FAMILIES = {"cubic": "N x N x N", "noncubic": "N x N/2 x 2N"}
PARTS = [("mac", "MAC", "C0"), ("x_bus", "X bus", "C1"), ("y_bus", "Y bus", "C2"),
         ("cells", "cells (receive, wait)", "C4"), ("static", "leakage", "C7")]

# NVIDIA A100 datasheet: A100 40GB, HBM2, 1,555 GB/s. A 3D FFT of N^3 complex64 values
# makes at least three passes (one per axis), each reading and writing 8 N^3 bytes.
A100_BYTES_PER_S = 1555e9
A100_LABEL = ("A100 bandwidth bound, complex64 3D FFT: 3 passes x 2 x 8 N^3 B / 1555 GB/s\n"
              "(NVIDIA A100 datasheet, 40 GB HBM2); not a measurement")
RETICLE_MM2 = 26 * 33  # the lithography reticle field, 26 mm x 33 mm


def a100_bound_s(n):
    return 48.0 * n ** 3 / A100_BYTES_PER_S


def family_of(shape):
    n1, n2, n3 = shape
    if n1 == n2 == n3:
        return "cubic"
    return "noncubic" if n1 % 2 == 0 and n2 == n1 // 2 and n3 == 2 * n1 else None


def model_record(row):
    """The plots' figures of one --model-only DCT report (None: not a point of the families)."""
    j = row["report"]
    ph = j["physical"]
    family = family_of(j["problem"]["in_shape"])
    if family is None or j["problem"]["transform"] not in ("dct", "dct,dct,dct"):
        return None
    pa = ph["parameters"]
    bus = lambda s: s["critical_path_ps"]["x_bus"] + s["critical_path_ps"]["y_bus"]
    worst = max(ph["per_stage"], key=bus)  # the stage whose lines are slowest
    e = ph["energy_j"]
    return {"kind": "model", "family": family, "n": j["problem"]["in_shape"][0],
            "bus_model": pa["timing"]["bus_model"], "node_nm": ph["technology"]["node_nm"],
            "layout": pa["area"]["layout"], "energy_model": pa["energy"]["bus_model"],
            "vdd": ph["technology"]["vdd"], "factors_from_45nm": ph["technology"]["factors_from_45nm"],
            "period_ps": ph["period_ps"], "bus_ps": bus(worst),
            "mac_ps": worst["critical_path_ps"]["mac"],
            "bus_exceeds_mac": bus(worst) > worst["critical_path_ps"]["mac"],
            "seconds": ph["seconds"],
            "energy_j": {"total": e["total"], "dynamic": e["dynamic"], "static": e["static"],
                         **e["breakdown"]},
            "power_w": ph["power_w"], "area_mm2": ph["area_mm2"]}


def doc_of(rows):
    """The records (model and measured) and settings the plots draw, from the sweep."""
    records, machine = [], None
    for row in rows:
        if row["status"] != "ok":
            continue
        j = row["report"]
        if row["kind"] == "transform" and "physical" in j and row["run"] == "model":
            r = model_record(row)
            records += [r] if r else []
        elif row["kind"] == "bench":
            machine = machine or j.get("machine")
            records += [{"kind": "measured", "variant": b["variant"], "family": "cubic",
                         "n": b["shape"][0], "seconds": b["seconds"]} for b in j["rows"]
                        if b["variant"] in ("fftw-dct", "openblas") and len(set(b["shape"])) == 1]
    order = {b: i for i, (b, _, _) in enumerate(BUSES)}
    records.sort(key=lambda r: (r["kind"], r["family"], r.get("layout", ""), r.get("energy_model", ""),
                                order.get(r.get("bus_model"), 9), -r.get("node_nm", 0),
                                r.get("variant", ""), r["n"]))
    sizes = lambda f: sorted({r["n"] for r in records if r["kind"] == "model" and r["family"] == f})
    return {"settings": {"cubic_sizes": sizes("cubic"), "noncubic_sizes": sizes("noncubic")},
            "machine": machine, "records": records}


def model(doc, family="cubic", bus="repeated", node=45, layout="stacked", energy="per_event"):
    return sorted((r for r in doc["records"] if r["kind"] == "model" and r["family"] == family
                   and r["bus_model"] == bus and r["node_nm"] == node and r["layout"] == layout
                   and r["energy_model"] == energy), key=lambda r: r["n"])


def measured(doc, variant):
    return sorted((r for r in doc["records"] if r["kind"] == "measured" and r["variant"] == variant),
                  key=lambda r: r["n"])


def nodes_of(doc):
    return sorted({r["node_nm"] for r in doc["records"] if r["kind"] == "model"}, reverse=True)


def sizes_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(n) for n in sizes])
    ax.minorticks_off()
    ax.set_xlabel("N (mesh of N x N x N cells, one per element)")
    ax.grid(True, which="major", alpha=0.3)


def crossover(rows):
    """(first swept N where X+Y bus > MAC or None, N* interpolated or None, ratios (N, bus/MAC)).
    N*: log(bus/MAC) linear in log N between the swept sizes around the crossing."""
    q = [(r["n"], r["bus_ps"] / r["mac_ps"]) for r in rows]
    i = next((k for k, (_, v) in enumerate(q) if v > 1), None)
    if i is None:
        return None, None, q
    if i == 0 or q[i - 1][1] <= 0:
        return q[i][0], None, q
    (n0, v0), (n1, v1) = q[i - 1], q[i]
    t = -math.log(v0) / (math.log(v1) - math.log(v0))
    return n1, math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0))), q


def crossover_table(doc):
    s = doc["settings"]
    lines = ["Where the one-step assumption stops holding: the X + Y bus delay of a stage first exceeds",
             "the MAC latency (fp64 MAC; 3D DCT, one cell per element, global clock, built-in",
             "configuration; triada-transform --model-only). first N: the smallest swept N where it",
             "does (the bus is then the critical component of the period); N*: log-log interpolation",
             "of (X+Y)/MAC between the swept sizes around it; <= N: already at the smallest size;",
             "never: not up to the largest size (ideal: no bus delay; pipelined: one hop per period).",
             ""]
    head = f"{'shape':<14}{'bus model':<22}{'node':>6}{'first N':>9}{'N*':>8}   (X+Y)/MAC over the swept N"
    lines += [head, "-" * len(head)]
    for family in ("cubic", "noncubic"):
        if not s.get(f"{family}_sizes"):
            continue
        for bus, layout in [(b, "stacked") for b, _, _ in BUSES] + [("repeated", "planar")]:
            for node in nodes_of(doc):
                rows = model(doc, family, bus, node, layout)
                if not rows:
                    continue
                first, est, q = crossover(rows)
                name = bus if layout == "stacked" else f"{bus} (planar)"
                if first is None:
                    f, e = "never", "-"
                elif est is None:
                    f, e = f"<={first}", "-"
                else:
                    f, e = str(first), f"{est:.0f}"
                ratios = " ".join(f"{v:.2g}" for _, v in q)
                lines.append(f"{FAMILIES[family]:<14}{name:<22}{node:>4}nm{f:>9}{e:>8}   {ratios}")
    sizes = " ".join(str(n) for n in s["cubic_sizes"])
    lines += ["", f"swept N: {sizes} (the N x N/2 x 2N family: "
              f"{' '.join(str(n) for n in s.get('noncubic_sizes', []))}); stacked layout unless noted"]
    return "\n".join(lines) + "\n"


def plot_period(doc, path):
    nodes = nodes_of(doc)
    sizes = doc["settings"]["cubic_sizes"]
    fig, axes = plt.subplots(1, len(nodes), figsize=(6.6 * len(nodes), 5.2), squeeze=False)
    for ax, node in zip(axes[0], nodes):
        mac = None
        for bus, c, m in BUSES:
            for family, ls in (("cubic", "-"), ("noncubic", "--")):
                rows = model(doc, family, bus, node)
                if not rows:
                    continue
                n = [r["n"] for r in rows]
                p = [r["period_ps"] / 1e3 for r in rows]
                label = f"{bus}" if family == "cubic" else f"{bus}, N x N/2 x 2N"
                ms = 6 if family == "cubic" else 4
                lw = 1.6 if family == "cubic" else 1.0
                ax.plot(n, p, ls, marker=m, color=c, mfc="white", ms=ms, lw=lw, label=label)
                hot = [r for r in rows if r["bus_exceeds_mac"]]  # filled: the bus is the critical component
                ax.plot([r["n"] for r in hot], [r["period_ps"] / 1e3 for r in hot], m, color=c, ms=ms)
                mac = rows[0]["mac_ps"]
                if family != "cubic":
                    continue
                first, est, _ = crossover(rows)
                if first is not None:
                    r = next(r for r in rows if r["n"] == first)
                    ax.plot(first, r["period_ps"] / 1e3, "*", color=c, ms=16, mec="k", zorder=5)
                    txt = f"N*~{est:.0f}" if est else f"N<={first}"
                    ax.annotate(txt, (first, r["period_ps"] / 1e3), textcoords="offset points",
                                xytext=(-10, 10), fontsize=8, color=c, ha="right", fontweight="bold")
        if mac is not None:
            ax.axhline(mac / 1e3, color="k", ls=":", lw=1.2,
                       label=f"MAC latency ({mac:.0f} ps, fp64)")
        sizes_axis(ax, sizes)
        ax.set_yscale("log")
        ax.set_ylabel("clock period (ns): X bus + Y bus + MAC + overhead")
        t = doc_node_title(doc, node)
        ax.set_title(f"{t}\nfilled: X+Y bus > MAC latency (the bus is critical); star: first such N",
                     fontsize=9)
        ax.legend(fontsize=7, ncol=2, loc="upper left")
    fig.suptitle("Where the one-step assumption stops holding: period of a 3D DCT mesh vs N "
                 "(stacked layout, global clock)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def doc_node_title(doc, node):
    r = next(r for r in doc["records"] if r["kind"] == "model" and r["node_nm"] == node)
    f = r["factors_from_45nm"]
    return (f"{node} nm, {r['vdd']:g} V (from 45 nm: delay x{f['delay']:.3g}, energy x{f['energy']:.3g}, "
            f"area x{f['area']:.3g})")


def machine_str(doc):
    m = doc.get("machine") or {}
    if not m:
        return "no measurements"
    return f"{m.get('cpu_model')}, one thread ({m.get('cores')} cores, load {m.get('loadavg_start')})"


def plot_time(doc, path):
    nodes = nodes_of(doc)
    sizes = doc["settings"]["cubic_sizes"]
    fig, axes = plt.subplots(1, len(nodes), figsize=(6.6 * len(nodes), 6.6), squeeze=False, sharey=True)
    fftw, blas = measured(doc, "fftw-dct"), measured(doc, "openblas")
    for ax, node in zip(axes[0], nodes):
        for bus, c, m in BUSES:
            rows = model(doc, "cubic", bus, node)
            if rows:
                ax.plot([r["n"] for r in rows], [r["seconds"] for r in rows], m + "-", color=c, ms=5,
                        label=f"TriADA model, {bus} bus")
        if fftw:
            ax.plot([r["n"] for r in fftw], [r["seconds"] for r in fftw], "ks-", mfc="none", ms=8, lw=1.4,
                    label="FFTW 3D DCT (fftw-dct), measured here")
        if blas:
            ax.plot([r["n"] for r in blas], [r["seconds"] for r in blas], "^-", color="0.45", mfc="none",
                    ms=8, lw=1.4, label="OpenBLAS 3-mode product (dgemm), measured here")
        ax.plot(sizes, [a100_bound_s(n) for n in sizes], "--", color="C5", lw=1.4, label=A100_LABEL)
        sizes_axis(ax, sizes)
        ax.set_yscale("log")
        ax.set_ylabel("time per 3D transform (s)")
        ax.set_title(doc_node_title(doc, node), fontsize=9)
    h, lab = axes[0, 0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=3, fontsize=8)
    fig.suptitle("Modelled time per float64 3D DCT (N^3 elements, stacked layout) vs measured CPU "
                 f"baselines ({machine_str(doc)})", fontsize=10)
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def energy_row(doc, axes, energy, title):
    nodes = nodes_of(doc)
    sizes = doc["settings"]["cubic_sizes"]
    ax = axes[0]
    for node, ls in zip(nodes, ("-", "--", ":", "-.") * 4):
        rows = model(doc, "cubic", "repeated", node, energy=energy)
        n = [r["n"] for r in rows]
        ax.plot(n, [r["energy_j"]["total"] for r in rows], "k" + ls, lw=2, label=f"total, {node} nm")
        for key, label, c in PARTS:
            ax.plot(n, [max(r["energy_j"][key], 1e-30) for r in rows], ls, color=c, lw=1.2,
                    label=f"{label}, {node} nm")
    sizes_axis(ax, sizes)
    ax.set_yscale("log")
    bottom = min(r["energy_j"]["total"] for r in doc["records"] if r["kind"] == "model") / 1e4
    ax.set_ylim(bottom=bottom)
    ax.set_ylabel("energy per transform (J)")
    ax.set_title(f"{title}: energy and its parts", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    for ax, node in zip(axes[1:], nodes):
        rows = model(doc, "cubic", "repeated", node, energy=energy)
        x = range(len(rows))
        acc = [0.0] * len(rows)
        for key, label, c in PARTS:
            share = [100 * r["energy_j"][key] / r["energy_j"]["total"] for r in rows]
            ax.bar(x, share, bottom=acc, color=c, label=label)
            acc = [a + s for a, s in zip(acc, share)]
        for i, r in enumerate(rows):
            ax.annotate(f"{r['energy_j']['total']:.2g} J", (i, 100), textcoords="offset points",
                        xytext=(0, 2), ha="center", fontsize=6.5)
        ax.set_xticks(list(x))
        ax.set_xticklabels([str(r["n"]) for r in rows])
        ax.set_xlabel("N (N x N x N)")
        ax.set_ylim(0, 108)
        ax.set_ylabel("share of the energy (%)")
        ax.set_title(f"{title}: split at {node} nm", fontsize=9)
        ax.legend(fontsize=6.5, loc="lower left")


def plot_energy(doc, path):
    nodes = nodes_of(doc)
    energies = [e for e in ("per_event", "wire")
                if any(r["kind"] == "model" and r["energy_model"] == e for r in doc["records"])]
    cols = 1 + len(nodes)
    fig, axes = plt.subplots(len(energies), cols, figsize=(5.2 * cols, 4.6 * len(energies)), squeeze=False)
    titles = {"per_event": "per-event bus energy (default: a fixed pJ per send)",
              "wire": "wire bus energy (driver + wire per line length)"}
    for row, e in zip(axes, energies):
        energy_row(doc, row, e, titles[e])
    fig.suptitle("Energy per float64 3D DCT, repeated bus, stacked layout (MAC, X/Y bus drives, cell "
                 "receives/waits, leakage over the modelled time)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_area(doc, path):
    nodes = nodes_of(doc)
    sizes = doc["settings"]["cubic_sizes"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    styles = {"stacked": ("-", "o"), "planar": ("--", "s")}
    for ax, key, what in ((axes[0], "total", "total silicon area (cells + buses, all tiers)"),
                          (axes[1], "footprint", "footprint (one tier stacked; the die planar)")):
        for i, node in enumerate(nodes):
            for layout, (ls, m) in styles.items():
                rows = model(doc, "cubic", "repeated", node, layout)
                if rows:
                    ax.plot([r["n"] for r in rows], [r["area_mm2"][key] for r in rows], m + ls,
                            color=f"C{i}", mfc="none" if layout == "planar" else f"C{i}",
                            label=f"{node} nm, {layout}")
        ax.axhline(RETICLE_MM2, color="k", ls=":", lw=1, label="one reticle field, 26 x 33 mm = 858 mm^2")
        sizes_axis(ax, sizes)
        ax.set_yscale("log")
        ax.set_ylabel("mm^2")
        ax.set_title(what, fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle("Area of the N x N x N float64 mesh (fp64 MAC, registers, bus tracks, TSVs when stacked), "
                 "repeated bus", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary_table(doc):
    fftw = {r["n"]: r["seconds"] for r in measured(doc, "fftw-dct")}
    blas = {r["n"]: r["seconds"] for r in measured(doc, "openblas")}
    head = (f"{'N':>5} {'node':>5} {'period ns':>10} {'critical':>8} {'time s':>10} {'energy J':>10} "
            f"{'power W':>10} {'area mm2':>10} {'planar mm2':>10} {'FFTW s':>10} {'OpenBLAS s':>10} "
            f"{'A100 bd s':>10}")
    lines = ["3D DCT of N x N x N float64, repeated bus, stacked layout, per-event bus energy, global",
             "clock; area: total silicon (all tiers), planar: the planar layout's; FFTW / OpenBLAS:",
             f"measured here, {machine_str(doc)}; A100 bd: 48 N^3 B / 1555 GB/s,",
             "a bandwidth bound for a complex64 3D FFT (NVIDIA A100 datasheet), not a measurement", "",
             head, "-" * len(head)]
    f = lambda v: "-" if v is None else f"{v:.4g}"
    for node in nodes_of(doc):
        planar = {r["n"]: r["area_mm2"]["total"] for r in model(doc, "cubic", "repeated", node, "planar")}
        for r in model(doc, "cubic", "repeated", node):
            n = r["n"]
            lines.append(f"{n:>5} {node:>3}nm {f(r['period_ps'] / 1e3):>10} "
                         f"{'bus' if r['bus_exceeds_mac'] else 'MAC':>8} {f(r['seconds']):>10} "
                         f"{f(r['energy_j']['total']):>10} {f(r['power_w']):>10} "
                         f"{f(r['area_mm2']['total']):>10} "
                         f"{f(planar.get(n)):>10} {f(fftw.get(n)):>10} {f(blas.get(n)):>10} "
                         f"{f(a100_bound_s(n)):>10}")
    return "\n".join(lines) + "\n"


def main():
    rows, sweep, out = load_sweep("plot_physical.py", __doc__)
    try:
        doc = doc_of(rows)
    except (KeyError, TypeError, ValueError) as e:
        sys.exit(f"plot_physical.py: error: {sweep}: a report lacks {e}")
    if not doc["settings"]["cubic_sizes"]:
        sys.exit(f"plot_physical.py: error: {sweep}: no ok model-only DCT point of a cubic shape")
    written = []
    for name, fn in (("physical_period.png", plot_period), ("physical_time.png", plot_time),
                     ("physical_energy.png", plot_energy), ("physical_area.png", plot_area)):
        p = os.path.join(out, name)
        fn(doc, p)
        written.append(p)
    for name, fn in (("physical_crossover.txt", crossover_table),
                     ("physical_summary.txt", summary_table)):
        text = fn(doc)
        print(text)
        p = os.path.join(out, name)
        with open(p, "w") as f:
            f.write(text)
        written.append(p)
    for p in written:
        print(f"wrote {p}")


if __name__ == "__main__":
    main()
