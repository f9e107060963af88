#!/usr/bin/env python3
"""Collects run_scripts/chip_compare.sh's runs into a CSV, the README's table and two plots.

Usage: chip_compare.py WORK OUT --anchors H100.json [--note TEXT]

WORK holds runs.tsv (one row a line: tag, node, family, N, shape, transform, mode, budget),
reports/TAG.json (triada-report/1 or triada-plan/1, with physical.chip and
physical.memory) or, for a refused configuration, logs/TAG.log with its error line, and
bench.json (triada-bench, optional). Writes OUT/chip_compare.csv, chip_compare.md,
chip_time.png and chip_energy.png.

The H100 side of a row is the fastest measured method that computes its transform (DCT-II:
cupyx dctn or the GEMT route, three cuBLAS GEMMs with dense DCT matrices; DFT: cuFFT fftn;
GEMT: the GEMMs), with its HBM floor (a lower bound on its bytes over 3.35 TB/s) and
whether that floor or its compute floor (flops over the datasheet peak) is the larger."""
import argparse
import csv
import json
import math
import os
import sys

from plot_common import pyplot

PROG = "chip_compare.py"
H100_W = 700  # the H100 SXM's TDP: 700 W x its time bounds its energy from above
H100_BPS = 3.35e12  # its HBM3's datasheet bandwidth, B/s; TriADA's too unless its report differs
# The datasheet's peaks: fp64 on the tensor cores (cuBLAS's DGEMM uses them), fp32 without
# (TF32 was off). FFTs use no tensor cores, so for them 67e12 fp64 understates the compute
# floor: a lower bound, as every floor here.
H100_PEAK = {"fp64": 67e12, "fp32": 67e12}
WORD = {"fp64": 8, "fp32": 4}  # bytes a real word
# The anchors that compute each transform (data/anchors/h100.json): a DCT-II is also a GEMT
# with DCT matrices; a complex GEMT was not measured, so the DFT has cuFFT alone.
METHODS = {"dct": ("dct_3d", "gemt_3d"), "dft": ("fft_3d",), "gemt": ("gemt_3d",)}
METHOD_NAMES = {"fft_3d": "cuFFT fftn", "dct_3d": "cupyx dctn", "gemt_3d": "cuBLAS 3 GEMMs"}
FFTN_NOTE = ("H100 fftn anchor: cupyx.scipy.fft.fftn(norm='ortho') applies the ortho scaling as "
             "its own elementwise pass over the tensor after cuFFT, so cuFFT alone takes less "
             "(not re-measured here)")
DTYPE = {"fp64": "float64", "fp32": "float32"}
BENCH = {"fftw-dft": "dft", "fftw-dct": "dct", "openblas": "gemt"}
NAMES = {"dct": "DCT-II", "dft": "DFT", "gemt": "GEMT"}
BUDGETS = {"area": "814 mm^2", "area+power": "814 mm^2, 700 W"}
COLUMNS = ["node", "family", "n", "shape", "transform", "mode", "budget", "status", "mesh", "fold",
           "passes", "clock_ghz", "period_ps", "period_stretch", "compute_s", "memory_s", "seconds",
           "seconds_opt", "seconds_pess", "bound", "chip_bound", "tflops", "triada_peak_tflops",
           "energy_j", "energy_opt_j", "energy_pess_j", "power_w", "area_mm2", "outline_mm",
           "triada_floor_ms", "triada_bound", "h100_ms", "h100_method", "h100_passes",
           "h100_floor_ms", "h100_bound", "h100_over_triada", "h100_over_triada_range",
           "h100_over_triada_iso_peak", "h100_energy_bound_j", "cpu_ms", "note"]
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
    """{(anchor, N, mode): ms} of the H100 anchors, anchor one of METHOD_NAMES."""
    doc, found = load_json(path), {}
    for key in METHOD_NAMES:
        for r in doc[key]["results"]:
            for mode, dt in DTYPE.items():
                if r["dtype"] == dt:
                    found[(key, r["n"], mode)] = r["ms"]
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


def floor_and_bands(report):
    """TriADA's HBM floor (the bytes it reads and writes over its memory's bandwidth), its
    peak, and, where the report has them, its optimistic and pessimistic bands and outline."""
    p = report["physical"]
    m, rng, outline = p["memory"], p.get("range", {}), p["chip"].get("outline_mm")
    bps = m["gbps"] * 1e9 if m.get("gbps") else H100_BPS
    row = {"triada_floor_ms": (m["bytes_read"] + m["bytes_written"]) / bps * 1e3, "triada_bound": p["bound"]}
    if p.get("peak_flops"):
        row["triada_peak_tflops"] = p["peak_flops"] * 1e-12
    if "seconds" in rng:  # [optimistic, nominal, pessimistic]
        row.update(seconds_opt=rng["seconds"][0], seconds_pess=rng["seconds"][2])
    if "energy_j" in rng:
        row.update(energy_opt_j=rng["energy_j"][0], energy_pess_j=rng["energy_j"][2])
    if outline:
        row["outline_mm"] = f"{outline[0]:.4g} x {outline[1]:.4g}"
    return row


