#!/usr/bin/env bash
# Strong and weak scaling of triada-transform under MPI, with co-located and with dedicated
# actuator ranks; writes DIR/scaling.json, prints a table and plots it
# (run_scripts/plot_scaling.py). Run with --help for the options and the JSON keys.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prog=$(basename "$0")
# shellcheck source=run_scripts/lib_tools.sh
source "$here/run_scripts/lib_tools.sh"

usage() {
  cat <<USAGE
Usage: $prog [options]

Strong and weak scaling of triada-transform (3D transform of a dense float64 tensor) over
a list of brick rank counts r (the ranks that hold bricks and compute).

  strong  fixed N x N x N tensor; brick grid automatic (MPI_Dims_create(r, 3): 2x1x1,
          2x2x1, 2x2x2, 3x2x2, 4x2x2, ...)
  weak    fixed W x W x W brick per brick rank on a 3D grid: for r brick ranks the grid
          (p1,p2,p3) = MPI_Dims_create(r, 3) (computed here, run_scripts/scaling_collect.py),
          the tensor (W p1) x (W p2) x (W p3), run with --ranks.grid p1,p2,p3. Stage a then
          does W pa steps, so the work per brick rank grows with the grid: the efficiency is
          the MAC throughput per brick rank against 1 brick rank (counters.macs /
          simulation_seconds / r); the classic T1/Tr is kept beside it.
          --weak-grid line: the older (W r) x W x W on an r x 1 x 1 grid.

Layouts (--layout), both by default:
  colocated  r MPI ranks, every one a brick rank (--ranks.actuators colocated)
  dedicated  r brick ranks + 3 actuator ranks that only stream C1, C2, C3: mpirun -np r+3
             with --ranks.actuators auto (design.md 2.6); r = 1 is -np 4. Needs --oversubscribe
             where r+3 exceeds the cores.
--layout dedicated still runs the colocated 1-rank runs: the baseline of *_vs_colocated_1.

Each configuration runs --reps times; the best simulation_seconds (engine only, after
the input is read and before the output is written) is kept, with that run's wall time
and time split.

Options:
  --max-ranks N     largest brick rank count (default: nproc = $(nproc)); the list is the
                    powers of two below it, plus N itself. The dedicated layout's
                    largest run is N + 3 processes: on a machine of N cores add
                    --oversubscribe, or take N = cores - 3
  --ranks LIST      brick rank counts instead, e.g. 1,2,4,8,12,16 (1 is always run: the
                    baseline)
  --layout L        colocated | dedicated | both (default both)
  --oversubscribe   allow more MPI processes than cores (mpirun --oversubscribe, srun
                    --overcommit)
  --size N          strong-scaling edge N (default 128)
  --weak-size W     weak-scaling brick edge W (default: size/2, i.e. 64)
  --weak-grid G     grid (default: MPI_Dims_create's 3D grid) | line (r x 1 x 1)
  --transform T     transform(s) passed to triada-transform (default dct)
  --executor E      fused | reference (default: the binary's default, fused)
  --transport T     auto | broadcast | shared, passed to triada-transform (default: its
                    default, auto)
  --reps K          repetitions per configuration, best simulation_seconds kept (default 3)
  --out DIR         output directory (default ./scaling_out): scaling.json, reports/,
                    logs/, PNGs
  --keep-inputs     keep the generated inputs in DIR/inputs/ (default: a scratch folder
                    in DIR, removed at the end, also on failure)
  --bin DIR         build directory with triada-transform and triada-gen
                    (default: \$TRIADA_BIN, else $here/build)
  --no-plot         do not call plot_scaling.py
  -h, --help        this help

Every input is generated once per shape (triada-gen, uniform, seed 1) and reused by
every run of that shape. A failed run stops the script with one line on stderr naming the
run and its log (DIR/logs/KIND_LAYOUT_rR_repK.log).

Environment:
  LAUNCHER   MPI launcher command (default: \$MPIEXEC, else mpirun). Its first word
             decides the syntax: "srun ..." runs "srun -n NP [--overcommit] ...", anything
             else "LAUNCHER -np NP [--oversubscribe] ...", NP = r (colocated) or r+3
             (dedicated). Extra words are kept, e.g. LAUNCHER="srun --mpi=pmix".
  PYTHON     python with numpy and matplotlib (default: the first of python3,
             /usr/bin/python3 that imports both)

Outputs: DIR/scaling.json, DIR/scaling_strong.png, DIR/scaling_weak.png (both layouts as
lines; time, speed-up, efficiency), DIR/scaling_split.png (per kind and layout, stacked
bars of the mean compute/pack/wait/idle seconds summed over the stages, the modelled time
as a marker when the reports have it), DIR/scaling_bytes.png (MPI bytes and memory per
rank), DIR/reports/ (every run's --report), DIR/logs/.

scaling.json (schema triada-scaling/2):
  machine     host, cpus, cores (the cores the ranks ran on: physical cores this process
              may use, or SLURM's CPUs), cores_from (local | slurm), processor, loadavg_end
  settings    transform, executor, transport, reps, size, weak_size, weak_grid, layouts,
              launcher, oversubscribe (the option), oversubscribed (some run had more
              processes than cores), timing
  definitions the formulas below, as text
  records     one per (kind, layout, brick ranks):
    kind, layout             strong | weak; colocated | dedicated
    brick_ranks, actuator_ranks, world_size   r; 0 or 3; MPI processes (r or r+3)
    oversubscribed           world_size > machine.cores
    shape, brick_grid        the tensor; the brick rank grid (weak: W x brick_grid)
    reps, simulation_seconds, simulation_seconds_all, wall_seconds
                             best simulation_seconds (T) of the reps, all of them, and the
                             best run's wall time (whole run, I/O included)
    stage_seconds            the best run's stage_seconds
    stages                   per stage: axis, seconds, compute, pack, wait, idle (the means
                             over brick ranks of the report's stage_time; they add up to
                             seconds), model_seconds (the modelled time; null when the
                             report has none)
    split_total              those summed over the stages (model_seconds null unless every
                             stage has one)
    split_slowest            the slowest stage's entry, with stage (1-based)
    macs, macs_per_second_per_brick_rank     counters.macs; macs / T / brick_ranks
    mpi_bytes, mpi_messages, bytes_per_rank  report mpi; bytes / world_size
    peak_rss_bytes_per_rank, baseline_rss_bytes_per_rank, brick_tensor_bytes_per_rank,
    peak_rss_bytes_max       report memory, per world rank; the largest peak
    speedup_vs_B, efficiency_vs_B (both kinds), efficiency_time_vs_B (weak), where B is
    layout_1 (the 1-brick-rank run of the same kind and layout) or colocated_1 (the
    colocated 1-rank run of the same kind); null without that run:
      strong  speedup T(B)/T, efficiency T(B)/T/brick_ranks
      weak    efficiency = macs_per_second_per_brick_rank / B's, speedup = efficiency x
              brick_ranks (scaled speed-up), efficiency_time = T(B)/T (classic)

Example: $prog --max-ranks 4 --oversubscribe --out /tmp/scaling
USAGE
}

max_ranks=$(nproc)
rank_list=""
layout=both
oversub=0
size=128
weak_size=""
weak_grid=grid
transform=dct
executor=""
transport=""
reps=3
out=scaling_out
keep_inputs=0
bin="${TRIADA_BIN:-$here/build}"
plot=1

while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --max-ranks) need_val "$@"; posint "$1" "$2"; max_ranks=$2; shift 2 ;;
    --ranks) need_val "$@"; rank_list=$2; shift 2 ;;
    --layout) need_val "$@"; layout=$2; shift 2 ;;
    --oversubscribe) oversub=1; shift ;;
    --size) need_val "$@"; posint "$1" "$2"; size=$2; shift 2 ;;
    --weak-size) need_val "$@"; posint "$1" "$2"; weak_size=$2; shift 2 ;;
    --weak-grid) need_val "$@"; weak_grid=$2; shift 2 ;;
    --transform) need_val "$@"; transform=$2; shift 2 ;;
    --executor) need_val "$@"; executor=$2; shift 2 ;;
    --transport) need_val "$@"; transport=$2; shift 2 ;;
    --reps) need_val "$@"; posint "$1" "$2"; reps=$2; shift 2 ;;
    --out) need_val "$@"; out=$2; shift 2 ;;
    --keep-inputs) keep_inputs=1; shift ;;
    --bin) need_val "$@"; bin=$2; shift 2 ;;
    --no-plot) plot=0; shift ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n $weak_size ]] || weak_size=$(( size / 2 > 0 ? size / 2 : 1 ))
