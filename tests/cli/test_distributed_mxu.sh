#!/usr/bin/env bash
# triada-conv and triada-tcu under mpirun: the same report at 1, 2, 3 and 5 ranks (every
# key but the wall times and config.ranks, compared exactly by Python), for a multi-layer
# network with groups, batch 2, a layer with fewer work units than ranks, both methods and
# the direct check, HDF5 operands read by every rank; a tcu sweep and a single tcu run.
# Errors agreed by the ranks: a bad --input, a layer too big for memory and a failing
# sweep point each give one "<app>: error:" line and the serial exit code, and no rank
# hangs (run_np's timeout).
# Run by ctest (label cli); ends with "N passed, M failed".
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

CONV="$TRIADA_BIN/triada-conv"
TCU="$TRIADA_BIN/triada-tcu"

in_scratch_dir dist-test

# same_reports A B...: B... equal A but for wall times, the rank count and the provenance
# record's command line and date (each run's own); prints the first differing keys.
cat >same.py <<'EOF'
import json, sys
SKIP = {'wall_seconds', 'direct_seconds', 'ranks', 'command_line', 'date'}
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in SKIP}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
def diff(x, y, path, out):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            diff(x.get(k), y.get(k), path + '/' + k, out)
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            diff(u, v, path + '/' + str(i), out)
    elif x != y or type(x) != type(y):
        out.append(f'{path}: {x!r} != {y!r}')
ref = json.load(open(sys.argv[1]))
assert 'ranks' not in ref.get('config', {}) or ref['config']['ranks'] == 1
a = strip(ref)
ok = True
for f in sys.argv[2:]:
    out = []
    diff(a, strip(json.load(open(f))), '', out)
    if out:
        ok = False
        print(f, 'differs:', '; '.join(out[:5]))
sys.exit(0 if ok else 1)
EOF

# A network with groups and a layer of one work unit per method at S = 16 (C_O 8).
cat >net.csv <<'EOF'
Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding,Dilation,Groups
a,12,12,3,3,3,40,1,1,1,1
b,12,12,3,3,40,48,2,1,1,2
c,6,6,1,1,48,8,1,0,1,1
d,6,6,3,3,8,36,1,2,2,1
EOF

echo "-- triada-conv: a 4-layer network, batch 2, both methods, checked, at 1 2 3 5 ranks"
reports=()
for np in 1 2 3 5; do
  run_np "$np" "$CONV" --network net.csv --batch 2 --method both --verify --report "c$np.json"
  check "conv np $np exits 0" test "$rc" -eq 0
  reports+=("c$np.json")
done
check "conv reports identical at np 1 2 3 5" "$PYTHON" same.py "${reports[@]}"
check "conv report: every layer checked and verified, ranks recorded" "$PYTHON" -c "
import json
r = json.load(open('c5.json'))
assert r['config']['ranks'] == 5 and len(r['layers']) == 4
assert all(L['verified'] is True for L in r['layers'])
assert r['layers'][2]['explicit']['calls'] == 3  # one unit: 48 / 16 depth chunks
"

echo "-- triada-conv: one layer of a single work unit per method at 3 ranks, on MXU 8"
run_np 1 "$CONV" --layer 2,5,7,6,6,3,2,2,1 --mxu 8 --report s1.json
check "single-unit layer np 1 exits 0" test "$rc" -eq 0
run_np 3 "$CONV" --layer 2,5,7,6,6,3,2,2,1 --mxu 8 --report s3.json
check "single-unit layer np 3 exits 0" test "$rc" -eq 0
check "single-unit layer: same report at np 1 and 3" "$PYTHON" same.py s1.json s3.json

echo "-- triada-conv: HDF5 --input and --weights read by every rank, np 1 and 3"
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(5)
with h5py.File('in.h5', 'w') as f:
    f['x'] = rng.standard_normal((2, 24, 6, 7))
with h5py.File('w.h5', 'w') as f:
    f['w'] = rng.standard_normal((36, 12, 3, 3))
EOF
for np in 1 3; do
  run_np "$np" "$CONV" --layer 2,24,6,7,36,3,3,1,1,1,2 --mxu 4 --input in.h5 --weights w.h5 \
    --report "h$np.json"
  check "hdf5 operands np $np exits 0" test "$rc" -eq 0
done
check "hdf5 operands: same report at np 1 and 3, verified" "$PYTHON" -c "
import json, subprocess, sys
assert json.load(open('h3.json'))['layers'][0]['verified'] is True
sys.exit(subprocess.call([sys.executable, 'same.py', 'h1.json', 'h3.json']))"

echo "-- triada-tcu: a sweep at 1 2 3 5 ranks, a single run at 1 and 3"
reports=()
for np in 1 2 3 5; do
  run_np "$np" "$TCU" --algo matmul --sweep --sizes 16,32,48 --ms 4,16 --latency 3 \
    --report "t$np.json"
  check "tcu sweep np $np exits 0" test "$rc" -eq 0
  reports+=("t$np.json")
done
check "tcu sweep reports identical at np 1 2 3 5" "$PYTHON" same.py "${reports[@]}"
run_np 1 "$TCU" --algo ge --size 31 --m 16 --latency 2 --report g1.json
run_np 3 "$TCU" --algo ge --size 31 --m 16 --latency 2 --report g3.json
check "tcu single run np 3 exits 0" test "$rc" -eq 0
check "tcu single run: same report at np 1 and 3" "$PYTHON" same.py g1.json g3.json

echo "-- errors: agreed by every rank, one line, the serial exit code"
for np in 1 3; do
  expect_error_np "$np" 1 "no such file" "$CONV" --layer 1,3,8,8,4,3,3,1,1 --input nosuch.h5
  expect_error_np "$np" 1 "needs .* available" "$CONV" --layer 1000,512,224,224,512,3,3,1,1
  # the first failing point in report order is the one reported, whichever rank ran it
  expect_error_np "$np" 2 "n = 17 must be a power" "$TCU" --algo dft --sweep --sizes 16,17,18 \
    --ms 16 --latency 1
done

summary
