#!/usr/bin/env bash
# run_scripts/chip_compare.sh --quick --no-bench (N 16 and 128) writes its CSV, table, plots
# and commands; every row is within the H100's budget (area <= 814 mm^2; iso-power rows
# <= 700 W), every (node, shape family, transform, mode, budget, N) has its one row, and the
# H100 columns are those of data/anchors/h100.json (read here on their own) with the ratio
# H100 ms / TriADA ms; the same holds for the committed results, doc/chip_compare. A
# refused configuration's row keeps its error line. Existing results are refused without
# --force and left as they were; a bad option is one line, exit 2. Run by ctest (label cli).
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
# at SIZES, the H100 columns from the anchors on the cubic rows of ANCHORED sizes.
check_rows() {
  pycheck "$1: every row within the budget, every combination once, the H100 columns from the anchors" '
import csv, math
rows = list(csv.DictReader(open(a[0])))
anchors = json.load(open(a[1]))
key = {"dft": "fft_3d", "dct": "dct_3d", "gemt": "gemt_3d"}
dtype = {"fp64": "float64", "fp32": "float32"}
want = {(node, fam, t, m, b, n) for node in ("7 nm", "4N (estimate)", "7 nm, MAC 8x slower") for fam in ("cubic", "noncubic")
        for t in key for m in dtype for b in ("area", "area+power") for n in map(int, a[2].split(","))}
got = [(r["node"], r["family"], r["transform"], r["mode"], r["budget"], int(r["n"])) for r in rows]
assert sorted(got) == sorted(want), (len(got), set(want) ^ set(got))
anchored = 0
for r in rows:
    assert r["status"] == "ok", r
    assert 0 < float(r["area_mm2"]) <= 814, r
    if r["budget"] == "area+power":
        assert 0 < float(r["power_w"]) <= 700, r
    n = int(r["n"])
    ms = [x["ms"] for x in anchors[key[r["transform"]]]["results"]
          if x["n"] == n and x["dtype"] == dtype[r["mode"]]] if r["family"] == "cubic" else []
    if not ms:
        assert r["h100_ms"] == r["h100_over_triada"] == "", r
        continue
    anchored += 1
    assert float(r["h100_ms"]) == ms[0], (r, ms)
    ratio = ms[0] / (float(r["seconds"]) * 1e3)
    assert math.isclose(float(r["h100_over_triada"]), ratio, rel_tol=1e-8), (r, ratio)
assert anchored == 3 * 3 * 2 * 2 * int(a[3]), anchored  # nodes x transforms x modes x budgets x N
' "$1" "$TRIADA_SRC/data/anchors/h100.json" "$2" "$3"
}
check_rows res/chip_compare.csv 16,128 1
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
