#!/usr/bin/env bash
# triada-transform --dry-run (doc/transform.md "A plan before the run"): it reads no tensor data (an
# input whose raw data is missing plans fine, while the run fails reading it; gemt matrices
# likewise), creates no output and leaves existing files as they were; its plan agrees with
# the real run that follows: the MPI traffic equal to the report's counters (ESOP off, both
# executors, a complex run), the dense steps and modelled time equal, the peak memory per
# rank within 10% of the report's peak_rss_bytes (np 1, 5, 7; odd non-cubic shapes). And
# the poor-layout warning: on stderr of a real run at np 4 and 8 (rank 0, once), not at 7,
# not with --quiet, and in the dry run's text and JSON.
# Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir dry-run

# ok NP ARGS...: the app at NP ranks must exit 0 (its output in err.txt).
ok() {
  local np=$1
  shift
  run_np "$np" "$APP" "$@"
  [[ $rc -eq 0 ]] || fail "np $np $*: exit $rc: $(cat err.txt)"
}

"$TRIADA_BIN/triada-gen" -o x.h5 --shape 45,33,21 --sparsity 0.3 >/dev/null
"$TRIADA_BIN/triada-gen" -o z.h5 --shape 27,19,11 --type complex64 >/dev/null
"$TRIADA_BIN/triada-gen" -o x2.h5 --shape 2,33,21 >/dev/null

# ---- No data read: the raw data of the input (and of gemt's matrices) is missing ---------
"$PYTHON" - <<'PY'
import h5py, numpy as np
def external(f, name, shape):
    # Metadata in the file, raw data in a file of its own that is then removed.
    f.create_dataset(name, shape=shape, dtype="f8", external=[(name + ".raw", 0, 8 * np.prod(shape))])
    open(name + ".raw", "wb").write(np.ones(shape).tobytes())
with h5py.File("nodata.h5", "w") as f:
    external(f, "x", (15, 9, 7))
with h5py.File("c.h5", "w") as f:
    for name, shape in (("C1", (15, 6)), ("C2", (9, 9)), ("C3", (7, 11))):
        external(f, name, shape)
PY
rm -f x.raw C1.raw C2.raw C3.raw
expect_error_np 1 1 "nodata.h5:/x: cannot read" "$APP" -i nodata.h5 -o y.h5 -t dct -q
ok 1 -i nodata.h5 -o y.h5 -t dct --dry-run --report plan.json
check "a dry run of an input without its raw data prints the plan" grep -q "15x9x7 -> 15x9x7" err.txt
check "the failed run and the dry run create no output" test ! -e y.h5
ok 1 -i nodata.h5 -o y.h5 -t gemt --coeffs c.h5 --dry-run --report gemt.json
pycheck "gemt's K from the matrices' metadata" 'assert json.load(open(a[0]))["problem"]["out_shape"] == [6, 9, 11]' gemt.json

# Existing files: the output, with and without --force, stays as it was; nothing is added.
# (ls -A and no 'total': not '..', the scratch directory's parent, which parallel tests
# change, nor the blocks of the run's own logs.)
cp x.h5 old.h5
touch -d '2020-01-01 00:00' old.h5
listing() { ls -lA --time-style=full-iso . | grep -v -e '^total ' -e ' err\.txt$' -e ' check\.err$' | md5sum; }
before=$(listing)
ok 5 -i x.h5 -o old.h5 -t dct --dry-run
ok 1 -i x.h5 -o old.h5:/y -t dct --dry-run --force
check "existing files untouched and no file created" test "$(listing)" = "$before"
check "the existing output's bytes unchanged" cmp -s x.h5 old.h5
# Refusals are the run's: a bad size (wht of 45), an existing --report without --force.
expect_error_np 1 1 "wht needs a power-of-two size" "$APP" -i x.h5 -o y.h5 -t wht --dry-run
echo keep >kept.json
expect_error_np 1 1 "kept.json" "$APP" -i x.h5 -o y.h5 -t dct --dry-run --report kept.json
check "a refused --report keeps its contents" grep -qx keep kept.json

# ---- Every check that needs no data, in the run, --dry-run and --model-only alike ---------
# modes NP WHAT SHAPE ARGS...: ARGS (with -i x.h5 -o OUT) as a run, with --dry-run and, unless
# SHAPE is "-", as --model-only SHAPE without -i and -o: the same exit code and error line,
# the input's name aside (x.h5 in the run, "--model-only AxBxC" in the model).
modes() {
  local np=$1 what=$2 shape=$3 rc0 line0 line mode
  shift 3
  run_np "$np" "$APP" "$@"
  rc0=$rc
  line0=$(grep -m1 'triada-transform: error' err.txt | sed 's|x\.h5|X|g' || true)
  [[ $rc0 -ne 0 && -n $line0 ]] || fail "$what: the run passed (exit $rc0): $(cat err.txt)"
  for mode in dry model; do
    if [[ $mode == dry ]]; then
      run_np "$np" "$APP" "$@" --dry-run
    elif [[ $shape != - ]]; then
      local margs=() skip=0 a
      for a in "$@"; do
        if [[ $skip -eq 1 ]]; then skip=0; elif [[ $a == -i ]]; then margs+=(--model-only "$shape"); skip=1; elif [[ $a == -o ]]; then skip=1; else margs+=("$a"); fi
      done
      run_np "$np" "$APP" "${margs[@]}"
    else
      continue
    fi
    line=$(grep -m1 'triada-transform: error' err.txt | sed "s|--model-only ${shape//,/x}|X|; s|x\.h5|X|g" || true)
    [[ $rc -eq $rc0 && $line == "$line0" ]] && pass ||
      fail "$what ($mode): exit $rc with '$line', the run exit $rc0 with '$line0'"
  done
}
"$PYTHON" -c "import h5py, numpy as np; h5py.File('y0.h5', 'w')['b'] = np.ones((45, 33, 21))"
modes 1 "wht of 45" 45,33,21 -i x.h5 -o y.h5 -t wht
modes 1 "an existing --report" 45,33,21 -i x.h5 -o y.h5 -t dct --report kept.json
check "the refused --report still keeps its contents" grep -qx keep kept.json
modes 1 "--output the --initial file" - -i x.h5 -o y0.h5:/y --initial y0.h5:/b -t dct
printf '[esop]\nenabled = off\n' >m.ini
modes 1 "--report the --mesh file" 45,33,21 -i x.h5 -o y.h5 -t dct --mesh m.ini --report m.ini --force
modes 2 "a brick grid of 4 ranks on 2" 45,33,21 -i x.h5 -o y.h5 -t dct --ranks.grid 2,2,1
modes 3 "3 brick ranks along an axis of 2" 2,33,21 -i x2.h5 -o y.h5 -t dct --ranks.grid 3,1,1

