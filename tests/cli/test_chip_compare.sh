#!/usr/bin/env bash
# run_scripts/chip_compare.sh --quick --no-bench (N 16 and 128) writes its CSV, table, plots
# and commands; every row is within the H100's budget (area <= 814 mm^2; iso-power rows
# <= 700 W), every (node, shape family, transform, mode, budget, N) has its one row, and the
# H100 columns are recomputed here from data/anchors/h100.json: the fastest measured method
# that computes the transform (a DCT-II also by the GEMMs), its time, its HBM floor and
# passes (lower bounds from its structure), its bound, and the ratios H100 ms / TriADA ms
# (nominal, over TriADA's band, at equal peak); the same holds for the committed results,
# doc/chip_compare. TriADA's floor, peak, band and outline are checked against reports of
# its commands run again. A refused configuration's row keeps its error line. Existing
# results are refused without --force and left as they were; a bad option is one line,
# exit 2. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"
SCRIPT="$TRIADA_SRC/run_scripts/chip_compare.sh"
export PYTHON

in_scratch_dir chip_compare

# refused CODE PATTERN ARGS...: the script exits CODE with one stderr line holding PATTERN.
refused() {
  local code=$1 pattern=$2 rc=0
  shift 2
  bash "$SCRIPT" "$@" >out.txt 2>err.txt || rc=$?
  if [[ $rc -ne $code ]]; then
    fail "chip_compare.sh $*: exit $rc, expected $code: $(cat err.txt)"
  elif [[ $(wc -l <err.txt) -ne 1 ]] || ! grep -q "^chip_compare.sh: error: .*$pattern" err.txt; then
    fail "chip_compare.sh $*: expected one 'error: ...$pattern' line, got: $(cat err.txt)"
  else
    pass
  fi
}

if bash "$SCRIPT" --quick --no-bench --bin "$TRIADA_BIN" --out res 2>run.err; then
  pass
else
  fail "chip_compare.sh --quick --no-bench: $(tail -n 5 run.err)"
fi
for f in chip_compare.csv chip_compare.md chip_time.png chip_energy.png commands.txt; do
  if [[ -s res/$f ]]; then pass; else fail "res/$f missing or empty"; fi
done

