#!/usr/bin/env bash
# Strong and weak scaling of triada-transform under MPI; writes DIR/scaling.json, prints a
# table and plots it (run_scripts/plot_scaling.py). Run with --help for the options.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prog=$(basename "$0")
# shellcheck source=run_scripts/lib_tools.sh
source "$here/run_scripts/lib_tools.sh"

usage() {
  cat <<EOF
Usage: $prog [options]

Strong and weak scaling of triada-transform (3D transform of a dense float64 tensor,
every rank a brick rank: --ranks.actuators colocated).

  strong  fixed N x N x N tensor, ranks 1, 2, 4, ... up to --max-ranks, brick grid
          auto (MPI_Dims_create: 2x1x1, 2x2x1, 2x2x2, ...)
  weak    fixed volume per rank: (W*r) x W x W on r ranks with --ranks.grid r,1,1
          (only axis 1 is split, so every rank keeps a W^3 brick; the stage along axis 1 then
          does W*r steps, so the work per rank grows with r: the plots also show the
          work-normalised efficiency)

Each configuration runs --reps times; the best simulation_seconds (engine only, after
the input is read and before the output is written) is kept, with that run's wall time.

Options:
  --max-ranks N     largest rank count (default: nproc = $(nproc)); the list is the powers
                    of two below it, plus N itself
  --oversubscribe   allow more ranks than cores (passes --oversubscribe to mpirun)
  --size N          strong-scaling edge N (default 128)
  --weak-size W     weak-scaling edge per rank W (default: size/2, i.e. 64)
  --transform T     transform(s) passed to triada-transform (default dct)
  --executor E      fused | reference (default: the binary's default, fused)
  --reps K          repetitions per configuration, best time kept (default 3)
  --out DIR         output directory (default ./scaling_out): inputs *.h5, reports/,
                    logs/, scaling.json, PNGs
  --bin DIR         build directory with triada-transform and triada-gen
                    (default: \$TRIADA_BIN, else $here/build)
  --no-plot         do not call plot_scaling.py
  -h, --help        this help

Environment:
  LAUNCHER   MPI launcher command (default: \$MPIEXEC, else mpirun). Its first word
             decides the syntax: "srun ..." runs "srun -n R ...", anything else
             "LAUNCHER -np R [--oversubscribe] ...". Extra words are kept, e.g.
             LAUNCHER="srun --mpi=pmix".
  PYTHON     python with numpy and matplotlib (default: the first of python3,
             /usr/bin/python3 that imports both)

Outputs: DIR/scaling.json (schema triada-scaling/1: one record per (kind, ranks) with
shape, brick grid, best simulation_seconds, wall_seconds, MPI bytes and messages, bytes
per rank, peak RSS per rank, speed-up, efficiency; machine.cores: the cores the ranks ran
on, physical cores this process may use or SLURM's CPUs; settings.oversubscribed: more
ranks than cores), DIR/scaling_strong.png,
DIR/scaling_weak.png, DIR/scaling_bytes.png.

Example: $prog --max-ranks 4 --oversubscribe --out /tmp/scaling
EOF
}

max_ranks=$(nproc)
oversub=0
size=128
weak_size=""
transform=dct
executor=""
reps=3
out=scaling_out
bin="${TRIADA_BIN:-$here/build}"
plot=1

while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --max-ranks) need_val "$@"; posint "$1" "$2"; max_ranks=$2; shift 2 ;;
    --oversubscribe) oversub=1; shift ;;
    --size) need_val "$@"; posint "$1" "$2"; size=$2; shift 2 ;;
    --weak-size) need_val "$@"; posint "$1" "$2"; weak_size=$2; shift 2 ;;
    --transform) need_val "$@"; transform=$2; shift 2 ;;
    --executor) need_val "$@"; executor=$2; shift 2 ;;
    --reps) need_val "$@"; posint "$1" "$2"; reps=$2; shift 2 ;;
    --out) need_val "$@"; out=$2; shift 2 ;;
    --bin) need_val "$@"; bin=$2; shift 2 ;;
    --no-plot) plot=0; shift ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n $weak_size ]] || weak_size=$(( size / 2 > 0 ? size / 2 : 1 ))

find_tools triada-transform triada-gen
check_launcher
launcher_kind=$(basename "${launcher[0]}")

# Inside a SLURM allocation the launcher knows the slots on every node: no local check.
if [[ $launcher_kind != srun && -z ${SLURM_JOB_ID:-} && $oversub -eq 0 && $max_ranks -gt $(nproc) ]]; then
  die "--max-ranks $max_ranks exceeds the $(nproc) cores of this machine; add --oversubscribe"
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

