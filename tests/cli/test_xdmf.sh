#!/usr/bin/env bash
# Look instead of read (doc/transform.md "Looking at a run"; doc/design.md §5.10, §5.11): triada-transform's
# --xdmf sidecar parsed (xml.etree) and checked against the dataset's shape and type (h5py),
# the raw bytes a complex sidecar points at equal to the dataset's values; --activity's
# per-cell counts summed equal to the report's counters (per stage, per bus, in total) and,
# cell by cell, to the cell rule replayed in numpy (tests/cli/activity_oracle.py) on a gemt of
# small integers (exact zeros), at np 1 and np 5 (2 brick ranks, 3 actuator ranks), both
# executors, ESOP and dense, a folded mesh; the refusals (activity path equal to the output
# or the input, an existing file or sidecar without --force, two sidecars on one file,
# --model-only) leave nothing behind. With ParaView's pvbatch installed, its XDMF readers
# open both sidecars too. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"
APP=$TRIADA_BIN/triada-transform
ORACLE=$TRIADA_SRC/tests/cli/activity_oracle.py
in_scratch_dir xdmf-test

# X: small integers, 60% zeros and a zero line; C1 compresses (6 -> 3), C2 expands (5 -> 7),
# C3 has a zero row and zeros on its diagonal: every outcome of the cell rule occurs.
"$PYTHON" - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(13)
x = rng.integers(-3, 4, size=(6, 5, 4)).astype(np.float64)
x[rng.random(x.shape) < 0.6] = 0
x[2, 1, :] = 0
with h5py.File("x.h5", "w") as f:
    f["x"] = x
def m(n, k):
    c = rng.integers(-1, 3, size=(n, k)).astype(np.float64)
    c[rng.random(c.shape) < 0.4] = 0
    return c
c3 = m(4, 4)
c3[1, :] = 0
c3[0, 0] = c3[3, 3] = 0
with h5py.File("c.h5", "w") as f:
    f["C1"], f["C2"], f["C3"] = m(6, 3), m(5, 7), c3
PY

# run NAME NP ARGS...: a gemt run of x.h5 into NAME.h5 with --xdmf, its activity NAME_act.h5
# and report NAME.json; checks it succeeded.
run() {
  local name=$1 np=$2
  shift 2
  run_np "$np" "$APP" -i x.h5 -o "$name.h5" -t gemt --coeffs c.h5 --xdmf \
    --activity "${name}_act.h5" --report "$name.json" -q "$@"
  set +e  # run_np leaves errexit on; the refusals below expect failures
  check "$name: np $np $* runs" test "$rc" -eq 0 || cat err.txt
}
# oracle NAME ORDER ESOP: the activity's sums and cells, and both sidecars.
oracle() {
  check "$1: activity sums and cells, both sidecars" "$PYTHON" "$ORACLE" run "$@"
}

echo "-- activity and sidecars, np 1 and np 5 (actuator ranks), both executors"
for ex in fused reference; do
  run "one_$ex" 1 --executor "$ex"
  oracle "one_$ex" 312 on
  run "five_$ex" 5 --executor "$ex"
  oracle "five_$ex" 312 on
done
check "np 5 and np 1, both executors: the same 16 datasets, cell for cell" "$PYTHON" -c "
import h5py, numpy as np, sys
a = h5py.File('one_fused_act.h5')
names = []
a.visit(lambda n: names.append(n) if isinstance(a[n], h5py.Dataset) else None)
for other in ('one_reference', 'five_fused', 'five_reference'):
    b = h5py.File(other + '_act.h5')
    if len(names) != 16 or not all(np.array_equal(a[n][...], b[n][...]) for n in names):
        sys.exit(other)"
echo "-- dense (ESOP off), a folded mesh at np 3"
run dense 1 --esop off --stage-order 123
oracle dense 123 off
run folded 3 --mesh.cells 3,4,2
oracle folded 312 on
check "folded: activity over the virtual cells (6, 7, 4)" "$PYTHON" -c "
import h5py, sys; sys.exit(0 if h5py.File('folded_act.h5')['total/macs'].shape == (6, 7, 4) else 1)"

