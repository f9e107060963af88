#!/usr/bin/env python3
"""Collects run_scripts/chip_compare.sh's runs into a CSV, the README's table and two plots.

Usage: chip_compare.py WORK OUT --anchors H100.json [--note TEXT]

WORK holds runs.tsv (one row a line: tag, node, family, N, shape, transform, mode, budget),
reports/TAG.json (triada-report/1 or triada-plan/1, with physical.chip and
physical.memory) or, for a refused configuration, logs/TAG.log with its error line, and
bench.json (triada-bench, optional). Writes OUT/chip_compare.csv, chip_compare.md,
chip_time.png and chip_energy.png."""
import argparse
import csv
import json
import os
import sys

from plot_common import pyplot

PROG = "chip_compare.py"
H100_W = 700  # the H100 SXM's TDP: 700 W x its time bounds its energy from above
ANCHOR = {"dft": "fft_3d", "dct": "dct_3d", "gemt": "gemt_3d"}
DTYPE = {"fp64": "float64", "fp32": "float32"}
BENCH = {"fftw-dft": "dft", "fftw-dct": "dct", "openblas": "gemt"}
NAMES = {"dct": "DCT-II", "dft": "DFT", "gemt": "GEMT"}
BUDGETS = {"area": "814 mm^2", "area+power": "814 mm^2, 700 W"}
COLUMNS = ["node", "family", "n", "shape", "transform", "mode", "budget", "status", "mesh", "fold",
           "passes", "clock_ghz", "period_ps", "period_stretch", "compute_s", "memory_s", "seconds",
           "bound", "chip_bound", "tflops", "energy_j", "power_w", "area_mm2", "h100_ms", "h100_over_triada",
           "h100_energy_bound_j", "cpu_ms", "note"]
TABLE_SIZES = (128, 512, 1024)
NODES = {"7nm": "7 nm", "4N": "4N (estimate)", "slow": "7 nm, MAC 8x slower"}


def fail(msg):
    sys.exit(f"{PROG}: error: {msg}")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def anchors_ms(path):
    """{(transform, N, mode): ms} of the H100 anchors."""
    doc, found = load_json(path), {}
    for t, key in ANCHOR.items():
        for r in doc[key]["results"]:
            for mode, dt in DTYPE.items():
                if r["dtype"] == dt:
                    found[(t, r["n"], mode)] = r["ms"]
    return found


def bench_ms(path):
    """{(transform, N): ms} of this machine's one-thread fp64 baselines on N^3."""
    if not os.path.exists(path):
        return {}
    return {(BENCH[r["variant"]], r["shape"][0]): r["seconds"] * 1e3
            for r in load_json(path)["rows"] if r["variant"] in BENCH}


def refusal(log):
    """The error line a refused run left in its log."""
    try:
        with open(log, errors="replace") as f:
            lines = [s.strip() for s in f if ": error: " in s]
    except OSError:
        lines = []
    if not lines:
        fail(f"{log}: no report and no error line")
    return lines[-1]


def mac_clock_ghz(report):
    """The cells' MAC clock: the MAC sub-steps the busiest cell does one after another in a
    step of the critical stage, over that step's period (its bus and latch share included)."""
    p = report["physical"]
    stage = p["per_stage"][p["critical_stage"]]
    return stage["busiest_cell_macs"] * report["precision"]["substeps"] / stage["period_ps"] * 1e3


def modelled(report):
    """The row's modelled columns from its report's physical section."""
    p = report["physical"]
    c, m = p["chip"], p["memory"]
    return {"status": "ok", "mesh": "x".join(map(str, c["mesh"])), "fold": "x".join(map(str, c["fold"])),
            "passes": m["passes"], "clock_ghz": mac_clock_ghz(report), "period_ps": p["period_ps"],
            "period_stretch": c["power"]["period_stretch"], "compute_s": p["compute_seconds"],
            "memory_s": p["memory_seconds"], "seconds": p["seconds"], "bound": p["bound"],
            "chip_bound": c["bound"].split(":")[0], "tflops": p["roofline"]["compute_flops"] * 1e-12,
            "energy_j": p["energy_j"]["total"],
            "power_w": p["power_w"], "area_mm2": c["area_mm2"]["total"]}