ranks=()
for ((r = 1; r <= max_ranks; r *= 2)); do ranks+=("$r"); done
[[ ${ranks[-1]} -eq $max_ranks ]] || ranks+=("$max_ranks")

mkdir -p "$out/reports" "$out/logs" || die "cannot create output directory $out"
out=$(cd "$out" && pwd)
rm -f "$out"/reports/*.json

launch() {  # launch NP CMD...
  local np=$1
  shift
  if [[ $launcher_kind == srun ]]; then
    "${launcher[@]}" -n "$np" "$@"
  elif [[ $oversub -eq 1 ]]; then
    "${launcher[@]}" -np "$np" --oversubscribe "$@"
  else
    "${launcher[@]}" -np "$np" "$@"
  fi
}

extra=()
if [[ -n $executor ]]; then extra+=(--executor "$executor"); fi

gen_input() {  # gen_input FILE N1 N2 N3
  local log
  log="$out/logs/gen_$(basename "$1" .h5).log"
  "$GEN" --output "$1" --shape "$2,$3,$4" --dist uniform --seed 1 --force >"$log" 2>&1 ||
    { cat "$log" >&2; die "triada-gen failed for $1 (log: $log)"; }
}

echo "$prog: ranks ${ranks[*]}; strong ${size}^3, weak (${weak_size}*r)x${weak_size}x${weak_size}; $transform; $reps rep(s); launcher ${launcher[*]}"
strong_in="$out/strong_${size}.h5"
gen_input "$strong_in" "$size" "$size" "$size"
for kind in strong weak; do
  for r in "${ranks[@]}"; do
    if [[ $kind == strong ]]; then
      in=$strong_in
      grid=()  # auto (MPI_Dims_create)
    else
      in="$out/weak_$((weak_size * r))x${weak_size}x${weak_size}.h5"
      gen_input "$in" $((weak_size * r)) "$weak_size" "$weak_size"
      grid=(--ranks.grid "$r,1,1")  # every rank keeps a W^3 brick
    fi
    for ((rep = 1; rep <= reps; rep++)); do
      tag="${kind}_r${r}_rep${rep}"
      log="$out/logs/$tag.log"
      printf '  %-6s ranks %-3s rep %s ... ' "$kind" "$r" "$rep"
      if ! launch "$r" "$TRANSFORM" --input "$in" --output "$out/out.h5" --transform "$transform" \
        --ranks.actuators colocated --report "$out/reports/$tag.json" --force --quiet \
        "${grid[@]}" "${extra[@]}" >"$log" 2>&1; then
        echo "failed"
        tail -n 20 "$log" >&2
        die "$kind scaling run with $r ranks failed (log: $log)"
      fi
      "$PYTHON" -c 'import json,sys; print("%.4f s" % json.load(open(sys.argv[1]))["simulation_seconds"])' \
        "$out/reports/$tag.json"
    done
  done
done
rm -f "$out/out.h5"

"$PYTHON" - "$out" "$transform" "${executor:-default}" "$reps" "$launcher_kind" "$oversub" <<'EOF'
import glob, json, os, platform, re, sys

out, transform, executor, reps, launcher, oversub = sys.argv[1:7]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "reports", "*.json"))):
    m = re.match(r"(strong|weak)_r(\d+)_rep(\d+)\.json$", os.path.basename(path))
    if not m:
        continue
    with open(path) as f:
        rep = json.load(f)
    runs.setdefault((m.group(1), int(m.group(2))), []).append(rep)

records = []
for (kind, ranks), reps_ in sorted(runs.items()):
    best = min(reps_, key=lambda j: j["simulation_seconds"])
    world = best["mesh"]["world_size"]
    mem = best.get("memory", {})
    records.append({
        "kind": kind,
        "ranks": ranks,
        "world_size": world,
        "shape": best["problem"]["in_shape"],
        "brick_grid": best["mesh"]["brick_ranks"],
        "reps": len(reps_),
        "simulation_seconds": best["simulation_seconds"],
        "simulation_seconds_all": [j["simulation_seconds"] for j in reps_],
        "wall_seconds": best["wall_seconds"],
        "stage_seconds": best.get("stage_seconds"),
        "macs": best["counters"]["macs"],
        "mpi_bytes": best["mpi"]["bytes"],
        "mpi_messages": best["mpi"]["messages"],
        "bytes_per_rank": best["mpi"]["bytes"] / world,
        "peak_rss_bytes_per_rank": mem.get("peak_rss_bytes"),
        "baseline_rss_bytes_per_rank": mem.get("baseline_rss_bytes"),
        "brick_tensor_bytes_per_rank": mem.get("brick_tensor_bytes"),
        "peak_rss_bytes_max": max(mem["peak_rss_bytes"]) if mem.get("peak_rss_bytes") else None,
    })

for kind in ("strong", "weak"):
    rs = [r for r in records if r["kind"] == kind]
    base = next((r for r in rs if r["ranks"] == 1), None)
    for r in rs:
        if base is None:
            r["speedup"] = r["efficiency"] = None
            continue
        t1, tr = base["simulation_seconds"], r["simulation_seconds"]
        if kind == "strong":
            r["speedup"] = t1 / tr
            r["efficiency"] = t1 / tr / r["ranks"]
        else:
            # scaled speed-up: MAC throughput relative to one rank (ideal = ranks)
            r["speedup"] = (r["macs"] / tr) / (base["macs"] / t1)
            r["efficiency"] = r["speedup"] / r["ranks"]   # work-normalised
            r["efficiency_time"] = t1 / tr                 # classic T1/Tr

def physical_cores(cpus):
    """Distinct (package, core) pairs among the logical CPUs `cpus` (/proc/cpuinfo), or None."""
    pairs, cpu, package = set(), None, None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = (s.strip() for s in line.partition(":"))
                if key == "processor":
                    cpu, package = int(value), None
                elif key == "physical id":
                    package = value
                elif key == "core id" and cpu in cpus:
                    pairs.add((package, value))
    except (OSError, ValueError):
        return None
    return len(pairs) or None


def cores_of_the_run():
    """Cores the ranks ran on: SLURM's CPUs (per node x nodes) in a job, else this machine's
    physical cores among the CPUs this process may use (logical CPUs if unknown)."""
    if os.environ.get("SLURM_CPUS_ON_NODE"):
        per_node = int(os.environ["SLURM_CPUS_ON_NODE"].split("(")[0].split(",")[0])
        return per_node * int(os.environ.get("SLURM_JOB_NUM_NODES", "1")), "slurm"
    cpus = os.sched_getaffinity(0)
    return physical_cores(cpus) or len(cpus), "local"


cores, cores_from = cores_of_the_run()
max_ranks = max((r["ranks"] for r in records), default=1)
doc = {
    "schema": "triada-scaling/1",
    "machine": {"host": platform.node(), "cpus": os.cpu_count(), "cores": cores,
                "cores_from": cores_from, "processor": platform.processor(),
                "loadavg_end": list(os.getloadavg())},
    "settings": {"transform": transform, "executor": executor, "reps": int(reps),
                 "launcher": launcher, "oversubscribe": oversub == "1",
                 "oversubscribed": max_ranks > cores,
                 "actuators": "colocated", "timing": "simulation_seconds (engine only), best of reps"},
    "records": records,
}
with open(os.path.join(out, "scaling.json"), "w") as f:
    json.dump(doc, f, indent=1)

mib = 1 / 2**20
print()
print(f"{'kind':6} {'ranks':>5} {'shape':>12} {'grid':>7} {'sim s':>8} {'wall s':>8} {'speedup':>7} "
      f"{'eff':>5} {'MPI MiB':>8} {'MiB/rank':>8} {'peak RSS MiB':>12}")
for r in records:
    sp = "-" if r["speedup"] is None else f"{r['speedup']:.2f}"
    ef = "-" if r["efficiency"] is None else f"{r['efficiency']:.2f}"
    rss = "-" if r["peak_rss_bytes_max"] is None else f"{r['peak_rss_bytes_max'] * mib:.1f}"
    print(f"{r['kind']:6} {r['ranks']:>5} {'x'.join(map(str, r['shape'])):>12} "
          f"{'x'.join(map(str, r['brick_grid'])):>7} {r['simulation_seconds']:8.4f} "
          f"{r['wall_seconds']:8.4f} {sp:>7} {ef:>5} {r['mpi_bytes'] * mib:8.2f} "
          f"{r['bytes_per_rank'] * mib:8.2f} {rss:>12}")
print("(sim s: best simulation_seconds of the reps; weak speed-up/eff: MAC throughput vs 1 rank;"
      f" {cores} cores" + (f", ranks above {cores} oversubscribed)" if max_ranks > cores else ")"))
EOF

echo "wrote $out/scaling.json"
if [[ $plot -eq 1 ]]; then
  "$PYTHON" "$here/run_scripts/plot_scaling.py" "$out/scaling.json" -o "$out"
fi
