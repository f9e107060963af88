#!/usr/bin/env bash
# run_scripts/scaling.sh and run_scripts/sweep.sh work end to end in a tiny configuration
# (12^3, up to 2 ranks, 1 repetition): exit 0, the JSON files parse and hold the expected
# records, every promised PNG exists and is non-empty, and bad options fail with a message.
# No timing is asserted. Run by ctest (label cli).
set -uo pipefail

: "${TRIADA_BIN:?set TRIADA_BIN to the build directory}"
SRC=${TRIADA_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export PYTHON=${PYTHON:-/usr/bin/python3}
export LAUNCHER=${MPIEXEC:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-scripts-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"
pngs_ok() {  # pngs_ok DIR NAME...: each DIR/NAME exists, is non-empty and starts like a PNG
  local d=$1 f
  shift
  for f in "$@"; do
    [[ -s $d/$f ]] || { echo "missing or empty: $d/$f" >&2; return 1; }
    [[ $(head -c 4 "$d/$f" | od -An -c | tr -d ' ') == '211PNG' ]] || { echo "not a PNG: $d/$f" >&2; return 1; }
  done
}
logged() {  # logged LOG CMD...: runs CMD with its output in LOG, shown on failure
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { tail -n 30 "$log" >&2; return 1; }
}
fails_with() {  # fails_with PATTERN CMD...: non-zero exit and PATTERN in stderr
  local pat=$1
  shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then
    echo "expected failure: $*" >&2
    return 1
  fi
  grep -q -- "$pat" <<<"$err" || { echo "stderr lacks '$pat': $err" >&2; return 1; }
}

echo "-- scaling.sh: 12^3, ranks 1 and 2, 1 repetition"
check "scaling.sh --help" bash -c "bash '$SRC/run_scripts/scaling.sh' --help | grep -q -- --max-ranks"
check "scaling.sh exits 0" logged "$dir/scaling.log" bash "$SRC/run_scripts/scaling.sh" --size 12 \
  --max-ranks 2 --reps 1 --out "$dir/sc" --bin "$TRIADA_BIN"
check "scaling.json records" "$PYTHON" - "$dir/sc/scaling.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "triada-scaling/1", d.get("schema")
recs = d["records"]
need = ("kind", "ranks", "shape", "brick_grid", "simulation_seconds", "wall_seconds", "mpi_bytes",
        "bytes_per_rank", "peak_rss_bytes_per_rank", "speedup", "efficiency", "reps")
got = sorted((r["kind"], r["ranks"]) for r in recs)
assert got == [("strong", 1), ("strong", 2), ("weak", 1), ("weak", 2)], got
for r in recs:
    for k in need:
        assert k in r and r[k] is not None, (k, r)
    assert r["simulation_seconds"] > 0 and r["reps"] == 1
    assert len(r["peak_rss_bytes_per_rank"]) == r["ranks"], r
    assert r["brick_grid"][0] * r["brick_grid"][1] * r["brick_grid"][2] == r["ranks"], r
    want = [12, 12, 12] if r["kind"] == "strong" else [6 * r["ranks"], 6, 6]
    assert r["shape"] == want, (r["shape"], want)
one = {r["kind"]: r for r in recs if r["ranks"] == 1}
assert all(abs(v["speedup"] - 1) < 1e-12 for v in one.values())
two = [r for r in recs if r["ranks"] == 2]
assert all(r["mpi_bytes"] > one[r["kind"]]["mpi_bytes"] for r in two), "2 ranks should move more bytes"
EOF
check "scaling PNGs" pngs_ok "$dir/sc" scaling_strong.png scaling_weak.png scaling_bytes.png
check "scaling table printed" grep -q "^strong .* 2 " "$dir/scaling.log"

echo "-- sweep.sh: 12^3, 13 inputs x ESOP on/off"
check "sweep.sh --help" bash -c "bash '$SRC/run_scripts/sweep.sh' --help | grep -q -- --trace-case"
check "sweep.sh exits 0" logged "$dir/sweep.log" bash "$SRC/run_scripts/sweep.sh" --size 12 \
  --reps 1 --out "$dir/sw" --bin "$TRIADA_BIN"
check "sweep.json records" "$PYTHON" - "$dir/sw/sweep.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "triada-sweep/1", d.get("schema")
recs = d["records"]
cases = {("random", f) for f in (0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)} | \
        {(k, f) for k in ("lines", "planes") for f in (0.25, 0.5, 0.9)}
got = {(r["kind"], r["fraction"], r["esop"]) for r in recs}
assert len(recs) == 26 and got == {(k, f, e) for k, f in cases for e in (True, False)}, sorted(got)
for r in recs:
    for k in ("macs", "macs_dense", "x_bus_sends", "y_bus_sends", "y_bus_receives", "waits",
              "energy_pj", "energy_pj_dense", "input_zero_fraction", "per_stage"):
        assert k in r, (k, r)
    assert r["shape"] == [12, 12, 12]
    if r["esop"]:
        assert r["macs"] <= r["macs_dense"] and r["energy_pj"] <= r["energy_pj_dense"] * (1 + 1e-12), r
    else:
        assert r["macs"] == r["macs_dense"] and r["waits"] == 0, r
by = {(r["kind"], r["fraction"], r["esop"]): r for r in recs}
assert by[("random", 0.99, True)]["macs"] < by[("random", 0.5, True)]["macs"] < by[("random", 0.0, True)]["macs"] + 1
assert abs(by[("lines", 0.9, True)]["input_zero_fraction"] - 0.9) < 0.02
EOF
check "traces of the representative run" bash -c "
  head -1 '$dir/sw/trace_lines_0.9_esop_on.csv' | grep -q '^step,stage,axis,pivot,x_bus_sends,y_bus_sends,y_bus_receives,waits,macs,cycles,time_ps$' &&
  [[ \$(wc -l <'$dir/sw/trace_lines_0.9_esop_off.csv') -eq 37 ]]"
check "sweep PNGs" pngs_ok "$dir/sw" sweep_macs.png sweep_bus.png sweep_energy.png activity.png

echo "-- errors name the problem"
check "unknown option" fails_with "unknown option '--bogus'" bash "$SRC/run_scripts/scaling.sh" --bogus
check "bad --size" fails_with "--size must be a positive integer" bash "$SRC/run_scripts/sweep.sh" --size 0
check "missing binaries" fails_with "triada-transform not found" \
  bash "$SRC/run_scripts/scaling.sh" --bin "$dir/nowhere" --out "$dir/x"
check "bad --trace-case" fails_with "is not one of" bash "$SRC/run_scripts/sweep.sh" --trace-case lines:0.3 \
  --bin "$TRIADA_BIN" --out "$dir/x"
check "plot of a bad file" fails_with "plot_scaling.py: error" "$PYTHON" "$SRC/run_scripts/plot_scaling.py" \
  "$dir/sw/sweep.json"

summary
