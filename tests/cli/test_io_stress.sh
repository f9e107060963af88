#!/usr/bin/env bash
# Parallel I/O under deliberate CPU contention (doc/scaling.md "Parallel layout"): every run either
# succeeds with every output bit right or fails cleanly, whatever the scheduler does.
# Two busy loops load the cores while, many times over:
# - small transforms run at np 3 (three brick ranks) and np 7 (four brick ranks,
#   dedicated actuators) on a plain input, and at np 3 and 5 on an input that is an
#   external link to a dataset in another file;
# - triada-gen writes at np 3 (the reported command: --shape 9,7,5 --seed 5, uniform) and
#   at np 3 and 5 (the index distribution);
# - the Python package transforms an array at np 3 under mpirun with mpi4py (where built);
# - a failing parallel write (a full tmpfs, where mounting is permitted) in which one
#   rank comes 12 s late to the clean-up, as a descheduled rank of a loaded machine may.
# Oracles computed here: numpy's orthonormal DCT-II along each axis for the transforms
# (within a few ulps; every transform output, files and Python, must moreover hold the same
# bits), the generator's splitmix64 hash and the index distribution for triada-gen (bit for
# bit). Every run has 120 s; a hang counts as a failure. Open MPI 4.1's OMPIO corrupted
# about one small multi-rank output in ten here (so the apps use ROMIO), and the old
# writer's 10-second wait for late peers crashed the failing write (exit 139) every time.
# STRESS_RUNS scales the repetitions.
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

RUNS=${STRESS_RUNS:-20}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/triada-io-stress.XXXXXX")
busy=()
cleanup() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  umount "$tmp/full" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"

"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(7)
x = rng.standard_normal((7, 6, 5))
def dct_matrix(n):  # orthonormal DCT-II: C[k, i] = s_k cos(pi (2i + 1) k / 2n)
    k, i = np.meshgrid(np.arange(n), np.arange(n), indexing='ij')
    c = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    c[0] /= np.sqrt(2.0)
    return c
y = np.einsum('ai,bj,ck,ijk->abc', dct_matrix(7), dct_matrix(6), dct_matrix(5), x)
with h5py.File('x.h5', 'w') as f:
    f['x'] = x
# The same tensor behind an external link: link.h5:/x -> data.h5:/inner/x.
with h5py.File('data.h5', 'w') as f:
    f['inner/x'] = x
with h5py.File('link.h5', 'w') as f:
    f['x'] = h5py.ExternalLink('data.h5', '/inner/x')
np.save('x.npy', x)
np.save('oracle.npy', y)

# triada-gen --shape 9,7,5 --seed 5 (uniform): element g is 2 u - 1, u the top 53 bits of
# splitmix64(splitmix64(splitmix64(seed) ^ stream 1) ^ g) (src/io/generate.cpp).
M = np.uint64
def splitmix64(v):
    v = v + M(0x9e3779b97f4a7c15)
    v = (v ^ (v >> M(30))) * M(0xbf58476d1ce4e5b9)
    v = (v ^ (v >> M(27))) * M(0x94d049bb133111eb)
    return v ^ (v >> M(31))
with np.errstate(over='ignore'):
    h = splitmix64(splitmix64(splitmix64(np.array([5], dtype=np.uint64)) ^ M(1))
                   ^ np.arange(9 * 7 * 5, dtype=np.uint64))
np.save('gen_oracle.npy', (2.0 * ((h >> M(11)).astype(np.float64) * 2.0**-53) - 1.0).reshape(9, 7, 5))
EOF

# Every transform output (HDF5 files and the Python package's .npy) against the oracle:
# rounding differs from numpy's summation order, so the bound is a few ulps of the largest
# value, far below a zeroed or garbage run; and all of them hold the same bits.
compare_transforms() {
  "$PYTHON" - "$@" <<'EOF'
import h5py, numpy as np, sys
want = np.load('oracle.npy')
bad, first = [], None
for name in sys.argv[1:]:
    try:
        got = np.load(name) if name.endswith('.npy') else h5py.File(name, 'r')['y'][()]
    except Exception as e:
        bad.append(f'{name}: {e}')
        continue
    err = np.max(np.abs(got - want)) if got.shape == want.shape else np.inf
    if not err <= 1e-13 * np.max(np.abs(want)):
        bad.append(f'{name}: max error {err}')
    elif first is None:
        first = (name, got.tobytes())
    elif got.tobytes() != first[1]:
        bad.append(f'{name}: other bits than {first[0]}')
if bad:
    print('\n'.join(bad))
sys.exit(1 if bad else 0)
EOF
}
# compare_gens ORACLE FILES...: ORACLE is "index" (the 9x10x11 index tensor) or a .npy file.
compare_gens() {
  "$PYTHON" - "$@" <<'EOF'
import h5py, numpy as np, sys
oracle = sys.argv[1]
want = (np.arange(9 * 10 * 11.0).reshape(9, 10, 11) if oracle == 'index' else np.load(oracle))
bad = []
for n in sys.argv[2:]:
    try:
        got = h5py.File(n, 'r')['x'][()]
    except Exception as e:
        bad.append(f'{n}: {e}')
        continue
    if got.shape != want.shape or got.tobytes() != want.tobytes():
        bad.append(f'{n}: other bits than the oracle')
if bad:
    print('\n'.join(bad))
sys.exit(1 if bad else 0)
EOF
}

