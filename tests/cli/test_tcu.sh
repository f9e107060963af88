#!/usr/bin/env bash
# End-to-end checks of triada-tcu (the linear-algebra algorithms of Theorems 1-6): a matmul
# run's report keys, verification and the closed-form model time (n/m)(sqrt(n m) + l);
# HDF5 inputs for matmul, strassen, spmm, ge, tclosure and apsd; a --sweep that prints a
# fitted exponent and writes its rows (drawn by run_scripts/plot_tcu.py); a run under
# mpirun; bad arguments giving one 'triada-tcu: error:' line and exit code 2 (bad files: 1);
# --cell-mode: cycles = cell steps x sub-steps, lower-precision results reported, exit 0.
# Run by ctest (label cli); ends with "N passed, M failed".
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-tcu"

in_scratch_dir tcu-test

echo "-- matmul: exit 0, report keys, verified, model time = (n/m)(sqrt(n m) + l)"
if "$APP" --algo matmul --size 64 --m 16 --latency 10 --report r.json >out.txt 2>err.txt; then
  pass
else
  fail "matmul run exited non-zero: $(cat err.txt)"
fi
if "$PYTHON" - <<'EOF'; then pass; else fail "matmul report"; fi
import json, math
r = json.load(open('r.json'))
for k in ('algo', 'size', 'm', 'latency', 'weak', 'verified', 'reference', 'details', 'tcu'):
    assert k in r, k
t = r['tcu']
for k in ('calls', 'model_time', 'bound', 'bound_formula', 'ratio', 'cell_steps', 'macs',
          'macs_dense'):
    assert k in t, k
for k in ('total', 'tensor', 'cpu'):
    assert k in t['model_time'], k