def rows_of(work, anchors, cpu):
    rows = []
    with open(os.path.join(work, "runs.tsv")) as f:
        for line in f:
            tag, node, family, n, shape, t, mode, budget = line.rstrip("\n").split("\t")
            n = int(n)
            row = {"node": NODES[node], "family": family, "n": n,
                   "shape": shape, "transform": t, "mode": mode, "budget": budget}
            report = os.path.join(work, "reports", tag + ".json")
            if os.path.exists(report):
                row.update(modelled(load_json(report)))
            else:
                row.update(status="refused", note=refusal(os.path.join(work, "logs", tag + ".log")))
            h100 = anchors.get((t, n, mode)) if family == "cubic" else None
            if h100 is not None:
                row["h100_ms"] = h100
                row["h100_energy_bound_j"] = H100_W * h100 * 1e-3
                if row["status"] == "ok":
                    row["h100_over_triada"] = h100 / (row["seconds"] * 1e3)
            if family == "cubic" and mode == "fp64" and (t, n) in cpu:
                row["cpu_ms"] = cpu[(t, n)]
            rows.append(row)
    return rows


def cell(v):
    return f"{v:.10g}" if isinstance(v, float) else ("" if v is None else str(v))


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([cell(r.get(k)) for k in COLUMNS])


def g3(v, fmt="{:.3g}"):
    """Three significant digits, without an exponent from 1000 up."""
    if v is None:
        return ""
    return f"{v:.0f}" if fmt == "{:.3g}" and v >= 1000 else fmt.format(v)


def other_ms(r):
    return g3(r["seconds"] * 1e3) if r and r["status"] == "ok" else "refused"


def table_line(r, est, slow):
    """One line of the README's table: the 7 nm row r, est and slow the 4N and slow-MAC rows
    of the same run."""
    name, budget = NAMES[r["transform"]], BUDGETS[r["budget"]]
    if r["status"] != "ok":
        return f"| {name} | {r['n']} | {budget} | refused: {r['note']} |" + " |" * 12
    ms = r["seconds"] * 1e3
    return (f"| {name} | {r['n']} | {budget} | {r['mesh']} ({r['fold']}) | {r['clock_ghz']:.2f} | "
            f"{r['passes']} | {r['bound']} | "
            f"{g3(ms)} | {other_ms(est)} | {other_ms(slow)} | {g3(r.get('h100_ms'))} | "
            f"{g3(r.get('h100_over_triada'), '{:.2f}')} | "
            f"{g3(r['energy_j'])} | {r['power_w']:.0f} | {g3(r.get('h100_energy_bound_j'))} | "
            f"{g3(r.get('cpu_ms'))} |")


