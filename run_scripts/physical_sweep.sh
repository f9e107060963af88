#!/usr/bin/env bash
# Physical-model sweep of the 3D DCT (triada-transform --model-only: no data) over mesh size,
# bus model and technology node, beside FFTW and OpenBLAS measured on this machine
# (triada-bench); writes DIR/physical_sweep.json and plots it (run_scripts/plot_physical.py).
# Run with --help for the options.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prog=$(basename "$0")
# shellcheck source=run_scripts/lib_tools.sh
source "$here/run_scripts/lib_tools.sh"

bus_models=(ideal repeated rc tree pipelined)

usage() {
  cat <<EOF
Usage: $prog [options]

Sweeps the physical model (doc/physical.md) of a dense float64 3D DCT with
triada-transform --model-only (closed-form counters, nothing is read or computed,
so any N is fast), on a mesh with one cell per element:

  shapes   cubic N x N x N for N in --sizes, and N x N/2 x 2N for N in --nc-sizes
  main     every shape x bus model (${bus_models[*]}) x node (--nodes),
           stacked layout, default (per_event) bus energy
  planar   every shape x node, repeated bus, --area.layout planar
  wire     every shape x node, repeated bus, --energy.bus_model wire (driver + wire
           energy per line length instead of a fixed figure per bus event)

and measures FFTW's 3D DCT (fftw-dct) and a 3-mode product through OpenBLAS dgemm
(openblas), both one thread, with triada-bench on the cubic sizes up to --measure-max.
Everything else is the built-in configuration (meshcfg/default.ini): fp64 cells,
global clock, stage order 312.

Options:
  --sizes LIST       cubic edges N, comma-separated (default 16,32,64,128,256,512,1024)
  --nc-sizes LIST    N of the N x N/2 x 2N family, even (default 16,32,64,128,256,512,1024;
                     none: no such shapes)
  --nodes LIST       technology nodes in nm, of 45,32,20,16,14,10,7 (default 45,7)
  --measure-max N    measure the cubic sizes up to N (default 256; 0: measure nothing;
                     FFTW at 512^3 needs several GiB and minutes)
  --reps K           triada-bench repetitions, the best time is kept (default 3)
  --jobs J           model runs at a time (default: nproc = $(nproc))
  --quick            tiny sweep for tests: sizes 8,16, nc-sizes 8, measure max 16, reps 1
                     (explicit --sizes, --nc-sizes, --measure-max, --reps still win)
  --out DIR          output directory (default ./physical_sweep_out): reports/, logs/,
                     bench.json, physical_sweep.json, crossover.txt, summary.txt, PNGs
  --bin DIR          build directory with triada-transform and triada-bench
                     (default: \$TRIADA_BIN, else $here/build)
  --no-plot          do not call plot_physical.py (no PNGs, crossover.txt, summary.txt)
  -h, --help         this help

Environment: PYTHON (python with numpy and matplotlib).

Outputs: DIR/physical_sweep.json (schema triada-physical-sweep/1: one record per run;
kind "model": shape, family, N, bus model, node, layout, bus energy model, period and
critical path (ps), the stage whose X + Y bus delay is largest, modelled seconds, energy
and its split (J), power, EDP, area, cell pitch, per-stage periods and line lengths;
kind "measured": variant, shape, N, best seconds, GMAC/s as gmacs_per_s), DIR/physical_period.png,
DIR/physical_time.png, DIR/physical_energy.png, DIR/physical_area.png, DIR/crossover.txt
(where the X + Y bus delay first exceeds the MAC latency, per shape family, bus model
and node), DIR/summary.txt.
EOF
}