assert r['verified'] is True
n, m, l = 64 * 64, 16, 10
want = (n // m) * (math.isqrt(n * m) + l)
assert t['model_time']['tensor'] == want, (t['model_time'], want)
assert t['model_time']['cpu'] == 0 and t['model_time']['total'] == want
assert t['calls'] == n // m
assert abs(t['ratio'] - 1.0) < 1e-12 and t['bound'] == want
assert r['algo'] == 'matmul' and r['size'] == 64 and r['m'] == 16 and r['latency'] == 10
assert r['weak'] is False
EOF
if grep -q "verified    yes" out.txt && grep -q "ratio       1.000" out.txt; then pass; else
  fail "summary: $(cat out.txt)"; fi

echo "-- --weak: more calls, same product"
if "$APP" --algo matmul --size 64 --m 16 --latency 10 --weak --report w.json >/dev/null 2>err.txt &&
  "$PYTHON" -c "
import json
w = json.load(open('w.json'))
assert w['verified'] is True and w['weak'] is True
assert w['tcu']['calls'] == 16 ** 3, w['tcu']['calls']
"; then pass; else fail "--weak run"; fi

echo "-- each linear-algebra algorithm verifies on a size that is not a multiple of sqrt(m)"
for a in strassen spmm ge tclosure apsd; do
  if "$APP" --algo "$a" --size 37 --m 16 --latency 4 >out.txt 2>err.txt &&
    grep -q "verified    yes" out.txt; then pass; else fail "$a: $(cat out.txt err.txt)"; fi
done

echo "-- HDF5 inputs"
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File('mm.h5', 'w') as f:
    f['A'] = rng.integers(-3, 4, (20, 20)).astype(np.int32)
    f['B'] = rng.standard_normal((20, 20))
with h5py.File('sp.h5', 'w') as f:
    a = rng.integers(1, 5, (30, 30)) * (rng.random((30, 30)) < 0.1)
    f['A'] = a; f['B'] = a.T.copy()
with h5py.File('ge.h5', 'w') as f:
    A = rng.standard_normal((12, 12)); A += np.diag(np.abs(A).sum(1) + 1)
    f['A'] = A; f['b'] = rng.standard_normal(12)
with h5py.File('g.h5', 'w') as f:
    n = 10; adj = np.zeros((n, n), np.uint8)
    for i in range(n - 1): adj[i, i + 1] = adj[i + 1, i] = 1   # a path: distances |i - j|
    f['adjacency'] = adj
    d = np.zeros((n, n), np.uint8); d[0, 1] = d[1, 2] = d[2, 0] = 1
    f['directed'] = d
    f['disconnected'] = np.zeros((3, 3))
EOF
for spec in "matmul mm.h5" "strassen mm.h5" "spmm sp.h5" "ge ge.h5" "tclosure g.h5" \
  "tclosure g.h5:/directed" "apsd g.h5"; do
  read -r a f <<<"$spec"
  if "$APP" --algo "$a" --input "$f" --m 4 --latency 2 --report in.json --force >out.txt 2>err.txt &&
    grep -q "verified    yes" out.txt; then pass; else fail "--input $f ($a): $(cat out.txt err.txt)"; fi
done
if "$APP" --algo apsd --input g.h5 --m 4 --latency 2 --report d.json >/dev/null 2>&1 &&
  "$PYTHON" -c "
import json; r = json.load(open('d.json'))
assert r['size'] == 10 and r['details']['diameter'] == 9, r['details']
"; then pass; else fail "apsd path diameter"; fi

echo "-- --sweep on matmul prints a fitted exponent and writes the rows"
if "$APP" --algo matmul --sweep --sizes 16,32,64 --ms 4,16 --latency 5 --report s.json \
  >sweep.txt 2>err.txt; then pass; else fail "sweep exited non-zero: $(cat err.txt)"; fi
if grep -Eq "m = +4: fitted exponent 1\.[0-9]+" sweep.txt &&
  grep -Eq "m = +16: fitted exponent 1\.[0-9]+" sweep.txt; then pass; else
  fail "sweep output: $(cat sweep.txt)"; fi
if "$PYTHON" -c "
import json
s = json.load(open('s.json'))
assert s['verified'] is True and s['algo'] == 'matmul'
assert len(s['sweep']) == 6, len(s['sweep'])
assert {r['m'] for r in s['sweep']} == {4, 16}
for r in s['sweep']:
    n, m, l = r['n'], r['m'], 5
    assert r['model_time']['total'] == (n // m) * (round((n * m) ** 0.5) + l)
assert all(abs(f['fitted_exponent'] - 1.5) < 0.1 for f in s['fits']), s['fits']
"; then pass; else fail "sweep report"; fi

echo "-- run_scripts/plot_tcu.py draws the sweep"
SRC=${TRIADA_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
if "$PYTHON" "$SRC/run_scripts/plot_tcu.py" s.json -o img >/dev/null 2>err.txt &&
  [[ -s img/tcu_matmul.png ]]; then pass; else fail "plot_tcu.py: $(cat err.txt)"; fi

echo "-- under mpirun -np 3 only rank 0 works, all ranks leave cleanly"
if timeout 60 "$MPIEXEC" --oversubscribe -np 3 "$APP" --algo ge --size 20 --m 4 --latency 1 \
  >mpi.txt 2>err.txt && [[ $(grep -c "verified    yes" mpi.txt) -eq 1 ]]; then pass; else
  fail "mpirun: $(cat mpi.txt err.txt)"; fi

echo "-- bad arguments: one line 'triada-tcu: error: ...', exit code 2"
bad() {
  local rc=0
  timeout 60 "$APP" "$@" >stdout.txt 2>stderr.txt || rc=$?
  local lines
  lines=$(wc -l <stderr.txt)
  if [[ $rc -eq 2 && $lines -eq 1 ]] && grep -q "^triada-tcu: error: " stderr.txt; then
    pass
  else
    fail "'$*': exit $rc, stderr: $(cat stderr.txt)"
  fi
}
bad --algo matmul --size 64 --m 15 --latency 10
bad --algo matmul --size 0 --m 16 --latency 10
bad --algo matmul --size 100000 --m 16 --latency 10
bad --algo nosuch --size 8 --m 16 --latency 10
bad --size 8 --m 16 --latency 10
bad --algo matmul --m 16 --latency 10
bad --algo matmul --size 8 --latency 10
bad --algo matmul --size 8 --m 16
bad --algo matmul --size 8 --m 16 --latency -2
bad --algo matmul --size 8 --m 16 --latency 1 --frobnicate
bad --algo matmul --sweep --latency 1 --ms 4,15
bad --algo matmul --sweep --latency 1 --size 8
bad --algo matmul --size 8 --m 16 --latency 1 --sizes 4,8
bad --algo tclosure --input g.h5 --size 11 --m 4 --latency 1
if grep -q "15" <(timeout 60 "$APP" --algo matmul --size 64 --m 15 --latency 10 2>&1); then pass; else
  fail "the m error does not name the value"; fi
# Strict parsing: no abbreviations, no stray words, whole-token numbers; the line names it.
bad_names() {  # bad_names NEEDLE ARGS...: exit 2, one line containing NEEDLE
  local needle=$1
  shift
  bad "$@"
  if grep -qF -- "$needle" stderr.txt; then pass; else
    fail "'$*': the error does not name '$needle': $(cat stderr.txt)"; fi
}
bad_names "'--lat'" --algo matmul --size 8 --m 16 --lat 1
bad_names "unexpected argument 'extra'" --algo matmul --size 8 --m 16 --latency 1 extra
bad_names "unexpected argument 'yes'" --algo matmul --size 8 --m 16 --latency 1 --weak yes
bad_names "--size" --algo matmul --size "8 8" --m 16 --latency 1
bad_names "--seed" --algo matmul --size 8 --m 16 --latency 1 --seed -1
bad_names "--seed" --algo matmul --size 8 --m 16 --latency 1 --seed 99999999999999999999
bad_names "--m" --algo matmul --size 8 --m 16x --latency 1
bad_names "--sizes" --algo matmul --sweep --latency 1 --sizes 4,,8
bad_names "--algo: unknown algorithm" --algo $'mat\e[2Jmul' --size 8 --m 16 --latency 1
if ! LC_ALL=C grep -q '[^[:print:]]' stderr.txt; then pass; else
  fail "raw bytes echoed: $(cat -v stderr.txt)"; fi

echo "-- bad input files: one line, exit code 1"
badin() {
  local rc=0
  timeout 60 "$APP" "$@" >stdout.txt 2>stderr.txt || rc=$?
  if [[ $rc -eq 1 && $(wc -l <stderr.txt) -eq 1 ]] && grep -q "^triada-tcu: error: " stderr.txt; then
    pass
  else
    fail "'$*': exit $rc, stderr: $(cat stderr.txt)"
  fi
}
badin --algo matmul --input missing.h5 --m 4 --latency 1
badin --algo apsd --input g.h5:/directed --m 4 --latency 1
badin --algo apsd --input g.h5:/disconnected --m 4 --latency 1
badin --algo ge --input mm.h5 --m 4 --latency 1
# A size read from the input file is named as that file and dataset, not as --size.
"$PYTHON" -c "
import h5py
with h5py.File('big.h5', 'w') as f:  # 4097 vertices, one more than allowed; chunks unwritten
    f.create_dataset('adjacency', (4097, 4097), dtype='u1', chunks=(64, 64))
"
badin --algo tclosure --input big.h5 --m 4 --latency 1
if grep -qF "big.h5:/adjacency: size 4097" stderr.txt && ! grep -qF -- "--size" stderr.txt; then
  pass; else fail "the size error does not name big.h5:/adjacency: $(cat stderr.txt)"; fi

echo "-- --cell-mode: cycles = cell steps x sub-steps, lower precision reported, not failed"
if "$APP" --algo matmul --size 64 --m 16 --latency 10 --cell-mode m3xu-fp32 --report cm.json \
  >cm.txt 2>err.txt && "$PYTHON" -c "
import json
r = json.load(open('cm.json'))
t = r['tcu']
# an FP32 product on the M3XU unit: four sub-steps (M3XU Corollary 2, a quarter of the rate)
assert t['cell_mode'] == 'm3xu-fp32' and t['substeps'] == 4, t
assert t['cycles'] == 4 * t['cell_steps'] and t['cell_steps'] > 0, t
assert r['precision']['cell_mode'] == 'm3xu-fp32'
assert r['verified'] is True and r['precision']['max_rel_error'] == 0.0  # integer data: exact
" && grep -q "cells       m3xu-fp32, 4 sub-step(s) per step" cm.txt; then pass; else
  fail "matmul --cell-mode m3xu-fp32: $(cat cm.txt err.txt)"; fi
if "$APP" --algo matmul --size 20 --m 4 --latency 1 --report f.json >/dev/null 2>&1 &&
  "$PYTHON" -c "
import json; t = json.load(open('f.json'))['tcu']
assert t['cell_mode'] == 'fp64' and t['substeps'] == 1 and t['cycles'] == t['cell_steps'], t
"; then pass; else fail "fp64 default: cycles == cell_steps"; fi
# A DFT in bf16 fails the fp64 check: verified false, exit 0, the message, an error figure.
rc=0
"$APP" --algo dft --size 256 --m 16 --latency 1 --cell-mode bf16 --report b.json >b.txt 2>err.txt || rc=$?
if [[ $rc -eq 0 ]] && grep -q "not verified (cell mode bf16 computes in lower precision" b.txt &&
  "$PYTHON" -c "
import json
r = json.load(open('b.json'))
assert r['verified'] is False and r['tcu']['cell_mode'] == 'bf16'
e = r['precision']['max_rel_error']
assert 1e-5 < e < 1e-1, e
"; then pass; else fail "dft --cell-mode bf16: exit $rc, $(cat b.txt err.txt)"; fi
# The error ordering on the planar unit's DFT: bf16 > tf32 > m3xu-fp32.
if for mode in bf16 tf32 m3xu-fp32; do
  "$APP" --algo dft --size 256 --m 16 --latency 1 --cell-mode $mode --report "e-$mode.json" \
    >/dev/null 2>&1 || exit 1
done && "$PYTHON" -c "
import json
e = {m: json.load(open('e-%s.json' % m))['precision']['max_rel_error'] for m in ('bf16', 'tf32', 'm3xu-fp32')}
assert e['bf16'] > e['tf32'] > e['m3xu-fp32'] > 0, e
"; then pass; else fail "dft error ordering over cell modes"; fi
bad --algo matmul --size 8 --m 16 --latency 1 --cell-mode fp8

echo "-- --executor reference and fused: the same report counters and details"
if for e in reference fused; do
  "$APP" --algo matmul --size 20 --m 16 --latency 3 --executor $e --report "x-$e.json" \
    >/dev/null 2>&1 || exit 1
  "$APP" --algo ge --size 12 --m 4 --latency 3 --weak --executor $e --report "g-$e.json" \
    >/dev/null 2>&1 || exit 1
done && "$PYTHON" -c "
import json
for n in ('x', 'g'):
    a, b = (json.load(open('%s-%s.json' % (n, e))) for e in ('reference', 'fused'))
    assert a['executor'] == 'reference' and b['executor'] == 'fused', (a['executor'], b['executor'])
    assert a['tcu'] == b['tcu'] and a['details'] == b['details'] and a['verified'] and b['verified']
"; then pass; else fail "--executor reference vs fused differ"; fi
bad --algo matmul --size 8 --m 16 --latency 1 --executor fast

summary
