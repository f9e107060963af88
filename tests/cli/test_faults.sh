#!/usr/bin/env bash
# Fault injection without mounts (doc/errors.md "Errors"): outputs that collide with inputs or
# with each other, --force on a FILE:/DSET that holds other datasets, special files (FIFO,
# a private character device, /dev/stdout, -), symbolic links, paths of 300+ characters at
# np 1-3, and a rank killed by SIGTERM or SIGKILL while the output is being written (no
# temporary left once the job has ended; an old output either intact or fully replaced;
# smaller and fewer in a sanitizer build, lib_check.sh: sanitized).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir faults

"$TRIADA_BIN/triada-gen" --output x.h5 --shape 4,5,3 >/dev/null
cp x.h5 x.ref

run() {  # run NP ARGS...: triada-transform, output to err.txt, exit code to $rc
  local np=$1
  shift
  run_np "$np" "$APP" "$@"
}
refused() {  # refused NAME TEXT: exit 1 and one error line containing TEXT
  local lines
  lines=$(grep -c "error:" err.txt || true)
  if [[ $rc -eq 1 && $lines -eq 1 ]] && grep -qF -- "$2" err.txt; then
    pass
    echo "ok   $1"
  else
    fail "$1: rc=$rc, expected 1 and '$2': $(head -c 300 err.txt)"
  fi
}
no_temporaries() {
  local left
  left=$(find . -name '.*.tmp-*' | head -3)
  if [[ -z $left ]]; then pass; else fail "$1: temporaries left: $left"; fi
}

echo "-- collisions: reports and traces never overwrite an input or another output"
cp x.ref x.h5
run 1 -i x.h5 -o y.h5 -t dct -q --report x.h5
refused "--report = --input" "x.h5: --report is the same file as -i x.h5"
check "input intact" cmp -s x.h5 x.ref
check "no output made" test ! -e y.h5
ln -s x.h5 alias.h5
run 1 -i x.h5 -o y.h5 -t dct -q --trace alias.h5 --force
refused "--trace = --input through a symlink, even with --force" "is the same file as -i"
check "input intact" cmp -s x.h5 x.ref
run 1 -i x.h5 -o y.h5 -t dct -q --report y.h5
refused "--report = --output" "y.h5: --report is the same file as -o y.h5"
run 1 -i x.h5 -o y.h5 -t dct -q --report r.txt --trace ./r.txt
refused "--trace = --report" "is the same file as --report r.txt"
echo "[mesh]" >m.ini
run 1 -i x.h5 -o y.h5 -t dct -q --mesh m.ini --report m.ini --force
refused "--report = --mesh" "is the same file as --mesh m.ini"
echo 'keep' >r.json
run 1 -i x.h5 -o y.h5 -t dct -q --report r.json
refused "existing report without --force" "r.json: exists (use --force to overwrite)"
check "existing report intact" grep -qx keep r.json
check "no output made when the report is refused" test ! -e y.h5
run 1 -i x.h5:/x -o x.h5:/x -t dct -q --force
refused "output dataset = input dataset" "--output is the input dataset"
check "input intact" cmp -s x.h5 x.ref
longname=$(printf 'r%.0s' {1..300}).json
run 1 -i x.h5 -o y.h5 -t dct -q --trace "$longname"
refused "a report name longer than the file system allows, up front" "File name too long"
check "no output made when the trace name is refused" test ! -e y.h5
run 2 -i x.h5 -o y.h5 -t dct -q --report r.json --force
check "--report --force replaces an existing report (rc=$rc)" grep -q '"app"' r.json
no_temporaries "collisions"

echo "-- a dataset name that is not UTF-8 reaches the JSON report replaced, not as exit 3"
"$PYTHON" -c "
import h5py, numpy as np
h5py.File('ff.h5', 'w').create_dataset(b'x\\xff', data=np.ones((2, 3, 4)))"
run 1 -i ff.h5 -o ff_y.h5 -t dct -q --report ff.json
check "non-UTF-8 dataset name (rc=$rc)" "$PYTHON" -c "
import json, sys; sys.exit(0 if json.load(open('ff.json'))['problem']['input'] == 'ff.h5:/x\\ufffd' else 1)"

