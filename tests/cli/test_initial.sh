#!/usr/bin/env bash
# End-to-end checks of triada-transform --initial (the affine form Y = Y0 + X x1 C1 x2 C2
# x3 C3, doc/transform.md "--initial"): results against numpy (bitwise on exact integer data, where
# every sum is exact whatever its order), bitwise equality over rank counts (1, 2, 5),
# executors, ESOP on/off and the rank layout, a complex Y0 for a DFT and a real Y0 for a
# complex output, fp32 cells, the report's problem.initial and unchanged counters, and
# the errors (one line, non-zero exit, no output left, an existing file untouched).
# Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir initial

# run NP ARGS... : the app (quiet), plain at NP=1 or under mpirun; a failure is a failed check.
run() {
  local np=$1
  shift
  run_np "$np" "$APP" -q "$@"
  if [[ $rc -ne 0 ]]; then
    fail "run (np=$np, exit $rc): $* : $(cat err.txt)"
    return 1
  fi
}

# pycheck DESCRIPTION CODE : python after 'from common import *'; an AssertionError fails.
pycheck() {
  local what=$1 code=$2
  if "$PYTHON" -c "from common import *
$code" 2>check.err; then
    pass
  else
    fail "$what: $(tail -n 3 check.err)"
  fi
}

cat >common.py <<'EOF'
import json
import h5py, numpy as np

def load(spec):
    path, _, dset = spec.partition(':')
    with h5py.File(path, 'r') as f:
        return f[dset or '/y'][()]

def same_bits(a, b):
    x, y = load(a), load(b)
    assert x.dtype == y.dtype and x.shape == y.shape, (a, b, x.dtype, y.dtype, x.shape, y.shape)
    assert x.tobytes() == y.tobytes(), f'{a} and {b} differ: max |diff| {np.max(np.abs(x - y))}'

def close(got, want, tol):
    got, want = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
    assert got.shape == want.shape, (got.shape, want.shape)
    e = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    assert e <= tol, f'relative error {e:.3e} > {tol:g}'

def report(path):
    with open(path) as f:
        return json.load(f)

def gemt(x, c, y0):  # exact on small integers: int64 arithmetic, then float64
    v = np.einsum('abc,ai,bj,ck->ijk', x.astype(np.int64), *[m.astype(np.int64) for m in c])
    return (y0.astype(np.int64) + v).astype(np.float64)
EOF

# ---- inputs ---------------------------------------------------------------------------
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(7)
def ints(shape, zeros, lo=-4, hi=5):
    v = rng.integers(lo, hi, shape).astype(np.float64)
    v[rng.random(shape) < zeros] = 0
    return v
x = ints((7, 5, 9), 0.5)
x[2, 3, :] = 0; x[4, :, :] = 0                 # a zero line and a zero plane
with h5py.File('x.h5', 'w') as f:
    f['x'] = x
with h5py.File('coeffs.h5', 'w') as f:        # non-square: 7x4, 5x8, 9x6, sparse
    f['C1'] = ints((7, 4), 0.3); f['C2'] = ints((5, 8), 0.3); f['C3'] = ints((9, 6), 0.3)
with h5py.File('y0.h5', 'w') as f:            # the only rank-3 dataset: the default
    f['y0'] = ints((4, 8, 6), 0.2, -100, 100).astype(np.int32)
with h5py.File('many.h5', 'w') as f:          # several datasets: one must be named
    f['a'] = ints((4, 8, 6), 0.0); f['b'] = ints((4, 8, 6), 0.0)
    f['wrong'] = ints((4, 8, 5), 0.0)
    f['z'] = np.zeros((4, 8, 6), np.complex128)
xr = rng.standard_normal((5, 6, 7)); xr[rng.random(xr.shape) < 0.5] = 0
with h5py.File('xr.h5', 'w') as f:
    f['x'] = xr
with h5py.File('y0c.h5', 'w') as f:           # complex Y0 and a float32 real one
    f['y0'] = rng.standard_normal((5, 6, 7)) + 1j * rng.standard_normal((5, 6, 7))
