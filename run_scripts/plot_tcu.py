#!/usr/bin/env python3
"""Plot triada-tcu --sweep reports: model time vs n (log-log) with the theorem's bound.

Usage: run_scripts/plot_tcu.py REPORT.json [REPORT.json ...] -o DIR

Writes DIR/tcu_<algo>.png per sweep report (DIR/tcu_<algo>_classical.png for a spmm or
apsd sweep with --product classical): for each unit size m, the measured model time
(tensor + CPU, solid, markers) and the theorem's bound with constants 1 (dashed, same
colour) against the theorem's n, with the fitted growth exponent in the legend.
Reports of single runs (no "sweep" array) are skipped with a note.
"""
import argparse
import json
import os
import sys

from plot_common import pyplot

plt = pyplot("plot_tcu.py")

N_MEANING = {
    "matmul": "n = side^2", "strassen": "n = side^2", "spmm": "n = side^2",
    "ge": "n = (equations + 1)^2", "tclosure": "n = vertices", "apsd": "n = vertices",
}


def plot_report(path, outdir):
    with open(path) as f:
        rep = json.load(f)
    rows = rep.get("sweep")
    if not rows:
        print(f"plot_tcu.py: {path}: not a --sweep report, skipped", file=sys.stderr)
        return None
    algo = rep["algo"]
    fits = {f["m"]: f for f in rep.get("fits", [])}
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    ms = sorted({r["m"] for r in rows})
    for i, m in enumerate(ms):
        rs = sorted((r for r in rows if r["m"] == m), key=lambda r: r["n"])
        x = [r["n"] for r in rs]
        colour = f"C{i % 10}"
        fit = fits.get(m, {}).get("fitted_exponent")
        label = f"m = {m}" + (f" (slope {fit:.2f})" if fit is not None else "")
        ax.loglog(x, [r["model_time"]["total"] for r in rs], "o-", color=colour, label=label)
        ax.loglog(x, [r["bound"] for r in rs], "--", color=colour, alpha=0.7)
    ax.plot([], [], "k--", alpha=0.7, label="bound (constants 1)")
    weak = " weak" if rep.get("weak") else ""
    product = rep.get("product")  # spmm, apsd: fast (the default) or classical
    shown = f"{algo}, {product} product" if product else algo
    ax.set_title(f"{shown} ({rep.get('theorem', '')}), l = {rep.get('latency')}{weak}; "
                 f"theorem exponent {rep.get('exponent_theorem', float('nan')):.3f}",
                 fontsize=10)
    ax.set_xlabel(f"n ({N_MEANING.get(algo, 'natural size')})")
    ax.set_ylabel("model time (tensor + CPU units)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    suffix = "_classical" if product == "classical" else ""
    out = os.path.join(outdir, f"tcu_{algo}{suffix}.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", help="triada-tcu --sweep --report files")
    ap.add_argument("-o", "--outdir", required=True, help="output directory")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for path in args.reports:
        try:
            out = plot_report(path, args.outdir)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"plot_tcu.py: error: {path}: {e}")
        if out:
            print(out)


if __name__ == "__main__":
    main()