# check_rows CSV SIZES ANCHORED: every row of CSV within the budget, one row per combination
# at SIZES, and the H100 columns recomputed here from the anchors on the cubic rows of
# ANCHORED sizes: the fastest measured method that computes the transform, its time, its
# HBM floor (a lower bound from its passes, over 3.35 TB/s) and bound, and the ratios.
check_rows() {
  pycheck "$1: every row within the budget, every combination once, the H100 columns from the anchors" '
import csv, math
rows = list(csv.DictReader(open(a[0])))
anchors = json.load(open(a[1]))
methods = {"dft": ["fft_3d"], "dct": ["dct_3d", "gemt_3d"], "gemt": ["gemt_3d"]}  # a DCT-II is a GEMT too
names = {"fft_3d": "cuFFT fftn", "dct_3d": "cupyx dctn", "gemt_3d": "cuBLAS 3 GEMMs"}
dtype = {"fp64": "float64", "fp32": "float32"}
word = {"fp64": 8, "fp32": 4}
def traffic(k, n, w):  # (passes, bytes), each pass reading and writing the tensor once
    return {"gemt_3d": (3, 3 * 2 * w * n**3 + 3 * w * n**2),  # three GEMMs, three N x N matrices
            "fft_3d": (2, 2 * 2 * (2 * w) * n**3),  # complex: cuFFT, then the ortho scaling
            "dct_3d": (3, 3 * 2 * w * n**3)}[k]  # one pass per axis
flops = lambda k, n: 2 * 3 * n**4 if k == "gemt_3d" else 5 * n**3 * math.log2(n**3)
close = lambda x, y: math.isclose(float(x), y, rel_tol=1e-8)
h100 = ["h100_ms", "h100_method", "h100_passes", "h100_floor_ms", "h100_bound", "h100_over_triada",
        "h100_over_triada_range", "h100_over_triada_iso_peak"]
want = {(node, fam, t, m, b, n) for node in ("7 nm", "4N (estimate)", "7 nm, MAC 8x slower") for fam in ("cubic", "noncubic")
        for t in methods for m in dtype for b in ("area", "area+power") for n in map(int, a[2].split(","))}
got = [(r["node"], r["family"], r["transform"], r["mode"], r["budget"], int(r["n"])) for r in rows]
assert sorted(got) == sorted(want), (len(got), set(want) ^ set(got))
anchored = 0
for r in rows:
    assert r["status"] == "ok", r
    assert 0 < float(r["area_mm2"]) <= 814, r
    if r["budget"] == "area+power":
        assert 0 < float(r["power_w"]) <= 700, r
    assert r["triada_bound"] == r["bound"], r
    assert 0 < float(r["triada_floor_ms"]) <= float(r["seconds"]) * 1e3 * (1 + 1e-9), r  # a floor
    for lo, x, hi in (("seconds_opt", "seconds", "seconds_pess"),  # a band, where the reports
                      ("energy_opt_j", "energy_j", "energy_pess_j")):  # have one, holds the nominal
        assert r[lo] == r[hi] == "" or float(r[lo]) <= float(r[x]) <= float(r[hi]), r
    n, m, t = int(r["n"]), r["mode"], r["transform"]
    found = [(x["ms"], k) for k in methods[t] for x in anchors[k]["results"]
             if x["n"] == n and x["dtype"] == dtype[m]] if r["family"] == "cubic" else []
    if not found:
        assert all(r[c] == "" for c in h100), r
        continue
    anchored += 1
    ms, k = min(found)
    assert float(r["h100_ms"]) == ms and r["h100_method"].startswith(names[k]), (r, found)
    assert ("GEMT route" in r["h100_method"]) == (t == "dct" and k == "gemt_3d"), r
    passes, nbytes = traffic(k, n, word[m])
    floor, compute = nbytes / 3.35e12 * 1e3, flops(k, n) / 67e12 * 1e3
    assert int(r["h100_passes"]) == passes and close(r["h100_floor_ms"], floor), (r, floor)
    assert r["h100_bound"] == ("memory" if floor > compute else "compute"), (r, floor, compute)
    assert max(floor, compute) < ms, (r, floor, compute)  # lower bounds of the measured time
    assert ("ortho" in r["note"]) == (k == "fft_3d"), r
    ratio = ms / (float(r["seconds"]) * 1e3)
    assert close(r["h100_over_triada"], ratio), (r, ratio)
    peak = r["triada_peak_tflops"]
    iso = r["h100_over_triada_iso_peak"]  # as if TriADA had the H100 peak, 67 TFLOP/s
    assert iso == peak == "" or close(iso, ratio * 67 / float(peak)), r
    if r["seconds_opt"]:
        lo, hi = map(float, r["h100_over_triada_range"].split("-"))
        assert math.isclose(lo, ms / (float(r["seconds_pess"]) * 1e3), rel_tol=1e-3), r
        assert math.isclose(hi, ms / (float(r["seconds_opt"]) * 1e3), rel_tol=1e-3), r
    else:
        assert r["h100_over_triada_range"] == "", r
assert anchored == 3 * 3 * 2 * 2 * int(a[3]), anchored  # nodes x transforms x modes x budgets x N
' "$1" "$TRIADA_SRC/data/anchors/h100.json" "$2" "$3"
}
check_rows res/chip_compare.csv 16,128 1
# TriADA's columns against its own reports: the 7 nm N = 128 area-budget commands of
# commands.txt run again here. Its floor is the bytes it reads and writes over its memory's
# bandwidth; its peak, band and outline are the report's own where it has them.
# shellcheck disable=SC2016 # $BIN and $SRC are commands.txt's own placeholders
pycheck "TriADA's floor, bound, peak, band and outline from its reports" '
import csv, math, os, re, shlex, subprocess
rows = {(r["transform"], r["mode"]): r for r in csv.DictReader(open(a[0]))
        if (r["node"], r["family"], r["n"], r["budget"]) == ("7 nm", "cubic", "128", "area")}
