#!/usr/bin/env bash
# Every error message names the option as the user typed it (doc/errors.md "Errors", Options): a
# short alias (-t, -i, -o, -q) in Boost's messages and ours, alike options told apart
# (--ms is not --m), each option in its own program's words (triada-conv's --mxu). For each
# row the same refusal is made with each spelling, and the line must name that spelling and
# no other. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

in_scratch_dir option-names
"$PYTHON" -c "import h5py, numpy as np; h5py.File('x.h5', 'w')['x'] = np.ones((4, 4, 4))"

# named PROGRAM CODE REASON ARGS...: PROGRAM ARGS exits CODE with one error line holding
# REASON, which names the option as typed.
named() {
  local program=$1 code=$2 reason=$3
  shift 3
  APP="$TRIADA_BIN/$program" expect_error "$code" "$reason" "$@"
}

# not_named PROGRAM WORD ARGS...: the error line of PROGRAM ARGS does not hold WORD.
not_named() {
  local program=$1 word=$2
  shift 2
  "$TRIADA_BIN/$program" "$@" >out.txt 2>err.txt
  if grep -qF -- "$word" err.txt; then
    fail "$program $*: names '$word' the user did not type: $(cat err.txt)"
  else
    pass
  fi
}

T=triada-transform
M=(--model-only 4,4,4)
for t in -t --transform; do
  named $T 2 "option '$t' cannot be specified more than once" "${M[@]}" $t dct $t wht
  named $T 2 "$t: unknown transform 'fft'" "${M[@]}" $t fft
  named $T 2 "$t: an empty item in the list" "${M[@]}" $t dct,
  named $T 2 "$t gemt needs --coeffs" -i x.h5 -o y.h5 $t gemt
done
named $T 2 "option '-t' cannot be specified more than once" "${M[@]}" --transform=dft -tdct
named $T 2 "the required argument for option '-t' is missing" "${M[@]}" -t
named $T 2 "-t: unknown transform 'fft'" "${M[@]}" -tfft
for i in -i --input; do
  named $T 2 "$i: ':/x': missing file name" $i :/x -o y.h5 -t dct
  named $T 2 "$i: empty file name" $i "" -o y.h5 -t dct
  named $T 2 "drop $i" "${M[@]}" -t dct $i x.h5
  named $T 1 "x.h5: --report is the same file as $i x.h5" $i x.h5 -o y.h5 -t dct --report x.h5
done
for o in -o --output; do
  named $T 2 "$o: empty file name" -i x.h5 $o "" -t dct
  named $T 1 "y0.h5: $o is the same file as --initial y0.h5" -i x.h5 $o y0.h5 -t dct \
    --initial y0.h5
  named triada-gen 2 "$o: ':/x': missing file name" $o :/x --shape 4,4,4
  named triada-gen 2 "option '$o' cannot be specified more than once" $o a.h5 $o b.h5 \
    --shape 4,4,4
done
for q in -q --quiet; do
  named $T 2 "option '$q' cannot be specified more than once" "${M[@]}" -t dct $q $q
done
not_named $T "--transform" "${M[@]}" -t fft
not_named $T "--input" -i :/x -o y.h5 -t dct
not_named triada-gen "--output" -o :/x --shape 4,4,4

# Options alike in name: each error names its own.
named triada-tcu 2 "--ms: the tensor unit size must be a perfect square" --algo matmul \
  --sweep --latency 1 --ms 4,5
named triada-tcu 2 "--m: the tensor unit size must be a perfect square" --algo matmul \
  --size 8 --latency 1 --m 5
not_named triada-tcu "--m:" --algo matmul --sweep --latency 1 --ms 5
named triada-tcu 2 "--sizes: expected a comma-separated list of positive integers" \
  --algo matmul --sweep --latency 1 --sizes 4,0
printf '[mxu]\nsram_kib = 1\n' >tiny.ini
named triada-tcu 2 "tiny.ini with --ms [0-9]" --algo matmul --sweep --latency 1 --ms 4,64 \
  --mesh tiny.ini
named triada-conv 2 "tiny.ini with --mxu 64" --layer 1,3,8,8,4,3,3,1,1 --mxu 64 \
  --mesh tiny.ini

summary