with h5py.File('y0r.h5', 'w') as f:
    f['y0'] = rng.standard_normal((5, 6, 7)).astype(np.float32)
EOF

G="--transform gemt --coeffs coeffs.h5"
# Under a sanitizer build (several times slower per process) two stage orders and two rank
# counts: the same code paths; the first pass runs all nine layouts.
orders="312 123 231" nps="1 2 5"
if sanitized; then orders="312 231" nps="1 5"; fi
echo "-- gemt (non-square, sparse) onto an int32 Y0: exact, for every layout"
for order in $orders; do
  for np in $nps; do
    for ex in fused reference; do
      out="g_${order}_${np}_$ex.h5"
      if run "$np" -i x.h5 -o "$out" $G --initial y0.h5 --stage-order "$order" --executor "$ex"
      then
        pycheck "gemt $order np=$np $ex == y0 + einsum (bitwise)" "
c = [load('coeffs.h5:/C%d' % s) for s in (1, 2, 3)]
y = load('$out')
want = gemt(load('x.h5:/x'), c, load('y0.h5:/y0'))
assert y.dtype == np.float64 and y.shape == (4, 8, 6), (y.dtype, y.shape)
assert y.tobytes() == want.tobytes(), np.max(np.abs(y - want))"
      fi
    done
  done
done
if run 1 -i x.h5 -o g_dense.h5 $G --initial y0.h5 --esop off &&
  run 3 -i x.h5 -o g_named.h5 $G --initial many.h5:/a --ranks.actuators colocated; then
  pycheck "esop off bitwise == esop on" "same_bits('g_dense.h5', 'g_312_1_fused.h5')"
  pycheck "a named dataset (many.h5:/a)" "
c = [load('coeffs.h5:/C%d' % s) for s in (1, 2, 3)]
assert load('g_named.h5').tobytes() == gemt(load('x.h5:/x'), c, load('many.h5:/a')).tobytes()"
fi

echo "-- report: problem.initial, counters equal to the run without --initial"
if run 2 -i x.h5 -o r_with.h5 $G --initial y0.h5 --report with.json &&
  run 2 -i x.h5 -o r_without.h5 $G --report without.json &&
  run 1 -i x.h5 -o r_dense.h5 $G --initial y0.h5 --esop off --report dense_with.json &&
  run 1 -i x.h5 -o r_dense0.h5 $G --esop off --report dense_without.json; then
  pycheck "problem.initial names FILE:/DSET; null without" "
a, b = report('with.json'), report('without.json')
assert a['problem']['initial'] == 'y0.h5:/y0', a['problem']
assert b['problem']['initial'] is None, b['problem']
assert load('r_with.h5').tobytes() != load('r_without.h5').tobytes()
with h5py.File('r_with.h5') as f:
    assert f['y'].attrs['initial'] == 'y0.h5:/y0', dict(f['y'].attrs)"
  for pair in "with without" "dense_with dense_without"; do
    set -- $pair
    pycheck "counters, steps, cycles, energy and MPI equal ($1 vs $2)" "
a, b = report('$1.json'), report('$2.json')
for k in ('counters', 'steps', 'cycles', 'mpi'):
    assert a[k] == b[k], (k, a[k], b[k])
assert a['energy_pj']['run'] == b['energy_pj']['run']"
  done
fi

echo "-- dft (complex output): complex Y0, and a float32 real Y0"
for np in $nps; do
  for ex in fused reference; do
    run "$np" -i xr.h5 -o "c_${np}_$ex.h5" -t dft --initial y0c.h5 --executor "$ex" || true
  done
done
if [[ -f c_1_fused.h5 ]]; then
  pycheck "dft + complex y0 == fftn + y0" "
close(load('c_1_fused.h5'), np.fft.fftn(load('xr.h5:/x'), norm='ortho') + load('y0c.h5:/y0'), 1e-12)"
  for np in $nps; do
    for ex in fused reference; do
      f="c_${np}_$ex"
      [[ $f == c_1_fused ]] || pycheck "dft $f bitwise == np=1 fused" "same_bits('$f.h5', 'c_1_fused.h5')"
    done
  done