def h100_traffic(key, n, w):
    """(passes, bytes): what the H100's method must at least move over HBM on N^3 words of w
    bytes, each pass reading and writing the whole tensor once (caches ignored)."""
    if key == "gemt_3d":  # each GEMM reads the tensor and writes its product; the 3 matrices
        return 3, 3 * 2 * w * n ** 3 + 3 * w * n ** 2
    if key == "fft_3d":  # complex (2w bytes): cuFFT's pass, then CuPy's ortho scaling pass
        return 2, 2 * 2 * (2 * w) * n ** 3
    return 3, 3 * 2 * w * n ** 3  # dctn: at least one pass per axis of the real tensor


def h100_flops(key, n):
    """Flops of the method on N^3: 2 x 3 N^4 multiply-adds for the GEMMs (N1 N2 N3 (N1 + N2 +
    N3) in general), the usual 5 N^3 log2 N^3 for the FFT and the FFT-based dctn."""
    return 2 * 3 * n ** 4 if key == "gemt_3d" else 5 * n ** 3 * math.log2(n ** 3)


def h100_columns(t, n, mode, anchors):
    """The H100's columns for transform t on N^3: its fastest measured method, or none."""
    found = [(anchors[(k, n, mode)], k) for k in METHODS[t] if (k, n, mode) in anchors]
    if not found:
        return {}
    ms, key = min(found)
    passes, nbytes = h100_traffic(key, n, WORD[mode])
    floor_ms = nbytes / H100_BPS * 1e3
    compute_ms = h100_flops(key, n) / H100_PEAK[mode] * 1e3
    route = " (GEMT route)" if key == "gemt_3d" and t != "gemt" else ""
    return {"h100_ms": ms, "h100_method": METHOD_NAMES[key] + route, "h100_passes": passes,
            "h100_floor_ms": floor_ms, "h100_bound": "memory" if floor_ms > compute_ms else "compute",
            "h100_energy_bound_j": H100_W * ms * 1e-3}


def ratios(row):
    """H100 ms / TriADA ms: nominal, over TriADA's band (pessimistic to optimistic), and at
    equal peak (TriADA's time scaled as if its peak were the H100's)."""
    h100_s = row["h100_ms"] * 1e-3
    row["h100_over_triada"] = h100_s / row["seconds"]
    if row.get("triada_peak_tflops"):
        row["h100_over_triada_iso_peak"] = (row["h100_over_triada"] * H100_PEAK[row["mode"]]
                                            / (row["triada_peak_tflops"] * 1e12))
    if row.get("seconds_opt"):
        row["ratio_lo"], row["ratio_hi"] = h100_s / row["seconds_pess"], h100_s / row["seconds_opt"]
        row["h100_over_triada_range"] = f"{row['ratio_lo']:.4g}-{row['ratio_hi']:.4g}"


def one_row(work, fields, anchors, cpu):
    tag, node, family, n, shape, t, mode, budget = fields
    n = int(n)
    row = {"node": NODES[node], "family": family, "n": n,
           "shape": shape, "transform": t, "mode": mode, "budget": budget}
    report = os.path.join(work, "reports", tag + ".json")
    if os.path.exists(report):
        report = load_json(report)
        row.update(modelled(report), **floor_and_bands(report))
    else:
        row.update(status="refused", refusal=refusal(os.path.join(work, "logs", tag + ".log")))
    if family == "cubic":
        row.update(h100_columns(t, n, mode, anchors))
    if "h100_ms" in row and row["status"] == "ok":
        ratios(row)
    if family == "cubic" and mode == "fp64" and (t, n) in cpu:
        row["cpu_ms"] = cpu[(t, n)]
    fftn = FFTN_NOTE if row.get("h100_method") == METHOD_NAMES["fft_3d"] else None
    row["note"] = "; ".join(s for s in (row.get("refusal"), fftn) if s)
    return row


def rows_of(work, anchors, cpu):
    with open(os.path.join(work, "runs.tsv")) as f:
        return [one_row(work, line.rstrip("\n").split("\t"), anchors, cpu) for line in f]


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


