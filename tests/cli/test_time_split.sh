#!/usr/bin/env bash
# Where a stage's time goes and how pivot planes travel (doc/scaling.md "Where the time goes"):
# --transport auto, broadcast and shared give the same bits and counters as np 1 at np 2,
# 3 and 5 (dedicated and co-located actuators, ESOP on and off, real and complex, a
# non-cubic odd shape, sparse data), checked against numpy's DCT-II, and the same MPI
# figures as each other; every report's split
# adds up (per stage, compute + pack + wait + idle means = the stage's time, each part's
# min <= mean <= max), --trace's batches file has every rank's pieces summing to each
# stage's time and its batches covering the stage's steps, and the time model is beside
# the measured times. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"
in_scratch_dir time-split

"$PYTHON" - <<'EOF2'
import h5py, numpy as np
rng = np.random.default_rng(11)
x = rng.standard_normal((13, 9, 7))
x[rng.random(x.shape) < 0.4] = 0.0   # sparse: ESOP skips
x[2, :, :] = 0.0                      # a zero plane
with h5py.File('x.h5', 'w') as f:
    f['x'] = x
    f['z'] = x + 1j * rng.standard_normal(x.shape)
EOF2

cat >check.py <<'EOF2'
import csv, json, sys
import h5py, numpy as np, scipy.fft

out, ref_out, report, batches, dset = sys.argv[1:6]
x = h5py.File('x.h5')[dset][()]
y = h5py.File(out)['y'][()]
want = scipy.fft.dctn(x.real, norm='ortho') + (1j * scipy.fft.dctn(x.imag, norm='ortho') if dset == 'z' else 0)
assert np.allclose(y, want, rtol=1e-12, atol=1e-12), np.abs(y - want).max()
ref = h5py.File(ref_out)['y'][()]
assert y.tobytes() == ref.tobytes(), 'bits differ from np 1'
r = json.load(open(report))
st = r['stage_time']
assert len(st) == 3 and len(r['stage_seconds']) == 3
for s, t in zip(st, r['stage_seconds']):
    assert s['seconds'] == t, (s['seconds'], t)
    parts = ('compute', 'pack', 'wait', 'idle')
    for p in parts:
        assert 0 <= s[p]['min'] <= s[p]['mean'] * (1 + 1e-12) + 1e-15, (p, s[p])
        assert s[p]['mean'] <= s[p]['max'] * (1 + 1e-12) + 1e-15, (p, s[p])
    total = sum(s[p]['mean'] for p in parts)
    assert abs(total - t) <= 1e-9 + 1e-9 * t, (total, t)
    assert s['brick_ranks'] == r['mesh']['brick_ranks'][0] * r['mesh']['brick_ranks'][1] * r['mesh']['brick_ranks'][2]
    assert s['model_seconds'] > 0
assert r['time_model']['seconds'] > 0 and len(r['time_model']['stages']) == 3
# The pieces: per (stage, rank) they sum to the stage's time; a brick rank's batches cover
# the stage's steps in order.
rows = list(csv.DictReader(open(batches)))
world = r['mesh']['world_size']
bricks = world - r['mesh']['actuator_ranks']
steps = r['steps']['per_stage']
for stage in range(3):
    for rank in range(world):
        mine = [w for w in rows if int(w['stage']) == stage and int(w['rank']) == rank]
        assert mine, (stage, rank)
        total = sum(float(w['seconds']) for w in mine)
        assert abs(total - r['stage_seconds'][stage]) <= 1e-9 + 1e-9 * total, (stage, rank, total)
        for w in mine:
            parts = [float(w[p]) for p in ('compute', 'pack', 'wait', 'idle')]
            assert abs(sum(parts) - float(w['seconds'])) <= 1e-12 + 1e-9 * float(w['seconds'])
            assert min(parts[1:]) >= 0, w
        b = [w for w in mine if w['piece'] == 'batch']
        if rank < bricks:
            first = [int(w['first_step']) for w in b]
            assert first == sorted(first) and sum(int(w['steps']) for w in b) == steps[stage], (stage, rank, b)
        assert sum(w['piece'] == 'idle' for w in mine) == 1
print('ok')
EOF2

counters() {  # the counters and steps of a report (the same at any rank count), as JSON
  "$PYTHON" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps([r["counters"], r["steps"]], sort_keys=True))' "$1"
}
mpi_figures() {  # the MPI figures (the same for every transport at one layout)
  "$PYTHON" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["mpi"], sort_keys=True))' "$1"
}

for dset in x z; do
  for esop in on off; do
    run_np 1 "$APP" --input "x.h5:/$dset" --output ref.h5 --transform dct --esop "$esop" --force --quiet --report ref.json
    check "np 1 $dset esop $esop runs" test "$rc" -eq 0
    want=$(counters ref.json)
    for np in 2 3 5; do
      for layout in auto colocated; do
        [[ $np -lt 5 && $layout == auto ]] && continue  # below 4 ranks both are colocated
        mpi_want=""
        for tr in auto broadcast shared; do
          tag="$dset esop $esop np $np $layout --transport $tr"
          run_np "$np" "$APP" --input "x.h5:/$dset" --output y.h5 --transform dct --esop "$esop" \
            --ranks.actuators "$layout" --transport "$tr" --force --quiet --report r.json --trace t.csv
          check "$tag runs" test "$rc" -eq 0
          check "$tag: bits, report's split, pieces, model" "$PYTHON" check.py y.h5 ref.h5 r.json t.batches.csv "$dset"
          check "$tag: counters as np 1" test "$(counters r.json)" == "$want"
          [[ -n $mpi_want ]] || mpi_want=$(mpi_figures r.json)
          check "$tag: MPI figures as --transport auto" test "$(mpi_figures r.json)" == "$mpi_want"
        done
      done
    done
  done
done

set +e  # run_np leaves errexit on; the refusals below must fail
expect_error 2 "--transport: expected auto, broadcast or shared" --input x.h5 --output y.h5 \
  --transform dct --transport pigeon --force
mkdir stdout_trace
check "a --trace to stdout writes no batches file" bash -c \
  "cd stdout_trace && '$APP' --input ../x.h5:/x --output y.h5 --transform dct --quiet --trace - >/dev/null && [ \"\$(ls)\" = y.h5 ]"

summary
