#!/usr/bin/env bash
# Open MPI's session directories. A program started without mpirun (a singleton) takes a
# root of its own under $TMPDIR and removes it at its end (src/mesh/mpi.cpp): singletons
# started or ended at once no longer race on Open MPI 4's one shared root, which failed a
# run with "orte_session_dir failed". A user's OMPI_MCA_orte_tmpdir_base wins; ranks
# started by mpirun keep the launcher's. A singleton killed by SIGINT, SIGTERM or SIGHUP,
# and a Python process killed so, leave no root either (core/signal_cleanup.hpp).
set -u
source "$(dirname "$0")/lib_check.sh"
in_scratch_dir sessions
unset OMPI_MCA_orte_tmpdir_base
export TMPDIR=$tmp/t
mkdir t user
CONV=$TRIADA_BIN/triada-conv
TRANSFORM=$TRIADA_BIN/triada-transform
GEN=$TRIADA_BIN/triada-gen

# A GEMM layer long enough (about a second, verified) to see its session directory.
side=1024
if sanitized; then side=384; fi
printf 'Layer,M,N,K,\nG1,%d,%d,%d,\n' "$side" "$side" "$side" >g.csv

# watch WANTED UNWANTED COMMAND...: runs COMMAND in the background and polls, while it
# lives, for paths matching the glob WANTED and the glob UNWANTED; true if the command
# succeeded, WANTED showed and UNWANTED never did.
watch() {
  local wanted=$1 unwanted=$2 job rc=0 got=0 stray=0
  shift 2
  "$@" >/dev/null 2>err.txt &
  job=$!
  while kill -0 "$job" 2>/dev/null; do
    if compgen -G "$wanted" >/dev/null; then got=1; fi
    if compgen -G "$unwanted" >/dev/null; then stray=1; fi
    sleep 0.005
  done
  wait "$job" || rc=$?
  [[ $rc -eq 0 ]] || echo "  exit $rc: $(cat err.txt)" >&2
  [[ $got -eq 1 ]] || echo "  no $wanted seen" >&2
  [[ $stray -eq 0 ]] || echo "  $unwanted seen" >&2
  [[ $rc -eq 0 && $got -eq 1 && $stray -eq 0 ]]
}
tmpdir_empty() { [[ -z $(ls -A "$TMPDIR") ]]; }
conv() { "$CONV" --network g.csv --mxu 16; }
conv_user_root() { OMPI_MCA_orte_tmpdir_base="$tmp/user" conv; }
conv_np2() { "$MPIEXEC" --oversubscribe -np 2 "$CONV" --network g.csv --mxu 16; }

echo "-- a singleton's session directory lies under a root of its own, removed at its end"
check "under \$TMPDIR/triada-ompi.*, never the shared \$TMPDIR/ompi.*" \
  watch "$TMPDIR/triada-ompi.*/ompi.*" "$TMPDIR/ompi.*" conv
check "nothing left in \$TMPDIR" tmpdir_empty

echo "-- a user's OMPI_MCA_orte_tmpdir_base wins"
check "under the user's root, no root of its own" \
  watch "$tmp/user/ompi.*" "$TMPDIR/triada-ompi.*" conv_user_root
check "nothing left in \$TMPDIR" tmpdir_empty

echo "-- ranks started by mpirun keep the launcher's root"
check "mpirun's \$TMPDIR/ompi.*, no rank's root of its own" \
  watch "$TMPDIR/ompi.*" "$TMPDIR/triada-ompi.*" conv_np2

# The Python package starts MPI itself (a singleton in the interpreter), where it is built.
if compgen -G "$TRIADA_BIN/python/triada/_triada*.so" >/dev/null; then
  echo "-- the Python package: its own root while MPI runs, hidden from child processes"
  check "a root of its own, OMPI_MCA_orte_tmpdir_base unset again" \
    env PYTHONPATH="$TRIADA_BIN/python" PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -c "
import ctypes, glob, os, sys, triada
triada.layout((4, 5, 6))
roots = glob.glob(os.environ['TMPDIR'] + '/triada-ompi.*/ompi.*')
getenv = ctypes.CDLL(None).getenv  # the C environment (os.environ is a copy from start-up)
getenv.restype = ctypes.c_char_p
sys.exit(0 if len(roots) == 1 and getenv(b'OMPI_MCA_orte_tmpdir_base') is None else 1)"
  check "nothing left in \$TMPDIR after the interpreter's exit" tmpdir_empty
fi