echo "-- a complex output (dft) at np 4: the sidecar's raw bytes are the values"
run_np 4 "$APP" -i x.h5 -o yc.h5 -t dft --xdmf --activity yc_act.h5 --report yc.json -q
set +e
check "dft: np 4 runs" test "$rc" -eq 0 || cat err.txt
check "dft: complex sidecar" "$PYTHON" "$ORACLE" xdmf yc.xmf
check "dft: sums equal the report's counters" "$PYTHON" "$ORACLE" sums yc_act.h5 yc.json
check "dft: the report names the sidecars" "$PYTHON" -c "
import json, sys; p = json.load(open('yc.json'))['problem']
sys.exit(0 if (p['output_xdmf'], p['activity'], p['activity_xdmf']) == ('yc.xmf', 'yc_act.h5', 'yc_act.xmf') else 1)"

echo "-- refusals leave nothing behind"
no_new() { [[ ! -e $1 ]]; }
expect_error 1 "same file" -i x.h5 -o r.h5 -t dct --activity r.h5
check "activity = output: nothing written" no_new r.h5
expect_error 1 "same file" -i x.h5 -o r.h5 -t dct --activity x.h5
expect_error 1 "same file" -i x.h5 -o r.h5 -t dct --xdmf --activity r.hdf5
check "two sidecars on r.xmf: nothing written" bash -c '[[ ! -e r.h5 && ! -e r.xmf && ! -e r.hdf5 ]]'
expect_error 1 "one_fused_act.h5: exists" -i x.h5 -o r.h5 -t dct --activity one_fused_act.h5
check "existing activity: output not written" no_new r.h5
: >r_act.xmf
expect_error 1 "r_act.xmf: exists" -i x.h5 -o r.h5 -t dct --activity r_act.h5
check "existing activity sidecar: nothing written" bash -c '[[ ! -e r.h5 && ! -e r_act.h5 && ! -s r_act.xmf ]]'
: >r.xmf
expect_error 1 "r.xmf: exists" -i x.h5 -o r.h5 -t dct --xdmf
check "existing output sidecar: output not written" no_new r.h5
"$APP" -i x.h5 -o r.h5 -t dct --xdmf --activity r_act.h5 --force -q
check "--force replaces both sidecars" bash -c '[[ -s r.xmf && -s r_act.xmf && -e r_act.h5 ]]'
expect_error 2 "drop --xdmf" --model-only 4,4,4 -t dct --xdmf
expect_error 2 "drop --activity" --model-only 4,4,4 -t dct --activity m.h5

echo "-- run_scripts/plot_look.py draws both files"
"$PYTHON" "$TRIADA_SRC/run_scripts/plot_look.py" yc.h5 yc_act.h5 -o plots >plot.txt 2>&1
check "plot_look.py: look_output.png and look_activity.png" \
  bash -c '[[ -s plots/look_output.png && -s plots/look_activity.png ]] || { cat plot.txt; exit 1; }'
"$PYTHON" "$TRIADA_SRC/run_scripts/plot_look.py" yc.h5 x.h5 -o plots >plot.txt 2>&1
check "plot_look.py: a file that is no activity is one error line" \
  bash -c '[[ $(wc -l <plot.txt) == 1 ]] && grep -q "^plot_look.py: error: x.h5: not a triada-transform --activity file" plot.txt'

if command -v pvbatch >/dev/null && ! sanitized; then
  echo "-- ParaView's XDMF readers (pvbatch found)"
  cat >pv.py <<'PY'
import sys
import numpy as np
import h5py
from paraview import simple, servermanager
from vtk.numpy_interface import dataset_adapter as dsa
for fn, dset, name in [(sys.argv[1], "y", "y"), (sys.argv[2], "stage2/waits", "stage2_waits")]:
    want = h5py.File(fn.replace(".xmf", ".h5"))[dset][...]
    for reader in (simple.XDMFReader(FileNames=[fn]), simple.Xdmf3ReaderS(FileName=[fn])):
        d = servermanager.Fetch(reader)
        d = d.GetBlock(0) if d.IsA("vtkMultiBlockDataSet") else d
        got = np.asarray(dsa.WrapDataObject(d).CellData[name])
        if want.dtype.kind == "c":
            got = got[:, 0] + 1j * got[:, 1]
        if not np.array_equal(got, want.ravel()):
            sys.exit("%s: %s differs" % (fn, name))
PY
  check "pvbatch reads the complex output and the activity" \
    bash -c "pvbatch pv.py '$PWD/yc.xmf' '$PWD/yc_act.xmf' >pv.txt 2>&1 || { cat pv.txt; exit 1; }"
fi
summary
