#!/usr/bin/env bash
# One rule for every comma-separated list and every path option of every program (doc/errors.md
# "Errors", Options): a list with a space (inside or around an item) or an empty item, and
# an empty path, exit 2 with one line naming the option and the reason, the same words
# everywhere ("a list takes no spaces", "an empty item in the list", "empty file name").
# Table-driven: each row is a program, the option and the rest of a command line that is
# good but for that option. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

in_scratch_dir option-lists
"$PYTHON" -c "import h5py, numpy as np; h5py.File('x.h5', 'w')['x'] = np.ones((4, 4, 4))"

# refused PROGRAM WHAT ARGS...: PROGRAM ARGS exits 2 with one error line holding WHAT.
refused() {
  local program=$1 what=$2
  shift 2
  if [[ ! -x $TRIADA_BIN/$program ]]; then
    echo "skip $program (not built)"
    return
  fi
  APP="$TRIADA_BIN/$program" expect_error 2 "$what" "$@"
}

# Lists: PROGRAM OPTION "GOOD_VALUE" REST...: the option's good value with a space after a
# comma, a space before the list, a tab inside, a trailing comma and a doubled comma.
list_rows=(
  "triada-transform|--transform|dft,dct,wht|--model-only 4,4,4"
  "triada-transform|--model-only|4,4,4|-t dct"
  "triada-transform|--mesh.cells|4,4,4|--model-only 4,4,4 -t dct"
  "triada-transform|--ranks.grid|1,1,1|--model-only 4,4,4 -t dct"
  "triada-gen|--shape|4,4,4|-o y.h5"
  "triada-tcu|--sizes|4,8|--algo matmul --sweep --latency 1"
  "triada-tcu|--ms|4,16|--algo matmul --sweep --latency 1"
  "triada-tcu|--kernel|0,0.25,0,0.25,0,0.25,0,0.25,0|--algo stencil --size 8 --m 4 --latency 1"
  "triada-conv|--layer|1,3,8,8,4,3,3,1,1|"
  "triada-bench|--sizes|8,12|--quick"
  "triada-bench|--sparsity|dense,r50|--quick"
  "triada-bench|--variants|fused,reference|--quick"
)
for row in "${list_rows[@]}"; do
  IFS='|' read -r program option good rest <<<"$row"
  read -r -a args <<<"$rest"
  first=${good%%,*} later=${good#*,}
  for bad in "$first, $later" " $good" "$first,	$later"; do
    refused "$program" "$option: a list takes no spaces" "${args[@]}" "$option" "$bad"
  done
  for bad in "$good," "$first,,$later" ",$good"; do
    refused "$program" "$option: an empty item in the list" "${args[@]}" "$option" "$bad"
  done
done
# A list in a mesh INI file: the same rule, naming the file and key.
printf '[mesh]\ncells = 4, 4,4\n' >spaced.ini
printf '[ranks]\ngrid = 1,,1\n' >empty.ini
refused triada-transform "spaced.ini: \[mesh\] cells: a list takes no spaces" \
  --model-only 4,4,4 -t dct --mesh spaced.ini
refused triada-transform "empty.ini: \[ranks\] grid: an empty item in the list" \
  --model-only 4,4,4 -t dct --mesh empty.ini

# Paths: PROGRAM OPTION REST...: the option given as an empty word.
path_rows=(
  "triada-transform|--input|-o y.h5 -t dct"
  "triada-transform|--output|-i x.h5 -t dct"
  "triada-transform|--initial|-i x.h5 -o y.h5 -t dct"
  "triada-transform|--coeffs|-i x.h5 -o y.h5 -t gemt"
  "triada-transform|--mesh|-i x.h5 -o y.h5 -t dct"
  "triada-transform|--report|-i x.h5 -o y.h5 -t dct"
  "triada-transform|--trace|-i x.h5 -o y.h5 -t dct"
  "triada-transform|--activity|-i x.h5 -o y.h5 -t dct"
  "triada-transform|--machine.calibration|-i x.h5 -o y.h5 -t dct"
  "triada-transform|--report|--model-only 4,4,4 -t dct"
  "triada-gen|--output|--shape 4,4,4"
  "triada-tcu|--input|--algo matmul --m 4 --latency 1"
  "triada-tcu|--report|--algo matmul --size 8 --m 4 --latency 1"
  "triada-tcu|--mesh|--algo matmul --size 8 --m 4 --latency 1"
  "triada-conv|--network|"
  "triada-conv|--input|--layer 1,3,8,8,4,3,3,1,1"
  "triada-conv|--weights|--layer 1,3,8,8,4,3,3,1,1"
  "triada-conv|--mesh|--layer 1,3,8,8,4,3,3,1,1"
  "triada-conv|--report|--layer 1,3,8,8,4,3,3,1,1"
  "triada-conv|--csv|--layer 1,3,8,8,4,3,3,1,1"
  "triada-bench|--json|--quick"
  "triada-bench|--mesh|--quick"
)
for row in "${path_rows[@]}"; do
  IFS='|' read -r program option rest <<<"$row"
  read -r -a args <<<"$rest"
  refused "$program" "$option: empty file name" "${args[@]}" "$option" ""
done
# The same words for a path key of a mesh INI file.
printf '[machine]\ncalibration =\n' >nocal.ini
refused triada-transform "nocal.ini: \[machine\] calibration: empty file name" \
  --model-only 4,4,4 -t dct --mesh nocal.ini

summary