case $layout in
  colocated) layouts=(colocated) ;;
  dedicated) layouts=(dedicated) ;;
  both) layouts=(colocated dedicated) ;;
  *) die "--layout must be colocated, dedicated or both, got '$layout'" ;;
esac
[[ $weak_grid == grid || $weak_grid == line ]] || die "--weak-grid must be grid or line, got '$weak_grid'"

# Brick rank counts, ascending, without repeats, 1 first (the baseline).
ranks=(1)
if [[ -n $rank_list ]]; then
  [[ $rank_list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
    die "--ranks must be a comma-separated list of positive integers, got '$rank_list'"
  mapfile -t ranks < <(tr , '\n' <<<"1,$rank_list" | sort -n -u)
else
  for ((r = 2; r <= max_ranks; r *= 2)); do ranks+=("$r"); done
  [[ ${ranks[-1]} -eq $max_ranks ]] || ranks+=("$max_ranks")
fi
max_bricks=${ranks[-1]}
max_world=$max_bricks
[[ $layout == colocated ]] || max_world=$((max_bricks + 3))

find_tools triada-transform triada-gen
check_launcher
launcher_kind=$(basename "${launcher[0]}")

# Inside a SLURM allocation the launcher knows the slots on every node: the check is
# against the allocation's tasks there, against this machine's cores otherwise.
largest="$max_bricks brick ranks"
[[ $layout == colocated ]] || largest="dedicated layout: $max_bricks brick ranks + 3 actuator ranks"
if [[ $oversub -eq 0 ]]; then
  if [[ -n ${SLURM_JOB_ID:-} || $launcher_kind == srun ]]; then
    if [[ -n ${SLURM_NTASKS:-} && $max_world -gt $SLURM_NTASKS ]]; then
      die "the largest run needs $max_world processes ($largest), the allocation has $SLURM_NTASKS tasks; add --oversubscribe, tasks or a smaller --max-ranks"
    fi
  elif [[ $max_world -gt $(nproc) ]]; then
    die "the largest run needs $max_world processes ($largest), this machine has $(nproc) cores; add --oversubscribe$([[ $layout == colocated ]] || echo ', --layout colocated') or lower --max-ranks"
  fi
fi
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

mkdir -p "$out/reports" "$out/logs" || die "cannot create output directory $out"
out=$(cd "$out" && pwd)
rm -f "$out"/reports/*.json "$out"/logs/*.log
# Every run's output and, without --keep-inputs, the inputs go to a scratch folder that
# is removed on any exit.
scratch=$(mktemp -d "$out/.scaling-tmp.XXXXXX") || die "cannot create a scratch folder in $out"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
inputs=$scratch
if [[ $keep_inputs -eq 1 ]]; then
  inputs=$out/inputs
  mkdir -p "$inputs" || die "cannot create $inputs"
fi

launch() {  # launch NP CMD...
  local np=$1
  shift
  if [[ $launcher_kind == srun ]]; then
    if [[ $oversub -eq 1 ]]; then
      "${launcher[@]}" -n "$np" --overcommit "$@"
    else
      "${launcher[@]}" -n "$np" "$@"
    fi
  elif [[ $oversub -eq 1 ]]; then
    "${launcher[@]}" -np "$np" --oversubscribe "$@"
  else
    "${launcher[@]}" -np "$np" "$@"
  fi
}

extra=()
if [[ -n $executor ]]; then extra+=(--executor "$executor"); fi
if [[ -n $transport ]]; then extra+=(--transport "$transport"); fi

# input_for N1 N2 N3: sets `input` to the input of that shape, generated on first use.
declare -A generated=()
input_for() {
  local shape="$1x$2x$3" log
  input="$inputs/input_$shape.h5"
  [[ -z ${generated[$shape]:-} ]] || return 0
  log="$out/logs/gen_$shape.log"
  "$GEN" --output "$input" --shape "$1,$2,$3" --dist uniform --seed 1 --force >"$log" 2>&1 ||
    die "triada-gen failed for the $shape input (log: $log)"
  generated[$shape]=1
}

# run_config KIND LAYOUT R: the reps of one configuration.
run_config() {
  local kind=$1 lay=$2 r=$3 np act rep tag log rc dims p1 p2 p3
  local grid=()  # strong: automatic (MPI_Dims_create)
  if [[ $lay == dedicated ]]; then np=$((r + 3)) act=auto; else np=$r act=colocated; fi
  if [[ $kind == strong ]]; then
    input_for "$size" "$size" "$size"
  else
    if [[ $weak_grid == line ]]; then
      p1=$r p2=1 p3=1
    else
      dims=$("$PYTHON" "$here/run_scripts/scaling_collect.py" grid "$r") ||
        die "cannot compute the brick grid of $r ranks"
      read -r p1 p2 p3 <<<"$dims"
    fi
    input_for $((weak_size * p1)) $((weak_size * p2)) $((weak_size * p3))
    grid=(--ranks.grid "$p1,$p2,$p3")  # every brick rank keeps a W^3 brick
  fi
  for ((rep = 1; rep <= reps; rep++)); do
    tag="${kind}_${lay}_r${r}_rep${rep}"
    log="$out/logs/$tag.log"
    printf '  %-6s %-9s brick ranks %-3s (np %-3s) rep %s ... ' "$kind" "$lay" "$r" "$np" "$rep"
    rc=0
    launch "$np" "$TRANSFORM" --input "$input" --output "$scratch/out.h5" --transform "$transform" \
      --ranks.actuators "$act" --report "$out/reports/$tag.json" --force --quiet \
      "${grid[@]}" "${extra[@]}" >"$log" 2>&1 || rc=$?
    if [[ $rc -ne 0 || ! -s $out/reports/$tag.json ]]; then
      echo "failed"
      rm -f "$out/reports/$tag.json"
      die "$kind scaling run, $lay layout, $r brick rank(s) (np $np), rep $rep failed (exit $rc; log: $log)"
    fi
    "$PYTHON" -c 'import json,sys; print("%.4f s" % json.load(open(sys.argv[1]))["simulation_seconds"])' \
      "$out/reports/$tag.json"
  done
}

if [[ $weak_grid == line ]]; then weak_desc="(${weak_size}*r)x${weak_size}x${weak_size} on r x 1 x 1"
else weak_desc="${weak_size}^3 per brick rank on MPI_Dims_create's grid"; fi
echo "$prog: brick ranks ${ranks[*]}; layouts ${layouts[*]}; strong ${size}^3, weak $weak_desc;" \
  "$transform; $reps rep(s); launcher ${launcher[*]}"
for kind in strong weak; do
  # --layout dedicated: the colocated 1-rank run is the baseline of *_vs_colocated_1.
  [[ $layout != dedicated ]] || run_config "$kind" colocated 1
  for lay in "${layouts[@]}"; do
    for r in "${ranks[@]}"; do run_config "$kind" "$lay" "$r"; done
  done
done

collect_opts=()
[[ $oversub -eq 0 ]] || collect_opts+=(--oversubscribe)
"$PYTHON" "$here/run_scripts/scaling_collect.py" collect --out "$out" --transform "$transform" \
  --executor "${executor:-default}" --transport "${transport:-default}" --reps "$reps" \
  --size "$size" --weak-size "$weak_size" --weak-grid "$weak_grid" \
  --layouts "$(IFS=,; echo "${layouts[*]}")" --launcher "$launcher_kind" \
  "${collect_opts[@]}" || die "collecting the reports failed"

echo "wrote $out/scaling.json"
if [[ $plot -eq 1 ]]; then
  "$PYTHON" "$here/run_scripts/plot_scaling.py" "$out/scaling.json" -o "$out" || die "plot_scaling.py failed"
fi