fi
if run 1 -i xr.h5 -o cr.h5 -t dft --initial y0r.h5 --stage-order 231 &&
  run 5 -i xr.h5 -o cr5.h5 -t dft --initial y0r.h5 --stage-order 231 --executor reference; then
  pycheck "dft + real float32 y0 == fftn + y0" "
y = load('cr.h5'); assert y.dtype == np.complex128, y.dtype
close(y, np.fft.fftn(load('xr.h5:/x'), norm='ortho') + load('y0r.h5:/y0').astype(np.float64), 1e-12)"
  pycheck "dft + real y0: np=5 reference bitwise == np=1 fused" "same_bits('cr5.h5', 'cr.h5')"
fi

echo "-- fp32 cells: Y0 loaded as binary32, the same bits everywhere"
if run 1 -i xr.h5 -o f1.h5 -t dct --initial y0r.h5 --cell-mode fp32 &&
  run 2 -i xr.h5 -o f2.h5 -t dct --initial y0r.h5 --cell-mode fp32 --executor reference &&
  run 5 -i xr.h5 -o f5.h5 -t dct --initial y0r.h5 --cell-mode fp32 --esop off; then
  pycheck "fp32: np 1 fused, np 2 reference and np 5 dense agree bitwise" "
same_bits('f2.h5', 'f1.h5'); same_bits('f5.h5', 'f1.h5')
y = load('f1.h5')
assert np.array_equal(y, y.astype(np.float32).astype(np.float64)), 'not binary32 values'"
fi

echo "-- errors: one line, non-zero exit, no output, an existing file untouched"
echo 'keep me' >old.txt
cp y0.h5 y0_copy.h5
# err_case NAME TOKEN ARGS... : at np 1 and 3, output out.h5 (absent) and, with --force,
# old.h5 (an existing file that must stay byte-identical).
err_case() {
  local name=$1 token=$2 np target line
  shift 2
  for np in 1 3; do
    for target in out.h5 old.h5; do
      cp old.txt old.h5
      run_np "$np" "$APP" -q -o "$target" --force "$@"
      line=$(grep 'triada-transform: error' err.txt || true)
      if [[ $rc -eq 0 || $rc -ge 124 ]]; then
        fail "$name (np=$np): exit $rc: $(cat err.txt)"
      elif [[ $(grep -c 'triada-transform: error' err.txt) -ne 1 || $line != *"$token"* ]]; then
        fail "$name (np=$np): expected one error line naming '$token': $(cat err.txt)"
      elif [[ -e out.h5 ]] || ls -a | grep -q '\.tmp-'; then
        fail "$name (np=$np): output or temporary left: $(ls -a)"
      elif ! cmp -s old.txt old.h5; then
        fail "$name (np=$np): the existing output was changed"
      else
        pass
      fi
    done
  done
}
err_case "wrong shape" "many.h5:/wrong: --initial has shape 4x8x5, but the output has shape 4x8x6" \
  -i x.h5 $G --initial many.h5:/wrong
err_case "missing dataset" "y0.h5:/nope" -i x.h5 $G --initial y0.h5:/nope
err_case "missing file" "absent.h5" -i x.h5 $G --initial absent.h5
err_case "several rank-3 datasets" "many.h5" -i x.h5 $G --initial many.h5
err_case "complex Y0, real output" "many.h5:/z: --initial is complex" \
  -i x.h5 $G --initial many.h5:/z
for np in 1 3; do
  run_np "$np" "$APP" -q -i x.h5 $G --initial y0.h5 -o y0.h5:/y --force
  if [[ $rc -ne 0 && $(grep -c 'triada-transform: error' err.txt) -eq 1 ]] &&
    grep -q 'y0.h5: -o is the same file as --initial y0.h5' err.txt &&
    cmp -s y0.h5 y0_copy.h5 && ! ls -a | grep -q '\.tmp-'; then
    pass
  else
    fail "--initial the --output file (np=$np): exit $rc: $(cat err.txt)"
  fi
done
"$APP" --help >help.txt
if grep -q -- '--initial' help.txt; then pass; else fail "--help lists no --initial"; fi

summary
