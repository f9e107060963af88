#!/usr/bin/env bash
# Fault injection on file systems the test mounts itself (doc/errors.md "Errors"): a full tmpfs
# and a read-only one. At np 1, 2, 3 and 5, triada-transform and triada-gen must end with
# exit 1 and one line naming the file and saying "No space left on device" (or
# "Read-only file system"), within the timeout, leaving no file in the full file system
# and a good old output (--force) byte-identical; a report or trace that cannot be written
# is refused before any work, so no output appears either. Needs mount(8) (root): where
# mounting is not permitted the script says so and exits 77, which ctest shows as skipped.
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/triada-full-disk.XXXXXX")
mkdir "$tmp/full" "$tmp/ro"
cleanup() {
  umount "$tmp/full" 2>/dev/null || true
  umount "$tmp/ro" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
if ! mount -t tmpfs -o size=256k tmpfs full 2>/dev/null ||
  ! mount -t tmpfs -o ro,size=64k tmpfs ro 2>/dev/null; then
  echo "SKIPPED: mounting a tmpfs is not permitted here (needs root); full-disk cases not run"
  exit 77
fi

"$TRIADA_BIN/triada-gen" --output x64.h5 --shape 64,64,64 >/dev/null
"$TRIADA_BIN/triada-gen" --output x8.h5 --shape 8,8,8 >/dev/null
# A good old output with two datasets, kept in the full file system.
cp x8.h5 full/old.h5
"$TRIADA_BIN/triada-transform" -i x8.h5 -o full/old.h5:/y -t dct -q --force
cp full/old.h5 old.ref
# Fill the rest: what is left is far below the 2 MiB a 64^3 output needs.
dd if=/dev/zero of=full/filler bs=4k count=1000 2>/dev/null || true

run() {  # run NP APP ARGS...: stdout+stderr to err.txt, exit code to $rc
  local np=$1 app=$2
  shift 2
  run_np "$np" "$TRIADA_BIN/$app" "$@"
}

# expect_refusal NAME REASON FILE: exit 1, one error line naming FILE and REASON.
expect_refusal() {
  local name=$1 reason=$2 file=$3 lines
  lines=$(grep -c "error:" err.txt || true)
  if [[ $rc -eq 1 && $lines -eq 1 ]] && grep -q "$file" err.txt && grep -q "$reason" err.txt; then
    pass
    echo "ok   $name"
  else
    fail "$name: rc=$rc, expected 1 with one line naming $file and '$reason': $(head -c 400 err.txt)"
  fi
}

# Nothing new in the full file system, and the old output byte-identical.
expect_untouched() {
  local name=$1 left
  left=$(ls -A full | grep -v -x -e filler -e old.h5 || true)
  if [[ -z $left ]] && cmp -s full/old.h5 old.ref; then
    pass
  else
    fail "$name: left '$left' in the full file system or changed old.h5"
  fi
}

for np in 1 2 3 5; do
  run "$np" triada-transform -i x64.h5 -o full/y.h5 -t dct -q
  expect_refusal "transform np $np onto a full disk" "No space left on device" full/y.h5
  expect_untouched "transform np $np"
  run "$np" triada-transform -i x64.h5 -o full/old.h5:/y -t dct -q --force
  expect_refusal "transform np $np --force over a good output" "No space left on device" full/old.h5
  expect_untouched "transform np $np --force"
  run "$np" triada-gen -o full/g.h5 --shape 64,64,64
  expect_refusal "gen np $np onto a full disk" "No space left on device" full/g.h5
  expect_untouched "gen np $np"
  run "$np" triada-gen -o full/old.h5 --shape 64,64,64 --force
  expect_refusal "gen np $np --force over a good output" "No space left on device" full/old.h5
  expect_untouched "gen np $np --force"
done

# A file system without fallocate (TRIADA_NO_FALLOCATE=1 behaves as one): the space runs
# out during the parallel write or the close, which must end as cleanly.
for np in 1 2 3 5; do
  TRIADA_NO_FALLOCATE=1 run "$np" triada-transform -i x64.h5 -o full/y.h5 -t dct -q
  expect_refusal "no fallocate: transform np $np fails in the write" "No space left on device" full/y.h5
  expect_untouched "no fallocate: transform np $np"
  TRIADA_NO_FALLOCATE=1 run "$np" triada-gen -o full/old.h5 --shape 64,64,64 --force
  expect_refusal "no fallocate: gen np $np --force" "No space left on device" full/old.h5
  expect_untouched "no fallocate: gen np $np --force"
done

# Read-only targets: the output, and a report or trace that would fail only at the end.
for np in 1 3; do
  run "$np" triada-transform -i x8.h5 -o ro/y.h5 -t dct -q
  expect_refusal "transform np $np output on a read-only fs" "Read-only file system" ro/y.h5
  for what in report trace; do
    run "$np" triada-transform -i x8.h5 -o y.h5 -t dct -q "--$what" "ro/r.$what"
    expect_refusal "transform np $np --$what on a read-only fs" "Read-only file system" "ro/r.$what"
    check "transform np $np --$what refused before any output" test ! -e y.h5
  done
  run "$np" triada-gen -o ro/g.h5 --shape 4,4,4
  expect_refusal "gen np $np on a read-only fs" "Read-only file system" ro/g.h5
done
run 1 triada-tcu --algo matmul --size 8 --m 4 --latency 2 --report ro/t.json
expect_refusal "tcu --report on a read-only fs" "Read-only file system" ro/t.json
run 1 triada-conv --layer 1,8,8,4,4,3,3,1,1 --report ro/c.json
expect_refusal "conv --report on a read-only fs" "Read-only file system" ro/c.json
if grep -q '^TRIADA_BUILD_BENCH:BOOL=OFF' "$TRIADA_BIN/CMakeCache.txt" 2>/dev/null; then
  echo "SKIPPED: this build has no triada-bench (TRIADA_BUILD_BENCH=OFF); its case not run"
else
  SECONDS=0
  run 1 triada-bench --quick --json ro/b.json
  expect_refusal "bench --json on a read-only fs" "Read-only file system" ro/b.json
  check "bench refuses before timing anything (${SECONDS}s)" test "$SECONDS" -lt 20
fi

summary
