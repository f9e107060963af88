#!/usr/bin/env bash
# triada-bench --quick works end to end (no timing is asserted): exit 0 at np=1 and np=2,
# the JSON parses and has rows for fused, reference, openblas and fftw-dct with the
# required keys, and the printed table names the OpenBLAS kernel. Run by ctest (label cli).
set -uo pipefail

: "${TRIADA_BIN:?set TRIADA_BIN to the build directory}"
MPIEXEC=${MPIEXEC:-mpiexec}
PYTHON=${PYTHON:-/usr/bin/python3}
BENCH="$TRIADA_BIN/triada-bench"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-bench-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

passed=0
failed=0
check() {  # check NAME COMMAND...: runs the command, counts and reports the outcome
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name" >&2
  fi
}

json_ok() {  # json_ok FILE RANKS
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
path, ranks = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    j = json.load(f)
rows = j["rows"]
need = ("shape", "sparsity", "variant", "threads", "ranks", "seconds", "gflops", "macs",
        "macs_dense", "steps")
for v in ("fused", "reference", "openblas", "fftw-dct"):
    vr = [r for r in rows if r["variant"] == v]
    assert vr, "no rows for " + v
    for r in vr:
        for k in need:
            assert k in r, (v, "lacks", k)
        assert len(r["shape"]) == 3 and r["threads"] == 1, r
        assert r["seconds"] > 0 and r["gflops"] >= 0, r
for r in rows:
    if r["variant"] in ("fused", "reference"):
        assert r["ranks"] == ranks, r
        assert 0 < r["macs"] <= r["macs_dense"], r
        assert len(r["stage_seconds"]) == 3, r
shapes = {tuple(r["shape"]) for r in rows}
assert shapes == {(16, 16, 16), (12, 10, 8)}, shapes
m = j["machine"]
assert m["mpi_world_size"] == ranks and m["openblas_corename"], m
assert j["verification"]["result"] == "verified", j["verification"]
assert any("simulation only" in n for n in j["notes"]), j["notes"]
EOF
}

for np in 1 2; do
  out="$dir/out$np.txt"
  err="$dir/err$np.txt"
  json="$dir/b$np.json"
  if [[ $np == 1 ]]; then
    cmd=("$BENCH" --quick --json "$json")
  else
    cmd=("$MPIEXEC" --oversubscribe -np 2 "$BENCH" --quick --json "$json")
  fi
  rc=0
  "${cmd[@]}" >"$out" 2>"$err" || rc=$?
  [[ $rc -eq 0 ]] || cat "$out" "$err" >&2
  check "np=$np: --quick exits 0" test "$rc" -eq 0
  check "np=$np: JSON has fused, reference, openblas and fftw-dct rows" json_ok "$json" "$np"
  check "np=$np: table names the OpenBLAS kernel" grep -qE '^OpenBLAS kernel: [A-Za-z0-9]+' "$out"
  check "np=$np: table has a fused row" grep -qE '^16x16x16 +dense +fused' "$out"
  check "np=$np: fused agrees with OpenBLAS" grep -q 'verified' "$out"
  check "np=$np: one progress line per row on stderr" \
    test "$(grep -c '^triada-bench \[' "$err")" -eq 28
done

check "--help documents every option" bash -c '
  help=$("$0" --help) || exit 1
  for opt in --sizes --sparsity --variants --reps --reference-max --transform --actuators \
             --seed --json --quick; do
    grep -q -- "$opt" <<<"$help" || { echo "--help lacks $opt" >&2; exit 1; }
  done' "$BENCH"
check "a bad --sizes is refused with one line" bash -c '
  "$0" --sizes 4x4 --json "$1/x.json" >/dev/null 2>"$1/bad.txt" && exit 1
  [[ $(wc -l <"$1/bad.txt") -eq 1 ]] && grep -q "^triada-bench: error: --sizes" "$1/bad.txt"' \
  "$BENCH" "$dir"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
