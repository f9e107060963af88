#!/usr/bin/env bash
# A modelled TriADA chip against an H100: the physical model (doc/physical.md §4.1-4.4) on
# the H100's die area, power and memory, beside the H100's fastest measured method per
# transform (data/anchors/h100.json) with both sides' HBM floors, and FFTW / OpenBLAS on
# this machine (triada-bench); writes a CSV, the README's table and two plots
# (run_scripts/chip_compare.py). Run with --help.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prog=$(basename "$0")
# shellcheck source=run_scripts/lib_tools.sh
source "$here/run_scripts/lib_tools.sh"

outputs=(chip_compare.csv chip_compare.md chip_time.png chip_energy.png commands.txt)
transforms=(dct dft gemt)
modes=(fp64 fp32)
budgets=(area area+power)
nodes=(7nm 4N slow)

# The fp32 cells: FPMax's measured SP FMA unit (217 GFLOPS/mm^2, 106 GFLOPS/W, 1.42 ns at
# 28 nm; J. Pu et al., "FPMax", 2016), pipelined at the H100's 1.98 GHz at 7 nm, as the fp64
# cells are FPMax's DP unit by default; derived in doc/physical.md §6.2 (the fp32 mode's
# defaults stay the M3XU paper's FP32-MXU, for the study that reproduces that paper).
FP32_FPMAX=(--timing.mac_latency_ps_fp32 2050 --area.mac_um2_fp32 18544 --energy.mac_pj_fp32 44.9)

usage() {
  cat <<EOF
Usage: $prog --out DIR [options]

Models a TriADA chip with the budget of an NVIDIA H100 SXM (814 mm^2 die, 700 W, HBM3 at
3.35 TB/s) and compares it with the H100's measured times. For every shape, transform,
cell mode, budget and node it runs triada-transform on the shape alone (no data):

  shapes     cubic N x N x N for N in --sizes, and N x N/2 x 2N (the same N^3 elements, so
             the same off-chip bytes, on unequal axes: the sizer folds each axis differently)
  transforms dct, dft (complex data) and gemt, a dense 3-mode product with real N_s x N_s
             matrices (--model-only's gemt)
  modes      --cell.mode fp64 and fp32
  budgets    area: --chip.area_mm2 814; area+power: also --chip.power_w 700
  nodes      7nm: --technology.node_nm 7 (the scaling tables' smallest node);
             4N: also --mesh meshcfg/node_4n_estimate.ini (an estimate of TSMC 4N, the
             H100's node, from TSMC's N5-vs-N7 and N4-vs-N5 figures; sources in the file);
             slow: 7 nm with every MAC issuing 8 times slower (--timing.mac_ps_fp64 15592,
             and the fp32 cells' too): the sensitivity of every result to the MAC's
             speed, beyond the band's corners
  cells      fp64: the defaults, FPMax's DP unit (doc/physical.md §6); fp32: FPMax's SP
             unit (${FP32_FPMAX[*]},
             --timing.mac_ps_fp32 1949; doc/physical.md §6.2)

all with --memory.kind hbm3 --memory.overlap double_buffer --area.layout planar (one die,
as the H100, within a 26 x 33 mm reticle) --energy.bus_model wire (a line's energy grows with
its length, up to the die's edge). A configuration the model refuses keeps its refusal line in its row.
Unless --no-bench, triada-bench times FFTW (fftw-dft, fftw-dct) and a 3-mode product
through OpenBLAS dgemm (one thread, fp64, best of 3) on the cubic sizes up to --bench-max.

Options:
  --out DIR        output directory (required; created if need be). Refused if it already
                   holds results (${outputs[*]}), unless --force
  --force          overwrite the results in DIR
  --bin DIR        directory of the built programs (default: $here/build)
  --sizes LIST     N, comma-separated, even (default 64,128,256,512,1024)
  --quick          tiny run for tests: sizes 16,128 (128: the smallest H100 anchor), bench
                   max 16 (an explicit --sizes or --bench-max still wins)
  --no-bench       run no triada-bench (the this-machine column stays empty)
  --bench-max N    measure the cubic sizes up to N (default 512, about a minute and a half
                   on one core; at 1024 FFTW's complex input and output alone take 32 GiB,
                   and the dgemm product's 3 N^4 multiply-adds minutes per repetition)
  --jobs J         model runs at a time (default: nproc = $(nproc))
  -h, --help       this help

Environment: PYTHON (a python3 with numpy, matplotlib and h5py).

The H100 side of a cubic row is the fastest measured method that computes the transform
(DCT-II: cupyx dctn or three cuBLAS GEMMs with DCT matrices; DFT: cuFFT fftn; GEMT: the
GEMMs), beside each side's HBM floor (bytes over 3.35 TB/s; the H100's a lower bound from
its method's passes), which side is memory-bound, and the ratio at equal peak where the
reports give physical.peak_flops; optimistic-pessimistic bands where they give
physical.range.

Outputs in DIR: chip_compare.csv (every row), chip_compare.md (the README's table: fp64,
cubic N = 128, 512, 1024 as far as they ran, both budgets, every node, H100 beside),
chip_time.png (end-to-end time vs N), chip_energy.png (energy vs N; the H100's as 700 W x
its time, an upper bound), commands.txt (every command run). Progress goes to stderr.
EOF
}

sizes=""
bench_max=""
bench=1
quick=0
force=0
out=""
bin="$here/build"
jobs=$(nproc)
invocation="$prog $*"

while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --out) need_val "$@"; out=$2; shift 2 ;;
    --force) force=1; shift ;;
    --bin) need_val "$@"; bin=$2; shift 2 ;;
    --sizes) need_val "$@"
      [[ $2 =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--sizes must be a comma-separated list of positive integers, got '$2'"
      sizes=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-bench) bench=0; shift ;;
    --bench-max) need_val "$@"; posint "$1" "$2"; bench_max=$2; shift 2 ;;
    --jobs) need_val "$@"; posint "$1" "$2"; jobs=$2; shift 2 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