echo "-- --force replaces only the named dataset"
"$PYTHON" - <<'EOF'
import h5py, numpy as np
with h5py.File('multi.h5', 'w') as f:
    f['keep/a'] = np.arange(6.0).reshape(2, 3)
    f['y'] = np.zeros((1, 1, 1))
    f.attrs['note'] = 'precious'
EOF
for np in 1 3; do
  run "$np" -i x.h5 -o multi.h5:/y -t dct -q --force
  check "np $np: FILE:/DSET --force (rc=$rc)" test "$rc" -eq 0
  check "np $np: other objects kept, /y replaced" "$PYTHON" -c "
import h5py, numpy as np, sys
f = h5py.File('multi.h5', 'r')
ok = (f['keep/a'][()] == np.arange(6.0).reshape(2, 3)).all() and f.attrs['note'] == 'precious'
sys.exit(0 if ok and f['y'].shape == (4, 5, 3) else 1)"
done
# Input and output in one file: the input stays, the output joins it.
cp x.ref both.h5
run 3 -i both.h5:/x -o both.h5:/y -t dct -q --force
check "input and output in one file (rc=$rc)" "$PYTHON" -c "
import h5py, numpy as np, sys
f = h5py.File('both.h5', 'r'); g = h5py.File('x.ref', 'r')
sys.exit(0 if (f['x'][()] == g['x'][()]).all() and f['y'].shape == (4, 5, 3) else 1)"
# A group at the output path is never deleted.
run 1 -i x.h5 -o multi.h5:/keep -t dct -q --force
refused "--force onto a group" "multi.h5:/keep: exists and is not a dataset"
check "the group survives" "$PYTHON" -c "import h5py; h5py.File('multi.h5', 'r')['keep/a']"
no_temporaries "--force"

echo "-- special files: written directly, never replaced"
mkfifo fifo
(cat fifo >fifo.out) &
reader=$!
run 2 -i x.h5 -o y2.h5 -t dct -q --trace fifo
wait "$reader" || true
check "--trace into a FIFO (rc=$rc)" grep -q '^step,stage' fifo.out
check "the FIFO is still a FIFO" test -p fifo
run 1 -i x.h5 -o fifo -t dct -q --force
refused "HDF5 output onto a FIFO, even with --force" "fifo: a FIFO cannot hold an HDF5 file"
if mknod nulldev c 1 3 2>/dev/null; then
  run 1 -i x.h5 -o y3.h5 -t dct -q --report nulldev
  check "--report into a character device (rc=$rc)" test "$rc" -eq 0
  run 1 -i x.h5 -o nulldev -t dct -q --force
  refused "HDF5 output onto a character device" "nulldev: a character device cannot hold an HDF5 file"
  check "the device node is still a character device" test -c nulldev
else
  echo "SKIPPED: mknod is not permitted here; character-device cases not run"
fi
set +e
"$APP" -i x.h5 -o y4.h5 -t dct -q --report /dev/stdout >stdout.txt 2>err.txt
rc=$?
set -e
check "--report /dev/stdout goes to standard output (rc=$rc)" grep -q '"app": "triada-transform"' stdout.txt
check "/dev/stdout is still a link" test -L /dev/stdout
set +e
"$APP" -i x.h5 -o y5.h5 -t dct -q --report - >stdout.txt 2>err.txt
rc=$?
set -e
check "--report - goes to standard output (rc=$rc)" grep -q '"app": "triada-transform"' stdout.txt

echo "-- symbolic links"
ln -s nowhere dangling.h5
run 1 -i x.h5 -o dangling.h5 -t dct -q
refused "a dangling link at the output is not replaced without --force" "dangling.h5: exists"
check "the dangling link is kept" test -L dangling.h5
"$APP" -i x.h5 -o real.h5 -t dct -q
ln -s real.h5 link.h5
run 1 -i x.h5 -o link.h5 -t dht -q --force
check "--force through a link writes the file it points to (rc=$rc)" test -L link.h5
check "... which now holds the new output" "$PYTHON" -c "
import h5py, sys; sys.exit(0 if h5py.File('real.h5', 'r')['y'].attrs['transform'] == 'dht,dht,dht' else 1)"

