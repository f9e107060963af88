#!/usr/bin/env bash
# Nearly full file systems (doc/errors.md "Errors"): a 20 MiB tmpfs filled to leave 0 to 64 KiB
# free, in steps of its 4 KiB page. The outputs are small enough that their data fits in
# part of that range and their metadata (the file's creation, the attributes, the close)
# then meets the full disk. At np 1 and 2, triada-transform and triada-gen either succeed,
# with an output holding the same values as one written on a roomy disk, or end with exit 1
# (never a signal or a timeout) and one line "OUTPUT: No space left on device", leaving no
# temporary and an older output (--force) byte-identical; also without fallocate
# (TRIADA_NO_FALLOCATE=1). Then the figures: --force over a 12 MB output, and an --activity
# file larger than the free space, whose message gives the file's size (every dataset) and
# the free space, which the failed run leaves as it found it. Needs mount(8) (root): where
# mounting is not permitted the script says so and exits 77 (ctest: skipped).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/triada-disk-space.XXXXXX")
mkdir "$tmp/full" "$tmp/ok"
cleanup() {
  umount "$tmp/full" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
if ! mount -t tmpfs -o size=20m tmpfs full 2>/dev/null; then
  echo "SKIPPED: mounting a tmpfs is not permitted here (needs root); full-disk cases not run"
  exit 77
fi

free_bytes() { echo $(($(stat -f -c '%a * %S' full))); }

# fill BYTES: the tmpfs holds only `filler` (and old.h5 if KEEP_OLD=1), BYTES left free.
fill() {
  find full -mindepth 1 ! -name old.h5 -delete
  [[ ${KEEP_OLD:-0} == 1 ]] || rm -f full/old.h5
  fallocate -l $(($(free_bytes) - $1)) full/filler
  [[ $(free_bytes) -eq $1 ]] || { echo "setup: could not leave $1 bytes free" >&2; exit 1; }
}

for s in 4 16; do
  "$TRIADA_BIN/triada-gen" --output "x$s.h5" --shape "$s,$s,$s" >/dev/null
  "$TRIADA_BIN/triada-transform" -i "x$s.h5" -o "ref-transform-$s.h5" -t dct -q
  "$TRIADA_BIN/triada-gen" --output "ref-gen-$s.h5" --shape "$s,$s,$s" >/dev/null
done

args_of() {  # args_of APP SIZE OUTPUT
  if [[ $1 == transform ]]; then
    echo "-i x$2.h5 -o $3 -t dct -q"
  else
    echo "-o $3 --shape $2,$2,$2"
  fi
}

# sweep NAME NP APP SIZE [--force]: every free size from 0 to 64 KiB.
sweep() {
  local name=$1 np=$2 app=$3 s=$4 force=${5:-} free out left bad=""
  out=full/y.h5
  [[ -n $force ]] && out=full/old.h5
  for free in $(seq 0 4096 65536); do
    find full -mindepth 1 -delete
    [[ -n $force ]] && cp "ref-$app-$s.h5" full/old.h5
    KEEP_OLD=1 fill "$free"
    # shellcheck disable=SC2046,SC2086  # words of args_of; no --force: no word
    run_np "$np" "$TRIADA_BIN/triada-$app" $(args_of "$app" "$s" "$out") $force
    left=$(find full -mindepth 1 ! -name filler ! -name old.h5 ! -name y.h5 -printf '%f ')
    if [[ $rc -eq 0 ]]; then
      cp "$out" "ok/$name-$free.h5"
      echo "ok/$name-$free.h5 ref-$app-$s.h5" >>compare.txt
    elif [[ $rc -ne 1 || $(grep -c "error" err.txt) -ne 1 ]] ||
      ! grep -q "^triada-$app: error: $out: No space left on device" err.txt; then
      bad+=" [$free bytes free: rc=$rc: $(head -c 300 err.txt)]"
    elif [[ -e full/y.h5 ]] || { [[ -n $force ]] && ! cmp -s full/old.h5 "ref-$app-$s.h5"; }; then
      bad+=" [$free bytes free: an output appeared or old.h5 changed]"
    fi
    [[ -z $left ]] || bad+=" [$free bytes free: left $left]"
  done
  if [[ -z $bad ]]; then
    pass
    echo "ok   $name"
  else
    fail "$name:$bad"
  fi
}

: >compare.txt
for np in 1 2; do
  for app in transform gen; do
    for s in 4 16; do
      sweep "$app-np$np-$s" "$np" "$app" "$s"
    done
  done
done
for app in transform gen; do
  sweep "$app-np1-16-force" 1 "$app" 16 --force
  TRIADA_NO_FALLOCATE=1 sweep "$app-np1-4-no-fallocate" 1 "$app" 4
  TRIADA_NO_FALLOCATE=1 sweep "$app-np1-16-no-fallocate" 1 "$app" 16
done

# The outputs of the runs that succeeded hold the values of a roomy disk's.
check "every output written on a nearly full disk is whole" "$PYTHON" - compare.txt <<'EOF'
import sys, h5py, numpy as np
bad = []
for line in open(sys.argv[1]):
    got, ref = line.split()
    with h5py.File(got, "r") as g, h5py.File(ref, "r") as r:
        for name in r:
            if name not in g or not np.array_equal(g[name][()], r[name][()]):
                bad.append(got + ":" + name)
print("whole:", sum(1 for _ in open(sys.argv[1])), "outputs; differing:", bad)
sys.exit(1 if bad else 0)
EOF

# --force over a 12 MB output: the copy of it and the new data do not fit in 4 MiB.
"$TRIADA_BIN/triada-gen" --output big.h5 --shape 116,116,116 >/dev/null
find full -mindepth 1 -delete
cp big.h5 full/old.h5
"$TRIADA_BIN/triada-gen" --output x64.h5 --shape 64,64,64 >/dev/null
KEEP_OLD=1 fill $((4 << 20))
needs=$(awk -v b="$(stat -c %s big.h5)" 'BEGIN { printf "%.1f", (b + 64 * 64 * 64 * 8) / 1048576 }')
run_np 1 "$TRIADA_BIN/triada-transform" -i x64.h5 -o full/old.h5:/y -t dct -q --force
expect_error_line() {  # expect_error_line NAME PATTERN: exit 1, one line matching PATTERN
  if [[ $rc -eq 1 && $(grep -c "error" err.txt) -eq 1 ]] && grep -q "$2" err.txt; then
    pass
    echo "ok   $1"
  else
    fail "$1: rc=$rc, expected 1 and one line matching '$2': $(head -c 400 err.txt)"
  fi
}
expect_error_line "--force over a 12 MB output, 4 MiB free" \
  "error: full/old.h5: No space left on device (the file needs at least $needs MiB, 4.00 MiB available)"
check "--force: the old output untouched" cmp -s full/old.h5 big.h5
# Without fallocate nothing is checked ahead: the copy itself meets the full disk.
TRIADA_NO_FALLOCATE=1 run_np 1 "$TRIADA_BIN/triada-transform" -i x64.h5 -o full/old.h5:/y -t dct \
  -q --force
expect_error_line "--force, the copy meets the full disk" \
  "^triada-transform: error: full/old.h5: No space left on device$"
check "--force, failed copy: the old output untouched" cmp -s full/old.h5 big.h5
check "--force, failed copy: no temporary left" \
  test "$(find full -mindepth 1 ! -name filler ! -name old.h5 | wc -l)" -eq 0
rm -f full/old.h5

# --activity: the file holds every counter of every stage and of the total; its size, as
# h5py finds it in one written on a roomy disk, is what the message says it needs.
"$TRIADA_BIN/triada-transform" -i x64.h5 -o y.h5 -t dct -q --activity act.h5
act_mib=$("$PYTHON" -c '
import h5py, sys
with h5py.File("act.h5", "r") as f:
    total = []
    f.visititems(lambda n, o: total.append(o.nbytes) if isinstance(o, h5py.Dataset) else None)
print(f"{sum(total) / 2**20:.1f}")')
fill $((3 << 20))
before=$(free_bytes)
run_np 2 "$TRIADA_BIN/triada-transform" -i x64.h5 -o y2.h5 -t dct -q --activity full/act.h5
expect_error_line "--activity larger than the free space" \
  "error: full/act.h5: No space left on device (the file needs at least $act_mib MiB, 3.00 MiB available)"
check "--activity: the free space as it was" test "$(free_bytes)" -eq "$before"
check "--activity: nothing published" test ! -e y2.h5 -a ! -e full/act.h5

summary
