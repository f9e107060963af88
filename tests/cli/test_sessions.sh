#!/usr/bin/env bash
# Open MPI's session directories. A program started without mpirun (a singleton) takes a
# root of its own under $TMPDIR and removes it at its end (src/mesh/mpi.cpp): singletons
# started or ended at once no longer race on Open MPI 4's one shared root, which failed a
# run with "orte_session_dir failed". A user's OMPI_MCA_orte_tmpdir_base wins; ranks
# started by mpirun keep the launcher's.
set -u
source "$(dirname "$0")/lib_check.sh"
in_scratch_dir sessions
unset OMPI_MCA_orte_tmpdir_base
export TMPDIR=$tmp/t
mkdir t user
CONV=$TRIADA_BIN/triada-conv
TRANSFORM=$TRIADA_BIN/triada-transform

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
