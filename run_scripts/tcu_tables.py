#!/usr/bin/env python3
"""Print the TCU growth tables of doc/mxu.md, doc/tcu.md and doc/tcu_numeric.md.

Usage: run_scripts/tcu_tables.py [--table readme|linear|numeric|all] [--bin DIR] [--np R]
                                 [--out DIR] [--reports DIR] [--quick]

Runs `triada-tcu --algo NAME --sweep` for the algorithms a table needs and prints the table
in Markdown, as the document holds it (each run verified):

  readme   doc/mxu.md, "The planar MXU and the TCU algorithms": all eleven algorithms,
           --latency 10, the default sizes and m in {4, 16, 64, 256}; spmm and apsd with
           the fast product (the default) and again with --product classical
  linear   doc/tcu.md, "Measured growth against the theorems": Theorems 1-6, the same runs
  numeric  doc/tcu_numeric.md, "Bounds and measured growth": Theorems 7-11, --latency 32,
           the larger sizes of numeric_sizes() below, one sweep per (algorithm, m)
  all      the three (the default; about 5 minutes on a 2-core machine)

Below the readme and linear tables it prints the fast product's model time over the
classical one's at each (size, m) of the spmm and apsd sweeps (its range).

Fits are least-squares slopes of log(model time) against log(n), n the theorem's n, rounded
once from the reports' full precision. --out DIR keeps the reports (plot_tcu.py draws them);
--reports DIR prints the tables again from reports kept that way, running nothing; --np R
runs each sweep under mpirun with R ranks (the results do not depend on it); --quick runs
tiny sizes at m = 16 only, to check the script, not the tables. Exits 1 if a run fails or
is not verified.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

PROG = "tcu_tables.py"
LINEAR = ["matmul", "strassen", "spmm", "ge", "tclosure", "apsd"]
NUMERIC = ["dft", "stencil", "intmul", "karatsuba", "polyeval"]
PRODUCTS = ["spmm", "apsd"]  # run with the fast product (the default) and the classical one
MS = [4, 16, 64, 256]

# The theorem's exponent as the tables write it (the reports give the number).
EXPONENT_TEXT = {
    "matmul": "1.5", "strassen": "log4 7 = 1.404", "spmm": "1 (balanced output)",
    "ge": "1.5", "tclosure": "3 (n = vertices)", "apsd": "3 (x log n)",
    "dft": "1 (x log_m n)", "stencil": "1 (n = side^2)", "intmul": "2 (n = bits)",
    "karatsuba": "log2 3 = 1.585", "polyeval": "2 (p = n points)",
}
README_NOTE = {"stencil": " (k changes with m and size)"}
# The README's exponent for spmm and apsd, in omega_0 (then each product's value).
README_PRODUCT_EXPONENT = {"spmm": "1/4 + omega_0/2 (balanced output, Z ~ sqrt(n))",
                           "apsd": "2 omega_0 (x log n)"}
# Where the README gives the fast product's bound slope beside its fit: what it includes.
README_BOUND_NOTE = {"apsd": "with its log n"}
# doc/tcu.md's theorem exponent: the number, then this (per product for spmm and apsd).
LINEAR_EXPONENT_NOTE = {
    "strassen": " (log4 7)", ("spmm", "fast"): " (1/4 + log_4(7)/2)",
    ("apsd", "fast"): " (2 log_4 7, x log n)", ("apsd", "classical"): " (x log n)",
}
# doc/tcu_numeric.md's bound column: the theorem's expression (constants 1).
NUMERIC_BOUND = {
    "dft": "`(n + l) max(1, log_m n)`",
    "stencil": "`n max(1, log_m k) + l max(1, log2 k)`, `n = N^2`",
    "intmul": "`n^2/(kappa^2 sqrt m) + n l/(kappa m)`",
    "karatsuba": "`(n/(kappa sqrt m))^log2(3) (sqrt m + l/sqrt m)`",
    "polyeval": "`p n/sqrt m + p sqrt m + (n/m) l`, `p = n`",
}


def numeric_sizes(algo, m):
    """The sizes of doc/tcu_numeric.md's table for one algorithm and unit size."""
    s = math.isqrt(m)
    if algo == "dft":  # powers of s from 64 (256 for m = 256) to 2^20 (2^18 for m = 64)
        lo, hi = (256 if m == 256 else 64), (2**18 if m == 64 else 2**20)
        return [s**e for e in range(1, 21) if lo <= s**e <= hi]
    if algo == "stencil":  # matrix sides
        return {4: [32, 64, 128, 256, 512], 16: [32, 64, 128, 256, 512],
                64: [80, 160, 320, 640], 256: [168, 336, 672]}[m]
    if algo in ("intmul", "karatsuba"):
        return [1000, 2000, 5000, 10000, 20000, 50000, 100000]
    return [2**e for e in range(6, 13)]  # polyeval: 64 .. 4096 coefficients