os.makedirs("rerun/reports", exist_ok=True)
close = lambda x, y: math.isclose(float(x), y, rel_tol=1e-8)
done = 0
for line in open(a[1]):
    tag = re.search(r"reports/7nm_cubic_128_(\w+)_(fp\d+)_area\.json", line)
    if not line.startswith("$BIN/") or not tag:
        continue
    argv = [w.replace("$BIN/", a[2] + "/", 1).replace("$SRC/", a[3] + "/", 1) for w in shlex.split(line)]
    subprocess.run(argv, cwd="rerun", check=True)
    p = json.load(open(os.path.join("rerun", argv[argv.index("--report") + 1])))["physical"]
    r, m = rows[tag.groups()], p["memory"]
    floor = (m["bytes_read"] + m["bytes_written"]) / (m["gbps"] * 1e9) * 1e3
    assert close(r["triada_floor_ms"], floor), (r, m)
    assert r["triada_bound"] == p["bound"], r
    peak = r["triada_peak_tflops"]
    assert peak == "" if "peak_flops" not in p else close(peak, p["peak_flops"] / 1e12), r
    rng = p.get("range", {})
    for c, k, i in (("seconds_opt", "seconds", 0), ("seconds_pess", "seconds", 2),
                    ("energy_opt_j", "energy_j", 0), ("energy_pess_j", "energy_j", 2)):
        assert r[c] == "" if k not in rng else close(r[c], rng[k][i]), (r, c)
    x, y = p["chip"]["outline_mm"]
    got = [float(v) for v in r["outline_mm"].split(" x ")]
    assert len(got) == 2 and all(math.isclose(v, w, rel_tol=1e-3) for v, w in zip(got, (x, y))), r
    done += 1
assert done == 6, done  # 3 transforms x 2 modes
' res/chip_compare.csv res/commands.txt "$TRIADA_BIN" "$TRIADA_SRC"
pycheck "chip_compare.md: the H100 method, both floors, the bounds, the ratio at equal peak, the notes" '
import csv
md = open(a[1]).read()
for s in ("| H100 method |", "| TriADA HBM floor ms |", "| H100 HBM floor ms |",
          "| H100 / TriADA at equal fp64 peak |", "cuBLAS 3 GEMMs (GEMT route)", "cuFFT fftn",
          "ortho-scaling pass", "lower bound"):
    assert s in md, s
both = {r["transform"] for r in csv.DictReader(open(a[0])) if (r["node"], r["family"], r["n"], r["mode"]) ==
        ("7 nm", "cubic", "128", "fp64") and r["triada_bound"] == r["h100_bound"] == "memory"}
names = {"dct": "DCT-II", "dft": "DFT", "gemt": "GEMT"}
line = next((l for l in md.splitlines() if "not the dataflow" in l), "")
assert all(f"{names[t]} at N = 128" in line for t in both) and bool(line) == bool(both), (both, line)
' res/chip_compare.csv res/chip_compare.md
# The committed results (doc/chip_compare): the same, at the default sizes, where the power
# cap binds (a clock stretched to 700 W).
committed="$TRIADA_SRC/doc/chip_compare/chip_compare.csv"
check_rows "$committed" 64,128,256,512,1024 3
pycheck "$committed: the power cap binds" '
import csv, math
capped = [r for r in csv.DictReader(open(a[0])) if float(r["period_stretch"]) > 1]
assert capped and all(r["budget"] == "area+power" for r in capped), capped
assert all(math.isclose(float(r["power_w"]), 700, rel_tol=1e-6) for r in capped), capped
' "$committed"
pycheck "$committed: a MAC 8x slower never computes faster, and its clock is slower" '
import csv
rows = list(csv.DictReader(open(a[0])))
at = lambda r: (r["family"], r["n"], r["transform"], r["mode"], r["budget"])
seven = {at(r): r for r in rows if r["node"] == "7 nm"}
slow = [r for r in rows if r["node"] == "7 nm, MAC 8x slower"]
assert len(slow) == len(seven)
for r in slow:
    s = seven[at(r)]
    assert float(r["compute_s"]) >= float(s["compute_s"]), (r, s)
    assert float(r["clock_ghz"]) < float(s["clock_ghz"]), (r, s)
' "$committed"