# A comma-separated list of positive integers, one per line on stdout.
int_list() {  # int_list OPTION VALUE
  [[ $2 =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "$1 must be a comma-separated list of positive integers, got '$2'"
  tr ',' '\n' <<<"$2"
}

sizes=""
nc_sizes=""
nodes=45,7
measure_max=""
reps=""
jobs=$(nproc)
quick=0
out=physical_sweep_out
bin="${TRIADA_BIN:-$here/build}"
plot=1

while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --sizes) need_val "$@"; int_list "$1" "$2" >/dev/null; sizes=$2; shift 2 ;;
    --nc-sizes) need_val "$@"; [[ $2 == none ]] || int_list "$1" "$2" >/dev/null
      nc_sizes=$2; shift 2 ;;
    --nodes) need_val "$@"; int_list "$1" "$2" >/dev/null; nodes=$2; shift 2 ;;
    --measure-max) need_val "$@"; [[ $2 =~ ^[0-9]+$ ]] || die "--measure-max must be a non-negative integer, got '$2'"
      measure_max=$2; shift 2 ;;
    --reps) need_val "$@"; posint "$1" "$2"; reps=$2; shift 2 ;;
    --jobs) need_val "$@"; posint "$1" "$2"; jobs=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --out) need_val "$@"; out=$2; shift 2 ;;
    --bin) need_val "$@"; bin=$2; shift 2 ;;
    --no-plot) plot=0; shift ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

if [[ $quick -eq 1 ]]; then
  : "${sizes:=8,16}" "${nc_sizes:=8}" "${measure_max:=16}" "${reps:=1}"
fi
: "${sizes:=16,32,64,128,256,512,1024}" "${nc_sizes:=16,32,64,128,256,512,1024}"
: "${measure_max:=256}" "${reps:=3}"

mapfile -t cubic < <(int_list --sizes "$sizes")
noncubic=()
if [[ $nc_sizes != none ]]; then mapfile -t noncubic < <(int_list --nc-sizes "$nc_sizes"); fi
for n in "${noncubic[@]}"; do
  [[ $((n % 2)) -eq 0 ]] || die "--nc-sizes must be even (the family is N x N/2 x 2N), got $n"
done
mapfile -t node_list < <(int_list --nodes "$nodes")
for nm in "${node_list[@]}"; do
  [[ $nm =~ ^(45|32|20|16|14|10|7)$ ]] || die "--nodes: $nm nm is not one of 45, 32, 20, 16, 14, 10, 7"
done
measured=()
for n in "${cubic[@]}"; do
  if [[ $n -le $measure_max ]]; then measured+=("$n"); fi
done

