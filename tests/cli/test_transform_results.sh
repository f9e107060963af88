#!/usr/bin/env bash
# End-to-end checks of triada-transform results against numpy (independent of our code),
# through HDF5 files read with h5py: DFT/DCT/GEMT values, input element types, bitwise
# independence of the rank count / actuator placement / ESOP, stage order, output
# attributes, the JSON report (schema, counters, exact MAC count on a sparse WHT), the
# per-step CSV trace, and inverse(forward(x)) == x. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"
GEN="$TRIADA_BIN/triada-gen"

in_scratch_dir transform-results

# run NP ARGS... : the app, plain (NP=1) or under mpirun; a failed run is a failed check.
run() {
  local np=$1 rc=0
  shift
  if [[ $np -eq 1 ]]; then
    timeout 60 "$APP" -q "$@" >run.out 2>run.err || rc=$?
  else
    timeout 60 "$MPIEXEC" --oversubscribe -np "$np" "$APP" -q "$@" >run.out 2>run.err || rc=$?
  fi
  if [[ $rc -ne 0 ]]; then
    fail "run (np=$np, exit $rc): $* : $(cat run.err)"
    return 1
  fi
  return 0
}

# check DESCRIPTION PYTHON-CODE : one check; the code runs after 'from common import *'
# and fails with an AssertionError (its message is printed).
check() {
  local what=$1 code=$2
  if "$PYTHON" -c "from common import *
$code" 2>check.err; then
    pass
  else
    fail "$what: $(tail -n 3 check.err)"
  fi
}

cat >common.py <<'EOF'
import json, csv
import h5py, numpy as np

def load(spec):
    path, _, dset = spec.partition(':')
    with h5py.File(path, 'r') as f:
        return f[dset or '/y'][()]

def attrs(path, dset='/y'):
    with h5py.File(path, 'r') as f:
        return dict(f[dset].attrs)

def relerr(got, want):
    got = np.asarray(got, dtype=np.complex128)
    want = np.asarray(want, dtype=np.complex128)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))

def close(got, want, tol=1e-12):
    e = relerr(got, want)
    assert e <= tol, f'max-abs-error/max-abs = {e:.3e} > {tol:g}'

def same_bits(a, b):
    x, y = load(a), load(b)
    assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
    assert x.tobytes() == y.tobytes(), f'{a} and {b} differ: max |diff| {np.max(np.abs(x - y))}'

def report(path):
    with open(path) as f:
        return json.load(f)

def dct_ortho(n):  # C[n,k] = sqrt(2/N) cos(pi (2n+1) k / (2N)), column 0 times sqrt(1/2)
    i = np.arange(n)
    c = np.sqrt(2.0 / n) * np.cos(np.pi * np.outer(2 * i + 1, i) / (2 * n))
    c[:, 0] *= np.sqrt(0.5)
    return c