[[ -n $out ]] || die "--out DIR is required (see --help)"
if [[ $quick -eq 1 ]]; then : "${sizes:=16,128}" "${bench_max:=16}"; fi
: "${sizes:=64,128,256,512,1024}" "${bench_max:=512}"
mapfile -t ns < <(tr ',' '\n' <<<"$sizes" | sort -n -u)
for n in "${ns[@]}"; do
  [[ $((n % 2)) -eq 0 ]] || die "--sizes must be even (the second family is N x N/2 x 2N), got $n"
done

existing=()
for f in "${outputs[@]}"; do [[ -e $out/$f ]] && existing+=("$f"); done
if [[ ${#existing[@]} -gt 0 && $force -eq 0 ]]; then
  die "$out already holds results (${existing[*]}): use --force to overwrite them"
fi
if [[ -z ${PYTHON:-} ]]; then  # the first python3 with what chip_compare.py needs
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import numpy, matplotlib, h5py' >/dev/null 2>&1; then PYTHON=$p; break; fi
  done
  [[ -n ${PYTHON:-} ]] || die "no python3 with numpy, matplotlib and h5py found (set PYTHON)"
fi
if [[ $bench -eq 1 ]]; then find_tools triada-transform triada-bench; else find_tools triada-transform; fi
bin=$(cd "$bin" && pwd)
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
[[ $out == /* ]] || out="$PWD/$out"

# Everything is made in a scratch directory, the results moved to DIR at the end: a failed
# run leaves DIR as it was (or absent) and no temporaries.
work=$(mktemp -d "${TMPDIR:-/tmp}/chip_compare.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir reports logs results

# commands.txt: each command as run (in the scratch directory), with the programs' and the
# repository's folders written $BIN and $SRC.
{
  echo "# $invocation, at $(git -C "$here" describe --always --dirty 2>/dev/null || echo 'an unknown commit')"
  echo "# Run in a scratch directory; \$BIN: the programs (--bin), \$SRC: the repository."
} >commands.txt
record() {
  local w line=""
  for w in "$@"; do
    w=${w/#"$bin"\//\$BIN/}
    w=${w/#"$here"\//\$SRC/}
    if [[ $w =~ ^(\$BIN/|\$SRC/)?[A-Za-z0-9_./,:=+@%-]+$ ]]; then
      line+="$w "
    else  # single-quoted, a ' as '\''
      line+="'${w//\'/\'\\\'\'}' "
    fi
  done
  echo "${line% }" >>commands.txt
}


# One line of runs.tsv and one command per row: tag, node, family, N, shape, transform,
# mode, budget.
cmds=()
: >runs.tsv
add_row() {  # add_row NODE FAMILY N N1 N2 N3 TRANSFORM MODE BUDGET
  local node=$1 family=$2 n=$3 n1=$4 n2=$5 n3=$6 t=$7 mode=$8 budget=$9
  local tag="${node}_${family}_${n}_${t}_${mode}_${budget/+/_}"
  local args=("$TRANSFORM" --model-only "$n1,$n2,$n3" -t "$t" --cell.mode "$mode" --chip.area_mm2 814)
  [[ $budget == area+power ]] && args+=(--chip.power_w 700)
  args+=(--technology.node_nm 7 --memory.kind hbm3 --memory.overlap double_buffer --area.layout planar
    --energy.bus_model wire)
  [[ $node == 4N ]] && args+=(--mesh "$here/meshcfg/node_4n_estimate.ini")
  local issue=1949  # FPMax's units at the H100's clock; the slow variant 8 times that
  [[ $node == slow ]] && issue=$((8 * 1949))
  if [[ $mode == fp32 ]]; then
    args+=(--timing.mac_ps_fp32 "$issue" "${FP32_FPMAX[@]}")
  elif [[ $node == slow ]]; then
    args+=(--timing.mac_ps_fp64 "$issue")
  fi
  args+=(--quiet --report "reports/$tag.json")
  record "${args[@]}"
  cmds+=("$(printf '%q ' "${args[@]}")>logs/$tag.log 2>&1")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$node" "$family" "$n" "${n1}x${n2}x${n3}" \
    "$t" "$mode" "$budget" >>runs.tsv
}
for node in "${nodes[@]}"; do
  for n in "${ns[@]}"; do
    for shape in "cubic $n $n $n" "noncubic $n $((n / 2)) $((2 * n))"; do
      read -r family n1 n2 n3 <<<"$shape"
      for t in "${transforms[@]}"; do
        for mode in "${modes[@]}"; do
          for budget in "${budgets[@]}"; do add_row "$node" "$family" "$n" "$n1" "$n2" "$n3" "$t" "$mode" "$budget"; done
        done
      done
    done
  done
done

# A refused configuration leaves its log (its error line) and no report: chip_compare.py
# puts the line in its row. Anything else that fails is this script's failure.
total=${#cmds[@]}
echo "$prog: ${#ns[@]} size(s) x 2 shapes x ${#transforms[@]} transforms x ${#modes[@]} modes x" \
  "${#budgets[@]} budgets x ${#nodes[@]} nodes: $total model runs, $jobs at a time" >&2
start=$SECONDS
done_runs=0
step=$(((total + 9) / 10))
for c in "${cmds[@]}"; do
  bash -c "$c" || true &
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do
    wait -n || true
    done_runs=$((done_runs + 1))
    if [[ $((done_runs % step)) -eq 0 ]]; then echo "  $done_runs/$total model runs, $((SECONDS - start)) s" >&2; fi
  done
done
wait
echo "  $total/$total model runs, $((SECONDS - start)) s" >&2

# fftw_memory N: ", where ..." if FFTW's complex N^3 input and output exceed the memory
# available here, else nothing.
fftw_memory() {
  local need=$((32 * $1 ** 3 / 1073741824)) have
  have=$(awk '/^MemAvailable:/ { printf "%d", $2 / 1048576 }' /proc/meminfo 2>/dev/null || echo 0)
  if [[ $need -gt $have ]]; then echo ", where FFTW's complex input and output alone need $need GiB (this machine has $have GiB available)"; fi
}
bench_note=""
if [[ $bench -eq 1 ]]; then
  measured=() skipped=()
  for n in "${ns[@]}"; do
    if [[ $n -le $bench_max ]]; then measured+=("$n"); else skipped+=("$n"); fi
  done
  if [[ ${#skipped[@]} -gt 0 ]]; then
    bench_note="this machine: N = $(IFS=,; echo "${skipped[*]}") not measured: above --bench-max $bench_max$(fftw_memory "${skipped[-1]}")"
    echo "$prog: $bench_note" >&2
  fi
  if [[ ${#measured[@]} -gt 0 ]]; then
    list=$(IFS=,; echo "${measured[*]}")
    echo "$prog: measuring fftw-dft, fftw-dct and openblas on N = $list (one thread, best of 3) with triada-bench" >&2
    args=("$BENCH" --sizes "$list" --sparsity dense --variants "fftw-dft,fftw-dct,openblas" --reps 3
      --progress always --json bench.json)
    record "${args[@]}"
    "${args[@]}" >logs/bench.log || die "triada-bench failed (its message is above)"
  fi
else
  bench_note="this machine: not measured (--no-bench)"
fi

record "$PYTHON" "$here/run_scripts/chip_compare.py" . results --anchors "$here/data/anchors/h100.json" \
  --note "$bench_note"
"$PYTHON" "$here/run_scripts/chip_compare.py" . results --anchors "$here/data/anchors/h100.json" \
  --note "$bench_note" || die "collecting the reports failed (see above)"
cp commands.txt results/
mkdir -p "$out" || die "cannot create output directory $out"
for f in "${outputs[@]}"; do mv -f "results/$f" "$out/$f"; done
echo "$prog: wrote ${outputs[*]} to $out" >&2
