#!/usr/bin/env bash
# --norm forward (numpy/scipy's norm="forward": the forward transform scaled by 1/N, 1/2N
# for scipy's DCT-II, the inverse unscaled) for every built-in transform, forward and
# inverse, on non-cubic odd shapes, against numpy/scipy (fftn, dctn, the DHT as
# Re(fft) - Im(fft) per axis, scipy.linalg.hadamard), and the round trip
# inverse(forward(x)) == x. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir norm-forward

cat >oracle.py <<'EOF'
import sys
import h5py, numpy as np, scipy.fft, scipy.linalg

# numpy's ifft in norm N scales as its fft in SWAP[N]: the DHT's inverse is its forward
# with the inverse's scale.
SWAP = {'forward': 'backward', 'backward': 'forward', 'ortho': 'ortho'}

def dht(x, norm, inverse):  # separable: a 1D DHT per axis, cas = Re(fft) - Im(fft) on reals
    for a in range(3):
        f = np.fft.fft(x, axis=a, norm=SWAP[norm] if inverse else norm)
        x = f.real - f.imag
    return x

def wht(x, norm, inverse):
    scale = {'forward': 1, 'backward': 0, 'ortho': 0.5}[norm]
    for a in range(3):
        n = x.shape[a]
        h = scipy.linalg.hadamard(n) / float(n) ** (scale if not inverse else 1 - scale)
        x = np.moveaxis(np.tensordot(x, h, axes=([a], [0])), -1, a)
    return x

def want(kind, x, norm, inverse):
    if kind == 'dft':
        return (np.fft.ifftn if inverse else np.fft.fftn)(x, norm=norm)
    if kind == 'dct':
        return (scipy.fft.idctn if inverse else scipy.fft.dctn)(x, type=2, norm=norm)
    return (dht if kind == 'dht' else wht)(x, norm, inverse)

def load(path, dset):
    with h5py.File(path, 'r') as f:
        return f[dset][()], dict(f[dset].attrs)

def check_run(kind, direction, inp, out):
    x, _ = load(inp, '/x')
    y, attrs = load(out, '/y')
    inverse = direction == 'inverse'
    ref = want(kind, x, 'forward', inverse)
    assert y.shape == ref.shape, (y.shape, ref.shape)
    err = np.max(np.abs(y - ref)) / np.max(np.abs(ref))
    assert err <= 1e-12, f'max |diff| / max |ref| = {err:.3e}'
    # The scale is really numpy's forward one: not the backward or ortho result.
    for other in ('backward', 'ortho'):
        o = want(kind, x, other, inverse)
        assert np.max(np.abs(y - o)) > 1e-6 * np.max(np.abs(o)), f'equals norm={other}'
    assert attrs['norm'] == 'forward', attrs['norm']
    assert attrs['direction'] == direction, attrs['direction']

def check_round_trip(inp, back):
    x, _ = load(inp, '/x')
    b, _ = load(back, '/y')
    err = np.max(np.abs(b - x)) / np.max(np.abs(x))
    assert err <= 1e-12, f'max |diff| / max |x| = {err:.3e}'

# One line per check of checks.txt: "run KIND DIRECTION IN OUT" or "trip IN BACK".
for line in open('checks.txt'):
    words = line.split()
    try:
        (check_run if words[0] == 'run' else check_round_trip)(*words[1:])
        print('ok   ' + line.strip())
    except Exception as e:
        print(f'FAIL {line.strip()}: {e!r}')
EOF

"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(13)
with h5py.File('x_odd.h5', 'w') as f:  # non-cubic, odd extents (dft, dct, dht)
    f['x'] = rng.standard_normal((7, 5, 3))
with h5py.File('x_pow2.h5', 'w') as f:  # wht: powers of two, non-cubic
    f['x'] = rng.standard_normal((8, 4, 2))
with h5py.File('x_complex.h5', 'w') as f:  # the dft on complex input
    f['x'] = rng.standard_normal((7, 5, 3)) + 1j * rng.standard_normal((7, 5, 3))
EOF

# transform KIND DIRECTION INPUT OUTPUT: one run, its oracle check queued in checks.txt.
transform() {
  local kind=$1 direction=$2 in=$3 out=$4 flags=()
  [[ $direction == inverse ]] && flags=(--inverse)
  if ! timeout 60 "$APP" -q --input "$in" --output "$out" --transform "$kind" --norm forward \
    "${flags[@]}" >run.out 2>run.err; then
    fail "$kind $direction $in: $(cat run.err)"
    return 1
  fi
  echo "run $kind $direction $in $out" >>checks.txt
}

# round_trip KIND INPUT FORWARD-OUTPUT: the inverse of the forward result is the input.
round_trip() {
  local kind=$1 in=$2 fwd=$3
  if timeout 60 "$APP" -q --input "$fwd" --output "back_$fwd" --transform "$kind" \
    --norm forward --inverse >run.out 2>run.err; then
    echo "trip $in back_$fwd" >>checks.txt
  else
    fail "$kind round trip: $(cat run.err)"
  fi
}

: >checks.txt
for kind in dft dct dht wht; do
  in=x_odd.h5
  [[ $kind == wht ]] && in=x_pow2.h5
  transform "$kind" forward "$in" "f_$kind.h5" && round_trip "$kind" "$in" "f_$kind.h5"
  transform "$kind" inverse "$in" "i_$kind.h5" || true
done
transform dft forward x_complex.h5 f_complex.h5 && round_trip dft x_complex.h5 f_complex.h5

echo "-- every result against numpy/scipy norm=\"forward\", and the round trips"
"$PYTHON" oracle.py >oracle.out 2>&1 || true
cat oracle.out
[[ $(grep -c '^ok   ' oracle.out) -eq $(wc -l <checks.txt) ]] || fail "oracle checks: see above"
passed=$((passed + $(grep -c '^ok   ' oracle.out || true)))
failed=$((failed + $(grep -c '^FAIL ' oracle.out || true)))

summary
