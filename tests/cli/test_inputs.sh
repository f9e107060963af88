#!/usr/bin/env bash
# Hostile inputs to triada-transform (issue "Never lose data, never hang, never crash"):
# a FIFO (must not block in open), a corrupt data checksum, broken metadata, a truncated
# file, a null or scalar dataspace, an input whose only dataset sits behind an external
# link, and a FIFO behind an external link. Each at np=1 (plain process) and np=3: exit 1,
# exactly one 'triada-transform: error:' line naming the file (and dataset) with no source
# location and no HDF5 error stack, no hang, nothing left in the output directory; the same
# line and exit code from --dry-run where the check needs no data (not the checksum).
# Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir inputs
mkdir in

"$PYTHON" - <<'EOF'
import h5py, numpy as np
x = np.arange(6 * 5 * 4, dtype=np.float64).reshape(6, 5, 4)
with h5py.File('in/good.h5', 'w') as f:                 # contiguous /x
    f['x'] = x
with h5py.File('in/chunked.h5', 'w') as f:              # chunked + fletcher32 /x
    f.create_dataset('x', data=x, chunks=(3, 5, 4), fletcher32=True)
with h5py.File('in/ext.h5', 'w') as f:                  # only an external link to a dataset
    f['x'] = h5py.ExternalLink('good.h5', '/x')
with h5py.File('in/extfifo.h5', 'w') as f:              # external link into a FIFO
    f['x'] = h5py.ExternalLink('fifo.h5', '/x')
with h5py.File('in/null.h5', 'w') as f:                 # null dataspace
    f.create_dataset('x', data=h5py.Empty('f8'))
with h5py.File('in/scalar.h5', 'w') as f:               # scalar dataspace
    f['x'] = 1.5
with h5py.File('in/latest.h5', 'w', libver='latest') as f:  # checksummed metadata
    f['x'] = x
EOF
mkfifo in/fifo.h5
cp in/good.h5 in/copy.h5

# A flipped bit in the second chunk: its fletcher32 checksum no longer matches. The
# chunk is found by its raw bytes (float64 of 60.0 onwards).
"$PYTHON" - <<'EOF'
import numpy as np
raw = bytearray(open('in/chunked.h5', 'rb').read())
pos = raw.find(np.arange(60, 64, dtype=np.float64).tobytes())
assert pos > 0
raw[pos + 3] ^= 0x10
open('in/badsum.h5', 'wb').write(raw)
# Broken metadata: the object header checksum of /x in the newest format (flip a byte of
# its "OHDR" signature's body), and a file cut before its end.
raw = bytearray(open('in/latest.h5', 'rb').read())
pos = raw.rfind(b'OHDR')
assert pos > 0
raw[pos + 6] ^= 0x01
open('in/badmeta.h5', 'wb').write(raw)
raw = open('in/good.h5', 'rb').read()
open('in/truncated.h5', 'wb').write(raw[:len(raw) - 500])
EOF

# run ID NP ARGS... : NP=1 runs the app as a plain process, otherwise under mpirun.
# Writes cases/ID/{rc,err,out} and uses cases/ID/out/ as the output directory.
run_case() {
  local id=$1 np=$2
  shift 2
  mkdir -p "cases/$id/out"
  (
    cd "cases/$id"
    # Concurrent mpiruns race on Open MPI's one session directory root: one each.
    export OMPI_MCA_orte_tmpdir_base=$tmp/sess/$id
    rc=0
    if [[ $np -eq 1 ]]; then
      timeout 60 "$APP" "$@" >stdout.txt 2>stderr.txt || rc=$?
    else
      timeout 60 "$MPIEXEC" --oversubscribe -np "$np" "$APP" "$@" >stdout.txt 2>stderr.txt \
        || rc=$?
    fi
    echo "$rc" >rc.txt
  ) &
}

# expect ID WHAT TOKENS : exit 1, one error line holding every |-separated token, no source
# file or HDF5 stack on stderr, nothing in out/.
expect() {
  local d="cases/$1" what=$2 tokens=$3 rc line n tok
  rc=$(cat "$d/rc.txt")
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    fail "$what: timed out (hang)"
    return
  fi
  [[ $rc -eq 1 ]] && pass || fail "$what: exit $rc (expected 1): $(cat "$d/stderr.txt")"
  n=$(grep -c 'triada-transform: error' "$d/stderr.txt" || true)
  line=$(grep 'triada-transform: error' "$d/stderr.txt" | head -n 1 || true)
  if [[ $n -ne 1 ]]; then
    fail "$what: expected one error line, got $n: $(cat "$d/stderr.txt")"
  else
    local ok=1
    IFS='|' read -r -a toks <<<"$tokens"
    for tok in "${toks[@]}"; do
      if [[ $line != *"$tok"* ]]; then
        ok=0
        fail "$what: error line does not name '$tok': '$line'"
      fi
    done
    [[ $ok -eq 1 ]] && pass
  fi
  # Nothing else from us or HDF5 (mpirun adds its own banner at np > 1).
  if grep -qE '\.cpp|HDF5|#[0-9]{3}:' "$d/stderr.txt" ||
    [[ $2 == *"np=1)" && $(wc -l <"$d/stderr.txt") -ne 1 ]]; then
    fail "$what: more than the error line on stderr: $(cat "$d/stderr.txt")"
  else
    pass
  fi
  local left
  left=$(find "$d/out" -mindepth 1 | tr '\n' ' ')
  [[ -z $left ]] && pass || fail "$what: left behind: $left"
}

