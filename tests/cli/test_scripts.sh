#!/usr/bin/env bash
# run_scripts/scaling.sh works end to end in a tiny configuration (12^3 and 6^3 per brick
# rank, 1 and 2 brick ranks in both layouts, 1 repetition), and the shipped sweep specs
# examples/explore/sparsity.toml (12^3, the DFT) and physical.toml (N 8, 16) run through
# triada-explore with their plot scripts: exit 0, the JSON files and tables hold the
# expected records (scaling: the weak grids are MPI_Dims_create's, the efficiencies and the
# time split agree with the raw numbers and the reports; sparsity: every point's MACs
# against its generated input read with h5py; physical: the period is the sum its bus model
# says, recomputed from the reports), every promised PNG exists and is non-empty, a failed
# scaling run is one line naming its log and leaves no temporaries, and bad options fail
# with a message.
# run_scripts/conv_speedup.py --quick runs one pair of two-layer triada-conv runs (1 and 2
# ranks, the same counters). No timing is asserted. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

SRC=${TRIADA_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export PYTHON=${PYTHON:-/usr/bin/python3}
export LAUNCHER=${MPIEXEC:-mpirun}

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-scripts-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
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
# failing ONE_LINE PATTERN CMD...: CMD exits non-zero with PATTERN on stderr and, when
# ONE_LINE is 1, nothing else there.
failing() {
  local one_line=$1 pat=$2
  shift 2
  local err
  if err=$("$@" 2>&1 >/dev/null); then
    echo "expected failure: $*" >&2
    return 1
  fi
  if [[ $one_line -eq 1 && $(wc -l <<<"$err") -ne 1 ]]; then
    echo "more than one line on stderr: $err" >&2
    return 1
  fi
  grep -q -- "$pat" <<<"$err" || { echo "stderr lacks '$pat': $err" >&2; return 1; }
}
fails_one_line() { failing 1 "$@"; }  # fails_one_line PATTERN CMD...
fails_with() { failing 0 "$@"; }      # fails_with PATTERN CMD...

echo "-- scaling.sh: 12^3 and 6^3 per brick rank, brick ranks 1 and 2, both layouts, 1 repetition"
check "scaling.sh --help" bash -c "bash '$SRC/run_scripts/scaling.sh' --help | grep -q -- '--layout L'"
check "the brick grids: MPI_Dims_create's balanced factors" "$PYTHON" - "$SRC/run_scripts" <<'EOF'
import subprocess, sys
sys.path.insert(0, sys.argv[1])
from scaling_collect import dims_create
known = {1: [1, 1, 1], 2: [2, 1, 1], 3: [3, 1, 1], 4: [2, 2, 1], 6: [3, 2, 1], 8: [2, 2, 2],
         12: [3, 2, 2], 16: [4, 2, 2], 18: [3, 3, 2], 24: [4, 3, 2], 27: [3, 3, 3],
         32: [4, 4, 2], 36: [4, 3, 3], 48: [4, 4, 3], 64: [4, 4, 4], 96: [6, 4, 4]}
for n, want in known.items():
    assert dims_create(n) == want, (n, dims_create(n), want)
def balanced(n):  # the non-increasing triple of product n with the least max - min
    return min(([a, b, n // (a * b)] for a in range(1, n + 1) for b in range(1, a + 1)
                if n % (a * b) == 0 and n // (a * b) <= b), key=lambda d: (d[0] - d[2], d[0]))
for n in range(1, 200):
    assert dims_create(n) == balanced(n), (n, dims_create(n), balanced(n))
out = subprocess.run([sys.executable, sys.argv[1] + "/scaling_collect.py", "grid", "12"],
                     capture_output=True, text=True, check=True).stdout
assert out.split() == ["3", "2", "2"], out
EOF
check "scaling.sh exits 0" logged "$dir/scaling.log" bash "$SRC/run_scripts/scaling.sh" --size 12 \
  --weak-size 6 --max-ranks 2 --layout both --oversubscribe --transport auto --reps 1 \
  --out "$dir/sc" --bin "$TRIADA_BIN"
check "scaling.json: both layouts, 3D weak grids, efficiencies from the raw numbers, the split" \
  "$PYTHON" - "$dir/sc" <<'EOF'
import json, os, sys
out = sys.argv[1]
d = json.load(open(os.path.join(out, "scaling.json")))
assert d["schema"] == "triada-scaling/2", d.get("schema")
s = d["settings"]
assert s["layouts"] == ["colocated", "dedicated"] and s["weak_grid"] == "grid", s
assert s["transport"] == "auto" and s["oversubscribe"] and s["reps"] == 1, s
cores = d["machine"]["cores"]
assert isinstance(cores, int) and 1 <= cores <= os.cpu_count(), d["machine"]
recs = d["records"]
got = sorted((r["kind"], r["layout"], r["brick_ranks"]) for r in recs)
assert got == sorted((k, l, n) for k in ("strong", "weak") for l in ("colocated", "dedicated")
                     for n in (1, 2)), got
assert s["oversubscribed"] == any(r["world_size"] > cores for r in recs), s
def balanced(n):  # MPI_Dims_create(n, 3), found independently: the least max - min
    return min(([a, b, n // (a * b)] for a in range(1, n + 1) for b in range(1, a + 1)
                if n % (a * b) == 0 and n // (a * b) <= b), key=lambda g: (g[0] - g[2], g[0]))
def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
base = {(r["kind"], r["layout"]): r for r in recs if r["brick_ranks"] == 1}
for r in recs:
    n, lay = r["brick_ranks"], r["layout"]
    world = n + (3 if lay == "dedicated" else 0)
    assert r["world_size"] == world and r["actuator_ranks"] == world - n, r
    assert r["oversubscribed"] == (world > cores), r
    assert r["reps"] == 1 and r["simulation_seconds"] > 0 and r["wall_seconds"] > 0, r
    assert len(r["peak_rss_bytes_per_rank"]) == world, r
    g = r["brick_grid"]
    assert g[0] * g[1] * g[2] == n, r
    if r["kind"] == "weak":
        assert g == balanced(n), (g, balanced(n))
        assert r["shape"] == [6 * p for p in g], (r["shape"], g)
    else:
        assert r["shape"] == [12, 12, 12], r
    # the efficiencies, recomputed from the records' raw numbers
    thr = r["macs"] / r["simulation_seconds"] / n
    assert close(r["macs_per_second_per_brick_rank"], thr), r
    for b, one in (("layout_1", base[(r["kind"], lay)]), ("colocated_1", base[(r["kind"], "colocated")])):
        t1 = one["simulation_seconds"]
        if r["kind"] == "strong":
            assert close(r["speedup_vs_" + b], t1 / r["simulation_seconds"]), (b, r)
            assert close(r["efficiency_vs_" + b], t1 / r["simulation_seconds"] / n), (b, r)
        else:
            eff = thr / (one["macs"] / t1 / one["brick_ranks"])
            assert close(r["efficiency_vs_" + b], eff), (b, r)
            assert close(r["speedup_vs_" + b], eff * n), (b, r)
            assert close(r["efficiency_time_vs_" + b], t1 / r["simulation_seconds"]), (b, r)
    # the split: each stage's means add up to its seconds; the records hold the report's
    rep = json.load(open(os.path.join(out, "reports", f"{r['kind']}_{lay}_r{n}_rep1.json")))
    assert len(r["stages"]) == 3 == len(rep["stage_time"]), r["stages"]
    for st, raw in zip(r["stages"], rep["stage_time"]):
        assert st["axis"] == raw["axis"] and st["seconds"] == raw["seconds"], (st, raw)
        for p in ("compute", "pack", "wait", "idle"):
            assert st[p] == raw[p]["mean"] and st[p] >= 0, (p, st, raw)
        assert abs(sum(st[p] for p in ("compute", "pack", "wait", "idle")) - st["seconds"]) \
            <= 1e-6 + 1e-6 * st["seconds"], st
        assert st["model_seconds"] == raw.get("model_seconds"), (st, raw)
    assert r["stage_seconds"] == [st["seconds"] for st in r["stages"]], r
    tot = r["split_total"]
    for k in ("seconds", "compute", "pack", "wait", "idle"):
        assert close(tot[k], sum(st[k] for st in r["stages"])), (k, tot)
    slow = r["split_slowest"]
    assert slow["seconds"] == max(r["stage_seconds"]) and r["stages"][slow["stage"] - 1]["seconds"] == slow["seconds"]
one = {(r["kind"], r["layout"]): r for r in recs if r["brick_ranks"] == 1}
two = [r for r in recs if r["brick_ranks"] == 2]
assert all(r["mpi_bytes"] > one[(r["kind"], r["layout"])]["mpi_bytes"] for r in two), \
    "2 brick ranks should move more bytes"
EOF
check "the plot titles state the cores and oversubscription" "$PYTHON" - "$SRC/run_scripts" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
sys.argv = sys.argv[:1]
from plot_scaling import cores_str
over = cores_str({"cores": 2}, [1, 2, 4, 5])
assert "2 cores" in over and "5 ranks oversubscribed" in over, over
fits = cores_str({"cores": 16}, [1, 2, 4])
assert "16 cores" in fits and "oversubscribed" not in fits, fits
EOF
check "scaling PNGs" pngs_ok "$dir/sc" scaling_strong.png scaling_weak.png scaling_split.png \
  scaling_bytes.png
check "scaling table printed, with the layout, world size, oversubscription and split" bash -c "
  grep -q '^kind  *layout  *bricks  *world  *oversub .* compute  *pack  *wait  *idle' '$dir/scaling.log' &&
  grep -q '^strong  *dedicated  *2  *5 ' '$dir/scaling.log' && grep -q '^weak  *colocated  *2  *2 ' '$dir/scaling.log'"
check "no temporaries left: no scratch folder, no HDF5 file" bash -c "
  ! ls -A '$dir/sc' | grep -q -e '^\\.scaling-tmp' -e '\\.h5' && [[ ! -e '$dir/sc/inputs' ]]"
check "a failed run: one line naming the run and its log, no temporaries" fails_one_line \
  "strong scaling run, colocated layout, 1 brick rank(s) (np 1), rep 1 failed (exit [1-9][0-9]*; log: $dir/bad/logs/strong_colocated_r1_rep1.log)" \
  bash "$SRC/run_scripts/scaling.sh" --size 4 --max-ranks 1 --layout colocated --reps 1 \
  --transform no-such-transform --out "$dir/bad" --bin "$TRIADA_BIN"
check "the failed run's log kept, nothing else" bash -c "
  [[ -s '$dir/bad/logs/strong_colocated_r1_rep1.log' && -z \$(ls -A '$dir/bad/reports') ]] &&
  ! ls -A '$dir/bad' | grep -q -e '^\\.scaling-tmp' -e '\\.h5'"

# shrunk SPEC OUT PYTHON-SUBSTITUTIONS: the shipped spec examples/explore/SPEC.toml with
# its plot scripts named from $SRC and the (regex, replacement) pairs applied, as OUT.
shrunk() {
  "$PYTHON" - "$SRC" "$1" "$2" "$3" <<'EOF'
import ast, re, sys
src, name, out, subs = sys.argv[1:5]
text = open(f"{src}/examples/explore/{name}.toml").read()
text = text.replace('"../../run_scripts/', f'"{src}/run_scripts/')
for pattern, repl in ast.literal_eval(subs):
    text, n = re.subn(pattern, repl, text, flags=re.S | re.M)
    assert n, f"{pattern!r} not in {name}.toml"
open(out, "w").write(text)
EOF
}
explore() {  # explore SPEC ARGS...: python3 -m triada.explore with the built package
  PYTHONPATH="$TRIADA_BIN/python" "$PYTHON" -m triada.explore "$@" --bin "$TRIADA_BIN"
}

# The specs run through the Python package, which a sanitized build does not make (its
# module would load only into a python3 started with the ASan runtime): there the Release
# pass runs them.
if [[ ! -f $TRIADA_BIN/python/triada/__init__.py ]]; then
  echo "-- the sweep specs: skipped, no Python package in $TRIADA_BIN"
else
echo "-- examples/explore/sparsity.toml at 12^3, 2 repetitions, the DFT: 13 inputs x ESOP on/off"
# The DFT's coefficients are never zero, so ESOP's first stage (axis 3) does exactly
# nnz(x) N3 MACs: an oracle from the generated input itself (the shipped spec runs the DCT).
check "the shrunk sparsity spec" shrunk sparsity "$dir/sparsity.toml" \
  "[(r'shape = \[48, 48, 48\]', 'shape = [12, 12, 12]'), (r'^rep = \[1, 2, 3\]', 'rep = [1, 2]'),
    (r'transform = \"dct\"', 'transform = \"dft\"')]"
check "triada-explore sparsity.toml exits 0" logged "$dir/sweep.log" explore "$dir/sparsity.toml" \
  --out "$dir/sw"
check "every point against its input (h5py) and the closed forms" "$PYTHON" - "$dir/sw" <<'EOF'
import csv, json, os, sys
import h5py, numpy as np
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
assert len(rows) == 13 * 2 * 2 + 2 and {r["status"] for r in rows} == {"ok"}, len(rows)
fractions = {"random": {"0", "0.25", "0.5", "0.75", "0.9", "0.95", "0.99"},
             "lines": {"0.25", "0.5", "0.9"}, "planes": {"0.25", "0.5", "0.9"}}
axis = {"random": "generate.sparsity", "lines": "generate.zero-lines", "planes": "generate.zero-planes"}
for kind, want in fractions.items():
    got = {(r[axis[kind]], r["esop"], r["rep"]) for r in rows if r["workload"] == kind}
    assert got == {(f, e, k) for f in want for e in ("on", "off") for k in ("1", "2")}, (kind, got)
n = 12
by = {}
for r in rows:
    session = os.path.join(out, r["session"])
    report = json.load(open(os.path.join(session, "report.json")))
    x = h5py.File(os.path.join(session, "input.h5"), "r")["/x"][()]
    nnz = int(np.count_nonzero(x))
    assert int(r["generate.nonzeros"]) == nnz and float(r["generate.zero_fraction"]) == (x.size - nnz) / x.size, r
    c = report["counters"]
    assert int(r["counters.macs"]) == c["macs"] and int(r["counters.macs_dense"]) == 3 * n ** 4, r
    if r["esop"] == "off":
        assert c["macs"] == 3 * n ** 4 and c["waits"]["total"] == 0, r
    else:
        assert c["per_stage"][0]["axis"] == 3 and c["per_stage"][0]["macs"] == nnz * n, (r, nnz)
        assert c["macs"] <= 3 * n ** 4, r
    if r["workload"] == "lines":  # exactly round(F N1 N2) zero lines
        assert x.size - nnz == round(float(r["generate.zero-lines"]) * n * n) * n, r
    key = (r["workload"], r[axis.get(r["workload"], "esop")], r["esop"])
    by.setdefault(key, []).append(c)
assert all(len(v) == 2 and v[0] == v[1] for k, v in by.items() if k[0] != "representative"), \
    "a repetition's counters differ"
EOF
check "the representative run's traces: one row per step" "$PYTHON" - "$dir/sw" <<'EOF'
import csv, os, sys
out = sys.argv[1]
rows = [r for r in csv.DictReader(open(os.path.join(out, "results.csv"))) if r["workload"] == "representative"]
assert sorted(r["esop"] for r in rows) == ["off", "on"], rows
for r in rows:
    lines = open(os.path.join(out, r["session"], "trace.csv")).read().splitlines()
    assert lines[0] == "step,stage,axis,pivot,x_bus_sends,y_bus_sends,y_bus_receives,waits,macs,cycles,time_ps", lines[0]
    if r["esop"] == "off":
        assert len(lines) == 1 + 3 * 12, len(lines)
EOF
check "sweep PNGs" pngs_ok "$dir/sw" sweep_macs.png sweep_bus.png sweep_energy.png activity.png

echo "-- examples/explore/physical.toml: N 8, 16 and 8x4x16 x 5 bus models x 45/7 nm, measured at 8, 16"
# Without triada-bench (TRIADA_BUILD_BENCH off) the sweep measures nothing.
subs="(r'^shape = \[\[.*?\]\]\$', 'shape = [[8, 8, 8], [16, 16, 16], [8, 4, 16]]'),
      (r'sizes = \[[0-9, ]*\]', 'sizes = [8, 16]'), (r'reps = 3', 'reps = 1')"
n_measured=4
if [[ ! -x $TRIADA_BIN/triada-bench ]]; then
  subs+=", (r'^\[\[workload\]\]\nname = \"measured\".*?\n\n', '')"
  n_measured=0
fi
check "the shrunk physical spec" shrunk physical "$dir/physical.toml" "[$subs]"
check "triada-explore physical.toml exits 0" logged "$dir/physical.log" explore "$dir/physical.toml" \
  --out "$dir/ph"
check "the table: every shape x node x bus model, layout and energy model; the measurements" \
  "$PYTHON" - "$dir/ph" "$n_measured" <<'EOF'
import csv, json, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
assert {r["status"] for r in rows} == {"ok"}, [r["error"] for r in rows if r["error"]]
model = [r for r in rows if r["kind"] == "transform"]
meas = [r for r in rows if r["kind"] == "bench"]
# 3 shapes x 2 nodes x (5 bus models + planar layout + wire energy)
assert len(model) == 42 and len(meas) == int(sys.argv[2]), (len(model), len(meas))
got = set()
for r in model:
    j = json.load(open(os.path.join(out, r["session"], "report.json")))
    p = j["physical"]["parameters"]
    got.add((tuple(j["problem"]["in_shape"]), p["timing"]["bus_model"],
             j["physical"]["technology"]["node_nm"], p["area"]["layout"], p["energy"]["bus_model"]))
    assert r["run"] == "model" and float(r["physical.seconds"]) == j["physical"]["seconds"] > 0, r
shapes = [(8, 8, 8), (16, 16, 16), (8, 4, 16)]
want = {(s, b, nm, "stacked", "per_event") for s in shapes for nm in (45, 7)
        for b in ("ideal", "repeated", "rc", "tree", "pipelined")}
want |= {(s, "repeated", nm, lay, en) for s in shapes for nm in (45, 7)
         for lay, en in (("planar", "per_event"), ("stacked", "wire"))}
assert got == want, sorted(got ^ want)
for r in meas:
    j = json.load(open(os.path.join(out, r["session"], "report.json")))
    [b] = j["rows"]
    assert b["variant"] == r["variants"] in ("fftw-dct", "openblas") and b["shape"] == [int(r["sizes"])] * 3, r
    assert float(r["rows.0.seconds"]) == b["seconds"] > 0 and b["threads"] == 1, r
EOF
check "period = bus + MAC + overhead, recomputed from the reports" "$PYTHON" - "$dir/ph" <<'EOF'
import glob, json, os, sys
checked = {"ideal": 0, "repeated": 0}
for path in glob.glob(os.path.join(sys.argv[1], "runs", "*", "report.json")):
    p = json.load(open(path)).get("physical")
    if p is None:  # triada-bench's
        continue
    t = p["parameters"]["timing"]
    cp = p["critical_path_ps"]
    if t["bus_model"] == "ideal":  # the paper's one step per cycle: the MAC and the latch only
        assert p["period_ps"] == cp["mac"] + cp["overhead"], (path, p["period_ps"], cp)
    elif t["bus_model"] == "repeated":  # per line a driver (a gate: scaled) and a repeated wire
        st = next(s for s in p["per_stage"] if s["axis"] == p["critical_stage"])
        want = (2 * t["driver_ps"] * p["technology"]["factors_from_45nm"]["delay"]
                + (st["x_line"]["mm"] + st["y_line"]["mm"]) * t["wire_ps_per_mm"])
        got = p["period_ps"] - cp["mac"] - cp["overhead"]
        assert abs(got - want) <= 1e-9 * want, (path, got, want)
    else:
        continue
    checked[t["bus_model"]] += 1
assert checked == {"ideal": 6, "repeated": 18}, checked
EOF
check "physical PNGs" pngs_ok "$dir/ph" physical_period.png physical_time.png physical_energy.png \
  physical_area.png
check "crossover table written and printed" bash -c "
  grep -q '^N x N x N  *repeated  *45nm' '$dir/ph/physical_crossover.txt' &&
  grep -q '^N x N/2 x 2N  *rc  *7nm' '$dir/physical.log' && [[ -s '$dir/ph/physical_summary.txt' ]]"
check "a rerun computes nothing" bash -c "
  before=\$(grep -c ' start ' '$dir/ph/explore.log') &&
  PYTHONPATH='$TRIADA_BIN/python' '$PYTHON' -m triada.explore '$dir/physical.toml' --out '$dir/ph' \
    --bin '$TRIADA_BIN' >/dev/null 2>&1 && [[ \$(grep -c ' start ' '$dir/ph/explore.log') -eq \$before ]]"
check "plot_physical.py: not a sweep" fails_one_line "plot_physical.py: error: $dir/sc: not a triada-explore output folder" \
  env PYTHONPATH="$TRIADA_BIN/python" "$PYTHON" "$SRC/run_scripts/plot_physical.py" "$dir/sc"
check "plot_sweep.py: no sparsity workloads" fails_one_line "plot_sweep.py: error: $dir/ph: no ok point of a random" \
  env PYTHONPATH="$TRIADA_BIN/python" "$PYTHON" "$SRC/run_scripts/plot_sweep.py" "$dir/ph" -o "$dir/x"
fi

echo "-- tcu_tables.py --quick: every table's rows, both products; each doc names the command at its table"
check "tcu_tables.py --table all --quick" logged "$dir/tcu_tables.log" \
  "$PYTHON" "$SRC/run_scripts/tcu_tables.py" --table all --quick --bin "$TRIADA_BIN" \
  --out "$dir/tcu_tables"
check "the tables: their rows of figures, spmm and apsd with each product" \
  "$PYTHON" - "$dir/tcu_tables.log" <<'EOF'
import re, sys
tables, name = {}, None
for l in open(sys.argv[1]):
    m = re.match(r"Printed by `run_scripts/tcu_tables.py --table (\w+) --quick`:", l)
    if m:
        name = m.group(1)
    elif l.startswith("| ") and name:
        tables.setdefault(name, []).append([c.strip() for c in l.split("|")[1:-1]])
    elif l.startswith("Fast / classical") and name:
        tables[name + " ratios"] = re.findall(r"`(\w+)` ([0-9.]+)", l)
assert sorted(tables) == ["linear", "linear ratios", "numeric", "readme", "readme ratios"], tables
numeric = tables["numeric"]
assert numeric[0][:3] == ["algorithm", "theorem", "bound"], numeric[0]
assert [r[0] for r in numeric[2:]] == ["dft", "stencil", "intmul", "karatsuba", "polyeval"]
for r in numeric[2:]:
    for c in r[4:6]:
        assert re.fullmatch(r"-?[0-9]+\.[0-9]{3}", c), r
    assert float(r[7]) > 0, r
linear = tables["linear"][2:]
assert [r[0] for r in linear] == [
    "`matmul`", "`strassen`", "`spmm`, fast (default)", "`spmm --product classical`", "`ge`",
    "`tclosure`", "`apsd`, fast (default)", "`apsd --product classical`"], linear
assert [r[2][:5] for r in linear] == ["1.500", "1.404", "0.952", "1.000", "1.500", "3.000",
                                      "2.807", "3.000"], linear
for r in linear:
    assert all(re.fullmatch(r"-?[0-9]+\.[0-9]{2}", c) for c in r[3:5]), r
readme = {r[0]: r for r in tables["readme"][2:]}
assert len(readme) == 11, readme
for algo, fast, classical in [("spmm", "0.952", "1"), ("apsd", "2.807", "3")]:
    r = readme[f"`{algo}`"]
    assert r[2].endswith(f": {fast} fast (default), {classical} classical"), r
    assert re.fullmatch(r"fast -?[0-9.]+( \(.*\))?; classical -?[0-9.]+", r[3]), r
for t in ("readme ratios", "linear ratios"):
    assert [a for a, _ in tables[t]] == ["spmm", "apsd"], tables[t]
    assert all(float(v) > 0 for _, v in tables[t]), tables[t]
EOF
check "plot_tcu.py: a classical sweep's plot beside the fast one's" logged "$dir/plot_tcu.log" \
  "$PYTHON" "$SRC/run_scripts/plot_tcu.py" "$dir/tcu_tables/quick_spmm.json" \
  "$dir/tcu_tables/quick_spmm_classical.json" -o "$dir/tcu_img"
check "plot_tcu.py wrote tcu_spmm.png and tcu_spmm_classical.png" pngs_ok "$dir/tcu_img" \
  tcu_spmm.png tcu_spmm_classical.png
for spec in "doc/mxu.md readme" "doc/tcu.md linear" "doc/tcu_numeric.md numeric"; do
  read -r doc table <<<"$spec"
  check "$doc names run_scripts/tcu_tables.py --table $table at its table" \
    "$PYTHON" - "$SRC/$doc" "$table" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
marker = "run_scripts/tcu_tables.py --table " + sys.argv[2]
at = [i for i, l in enumerate(lines) if marker in l]
assert at, "no " + marker
# The table starts within 3 lines after a line naming the command.
assert any(lines[j].startswith("| algorithm |") for i in at for j in range(i + 1, i + 4)), at
EOF
done
check "tcu_tables.py: missing triada-tcu" fails_one_line "triada-tcu not found" \
  "$PYTHON" "$SRC/run_scripts/tcu_tables.py" --bin "$dir/nowhere"

echo "-- errors name the problem"
check "unknown option" fails_with "unknown option '--bogus'" bash "$SRC/run_scripts/scaling.sh" --bogus
check "bad --layout" fails_one_line "--layout must be colocated, dedicated or both" \
  bash "$SRC/run_scripts/scaling.sh" --layout both,colocated
check "bad --weak-grid" fails_one_line "--weak-grid must be grid or line" \
  bash "$SRC/run_scripts/scaling.sh" --weak-grid cube
check "the dedicated layout beyond the cores wants --oversubscribe" fails_one_line \
  "needs $(( $(nproc) + 3 )) processes (dedicated layout: $(nproc) brick ranks + 3 actuator ranks).*--oversubscribe" \
  bash "$SRC/run_scripts/scaling.sh" --max-ranks "$(nproc)" --bin "$TRIADA_BIN" --out "$dir/x"
check "missing binaries" fails_with "triada-transform not found" \
  bash "$SRC/run_scripts/scaling.sh" --bin "$dir/nowhere" --out "$dir/x"
echo "-- conv_speedup.py --quick: a pair of triada-conv runs on 1 and 2 ranks, the same counters"
check "conv_speedup.py --quick" logged "$dir/conv_speedup.log" \
  "$PYTHON" "$SRC/run_scripts/conv_speedup.py" --quick --bin "$TRIADA_BIN" --json "$dir/speedup.json"
check "its JSON: one run each, positive times and speed-ups" "$PYTHON" - "$dir/speedup.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["quick"] and r["ranks"] == 2 and sorted(r["runs"]) == ["1", "2"], r
assert all(len(v) == 1 and min(v[0].values()) > 0 for v in r["runs"].values()), r
for key in ("report_seconds", "process_seconds"):
    t = r[key]
    assert abs(t["speedup"] - t["median_1"] / t["median_2"]) < 1e-12 and t["speedup"] > 0, t
EOF
check "conv_speedup.py: one rank is no comparison" fails_with "--ranks must be >= 2" \
  "$PYTHON" "$SRC/run_scripts/conv_speedup.py" --ranks 1 --bin "$TRIADA_BIN"
check "conv_speedup.py: a missing network" fails_with "no such file" \
  "$PYTHON" "$SRC/run_scripts/conv_speedup.py" --network "$dir/none.csv" --bin "$TRIADA_BIN"
check "plot of a bad file" fails_with "plot_scaling.py: error" "$PYTHON" "$SRC/run_scripts/plot_scaling.py" \
  "$dir/sw/results.csv"

summary