echo "-- paths of 300+ characters"
long=$tmp/$(printf 'a%.0s' {1..120})/$(printf 'b%.0s' {1..120})/$(printf 'c%.0s' {1..100})
mkdir -p "$long"
for np in 1 2 3; do
  set +e
  timeout 60 "$MPIEXEC" -q --oversubscribe -np "$np" "$TRIADA_BIN/triada-gen" -o "$long/g$np.h5" \
    --shape 8,5,4 --dist index >err.txt 2>&1
  run "$np" -i "$long/g$np.h5" -o "$long/y$np.h5" -t wht,dct,dft -q --report "$long/r$np.json"
  set -e
  check "np $np: ${#long}-character paths (rc=$rc)" "$PYTHON" -c "
import h5py, json, sys, numpy as np
g = h5py.File('$long/g$np.h5', 'r')['x'][()]
ok = (g.ravel() == np.arange(160)).all() and h5py.File('$long/y$np.h5', 'r')['y'].shape == (8, 5, 4)
json.load(open('$long/r$np.json'))
sys.exit(0 if ok else 1)"
done
no_temporaries "long paths"

echo "-- a rank or mpirun killed while the output is written"
# SIGNAL:VICTIM pairs, victim 0 being mpirun itself (Ctrl-C, a batch system's time limit).
# A sanitizer build computes 128^3 for half a minute before it writes anything: there 64^3,
# and fewer victims (the SIGTERM handler and mpirun ending the other ranks run in both).
kills="TERM:1 TERM:3 KILL:1 KILL:3 INT:0 TERM:0" n=128
if sanitized; then kills="TERM:1 KILL:3 INT:0" n=64; fi
"$TRIADA_BIN/triada-gen" --output big.h5 --shape "$n,$n,$n" >/dev/null
"$APP" -i x.h5 -o old.h5 -t dct -q  # the old output: 4x5x3, by dct
cp old.h5 old.ref
# Open MPI's shared-memory files (the transport's segments, the shared windows, anything
# relocated), which lie in /dev/shm by default, here in shm/ of this test alone: none may
# outlive a killed run.
mkdir shm
shm_dirs=(-x OMPI_MCA_btl_vader_backing_directory="$tmp/shm"
  -x OMPI_MCA_osc_sm_backing_directory="$tmp/shm"
  -x OMPI_MCA_shmem_mmap_backing_file_base_dir="$tmp/shm")
for pair in $kills; do
  sig=${pair%:*} victim=${pair#*:}
  set +e
  "$MPIEXEC" -q --oversubscribe -np 3 "${shm_dirs[@]}" "$APP" -i big.h5 -o old.h5 -t dht -q \
    --force >/dev/null 2>&1 &
  job=$!
  for _ in $(seq 1000); do  # until the temporary output exists
    [[ -n $(find . -maxdepth 1 -name '.old.h5.tmp-*') ]] && break
    sleep 0.01
  done
  # Only this mpirun's ranks: other tests (ctest -j) may run triada-transform meanwhile.
  if [[ $victim -eq 0 ]]; then
    kill "-$sig" "$job"
  else
    kill "-$sig" "$(pgrep -P "$job" -x triada-transfor | sed -n "${victim}p")" 2>/dev/null
  fi
  wait "$job"
  set -e
  no_temporaries "SIG$sig of rank process $victim"
  left=$(ls -A shm)
  check "SIG$sig $victim: no shared-memory file left${left:+ (left: $left)}" test -z "$left"
  rm -rf shm/*
  if cmp -s old.h5 old.ref; then
    pass
  else  # the kill came after the publication: then it is the complete new output
    check "SIG$sig $victim: old.h5 is intact or the complete new output" "$PYTHON" -c "
import h5py, sys
y = h5py.File('old.h5', 'r')['y']
sys.exit(0 if y.attrs['transform'] == 'dht,dht,dht' and y.shape == ($n, $n, $n) else 1)"
  fi
done

summary