def hadamard(n):  # Sylvester order, exact integers
    h = np.array([[1]], dtype=np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h
EOF

# ---- inputs ---------------------------------------------------------------------------
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(2024)
x = rng.standard_normal((6, 10, 7))
with h5py.File('x.h5', 'w') as f:
    f['x'] = x
with h5py.File('types.h5', 'w') as f:
    f['i32'] = rng.integers(-1000, 1000, (6, 10, 7)).astype(np.int32)
    f['f32'] = rng.standard_normal((6, 10, 7)).astype(np.float32)
    f['c64'] = (rng.standard_normal((6, 10, 7))
                + 1j * rng.standard_normal((6, 10, 7))).astype(np.complex64)
with h5py.File('coeffs.h5', 'w') as f:
    f['C1'] = rng.standard_normal((6, 3))
    f['C2'] = rng.standard_normal((10, 12))
    f['C3'] = rng.standard_normal((7, 7))
EOF
# a sparse tensor (half the axis-3 lines zero, plus random zeros) and a sparse integer one
"$GEN" --output sp.h5 --shape 6,10,7 --dist normal --zero-lines 0.5 --sparsity 0.2 \
  --seed 11 >/dev/null
"$GEN" --output wi.h5 --shape 8,4,16 --dist int --sparsity 0.5 --zero-lines 0.3 \
  --seed 5 >/dev/null

N="N1, N2, N3 = 6, 10, 7"

echo "-- 3D DFT against numpy.fft.fftn"
if run 1 --input x.h5 --output dft1.h5 --transform dft --norm ortho --report dft1.json; then
  check "dft ortho == fftn(norm=ortho)" "
y = load('dft1.h5')
assert y.dtype == np.complex128, y.dtype
close(y, np.fft.fftn(load('x.h5:/x'), norm='ortho'))"
fi
if run 1 --input x.h5 --output dftb.h5 --transform dft --norm backward; then
  check "dft backward == fftn" "close(load('dftb.h5'), np.fft.fftn(load('x.h5:/x')))"
fi

echo "-- input element types int32, float32, complex64"
for t in i32 f32 c64; do
  if run 1 --input "types.h5:/$t" --output "t_$t.h5" --transform dft; then
    check "dft of $t input" "
x = load('types.h5:/$t')
assert x.dtype.name == {'i32': 'int32', 'f32': 'float32', 'c64': 'complex64'}['$t']
close(load('t_$t.h5'), np.fft.fftn(x.astype(np.complex128), norm='ortho'))"
  fi
done

echo "-- DCT-II ortho against an explicit matrix per axis"
if run 1 --input x.h5 --output dct.h5 --transform dct; then
  check "dct ortho == einsum with DCT-II matrices" "
y = load('dct.h5')
assert y.dtype == np.float64, y.dtype
x = load('x.h5:/x')
want = np.einsum('abc,ai,bj,ck->ijk', x, dct_ortho(6), dct_ortho(10), dct_ortho(7))
close(y, want)"
fi

echo "-- gemt with C1 6x3, C2 10x12, C3 7x7"
if run 1 --input x.h5 --output gemt.h5 --transform gemt --coeffs coeffs.h5; then
  check "gemt == einsum('abc,ai,bj,ck->ijk')" "
y = load('gemt.h5')
assert y.shape == (3, 12, 7), y.shape
assert y.dtype == np.float64, y.dtype
c = [load('coeffs.h5:/C%d' % s) for s in (1, 2, 3)]
close(y, np.einsum('abc,ai,bj,ck->ijk', load('x.h5:/x'), *c))"
  # TensorLy's mode_dot(X, M, n) = fold(M @ unfold(X, n), n), M of shape (J, I_n), written
  # here from its definition: doc/design.md says Y = X with mode_dot(., C_s.T, s - 1) per axis.
  check "gemt == TensorLy mode_dot with each C transposed (the documented statement)" "
def unfold(t, n):
    return np.moveaxis(t, n, 0).reshape(t.shape[n], -1)
def fold(m, n, shape):
    full = [shape[n]] + [d for i, d in enumerate(shape) if i != n]
    return np.moveaxis(m.reshape(full), 0, n)
def mode_dot(t, m, n):
    shape = list(t.shape); shape[n] = m.shape[0]
    return fold(m @ unfold(t, n), n, shape)
y = load('x.h5:/x')
for s in (1, 2, 3):
    y = mode_dot(y, load('coeffs.h5:/C%d' % s).T, s - 1)
assert y.shape == (3, 12, 7), y.shape
close(load('gemt.h5'), y)"
fi

echo "-- bitwise identical output for any rank count and actuator placement"
for np in 2 4 5; do
  if run "$np" --input x.h5 --output "dft_np$np.h5" --transform dft --report "dft_np$np.json"
  then
    check "dft np=$np bitwise == np=1" "same_bits('dft_np$np.h5', 'dft1.h5')"
  fi
done
if run 4 --input x.h5 --output dft_np4c.h5 --transform dft --ranks.actuators colocated \
  --report dft_np4c.json; then
  check "dft np=4 colocated bitwise == np=1" "same_bits('dft_np4c.h5', 'dft1.h5')"
fi
if run 4 --input x.h5 --output gemt_np4.h5 --transform gemt --coeffs coeffs.h5; then
  check "gemt np=4 bitwise == np=1" "same_bits('gemt_np4.h5', 'gemt.h5')"
fi

echo "-- ESOP on/off bitwise equal; stage order 123 == 312"
if run 1 --input sp.h5 --output sp_on.h5 --transform dft --report sp_on.json --trace sp_on.csv &&
  run 1 --input sp.h5 --output sp_off.h5 --transform dft --esop off --report sp_off.json \
    --trace sp_off.csv; then
  check "esop off bitwise == esop on" "same_bits('sp_off.h5', 'sp_on.h5')"
  check "dft of the sparse tensor == fftn" "close(load('sp_on.h5'), np.fft.fftn(load('sp.h5:/x'), norm='ortho'))"
fi
if run 1 --input x.h5 --output so123.h5 --transform dft --stage-order 123; then
  check "stage order 123 == 312" "
close(load('so123.h5'), load('dft1.h5'))
assert attrs('so123.h5')['stage_order'] == '123'"
fi

echo "-- output attributes"
check "attributes of dft1.h5" "
a = attrs('dft1.h5')
for k in ('transform', 'norm', 'direction', 'stage_order', 'mesh', 'steps'):
    assert k in a, f'missing attribute {k}: {sorted(a)}'
assert a['transform'] == 'dft,dft,dft', a['transform']
assert a['norm'] == 'ortho', a['norm']
assert a['direction'] == 'forward', a['direction']
assert a['stage_order'] == '312', a['stage_order']
assert list(np.ravel(a['mesh'])) == [6, 10, 7], a['mesh']
assert list(np.ravel(a['steps'])) == [6 + 10 + 7], a['steps']
b = attrs('dftb.h5')
assert b['norm'] == 'backward', b['norm']"

echo "-- JSON report"
check "report schema and keys (np=1)" "
r = report('dft1.json')
assert r['schema'] == 'triada-report/1', r.get('schema')
for k in ('problem', 'mesh', 'steps', 'counters', 'energy_pj', 'mpi', 'wall_seconds'):
    assert k in r, f'missing {k}'
m = r['mesh']
assert m['cells'] == [6, 10, 7], m['cells']
assert m['brick_ranks'] == [1, 1, 1], m['brick_ranks']
assert m['actuator_ranks'] == 0, m['actuator_ranks']
assert m['world_size'] == 1, m['world_size']
assert isinstance(r['steps']['total'], int)
assert len(r['steps']['per_stage']) == 3
c = r['counters']
for k in ('macs', 'macs_dense'):
    assert isinstance(c[k], int), (k, c.get(k))
for k in ('x_bus_sends', 'y_bus_sends', 'y_bus_receives', 'waits'):
    for b in ('H', 'L', 'F', 'total'):
        assert isinstance(c[k][b], int), (k, b, c[k])
    assert c[k]['total'] == c[k]['H'] + c[k]['L'] + c[k]['F'], (k, c[k])
assert 'run' in r['energy_pj'] and 'dense' in r['energy_pj'], r['energy_pj'].keys()
for k in ('messages', 'bytes'):
    assert isinstance(r['mpi'][k], int), r['mpi']
assert r['wall_seconds'] >= 0"
check "report at np=4: 3 actuator ranks" "
r = report('dft_np4.json')
m = r['mesh']
assert m['world_size'] == 4, m['world_size']
assert m['actuator_ranks'] == 3, m['actuator_ranks']
assert int(np.prod(m['brick_ranks'])) == 1, m['brick_ranks']"
check "report at np=4 colocated: 0 actuator ranks" "
m = report('dft_np4c.json')['mesh']
assert m['world_size'] == 4 and m['actuator_ranks'] == 0, m
assert int(np.prod(m['brick_ranks'])) == 4, m['brick_ranks']"
check "report at np=5: counters equal np=1" "
a, b = report('dft_np5.json'), report('dft1.json')
assert a['mesh']['actuator_ranks'] == 3 and a['mesh']['world_size'] == 5, a['mesh']
for k in ('macs', 'macs_dense', 'x_bus_sends', 'y_bus_sends', 'y_bus_receives', 'waits'):
    assert a['counters'][k] == b['counters'][k], (k, a['counters'][k], b['counters'][k])
assert a['steps'] == b['steps'], (a['steps'], b['steps'])"
check "esop off: steps and macs are dense" "
$N
r = report('sp_off.json')
assert r['steps']['total'] == N1 + N2 + N3, r['steps']
assert sorted(r['steps']['per_stage']) == sorted([N1, N2, N3]), r['steps']['per_stage']
want = N1 * N2 * N3 * (N1 + N2 + N3)
c = r['counters']
assert c['macs'] == want and c['macs_dense'] == want, (c['macs'], c['macs_dense'], want)"
check "esop on a zero-lines tensor: fewer macs and less energy" "
r = report('sp_on.json')
c, e = r['counters'], r['energy_pj']
assert c['macs'] < c['macs_dense'], (c['macs'], c['macs_dense'])
assert e['run'] < e['dense'], (e['run'], e['dense'])
assert c['macs_dense'] == report('sp_off.json')['counters']['macs_dense']"

echo "-- exact MAC count of a sparse integer WHT (stage order 312, backward norm)"
if run 1 --input wi.h5 --output wht.h5 --transform wht --norm backward --stage-order 312 \
  --report wht.json --trace wht.csv; then
  check "wht macs == sum over stages nnz(stage input) * K_a" "
x = load('wi.h5:/x')
assert np.all(x == np.round(x))
v = x.astype(np.int64)
N1, N2, N3 = v.shape
h1, h2, h3 = hadamard(N1), hadamard(N2), hadamard(N3)
macs = 0
macs += np.count_nonzero(v) * N3; v = np.einsum('abc,ck->abk', v, h3)   # stage along 3
macs += np.count_nonzero(v) * N1; v = np.einsum('abc,ai->ibc', v, h1)   # stage along 1
macs += np.count_nonzero(v) * N2; v = np.einsum('abc,bj->ajc', v, h2)   # stage along 2
r = report('wht.json')
assert r['counters']['macs'] == macs, (r['counters']['macs'], macs)
assert r['counters']['macs'] < r['counters']['macs_dense']
y = load('wht.h5')
assert np.array_equal(y, v.astype(np.float64)), 'wht values differ from the exact integers'"
fi

echo "-- per-step CSV trace"
check_trace() {
  local csv=$1 json=$2 dense=$3
  check "trace $csv" "
$N
with open('$csv') as f:
    lines = f.read().splitlines()
hdr = 'step,stage,axis,pivot,x_bus_sends,y_bus_sends,y_bus_receives,waits,macs,cycles,time_ps'
assert lines[0] == hdr, lines[0]
rows = list(csv.DictReader(lines))
r = report('$json')
assert len(rows) == r['steps']['total'], (len(rows), r['steps']['total'])
if $dense:
    assert len(rows) == N1 + N2 + N3, len(rows)
assert sum(int(row['macs']) for row in rows) == r['counters']['macs']
for k in ('x_bus_sends', 'y_bus_sends', 'y_bus_receives', 'waits'):
    assert sum(int(row[k]) for row in rows) == r['counters'][k]['total'], k
# The steps' modelled times plus each stage's fill and hand-over periods are the run's time.
ph = r['physical']
extra = sum((s['fill_cycles'] + s['control_cycles']) * s['period_ps'] for s in ph['per_stage'])
total_ps = sum(float(row['time_ps']) for row in rows) + extra
assert abs(total_ps - ph['seconds'] * 1e12) <= 1e-9 * total_ps, (total_ps, ph['seconds'])"
}
check_trace sp_off.csv sp_off.json True
check_trace sp_on.csv sp_on.json False
check_trace wht.csv wht.json False

echo "-- inverse(forward(x)) == x through files"
for t in dct dft; do
  if run 1 --input x.h5 --output "fw_$t.h5" --transform "$t" &&
    run 2 --input "fw_$t.h5" --output "inv_$t.h5" --transform "$t" --inverse; then
    check "$t inverse(forward(x)) == x" "
close(load('inv_$t.h5'), load('x.h5:/x'))
assert attrs('inv_$t.h5')['direction'] == 'inverse', attrs('inv_$t.h5')['direction']"
  fi
done


echo "-- --model-only: the counters of a real dense run, and the physical model's ideal case"
# --model-only reports dense mode's closed forms: a real run with --esop off must count the
# same (under ESOP a matrix with exact zeros, as some DCT sizes have, would save work).
for spec in "5,7,6 dct 312 1" "4,9,3 dft 123 3" "6,4,5 dht 231 5" "5,7,6 dct 312 2 --mesh.cells 3,4,2"; do
  read -r shape t order np extra <<<"$spec"
  "$GEN" -o "mo_$shape.h5" --shape "$shape" --dist uniform --force >/dev/null
  # shellcheck disable=SC2086
  if run "$np" --input "mo_$shape.h5" --output "mo_$shape-$t.h5" --transform "$t" \
    --stage-order "$order" --report "run_$shape-$t.json" --force --esop off $extra &&
    run 1 --model-only "$shape" --transform "$t" --stage-order "$order" \
      --report "model_$shape-$t.json" --force $extra; then
    check "--model-only $shape $t $order $extra = a run at np=$np" "
run, model = report('run_$shape-$t.json'), report('model_$shape-$t.json')
assert model['problem']['model_only'] is True
for k in ('steps', 'cycles'):
    assert run[k] == model[k], (k, run[k], model[k])
for k, v in run['counters'].items():
    assert model['counters'][k] == v, (k, v, model['counters'][k])
assert run['energy_pj']['run'] == model['energy_pj']['run']
assert run['physical']['seconds'] == model['physical']['seconds']"
  fi
done
# gemt: --model-only models dense real N_d x N_d matrices, a run with such matrices counts it.
"$PYTHON" -c "
import h5py, numpy as np
g = np.random.default_rng(7)
with h5py.File('dense_c.h5', 'w') as f:
    for s, n in zip((1, 2, 3), (5, 7, 6)):
        f['C%d' % s] = g.uniform(0.5, 1.5, (n, n)) * g.choice([-1, 1], (n, n))
"
for np_extra in "1" "3 --mesh.cells 2,4,3"; do
  read -r np extra <<<"$np_extra"
  # shellcheck disable=SC2086
  if run "$np" --input "mo_5,7,6.h5" --output mo_gemt.h5 --transform gemt --coeffs dense_c.h5 \
    --report run_gemt.json --force --esop off $extra &&
    run 1 --model-only 5,7,6 --transform gemt --report model_gemt.json --force $extra; then
    check "--model-only 5,7,6 gemt $extra = a run with dense matrices at np=$np" "
run, model = report('run_gemt.json'), report('model_gemt.json')
assert model['problem']['transform'] == 'gemt' and model['problem']['element'] == 'float64'
for k in ('steps', 'cycles', 'counters'):
    assert run[k] == model[k], (k, run[k], model[k])
assert run['physical']['seconds'] == model['physical']['seconds']"
  fi
done
# Ideal lines, unit MAC latency, no overhead or hand-over: seconds = today's cycles (ps).
for extra in "" "--mesh.cells 3,4,2 --timing.clock per_stage --esop off" "--cell-mode m3xu-fp32"; do
  # shellcheck disable=SC2086
  if run 1 --input "mo_5,7,6.h5" --output ideal.h5 --transform dft --report ideal.json \
    --force --timing.bus_model ideal --timing.overhead_ps 0 --timing.control_cycles 0 \
    --timing.mac_ps_fp64 1 --timing.mac_latency_ps_fp64 0 --timing.mac_ps_m3xu_fp32 1 $extra; then
    check "ideal physical model = cycles ($extra)" "
r = report('ideal.json')
assert round(r['physical']['seconds'] * 1e12, 6) == r['cycles']['total'], (r['physical']['seconds'], r['cycles'])
for s, c in zip(r['physical']['per_stage'], r['cycles']['per_stage']):
    assert round(s['seconds'] * 1e12, 6) == c, (s, c)"
  fi
done

summary