# same_as_run WHAT RUN_ID PLAN_ID: the case's --dry-run (PLAN_ID) exits as the run did
# with the same error line and leaves nothing: every check of the inputs' metadata is the
# run's (doc/transform.md "A plan before the run"). With $plan_ok (a reason: the case needs the data)
# the dry run must pass instead.
plan_ok=""
same_as_run() {
  local what=$1 run="cases/$2" plan="cases/$3" rc line_run line
  rc=$(cat "$plan/rc.txt")
  if [[ -n $plan_ok ]]; then
    [[ $rc -eq 0 ]] && pass || fail "$what: exit $rc, expected 0 ($plan_ok): $(cat "$plan/stderr.txt")"
    return
  fi
  line_run=$(grep 'triada-transform: error' "$run/stderr.txt" | head -n 1 || true)
  line=$(grep 'triada-transform: error' "$plan/stderr.txt" | head -n 1 || true)
  if [[ $rc -ne $(cat "$run/rc.txt") || $line != "$line_run" ]]; then
    fail "$what: exit $rc with '$line', but the run exits $(cat "$run/rc.txt") with '$line_run'"
  else
    pass
  fi
  [[ -z $(find "$plan/out" -mindepth 1) ]] && pass || fail "$what: left files in out/"
}

I="$tmp/in"
n=0
# both_np WHAT TOKENS INPUT [ARGS...] : one case (transform dct unless ARGS say) at np=1
# and np=3, and its --dry-run at np=1, run concurrently.
both_np() {
  local what=$1 tokens=$2 input=$3
  shift 3
  [[ $# -eq 0 ]] && set -- -t dct
  run_case $((n + 1)) 1 -i "$input" -o out/y.h5 -q "$@"
  run_case $((n + 2)) 3 -i "$input" -o out/y.h5 -q "$@"
  run_case $((n + 3)) 1 -i "$input" -o out/y.h5 -q "$@" --dry-run
  wait
  expect $((n + 1)) "$what (np=1)" "$tokens"
  expect $((n + 2)) "$what (np=3)" "$tokens"
  same_as_run "$what (--dry-run)" $((n + 1)) $((n + 3))
  n=$((n + 3))
}

echo "-- hostile inputs, each at np=1 and np=3"
both_np "FIFO input" "fifo.h5|not a regular file (a FIFO)" "$I/fifo.h5"
both_np "FIFO as --coeffs" "fifo.h5|not a regular file (a FIFO)" "$I/good.h5" -t gemt \
  --coeffs "$I/fifo.h5"
plan_ok="the checksum is the data's" both_np "data checksum mismatch" \
  "badsum.h5:/x|cannot read|checksum" "$I/badsum.h5"
both_np "object header checksum" "badmeta.h5|checksum" "$I/badmeta.h5"
# np=2 and 4 too: the bad chunk lies in some bricks only, the other ranks read theirs (the read
# is collective: every rank must learn of the failure and leave, none may hang).
for np in 2 4; do
  n=$((n + 1))
  run_case $n $np -i "$I/badsum.h5" -o out/y.h5 -q -t dct
  wait
  expect $n "data checksum mismatch (np=$np)" "badsum.h5:/x|cannot read|checksum"
done
both_np "object header checksum, dataset named" "badmeta.h5:/x|checksum" "$I/badmeta.h5:/x"
both_np "truncated file" "truncated.h5|truncated" "$I/truncated.h5"
both_np "null dataspace" "null.h5:/x|empty (null dataspace)" "$I/null.h5:/x"
both_np "null dataspace, unnamed" "null.h5|/x (empty (null dataspace))" "$I/null.h5"
both_np "scalar dataspace" "scalar.h5:/x|scalar" "$I/scalar.h5:/x"
both_np "external link into a FIFO" "extfifo.h5|fifo.h5|not a regular file (a FIFO)" \
  "$I/extfifo.h5:/x"

# An external link to a dataset is followed, as h5py and h5ls do, named or not.
echo "-- an external link to a dataset is the input"
for spec in "$I/ext.h5" "$I/ext.h5:/x" "$I/copy.h5"; do
  for np in 1 3; do
    n=$((n + 1))
    run_case $n "$np" -i "$spec" -o out/y.h5 -t dct -q
    wait
    if [[ $(cat "cases/$n/rc.txt") -eq 0 && -f cases/$n/out/y.h5 ]]; then
      pass
    else
      fail "$spec (np=$np): exit $(cat "cases/$n/rc.txt"): $(cat "cases/$n/stderr.txt")"
    fi
  done
done
if "$PYTHON" -c "
import h5py, numpy as np, sys
a = h5py.File('cases/$((n - 5))/out/y.h5', 'r')['y'][()]
b = h5py.File('cases/$n/out/y.h5', 'r')['y'][()]
sys.exit(0 if np.array_equal(a, b) else 1)"; then
  pass
else
  fail "the external link's output differs from its target's own"
fi

summary