def write_md(rows, path, note):
    cubic = [r for r in rows if r["family"] == "cubic" and r["mode"] == "fp64"]
    ran = sorted({r["n"] for r in cubic})
    sizes = [n for n in ran if n in TABLE_SIZES] or ran
    key = lambda r: (r["transform"], r["n"], r["budget"])
    est = {key(r): r for r in cubic if r["node"] == NODES["4N"]}
    slow = {key(r): r for r in cubic if r["node"] == NODES["slow"]}
    lines = ["| transform | N | budget | mesh (fold) | clock GHz | passes | bound | TriADA ms "
             "| TriADA 4N ms (estimate) | TriADA ms, MAC 8x slower "
             "| H100 ms | H100 / TriADA | TriADA J | TriADA W | H100 J, at most | this machine ms |",
             "|" + " --- |" * 16]
    for t in NAMES:
        for n in sizes:
            for b in BUDGETS:
                r = next((r for r in cubic if key(r) == (t, n, b) and r["node"] == "7 nm"), None)
                if r:
                    lines.append(table_line(r, est.get(key(r)), slow.get(key(r))))
    lines += ["", "fp64, N x N x N, TriADA modelled at 7 nm (and at an estimated 4N), planar die, HBM3 at "
              "3.35 TB/s, double-buffered; H100 measured (data/anchors/h100.json), its energy bounded by "
              f"{H100_W} W x its time; this machine: FFTW / OpenBLAS, one core, fp64 (triada-bench)."]
    if note:
        lines.append(note[0].upper() + note[1:] + ".")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def series(rows, t, mode, budget, value):
    pts = sorted((r["n"], value(r)) for r in rows
                 if r["family"] == "cubic" and r["node"] == "7 nm" and r["transform"] == t
                 and r["mode"] == mode and r["budget"] == budget and r["status"] == "ok")
    return [p[0] for p in pts], [p[1] for p in pts]


def measured(rows, t, mode, key, scale=1.0):
    pts = sorted({(r["n"], r[key] * scale) for r in rows if r["family"] == "cubic" and r["transform"] == t
                  and r["mode"] == mode and r.get(key) is not None})
    return [p[0] for p in pts], [p[1] for p in pts]


def plot(rows, path, ylabel, value, h100_label, h100_scale, cpu):
    """Two panels (fp64, fp32): TriADA at 7 nm per transform and budget beside the H100."""
    plt = pyplot(PROG)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=True)
    for ax, mode in zip(axes, DTYPE):
        for i, t in enumerate(NAMES):
            color, name = f"C{i}", NAMES[t]
            for budget, style, width in (("area+power", "-", 2.4), ("area", "--", 1.2)):
                x, y = series(rows, t, mode, budget, value)
                ax.plot(x, y, style, color=color, lw=width, marker="o" if t != "gemt" else "x",
                        label=f"TriADA {name}, {BUDGETS[budget]}")
            x, y = measured(rows, t, mode, "h100_ms", h100_scale)
            ax.plot(x, y, ":", color=color, marker="s", ms=8, mfc="none", label=f"H100 {name}, {h100_label}")
            if cpu:
                x, y = measured(rows, t, mode, "cpu_ms", 1e-3)
                if x:
                    ax.plot(x, y, "-.", color=color, marker="^", lw=0.8, label=f"this machine {name}, 1 core")
        ax.set(xscale="log", yscale="log", xlabel="N (N x N x N)", title=mode)
        sizes = sorted({r["n"] for r in rows})
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.tick_params(axis="x", which="minor", bottom=False, labelbottom=False)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel(ylabel)
    handles, labels = axes[0].get_legend_handles_labels()  # fp64's: it has every series
    axes[1].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("TriADA modelled at 7 nm (planar die, HBM3) against an H100 (measured); "
                 "on TriADA the DCT and GEMT are the same dense run", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("--anchors", required=True)
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    rows = rows_of(a.work, anchors_ms(a.anchors), bench_ms(os.path.join(a.work, "bench.json")))
    os.makedirs(a.out, exist_ok=True)
    write_csv(rows, os.path.join(a.out, "chip_compare.csv"))
    write_md(rows, os.path.join(a.out, "chip_compare.md"), a.note)
    plot(rows, os.path.join(a.out, "chip_time.png"), "end-to-end seconds",
         lambda r: r["seconds"], "measured", 1e-3, cpu=True)
    plot(rows, os.path.join(a.out, "chip_energy.png"), "energy (J)",
         lambda r: r["energy_j"], f"at most {H100_W} W x time (upper bound)", H100_W * 1e-3, cpu=False)
    refused = sum(r["status"] != "ok" for r in rows)
    print(f"{PROG}: {len(rows)} rows ({refused} refused)", file=sys.stderr)


if __name__ == "__main__":
    main()
