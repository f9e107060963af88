#!/usr/bin/env bash
# Input-sparsity sweep of triada-transform, ESOP on vs off; writes DIR/sweep.json, the
# per-step traces of one representative run, and plots them (run_scripts/plot_sweep.py).
# Run with --help for the options.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prog=$(basename "$0")
# shellcheck source=run_scripts/lib_tools.sh
source "$here/run_scripts/lib_tools.sh"

usage() {
  cat <<EOF
Usage: $prog [options]

Sweeps the sparsity of an N x N x N float64 input (triada-gen) and runs
triada-transform on each input twice, --esop on and --esop off:

  random  each element zero with probability 0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99
  lines   exactly a fraction 0.25, 0.5, 0.9 of the (i1, i2) lines along axis 3 zero
  planes  exactly a fraction 0.25, 0.5, 0.9 of the planes orthogonal to --plane-axis zero

The representative run (--trace-case, default lines:0.9) also writes its per-step trace,
ESOP on and off, to DIR/trace_<kind>_<fraction>_esop_{on,off}.csv.

Options:
  --size N          edge of the cubic input (default 48)
  --transform T     transform(s) for triada-transform (default dct)
  --stage-order S   stage order (default 312, the simulator's default)
  --plane-axis A    axis the zero planes are orthogonal to (default 1)
  --trace-case K:F  representative run for the traces (default lines:0.9)
  --reps K          runs per input and ESOP setting; the best simulation time is kept
                    (the counters are exact and the same every time; default 3)
  --np R            MPI ranks per run (default 1: no launcher; counters do not depend on it)
  --out DIR         output directory (default ./sweep_out): inputs/, reports/, logs/,
                    sweep.json, trace_*.csv, PNGs
  --bin DIR         build directory with triada-transform and triada-gen
                    (default: \$TRIADA_BIN, else $here/build)
  --no-plot         do not call plot_sweep.py
  -h, --help        this help

Environment: LAUNCHER (MPI launcher for --np > 1, default \$MPIEXEC, else mpirun;
"srun ..." runs "srun -n R"), PYTHON (python with numpy and matplotlib).

Outputs: DIR/sweep.json (schema triada-sweep/1: one record per (kind, fraction, esop)
with the input's zero fraction, steps, MACs, bus counters, energy run/dense, MPI bytes,
best simulation time of the reps, per-stage counters), DIR/sweep_macs.png, DIR/sweep_bus.png,
DIR/sweep_energy.png, DIR/activity.png.
EOF
}

size=48
transform=dct
stage_order=312
plane_axis=1
reps=3
trace_case=lines:0.9
np=1
out=sweep_out
bin="${TRIADA_BIN:-$here/build}"
plot=1

while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --size) need_val "$@"; posint "$1" "$2"; size=$2; shift 2 ;;
    --transform) need_val "$@"; transform=$2; shift 2 ;;
    --stage-order) need_val "$@"; stage_order=$2; shift 2 ;;
    --plane-axis) need_val "$@"; [[ $2 =~ ^[123]$ ]] || die "--plane-axis must be 1, 2 or 3, got '$2'"
      plane_axis=$2; shift 2 ;;
    --trace-case) need_val "$@"; trace_case=$2; shift 2 ;;
    --reps) need_val "$@"; posint "$1" "$2"; reps=$2; shift 2 ;;
    --np) need_val "$@"; posint "$1" "$2"; np=$2; shift 2 ;;
    --out) need_val "$@"; out=$2; shift 2 ;;
    --bin) need_val "$@"; bin=$2; shift 2 ;;
    --no-plot) plot=0; shift ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

cases=(random:0 random:0.25 random:0.5 random:0.75 random:0.9 random:0.95 random:0.99
  lines:0.25 lines:0.5 lines:0.9 planes:0.25 planes:0.5 planes:0.9)
found=0
for c in "${cases[@]}"; do if [[ $c == "$trace_case" ]]; then found=1; fi; done
[[ $found -eq 1 ]] || die "--trace-case '$trace_case' is not one of: ${cases[*]}"

find_tools triada-transform triada-gen
if [[ $np -gt 1 ]]; then
  check_launcher
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