# ---- The plan against the run -------------------------------------------------------------
# compare NP TAG ARGS...: the dry run's plan and the real run's report, both as JSON.
compare() {
  local np=$1 tag=$2
  shift 2
  ok "$np" "$@" -o y.h5 --dry-run --report "plan_$tag.json"
  ok "$np" "$@" -o "y_$tag.h5" -q --report "run_$tag.json"
}
for np in 1 5 7; do
  compare "$np" "dense$np" -i x.h5 -t dct,dht,dct --esop off
  pycheck "np $np: MPI traffic, steps and modelled time as the run counts them" '
p, r = (json.load(open(f)) for f in a)
assert p["mpi"] == r["mpi"], (p["mpi"], r["mpi"])
assert p["steps"]["per_stage"] == r["steps"]["per_stage"]
assert p["physical"]["seconds"] == r["physical"]["seconds"]
assert p["layout"]["grid"] == r["mesh"]["brick_ranks"] and p["layout"]["world_size"] == '"$np"'
' "plan_dense$np.json" "run_dense$np.json"
done
compare 5 ref -i x.h5 -t dct --esop off --executor reference
compare 5 cplx -i z.h5 -t dft --esop off
for tag in ref cplx; do
  pycheck "$tag: MPI traffic as the run counts it" \
    'p, r = (json.load(open(f)) for f in a); assert p["mpi"] == r["mpi"], (p["mpi"], r["mpi"])' \
    "plan_$tag.json" "run_$tag.json"
done

# Peak memory per rank within 10% of what the run reports (the runs above, and a complex one
# with ESOP on). Resident memory means nothing under the sanitizers' shadow memory.
if ! sanitized; then
  compare 5 esop5 -i z.h5 -t dft,dct,dht --stage-order 123
  for tag in dense1 dense5 dense7 esop5; do
    pycheck "$tag: predicted peak memory within 10% of the measured one" '
p, r = (json.load(open(f))["memory"] for f in a)
assert len(p["peak_rss_bytes"]) == len(r["peak_rss_bytes"])
for k, (want, got) in enumerate(zip(p["peak_rss_bytes"], r["peak_rss_bytes"])):
    print(f"  rank {k}: predicted {want / 2**20:.1f} MiB, measured {got / 2**20:.1f} MiB")
    assert abs(want - got) <= 0.10 * got, (k, want, got)
' "plan_$tag.json" "run_$tag.json"
  done
fi

# ---- The poor-layout warning ----------------------------------------------------------------
warnings() { grep -c "^triada-transform: warning: poor rank layout" err.txt || true; }
ok 4 -i x.h5 -o y4.h5 -t dct
check "np 4: one warning, naming the one brick rank" test "$(warnings)" -eq 1 -a "$(grep -c "1 brick rank holding every cell" err.txt)" -eq 1
ok 8 -i x.h5 -o y8.h5 -t dct
check "np 8: one warning, naming the slab and a good count" grep -q "5x1x1 grid.*-np 7 (2x2x1 grid)" err.txt
check "np 8: a single line" test "$(warnings)" -eq 1
ok 8 -i x.h5 -o y8.h5 -t dct --force -q
check "np 8 --quiet: no warning" test "$(warnings)" -eq 0
ok 7 -i x.h5 -o y7.h5 -t dct
check "np 7 (a 2x2x1 grid): no warning" test "$(warnings)" -eq 0
ok 8 -i x.h5 -o y.h5 -t dct --dry-run --report plan8.json
check "the dry run at np 8 says the layout is poor" grep -q "layout   poor rank layout: 8 ranks give 5 brick ranks" err.txt
pycheck "the plan's JSON: np 8 poor and 7 among the good counts, np 7 good" '
p8, p7 = (json.load(open(f))["layout"] for f in a)
assert p8["poor"] and p8["grid"] == [5, 1, 1] and not p7["poor"], (p8, p7)
assert 7 in [c["world_size"] for c in p8["good_world_sizes"]]
assert all(c["brick_ranks"] == c["world_size"] - 3 for c in p8["good_world_sizes"])
' plan8.json plan_dense7.json

# --model-only needs no input at all.
ok 5 --model-only 40,30,20 -t dct --dry-run --report model.json
pycheck "--model-only --dry-run plans a 40x30x20 run" \
  'p = json.load(open(a[0])); assert p["problem"]["in_shape"] == [40, 30, 20] and p["layout"]["brick_ranks"] == 2' model.json

summary