# mpi_runs NAME N NP OUTPUT_PATTERN PROGRAM ARGS...: N runs of PROGRAM at NP ranks, each
# within 120 s; "@" in ARGS and OUTPUT_PATTERN is replaced by the run's number. Appends
# each output to outs; a non-zero exit (124: a hang) is reported with its stderr. A hung
# mpirun may not end on SIGTERM (Open MPI 4.1.4 with PMIx 4.2 once deadlocked in
# PMIx_server_finalize after a rank crashed, still there 30 minutes later): -k 10 kills it.
outs=()
mpi_runs() {
  local name=$1 n=$2 np=$3 pattern=$4 r rc bad=0 start=$SECONDS
  shift 4
  for r in $(seq "$n"); do
    set +e
    timeout -k 10 120 "$MPIEXEC" -q --oversubscribe -np "$np" "${@//@/$r}" >out.txt 2>err.txt
    rc=$?
    set -e
    if [[ $rc -ne 0 ]]; then
      bad=$((bad + 1))
      echo "  $name run $r: exit $rc$([[ $rc -eq 124 ]] && echo ' (hang)'): $(head -c 300 err.txt)" >&2
    fi
    outs+=("${pattern//@/$r}")
  done
  check "$name: $n runs under contention exit 0 ($((SECONDS - start)) s)" test "$bad" -eq 0
}

for _ in 1 2; do
  sh -c 'while :; do :; done' &
  busy+=($!)
done

TRANSFORM="$TRIADA_BIN/triada-transform"
GEN="$TRIADA_BIN/triada-gen"

outs=()
mpi_runs "transform np 3" "$RUNS" 3 y3-@.h5 "$TRANSFORM" -i x.h5 -o y3-@.h5 -t dct --stage-order 123 -q
mpi_runs "transform np 7" $((RUNS / 4)) 7 y7-@.h5 "$TRANSFORM" -i x.h5 -o y7-@.h5 -t dct --stage-order 123 -q
mpi_runs "transform np 3, external link input" $((RUNS / 4)) 3 l3-@.h5 \
  "$TRANSFORM" -i link.h5 -o l3-@.h5 -t dct --stage-order 123 -q
mpi_runs "transform np 5, external link input" $((RUNS / 4)) 5 l5-@.h5 \
  "$TRANSFORM" -i link.h5:/x -o l5-@.h5 -t dct --stage-order 123 -q
transform_outs=("${outs[@]}")

# The Python package: the same transform on an array, rank 0's result saved.
if compgen -G "$TRIADA_BIN/python/triada/_triada*.so" >/dev/null && "$PYTHON" -c 'import mpi4py' 2>/dev/null; then
  cat >job.py <<'EOF'
import sys
import numpy as np
from mpi4py import MPI
import triada
comm = MPI.COMM_WORLD
y, _ = triada.transform(np.load('x.npy') if comm.rank == 0 else None, "dct", stage_order="123",
                        comm=comm)
if comm.rank == 0:
    np.save(sys.argv[1], y)
EOF
  outs=()
  PYTHONPATH="$TRIADA_BIN/python" PYTHONDONTWRITEBYTECODE=1 \
    mpi_runs "Python package np 3" $((RUNS / 4)) 3 p3-@.npy "$PYTHON" -m mpi4py job.py p3-@.npy
  transform_outs+=("${outs[@]}")
else
  echo "SKIPPED: no Python module in this build (or no mpi4py); its runs not made"
fi
check "every transform output equals the oracle, all with the same bits" \
  compare_transforms "${transform_outs[@]}"

outs=()
mpi_runs "triada-gen np 3 --shape 9,7,5 --seed 5" $((RUNS / 2)) 3 s3-@.h5 \
  "$GEN" --output s3-@.h5 --shape 9,7,5 --seed 5
check "every seed-5 file equals the generator's hash, bit for bit" compare_gens gen_oracle.npy "${outs[@]}"
outs=()
mpi_runs "triada-gen np 3 --dist index" $((RUNS / 4)) 3 g3-@.h5 \
  "$GEN" -o g3-@.h5 --shape 9,10,11 --dist index
mpi_runs "triada-gen np 5 --dist index" $((RUNS / 4)) 5 g5-@.h5 \
  "$GEN" -o g5-@.h5 --shape 9,10,11 --dist index
check "every index file equals the index oracle" compare_gens index "${outs[@]}"

# A failing parallel write with a late rank: the space runs out during the write (no
# fallocate), the error is agreed, and rank 2 reaches the clean-up 12 s after the others.
# They must wait for it (it is coming: it unwinds the same error) and close together: one
# error line, exit 1, nothing left on the full file system, no crash and no hang.
mkdir full
if mount -t tmpfs -o size=256k tmpfs full 2>/dev/null; then
  dd if=/dev/zero of=full/filler bs=4k count=40 2>/dev/null || true
  set +e
  SECONDS=0
  TRIADA_NO_FALLOCATE=1 TRIADA_TEST_LATE_ABORT=2:12 timeout -k 10 120 "$MPIEXEC" -q --oversubscribe \
    -np 3 "$GEN" -o full/g.h5 --shape 64,64,64 >out.txt 2>err.txt
  rc=$?
  set -e
  echo "  late rank: exit $rc after ${SECONDS}s"
  check "failing write with a late rank exits 1 (not a crash or a hang)" test "$rc" -eq 1
  check "... with one error line naming the full disk" \
    test "$(grep -c 'error:' err.txt)" -eq 1 -a "$(grep -c 'g.h5: No space left on device' err.txt)" -eq 1
  check "... and nothing left on the file system" \
    test -z "$(find full -mindepth 1 ! -name filler -print -quit)"
  if [[ $rc -ne 1 ]]; then head -c 2000 err.txt >&2; fi
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then echo "  (a hang: killed by timeout)" >&2; fi
else
  echo "SKIPPED: mounting a tmpfs is not permitted here; the late-rank case not run"
fi

summary