mkdir -p "$out/inputs" "$out/reports" "$out/logs" || die "cannot create output directory $out"
out=$(cd "$out" && pwd)
rm -f "$out"/reports/*.json "$out"/trace_*.csv

run() {  # run CMD...: under the launcher when --np > 1
  if [[ $np -eq 1 ]]; then
    "$@"
  elif [[ $(basename "${launcher[0]}") == srun ]]; then
    "${launcher[@]}" -n "$np" "$@"
  else
    "${launcher[@]}" -np "$np" "$@"
  fi
}

echo "$prog: ${size}^3 $transform, stage order $stage_order, ${#cases[@]} inputs x ESOP on/off x $reps rep(s), $np rank(s)"
printf '  %-8s %-6s %-5s %12s %12s %9s\n' kind frac esop MACs "energy uJ" "sim s"
for c in "${cases[@]}"; do
  kind=${c%%:*}
  frac=${c#*:}
  case $kind in
    random) genopt=(--sparsity "$frac") ;;
    lines) genopt=(--zero-lines "$frac") ;;
    planes) genopt=(--zero-planes "$frac" --plane-axis "$plane_axis") ;;
  esac
  in="$out/inputs/${kind}_${frac}.h5"
  log="$out/logs/gen_${kind}_${frac}.log"
  "$GEN" --output "$in" --shape "$size,$size,$size" --dist uniform --seed 1 "${genopt[@]}" --force \
    >"$log" 2>&1 || { cat "$log" >&2; die "triada-gen failed for $kind $frac (log: $log)"; }
  for esop in on off; do
    tag="${kind}_${frac}_esop_${esop}"
    for ((r = 1; r <= reps; r++)); do
      log="$out/logs/${tag}_rep$r.log"
      trace=()
      if [[ $c == "$trace_case" && $r -eq 1 ]]; then trace=(--trace "$out/trace_$tag.csv"); fi
      if ! run "$TRANSFORM" --input "$in" --output "$out/out.h5" --transform "$transform" \
        --stage-order "$stage_order" --esop "$esop" --report "$out/reports/${tag}_rep$r.json" \
        "${trace[@]}" --force --quiet >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        die "run $tag (rep $r) failed (log: $log)"
      fi
    done
    "$PYTHON" -c '
import json, sys
js = [json.load(open(p)) for p in sys.argv[4:]]
j = js[0]
print("  %-8s %-6s %-5s %12d %12.3f %9.4f" % (sys.argv[1], sys.argv[2], sys.argv[3], j["counters"]["macs"],
      j["energy_pj"]["run"] / 1e6, min(x["simulation_seconds"] for x in js)))' "$kind" "$frac" "$esop" \
      "$out/reports/${tag}"_rep*.json
  done
done
rm -f "$out/out.h5"

"$PYTHON" - "$out" "$size" "$transform" "$stage_order" "$plane_axis" "$trace_case" "$np" "$reps" <<'EOF'
import glob, json, os, re, sys

out, size, transform, stage_order, plane_axis, trace_case, np_, reps_ = sys.argv[1:9]
records = []
for path in sorted(glob.glob(os.path.join(out, "reports", "*.json"))):
    m = re.match(r"(random|lines|planes)_([0-9.]+)_esop_(on|off)_rep1\.json$", os.path.basename(path))
    if not m:
        continue
    kind, frac, esop = m.group(1), float(m.group(2)), m.group(3)
    reps = []
    for p in sorted(glob.glob(path[:-len("_rep1.json")] + "_rep*.json")):
        with open(p) as f:
            reps.append(json.load(f))
    j = reps[0]
    for other in reps[1:]:  # the counters are exact: every repetition must agree
        if other["counters"] != j["counters"]:
            print(f"warning: {os.path.basename(path)}: counters differ between repetitions", file=sys.stderr)
    with open(os.path.join(out, "logs", f"gen_{kind}_{m.group(2)}.log")) as f:
        g = re.search(r"(\d+) elements, (\d+) nonzeros", f.read())
    elements, nnz = int(g.group(1)), int(g.group(2))
    c = j["counters"]
    tot = lambda k: c[k]["total"]
    records.append({
        "kind": kind,
        "fraction": frac,
        "esop": esop == "on",
        "shape": j["problem"]["in_shape"],
        "input_nonzeros": nnz,
        "input_zero_fraction": 1 - nnz / elements,
        "steps": j["steps"]["total"],
        "steps_dense": j["steps"]["dense"],
        "macs": c["macs"],
        "macs_dense": c["macs_dense"],
        "x_bus_sends": tot("x_bus_sends"),
        "y_bus_sends": tot("y_bus_sends"),
        "y_bus_receives": tot("y_bus_receives"),
        "waits": tot("waits"),
        "energy_pj": j["energy_pj"]["run"],
        "energy_pj_dense": j["energy_pj"]["dense"],
        "saved_fraction": j["energy_pj"].get("saved_fraction"),
        "mpi_messages": j["mpi"]["messages"],
        "mpi_bytes": j["mpi"]["bytes"],
        "simulation_seconds": min(x["simulation_seconds"] for x in reps),
        "simulation_seconds_all": [x["simulation_seconds"] for x in reps],
        "wall_seconds": min(x["wall_seconds"] for x in reps),
        "per_stage": [{k: s[k] for k in ("axis", "steps", "macs", "x_bus_sends", "y_bus_sends",
                                          "y_bus_receives", "waits")} for s in c["per_stage"]],
    })
order = {"random": 0, "lines": 1, "planes": 2}
records.sort(key=lambda r: (order[r["kind"]], r["fraction"], not r["esop"]))
tk, tf = trace_case.split(":")
doc = {
    "schema": "triada-sweep/1",
    "settings": {"reps": int(reps_), "shape": [int(size)] * 3, "transform": transform, "stage_order": stage_order,
                 "plane_axis": int(plane_axis), "ranks": int(np_), "dist": "uniform", "seed": 1},
    "representative": {"kind": tk, "fraction": float(tf),
                       "trace_esop_on": f"trace_{tk}_{tf}_esop_on.csv",
                       "trace_esop_off": f"trace_{tk}_{tf}_esop_off.csv"},
    "records": records,
}
with open(os.path.join(out, "sweep.json"), "w") as f:
    json.dump(doc, f, indent=1)
print(f"wrote {os.path.join(out, 'sweep.json')} ({len(records)} records)")
EOF

if [[ $plot -eq 1 ]]; then
  "$PYTHON" "$here/run_scripts/plot_sweep.py" "$out/sweep.json" -o "$out"
fi