if [[ ${#measured[@]} -gt 0 ]]; then find_tools triada-transform triada-bench; else find_tools triada-transform; fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

mkdir -p "$out/reports" "$out/logs" || die "cannot create output directory $out"
out=$(cd "$out" && pwd)
rm -f "$out"/reports/*.json "$out"/logs/*.log "$out/bench.json" "$out/physical_sweep.json"

# The runs, one line each: report tag, shape N1,N2,N3, extra triada-transform options.
specs=()
add_shape() {  # add_shape FAMILY N N1,N2,N3
  local family=$1 n=$2 shape=$3 nm bus at
  for nm in "${node_list[@]}"; do
    at="$shape --technology.node_nm $nm --timing.bus_model"
    for bus in "${bus_models[@]}"; do
      specs+=("${family}_${n}_${bus}_${nm}nm_stacked_per_event $at $bus")
    done
    specs+=("${family}_${n}_repeated_${nm}nm_planar_per_event $at repeated --area.layout planar")
    specs+=("${family}_${n}_repeated_${nm}nm_stacked_wire $at repeated --energy.bus_model wire")
  done
}
for n in "${cubic[@]}"; do add_shape cubic "$n" "$n,$n,$n"; done
for n in "${noncubic[@]}"; do add_shape noncubic "$n" "$n,$((n / 2)),$((2 * n))"; done

model_run() {  # model_run TAG SHAPE OPTION...: one --model-only report, its log beside
  local tag=$1 shape=$2
  shift 2
  "$TRANSFORM" --model-only "$shape" --transform dct --report "$out/reports/$tag.json" --force \
    --quiet "$@" >"$out/logs/$tag.log" 2>&1 || rm -f "$out/reports/$tag.json"
}

echo "$prog: 3D DCT model, ${#cubic[@]} cubic + ${#noncubic[@]} N x N/2 x 2N shapes x" \
  "${#node_list[@]} node(s): ${#specs[@]} model runs, $jobs at a time"
start=$SECONDS
for spec in "${specs[@]}"; do
  read -r -a words <<<"$spec"
  model_run "${words[@]}" &
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
done
wait
for spec in "${specs[@]}"; do
  read -r -a words <<<"$spec"
  tag=${words[0]}
  if [[ ! -s $out/reports/$tag.json ]]; then
    log="$out/logs/$tag.log"
    die "triada-transform --model-only ${words[*]:1} failed: $(tail -n 1 "$log" 2>/dev/null) (log: $log)"
  fi
done
echo "  model runs done in $((SECONDS - start)) s"

if [[ ${#measured[@]} -gt 0 ]]; then
  list=$(IFS=,; echo "${measured[*]}")
  echo "$prog: measuring fftw-dct and openblas on $list (cubic, dense, best of $reps) with triada-bench"
  start=$SECONDS
  "$BENCH" --sizes "$list" --sparsity dense --variants fftw-dct,openblas --reps "$reps" \
    --json "$out/bench.json" --force >"$out/logs/bench.log" 2>&1 ||
    die "triada-bench failed: $(tail -n 1 "$out/logs/bench.log") (log: $out/logs/bench.log)"
  echo "  measured in $((SECONDS - start)) s"
fi

"$PYTHON" - "$out" "${#specs[@]}" "$reps" "$measure_max" <<'EOF' || die "collecting the reports into $out/physical_sweep.json failed"
import glob, json, os, re, sys

out, n_specs, reps, measure_max = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
name = re.compile(r"(cubic|noncubic)_(\d+)_([a-z]+)_(\d+)nm_(stacked|planar)_(per_event|wire)\.json$")
records = []
for path in sorted(glob.glob(os.path.join(out, "reports", "*.json"))):
    m = name.match(os.path.basename(path))
    if not m:
        continue
    with open(path) as f:
        j = json.load(f)
    ph = j["physical"]
    t = ph["parameters"]["timing"]
    # The stage whose lines are slowest: where the one-step assumption fails first.
    bus = lambda s: s["critical_path_ps"]["x_bus"] + s["critical_path_ps"]["y_bus"]
    worst = max(ph["per_stage"], key=bus)
    stages = [{"axis": s["axis"], "period_ps": s["period_ps"], "cycles": s["cycles"], "fill_cycles": s["fill_cycles"],
               "x_bus_ps": s["critical_path_ps"]["x_bus"], "y_bus_ps": s["critical_path_ps"]["y_bus"],
               "x_line_mm": s["x_line"]["mm"], "y_line_mm": s["y_line"]["mm"]} for s in ph["per_stage"]]
    e = ph["energy_j"]
    records.append({
        "kind": "model",
        "family": m.group(1),
        "n": int(m.group(2)),
        "shape": j["problem"]["in_shape"],
        "bus_model": m.group(3),
        "node_nm": int(m.group(4)),
        "layout": m.group(5),
        "energy_model": m.group(6),
        "clock": t["clock"],
        "vdd": ph["technology"]["vdd"],
        "factors_from_45nm": ph["technology"]["factors_from_45nm"],
        "macs": j["counters"]["macs"],
        "period_ps": ph["period_ps"],
        "critical_path_ps": ph["critical_path_ps"],
        "critical_stage": ph["critical_stage"],
        "bus_ps": bus(worst),
        "mac_ps": worst["critical_path_ps"]["mac"],
        "bus_stage": worst["axis"],
        "bus_exceeds_mac": bus(worst) > worst["critical_path_ps"]["mac"],
        "cycles": sum(s["cycles"] for s in stages),
        "seconds": ph["seconds"],
        "throughput_gmacs": ph["throughput_gmacs"],
        "energy_j": {"total": e["total"], "dynamic": e["dynamic"], "static": e["static"], **e["breakdown"]},
        "power_w": ph["power_w"],
        "edp_js": ph["edp_js"],
        "area_mm2": ph["area_mm2"],
        "cell_pitch_um": ph["cell_pitch_um"],
        "hop_um": ph["hop_um"],
        "timing_ps": {k: t[k] for k in ("driver_ps", "wire_ps_per_mm", "stage_ps", "overhead_ps", "mac_ps")},
        "per_stage": stages,
        "report": os.path.relpath(path, out),
    })
if len(records) != n_specs:
    sys.exit(f"expected {n_specs} model reports, found {len(records)}")
machine = None
bench = os.path.join(out, "bench.json")
if os.path.exists(bench):
    with open(bench) as f:
        b = json.load(f)
    mc = b["machine"]
    machine = {k: mc.get(k) for k in ("hostname", "cpu_model", "cores", "loadavg_start", "loadavg_end",
                                      "fftw_version", "openblas_corename", "openblas_config", "compiler")}
    for r in b["rows"]:
        records.append({"kind": "measured", "variant": r["variant"], "family": "cubic", "n": r["shape"][0],
                        "shape": r["shape"], "seconds": r["seconds"], "gmacs_per_s": r["gmacs_per_s"],
                        "macs": r["macs_dense"], "threads": r["threads"], "reps": reps})
order = {"ideal": 0, "repeated": 1, "rc": 2, "tree": 3, "pipelined": 4}
records.sort(key=lambda r: (r["kind"], r["family"], r.get("layout", ""), r.get("energy_model", ""),
                            order.get(r.get("bus_model"), 9), -r.get("node_nm", 0), r.get("variant", ""), r["n"]))
cubic = sorted({r["n"] for r in records if r["family"] == "cubic"})
noncubic = sorted({r["n"] for r in records if r["family"] == "noncubic"})
doc = {
    "schema": "triada-physical-sweep/1",
    "settings": {"transform": "dct", "element": "float64", "cell_mode": "fp64", "stage_order": "312",
                 "config": "built-in defaults (meshcfg/default.ini)", "mesh": "one cell per element",
                 "families": {"cubic": "N x N x N", "noncubic": "N x N/2 x 2N"},
                 "cubic_sizes": cubic, "noncubic_sizes": noncubic,
                 "nodes_nm": sorted({r["node_nm"] for r in records if r["kind"] == "model"}, reverse=True),
                 "bus_models": list(order), "measure_max": measure_max, "bench_reps": reps,
                 "bus_ps": "X + Y bus delay of the stage where it is largest (bus_stage), vs that stage's MAC "
                           "latency mac_ps: bus_exceeds_mac marks where the one-step assumption fails",
                 "precision": "reals rounded to 8 significant digits; reports/*.json hold every digit"},
    "machine": machine,
    "records": records,
}
def rounded(v):  # 8 significant digits (the reports keep every digit)
    if isinstance(v, float):
        return float(f"{v:.8g}")
    if isinstance(v, dict):
        return {k: rounded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [rounded(x) for x in v]
    return v
records = [rounded(r) for r in records]
# One record per line: the file stays readable and diffs stay small.
with open(os.path.join(out, "physical_sweep.json"), "w") as f:
    head = json.dumps({k: v for k, v in doc.items() if k != "records"}, indent=1)[:-2]
    f.write(head + ',\n "records": [\n' + ",\n".join("  " + json.dumps(r) for r in records) + "\n ]\n}\n")
n_meas = sum(r["kind"] == "measured" for r in records)
print(f"wrote {os.path.join(out, 'physical_sweep.json')} ({len(records) - n_meas} model + {n_meas} measured records)")
EOF

if [[ $plot -eq 1 ]]; then
  "$PYTHON" "$here/run_scripts/plot_physical.py" "$out/physical_sweep.json" -o "$out"
fi