def with_band(nominal, lo, hi, fmt="{:.3g}"):
    """"nominal (lo-hi)", or the nominal alone where the report had no band."""
    return g3(nominal, fmt) + (f" ({g3(lo, fmt)}-{g3(hi, fmt)})" if lo is not None else "")


def bounds(r):
    """Which side is memory-bound, compactly."""
    t, h = r["triada_bound"], r.get("h100_bound")
    if h is None:
        return f"TriADA {t}"
    return f"both {t}" if t == h else f"TriADA {t}, H100 {h}"


HEADER = ["transform", "N", "budget", "mesh (fold)", "clock GHz", "passes", "bound", "TriADA ms",
          "TriADA 4N ms (estimate)", "TriADA ms, MAC 8x slower", "TriADA HBM floor ms", "H100 ms",
          "H100 method", "H100 HBM floor ms", "H100 / TriADA", "H100 / TriADA at equal fp64 peak",
          "TriADA J", "TriADA W", "H100 J, at most", "this machine ms"]


def table_line(r, est, slow):
    """One line of the README's table: the 7 nm row r, est and slow the 4N and slow-MAC rows
    of the same run."""
    name, budget = NAMES[r["transform"]], BUDGETS[r["budget"]]
    if r["status"] != "ok":
        return f"| {name} | {r['n']} | {budget} | refused: {r['refusal']} |" + " |" * (len(HEADER) - 4)
    ms = [r.get(k) and r[k] * 1e3 for k in ("seconds", "seconds_opt", "seconds_pess")]
    cells = [name, r["n"], budget, f"{r['mesh']} ({r['fold']})", f"{r['clock_ghz']:.2f}", r["passes"],
             bounds(r), with_band(*ms), other_ms(est), other_ms(slow), g3(r["triada_floor_ms"]),
             g3(r.get("h100_ms")), r.get("h100_method", ""), g3(r.get("h100_floor_ms")),
             with_band(r.get("h100_over_triada"), r.get("ratio_lo"), r.get("ratio_hi"), "{:.2f}"),
             g3(r.get("h100_over_triada_iso_peak"), "{:.2f}"), g3(r["energy_j"]), f"{r['power_w']:.0f}",
             g3(r.get("h100_energy_bound_j")), g3(r.get("cpu_ms"))]
    return "| " + " | ".join(map(str, cells)) + " |"


def both_memory(shown):
    """The sentence, from the table's rows, on where both sides are memory-bound."""
    where = {}
    for r in shown:
        if r["status"] == "ok" and r["triada_bound"] == r.get("h100_bound") == "memory":
            where.setdefault(NAMES[r["transform"]], []).append(str(r["n"]))
    if not where:
        return "No row of the table is memory-bound on both sides."
    at = "; ".join(f"{t} at N = {', '.join(dict.fromkeys(ns))}" for t, ns in where.items())
    return (f"Both sides memory-bound: {at}. There the ratio reflects the passes each side makes "
            "over HBM and the libraries' quality, not the dataflow.")


def notes(shown):
    """The lines under the table."""
    band = any(r.get("seconds_opt") for r in shown)
    peak = any(r.get("triada_peak_tflops") for r in shown)
    return [
        "fp64, N x N x N, TriADA modelled at 7 nm (and at an estimated 4N), planar die, HBM3 at "
        "3.35 TB/s, double-buffered; H100 measured (data/anchors/h100.json), its energy bounded by "
        f"{H100_W} W x its time; this machine: FFTW / OpenBLAS, one core, fp64 (triada-bench).",
        "H100 ms: the fastest measured method that computes the transform: for the DCT-II the faster "
        "of cupyx dctn and the GEMT route (three cuBLAS GEMMs with dense DCT matrices, TriADA's own "
        "algorithm, 3 N^4 multiply-adds); for the DFT cuFFT fftn (a complex GEMT was not measured); "
        "for GEMT the three GEMMs.",
        "The fftn anchor includes CuPy's separate ortho-scaling pass over the tensor "
        "(cupyx.scipy.fft applies norm='ortho' as its own elementwise pass after cuFFT), so the "
        "cuFFT time alone is lower; it is not re-measured here.",
        "HBM floor: the bytes a side must move over HBM / 3.35 TB/s. TriADA: the report's bytes "
        "read and written. H100, a lower bound from the method's structure, each pass reading and "
        "writing the whole tensor of w-byte words (w = 8 fp64, 4 fp32): the GEMT route 3 passes, "
        "6 w N^3 + 3 w N^2 (the matrices); cuFFT fftn 2 passes of complex data (the FFT, then the "
        "scaling), 8 w N^3; cupyx dctn at least one pass per axis, 6 w N^3.",
        "Bound: memory where the HBM floor exceeds the compute floor, flops / peak (H100: 67 TFLOP/s "
        "fp64 tensor core, 67 TFLOP/s fp32; 2 x 3 N^4 flops for the GEMMs, 5 N^3 log2 N^3 for the "
        "FFT-based methods); TriADA's from its model.",
        both_memory(shown),
        "At equal fp64 peak: H100 / TriADA x 67 TFLOP/s / TriADA's peak (the report's "
        "physical.peak_flops, the whole mesh at its clock), as if TriADA's whole time scaled with "
        "its peak" + ("." if peak else "; empty: these reports carry no physical.peak_flops."),
    ] + (["TriADA ms and H100 / TriADA: nominal (optimistic-pessimistic), from the report's "
          "physical.range."] if band else [])