# kill_mid_run SIG DELAY COMMAND...: runs COMMAND with every signal at its default action
# (a script's background job would ignore SIGINT), sends SIG DELAY seconds after its
# session root holds Open MPI's directory (0: while MPI starts, which holds signals back
# until it has), and checks that it died by SIG and left no root and no temporary.
kill_mid_run() {
  local sig=$1 delay=$2 job rc=0
  shift 2
  env --default-signal "$@" >/dev/null 2>err.txt &
  job=$!
  until compgen -G "$TMPDIR/triada-ompi.*/ompi.*" >/dev/null || ! kill -0 "$job" 2>/dev/null; do
    sleep 0.005
  done
  sleep "$delay"
  kill -s "$sig" "$job" 2>/dev/null
  wait "$job" 2>/dev/null || rc=$?
  local want=$((128 + $(kill -l "$sig"))) ok=1
  [[ $rc -eq $want ]] || { ok=0; echo "  exit $rc, expected $want: $(head -c 300 err.txt)" >&2; }
  tmpdir_empty || { ok=0; echo "  left: $(find "$TMPDIR" | head -5)" >&2; }
  ! compgen -G ".*.tmp-*" >/dev/null || { ok=0; echo "  left: $(ls -A)" >&2; }
  rm -rf "${TMPDIR:?}"/* .*.tmp-*  # the next case starts clean
  [[ $ok -eq 1 ]]
}

echo "-- a singleton killed by SIGINT, SIGTERM or SIGHUP leaves no session root"
# Each runs a few seconds, verified; SIGINT comes as MPI starts, the others mid-run.
"$GEN" --output x96.h5 --shape 96,96,96 >/dev/null
declare -A runs=(
  [transform]="$TRANSFORM --input x96.h5 --output y.h5 --transform dct --cell-mode fp32 -q"
  [gen]="$GEN --output g.h5 --shape 400,400,100 --dist normal --sparsity-pattern 2:4"
  [tcu]="$TRIADA_BIN/triada-tcu --algo matmul --size 512 --m 16 --latency 0 --executor reference"
  [conv]="$CONV --network g.csv --mxu 16"
  [bench]="$TRIADA_BIN/triada-bench --sizes 256 --sparsity dense --variants fused --json b.json"
)
for app in transform gen tcu conv bench; do
  exe=${runs[$app]%% *}
  if [[ ! -x $exe ]]; then  # triada-bench is not built with the sanitizers
    echo "skip $app: not built"
    continue
  fi
  for sig in INT TERM HUP; do
    delay=0.3
    if [[ $sig == INT ]]; then delay=0; fi
    # shellcheck disable=SC2086 # the words of a command line
    check "$app, SIG$sig" kill_mid_run "$sig" "$delay" ${runs[$app]}
  done
done

if compgen -G "$TRIADA_BIN/python/triada/_triada*.so" >/dev/null; then
  echo "-- a Python process killed mid-call or between calls leaves no session root"
  # job.py HANDLER WHAT: SIGINT at Python's handler or at the default action (dfl), MPI
  # started (layout), then a transform of a few seconds or a sleep.
  cat >job.py <<'EOF'
import signal, sys, time
import numpy as np, triada
if sys.argv[1] == "dfl":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
x = np.random.default_rng(1).standard_normal((112, 112, 112))
triada.layout((4, 5, 6))
if sys.argv[2] == "call":
    triada.transform(x, "dct", cell_mode="fp32", report="r.json")
else:
    time.sleep(60)
EOF
  py=(env PYTHONPATH="$TRIADA_BIN/python" PYTHONDONTWRITEBYTECODE=1 "$PYTHON" job.py)
  check "SIGTERM mid-call" kill_mid_run TERM 0.5 "${py[@]}" python call
  check "SIGHUP between calls" kill_mid_run HUP 0.5 "${py[@]}" python sleep
  # Python's handler: KeyboardInterrupt, then the exit (by SIGINT) removes the root.
  check "SIGINT mid-call (KeyboardInterrupt)" kill_mid_run INT 0.5 "${py[@]}" python call
  check "SIGINT mid-call (default action)" kill_mid_run INT 0.5 "${py[@]}" dfl call
  check "no report published" test ! -e r.json
fi

echo "-- singletons started and ended at once, in rounds: every run succeeds"
rounds=6
if sanitized; then rounds=3; fi
bad=0
for round in $(seq "$rounds"); do
  pids=()
  for i in 1 2 3 4 5 6; do
    "$TRANSFORM" --model-only "$((4 + i)),5,$((3 + round))" -t dct -q >/dev/null 2>"err.$i" &
    pids+=($!)
  done
  for i in 1 2 3 4 5 6; do
    wait "${pids[$((i - 1))]}" || {
      bad=$((bad + 1))
      echo "  round $round run $i: $(head -c 300 "err.$i")" >&2
    }
  done
done
check "$((rounds * 6)) concurrent singleton runs succeeded" test "$bad" -eq 0
check "nothing left in \$TMPDIR after them" tmpdir_empty

summary