# shellcheck disable=SC2016 # $BIN is commands.txt's own placeholder
pycheck "commands.txt: one triada-transform --model-only command per row, dense gemt too" '
import csv
rows = list(csv.DictReader(open(a[0])))
cmds = [l for l in open(a[1]) if l.startswith("$BIN/triada-transform ")]
assert len(cmds) == len(rows), (len(cmds), len(rows))
gemt = [c for c in cmds if " -t gemt " in c]
assert len(gemt) == sum(r["transform"] == "gemt" for r in rows)
assert all(" --model-only " in c and "--coeffs" not in c for c in cmds)
# fp32 cells: the FPMax SP unit, derived from its title figures here (217 GFLOPS/mm^2, 106
# GFLOPS/W, 1.42 ns at 28 nm; the 28 nm factors interpolated between the 32 and 20 nm ones
# of the tables, as doc/physical.md §6.2): issue 1949 ps (8 times that when slow), latency
# 2050 ps, area 18544 um^2, energy 44.9 pJ at 45 nm; fp64 cells keep the built-in DP unit.
import math, re
w = math.log(32 / 28) / math.log(32 / 20)
mix = lambda x, y: x * (y / x) ** w
a28, d28, e28 = mix(0.46, 0.21), mix(0.66856, 0.757384), mix(0.530814, 0.233151)
issue = 1e3 / 1.98 / 0.2591248
want = {"mac_latency_ps_fp32": round(1420 / d28), "area.mac_um2_fp32": round(2 / (217e9 * a28 * d28 * issue * 1e-12) * 1e6),
        "energy.mac_pj_fp32": round(2 / 106e9 / e28 * 1e12, 1)}
for c in cmds:
    fp32 = " --cell.mode fp32 " in c
    for key, v in want.items():
        m = re.search(r"--(?:timing\.)?" + re.escape(key) + r" (\S+)", c)
        assert (m is not None) == fp32, (key, c)
        if m:
            assert float(m.group(1)) == v, (key, m.group(1), v)
    if fp32:
        m = re.search(r"--timing\.mac_ps_fp32 (\d+)", c)
        assert int(m.group(1)) == round(issue) * (8 if "_slow" in c or "slow_" in c else 1), c
' res/chip_compare.csv res/commands.txt

# A refused configuration: its run left an error line and no report; the row keeps the line.
# A run that left neither fails the collection, naming its log.
mkdir -p refused/logs refused/reports
tag=7nm_cubic_128_dct_fp64_area
printf '%s\t7nm\tcubic\t128\t128x128x128\tdct\tfp64\tarea\n' "$tag" >refused/runs.tsv
line="triada-transform: error: chip: no mesh fits"
echo "$line" >"refused/logs/$tag.log"
collect() { (cd refused && "$PYTHON" "$TRIADA_SRC/run_scripts/chip_compare.py" . out \
  --anchors "$TRIADA_SRC/data/anchors/h100.json"); }
if collect 2>refused.err; then pass; else fail "collecting a refused row: $(cat refused.err)"; fi
pycheck "a refused row keeps its error line, the H100 beside it, no ratio" '
import csv
[r] = list(csv.DictReader(open(a[0])))
assert r["status"] == "refused" and r["note"] == a[1], r
assert r["seconds"] == r["h100_over_triada"] == "" and float(r["h100_ms"]) > 0, r
assert a[1] in open(a[2]).read()
' refused/out/chip_compare.csv "$line" refused/out/chip_compare.md
: >"refused/logs/$tag.log"
if collect 2>refused.err; then
  fail "a run with neither report nor error line was collected"
elif [[ $(wc -l <refused.err) -eq 1 ]] && grep -q "error: .*$tag.log: no report and no error line" refused.err; then
  pass
else
  fail "a run with neither report nor error line: $(cat refused.err)"
fi

sum_before=$(cat res/* | md5sum)
refused 2 "already holds results.*--force" --quick --no-bench --bin "$TRIADA_BIN" --out res
if [[ $(cat res/* | md5sum) == "$sum_before" ]]; then pass; else fail "a refused run changed res/"; fi
refused 2 "unknown option '--sizez'" --sizez 16 --out other
refused 2 "--out DIR is required" --quick
refused 2 "--sizes must be even" --sizes 15 --out other
if [[ ! -e other ]]; then pass; else fail "a refused run created its --out"; fi

summary