def write_md(rows, path, note):
    cubic = [r for r in rows if r["family"] == "cubic" and r["mode"] == "fp64"]
    ran = sorted({r["n"] for r in cubic})
    sizes = [n for n in ran if n in TABLE_SIZES] or ran
    key = lambda r: (r["transform"], r["n"], r["budget"])
    est = {key(r): r for r in cubic if r["node"] == NODES["4N"]}
    slow = {key(r): r for r in cubic if r["node"] == NODES["slow"]}
    shown = [r for t in NAMES for n in sizes for b in BUDGETS for r in cubic
             if key(r) == (t, n, b) and r["node"] == NODES["7nm"]]
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    lines += [table_line(r, est.get(key(r)), slow.get(key(r))) for r in shown]
    lines += [""] + notes(shown)
    if note:
        lines.append(note[0].upper() + note[1:] + ".")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def series(rows, t, mode, budget, keys):
    """N and each of keys' values on the 7 nm cubic rows of (t, mode, budget), or none where a
    row lacks one."""
    pts = sorted([r["n"]] + [r.get(k) for k in keys] for r in rows
                 if r["family"] == "cubic" and r["node"] == NODES["7nm"] and r["transform"] == t
                 and r["mode"] == mode and r["budget"] == budget and r["status"] == "ok")
    if any(v is None for p in pts for v in p):
        return None
    return list(zip(*pts)) if pts else [[]] * (len(keys) + 1)


def measured(rows, t, mode, key, scale=1.0):
    pts = sorted({(r["n"], r[key] * scale) for r in rows if r["family"] == "cubic" and r["transform"] == t
                  and r["mode"] == mode and r.get(key) is not None})
    return [p[0] for p in pts], [p[1] for p in pts]


def plot_triada(ax, rows, t, mode, keys, color):
    """TriADA's line per budget, keys = (nominal, optimistic, pessimistic), the band between
    the last two where the reports have it."""
    for budget, style, width in (("area+power", "-", 2.4), ("area", "--", 1.2)):
        x, y = series(rows, t, mode, budget, keys[:1])
        ax.plot(x, y, style, color=color, lw=width, marker="o" if t != "gemt" else "x",
                label=f"TriADA {NAMES[t]}, {BUDGETS[budget]}")
        band = series(rows, t, mode, budget, keys[1:])
        if band and band[0]:
            ax.fill_between(band[0], band[1], band[2], color=color, alpha=0.12, lw=0)


def plot(rows, path, ylabel, keys, h100_label, h100_scale, cpu):
    """Two panels (fp64, fp32): TriADA at 7 nm per transform and budget beside the H100."""
    plt = pyplot(PROG)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=True)
    for ax, mode in zip(axes, DTYPE):
        for i, t in enumerate(NAMES):
            color, name = f"C{i}", NAMES[t]
            plot_triada(ax, rows, t, mode, keys, color)
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
    fig.suptitle("TriADA modelled at 7 nm (planar die, HBM3; shaded: optimistic to pessimistic where "
                 "modelled) against an H100 (fastest measured method); on TriADA the DCT and GEMT are "
                 "the same dense run", fontsize=9)
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
         ("seconds", "seconds_opt", "seconds_pess"), "fastest measured", 1e-3, cpu=True)
    plot(rows, os.path.join(a.out, "chip_energy.png"), "energy (J)",
         ("energy_j", "energy_opt_j", "energy_pess_j"), f"at most {H100_W} W x time (upper bound)",
         H100_W * 1e-3, cpu=False)
    refused = sum(r["status"] != "ok" for r in rows)
    print(f"{PROG}: {len(rows)} rows ({refused} refused)", file=sys.stderr)


if __name__ == "__main__":
    main()