def quick_sizes(algo, m):
    s = math.isqrt(m)
    return {"dft": [s**2, s**3], "stencil": [16, 24], "intmul": [500, 1000],
            "karatsuba": [500, 1000], "polyeval": [64, 128], "spmm": [64, 128],
            "tclosure": [16, 32], "apsd": [16, 32], "ge": [15, 31]}.get(algo, [16, 32])


class Runner:
    def __init__(self, args):
        self.app = os.path.join(args.bin, "triada-tcu")
        self.reports = args.reports
        if not self.reports and not os.access(self.app, os.X_OK):
            sys.exit(f"{PROG}: error: {self.app} not found or not executable "
                     f"(build it: cmake --build {args.bin} --target triada-tcu)")
        self.np, self.out, self.quick = args.np, args.out, args.quick

    def sweep(self, name, algo, latency, ms, sizes=None, extra=()):
        """Rows and fits of one `triada-tcu --sweep` (all ms, or one m with its sizes)."""
        if self.reports:  # printed again from the reports of an earlier --out
            with open(os.path.join(self.reports, name + ".json")) as f:
                return json.load(f)
        path = os.path.join(self.out, name + ".json")
        cmd = [self.app, "--algo", algo, "--sweep", "--latency", str(latency), "--report", path,
               "--force", "--ms", ",".join(map(str, ms))]
        if sizes:
            cmd += ["--sizes", ",".join(map(str, sizes))]
        cmd += list(extra)
        if self.np > 1:
            cmd = ["mpirun", "--oversubscribe", "-np", str(self.np)] + cmd
        shown = " ".join(cmd[cmd.index(self.app):])
        start = time.monotonic()
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        print(f"{PROG}: {shown} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)
        if run.returncode != 0:
            sys.exit(f"{PROG}: error: {algo} sweep failed (exit {run.returncode}): "
                     f"{run.stderr.strip() or run.stdout.strip()}")
        with open(path) as f:
            rep = json.load(f)
        if not rep["verified"]:
            sys.exit(f"{PROG}: error: {algo} sweep has runs that are not verified ({path})")
        if "--product" in extra and rep.get("product") != extra[extra.index("--product") + 1]:
            sys.exit(f"{PROG}: error: {path} reports the product {rep.get('product')}")
        return rep

    def default_sweep(self, algo, product=None):
        """The default sweep (--product PRODUCT where given)."""
        extra = ["--product", product] if product else []
        tag = f"{algo}_{product}" if product else algo
        if self.quick:  # m = 16 only, tiny sizes
            return self.sweep(f"quick_{tag}", algo, 10, [16], quick_sizes(algo, 16), extra)
        return self.sweep(f"default_{tag}", algo, 10, MS, None, extra)

    def numeric_sweep(self, algo):
        ms, sizes = ([16], quick_sizes) if self.quick else (MS, numeric_sizes)
        return merge([self.sweep(f"numeric_{algo}_{m}", algo, 32, [m], sizes(algo, m))
                      for m in ms])


def merge(reps):
    out = dict(reps[0])
    out["sweep"] = [r for rep in reps for r in rep["sweep"]]
    out["fits"] = [f for rep in reps for f in rep["fits"]]
    return out


def slope(xs, ys):
    """Least-squares slope of log y against log x (as triada-tcu's fit)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    k = len(lx)
    mx, my = sum(lx) / k, sum(ly) / k
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den > 0 else float("nan")


def rows_of(rep, m):
    return sorted((r for r in rep["sweep"] if r["m"] == m), key=lambda r: r["n"])


def fits(rep, key="fitted_exponent"):
    by_m = {f["m"]: f[key] for f in rep["fits"]}
    return [by_m[m] for m in sorted(by_m)]


def joined(values, digits=2):
    return " / ".join("n/a" if v is None else f"{v:.{digits}f}" for v in values)


def sig3(v):
    """Three significant digits, trailing zeros kept, no trailing point: 5.00, 15.8, 824."""
    return format(v, "#.3g").rstrip(".")


def ratio_text(v):
    """Ratios as doc/tcu.md writes them: 246, 32.9, 6.2, 0.34."""
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else format(v, "#.2g")


def span(values, fmt=None):
    show = fmt if callable(fmt) else (lambda v: format(v, fmt)) if fmt else sig3
    lo, hi = show(min(values)), show(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def theorem_number(rep):
    return rep["theorem"].split()[-1]


def trimmed(v):
    """Three decimals without trailing zeros: 0.952, 1, 2.807."""
    return format(v, ".3f").rstrip("0").rstrip(".")


def readme_cells(algo, reports, classical):
    """The exponent and fitted cells of one README row."""
    rep = reports[algo]
    if algo not in classical:
        return EXPONENT_TEXT[algo], joined(fits(rep))
    other = classical[algo]
    exponent = (f"{README_PRODUCT_EXPONENT[algo]}: {trimmed(rep['exponent_theorem'])} fast "
                f"(default), {trimmed(other['exponent_theorem'])} classical")
    note = ""
    if algo in README_BOUND_NOTE:
        note = (f" (the bound's slope over these sizes, {README_BOUND_NOTE[algo]}: "
                f"{span(fits(rep, 'bound_fitted_exponent'), '.2f')})")
    return exponent, f"fast {joined(fits(rep))}{note}; classical {joined(fits(other))}"


def readme_table(reports, classical):
    print("| algorithm | theorem | theorem's exponent in n | fitted, m = 4 / 16 / 64 / 256 | plot |")
    print("| --- | --- | --- | --- | --- |")
    for algo in LINEAR + NUMERIC:
        rep = reports[algo]
        exponent, fitted = readme_cells(algo, reports, classical)
        note = README_NOTE.get(algo, "")
        if all(r["model_time"]["total"] == r["bound"] for r in rep["sweep"]):
            note = " (model time = bound exactly)"
        print(f"| `{algo}` | {theorem_number(rep)} | {exponent} | {fitted}{note} | "
              f"[png](doc/img/tcu_{algo}.png) |")
    product_ratios(reports, classical)


def product_ratios(reports, classical):
    """The fast product's model time over the classical one's at each (size, m)."""
    parts = []
    for algo in PRODUCTS:
        if algo not in classical:
            continue
        fast = {(r["size"], r["m"]): r["model_time"]["total"] for r in reports[algo]["sweep"]}
        ratios = [fast[(r["size"], r["m"])] / r["model_time"]["total"]
                  for r in classical[algo]["sweep"] if (r["size"], r["m"]) in fast]
        parts.append(f"`{algo}` {span(ratios, '.1f')}")
    print(f"\nFast / classical model time at each size and m of these sweeps: "
          f"{', '.join(parts)}.")


def size_text(rep):
    """'side 32..512', or per m where they differ: '32..512 (m = 4), 64..1024'."""
    word = {"matmul": "side", "strassen": "side", "spmm": "side", "ge": "equations",
            "tclosure": "vertices", "apsd": "vertices"}.get(rep["algo"], "size")
    ranges = {}
    for f in rep["fits"]:
        rs = rows_of(rep, f["m"])
        ranges.setdefault(f"{rs[0]['size']}..{rs[-1]['size']}", []).append(f["m"])
    if len(ranges) == 1:
        return f"{word} {next(iter(ranges))}"
    parts = sorted(ranges.items(), key=lambda kv: len(kv[1]))
    main = parts[-1][0]
    others = [f"{r} (m = {', '.join(map(str, ms))})" for r, ms in parts[:-1]]
    return f"{word} {', '.join(others)}, {main}"


def linear_row(label, rep, note):
    ratios = [r["ratio"] for r in rep["sweep"]]
    ratio = "1.00 (exact)" if all(r == 1 for r in ratios) else span(ratios, ratio_text)
    print(f"| {label} | {rep['theorem']} | {rep['exponent_theorem']:.3f}{note} | "
          f"{joined(fits(rep))} | {joined(fits(rep, 'bound_fitted_exponent'))} | "
          f"{size_text(rep)} | {ratio} |")


def linear_table(reports, classical):
    print("| algorithm | theorem | theorem exponent | fitted, m = 4 / 16 / 64 / 256 | "
          "bound slope, m = 4 / 16 / 64 / 256 | sizes | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for algo in LINEAR:
        if algo not in classical:
            linear_row(f"`{algo}`", reports[algo], LINEAR_EXPONENT_NOTE.get(algo, ""))
            continue
        linear_row(f"`{algo}`, fast (default)", reports[algo],
                   LINEAR_EXPONENT_NOTE.get((algo, "fast"), ""))
        linear_row(f"`{algo} --product classical`", classical[algo],
                   LINEAR_EXPONENT_NOTE.get((algo, "classical"), ""))
    product_ratios(reports, classical)


def numeric_table(reports):
    print("| algorithm | theorem | bound | theorem exponent | measured exponent, "
          "m = 4 / 16 / 64 / 256 (all sizes) | top 3 sizes | bound's own fit | "
          "ratio model/bound at the largest size, m = 16 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for algo in NUMERIC:
        rep = reports[algo]
        ms = sorted({f["m"] for f in rep["fits"]})
        top3 = []
        for m in ms:
            rs = rows_of(rep, m)[-3:]
            top3.append(slope([r["n"] for r in rs], [r["model_time"]["total"] for r in rs]))
        largest16 = rows_of(rep, 16)[-1]["ratio"]
        print(f"| {algo} | {theorem_number(rep)} | {NUMERIC_BOUND[algo]} | "
              f"{EXPONENT_TEXT[algo]} | {joined(fits(rep), 3)} | {joined(top3, 3)} | "
              f"{span(fits(rep, 'bound_fitted_exponent'), '.2f')} | {sig3(largest16)} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--table", choices=["readme", "linear", "numeric", "all"], default="all")
    ap.add_argument("--bin", default=os.environ.get("TRIADA_BIN", os.path.join(here, "build")),
                    help="build directory with triada-tcu (default: $TRIADA_BIN, else build/)")
    ap.add_argument("--np", type=int, default=1, help="MPI ranks per sweep (default 1)")
    ap.add_argument("--out", help="keep the reports in this directory")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: checks the script only")
    ap.add_argument("--reports", help="print from the reports an earlier --out kept, run nothing")
    args = ap.parse_args()
    if args.np < 1:
        ap.error("--np must be >= 1")
    tmp = None
    if not args.out:
        args.out = tmp = tempfile.mkdtemp(prefix="tcu_tables.")
    os.makedirs(args.out, exist_ok=True)
    try:
        runner = Runner(args)
        want = ["readme", "linear", "numeric"] if args.table == "all" else [args.table]
        default, classical = {}, {}
        if "readme" in want or "linear" in want:
            for algo in (LINEAR + NUMERIC if "readme" in want else LINEAR):
                default[algo] = runner.default_sweep(algo)
            for algo in PRODUCTS:
                classical[algo] = runner.default_sweep(algo, "classical")
        for t in want:
            if t == "numeric":
                numeric = {algo: runner.numeric_sweep(algo) for algo in NUMERIC}
            print(f"\nPrinted by `run_scripts/tcu_tables.py --table {t}"
                  f"{' --quick' if args.quick else ''}`:\n")
            {"readme": lambda: readme_table(default, classical),
             "linear": lambda: linear_table(default, classical),
             "numeric": lambda: numeric_table(numeric)}[t]()
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
