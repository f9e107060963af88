#!/usr/bin/env bash
# A run publishes its outputs only when all of them are written (doc/errors.md "Errors"): a
# report, trace or CSV on a device that fails (/dev/full: every write "No space left on
# device") ends the run with exit 1 and one line naming it, and the HDF5 output that existed
# before (--force) keeps its bytes, with no temporary left beside it. triada-gen,
# triada-transform and triada-conv, at 1 and 2 ranks. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

in_scratch_dir device-outputs
[[ -w /dev/full ]] || {
  echo "SKIPPED: no writable /dev/full here"
  exit 77
}
GEN="$TRIADA_BIN/triada-gen"
TRANSFORM="$TRIADA_BIN/triada-transform"
CONV="$TRIADA_BIN/triada-conv"

# kept FILE REF WHAT: FILE still has REF's bytes and no temporary lies beside it.
kept() {
  if cmp -s "$1" "$2" && [[ -z $(find . -name '*.tmp-*' -print -quit) ]]; then
    pass
  else
    fail "$3: $1 was replaced or a temporary was left ($(ls -a))"
  fi
}

"$GEN" --output x.h5 --shape 8,6,5 >/dev/null
for np in 1 2; do
  "$GEN" --output keep.h5 --shape 4,4,4 --seed 3 --force >/dev/null
  cp keep.h5 keep.ref
  expect_error_np "$np" 1 "/dev/full" "$GEN" --output keep.h5 --shape 6,6,6 --force \
    --report /dev/full
  kept keep.h5 keep.ref "np $np triada-gen --report /dev/full"

  "$TRANSFORM" -i x.h5 -o y.h5 -t dct -q --force
  cp y.h5 y.ref
  for opt in --report --trace; do
    expect_error_np "$np" 1 "/dev/full" "$TRANSFORM" -i x.h5 -o y.h5 -t dft -q --force \
      "$opt" /dev/full
    kept y.h5 y.ref "np $np triada-transform $opt /dev/full"
  done
done

# triada-conv: its report and CSV; a CSV on the device keeps the report file as it was.
"$CONV" --layer 1,2,6,6,2,3,3,1,0 --report conv.json >/dev/null 2>&1 || true
if [[ -s conv.json ]]; then
  cp conv.json conv.ref
  expect_error_np 1 1 "/dev/full" "$CONV" --layer 1,3,6,6,2,3,3,1,0 --report conv.json \
    --csv /dev/full --force
  kept conv.json conv.ref "triada-conv --csv /dev/full"
else
  fail "triada-conv did not write its report"
fi

summary
