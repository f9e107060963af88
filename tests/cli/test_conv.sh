#!/usr/bin/env bash
# End-to-end checks of triada-conv: one layer by both methods (report keys, verification,
# the closed-form lowered bytes, the implicit method's O(S^2) working memory); the first two
# AlexNet layers from the shipped network file; HDF5 --input/--weights; lower-precision cells
# report an error instead of failing; the verify budget; malformed network files and bad
# options giving one 'triada-conv: error:' line and exit code 2 (bad HDF5 input: 1);
# run_scripts/plot_conv.py --quick. In a sanitizer build (lib_check.sh: sanitized) the two
# AlexNet layers run on smaller inputs, and plot_conv.py is left to the Release build.
# Run by ctest (label cli); ends with "N passed, M failed".
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"
APP="$TRIADA_BIN/triada-conv"

in_scratch_dir conv-test

echo "-- one layer, both methods: exit 0, verified, report keys and closed forms"
if "$APP" --layer 1,3,32,32,16,3,3,1,1 --method both --report r.json >out.txt 2>err.txt; then
  pass
else
  fail "single layer run exited non-zero: $(cat err.txt)"
fi
if "$PYTHON" - <<'EOF'; then pass; else fail "single layer report"; fi
import json
r = json.load(open('r.json'))
assert r['schema'] == 'triada-conv-report/1'
assert len(r['layers']) == 1
L = r['layers'][0]
for k in ('name', 'N', 'C_I', 'H_I', 'W_I', 'C_O', 'H_F', 'W_F', 'stride', 'pad', 'dilation',
          'groups', 'H_O', 'W_O', 'macs', 'ifmap_bytes', 'lowered_bytes', 'extra_memory_ratio',
          'verified', 'check', 'explicit', 'implicit'):
    assert k in L, k
assert L['verified'] is True
assert L['H_O'] == 32 and L['W_O'] == 32
assert L['ifmap_bytes'] == 3 * 32 * 32 * 8
assert L['lowered_bytes'] == 32 * 32 * 9 * 3 * 8
assert abs(L['extra_memory_ratio'] - 9.0) < 1e-12
assert L['macs'] == 32 * 32 * 16 * 9 * 3
for m in ('explicit', 'implicit'):
    s = L[m]
    for k in ('calls', 'rows', 'cell_steps', 'cycles', 'tensor_time', 'lowering_time',
              'model_time', 'macs', 'macs_dense', 'useful_macs', 'utilisation',
              'effective_utilisation', 'energy_pj', 'lowered_bytes', 'padding_bytes',
              'peak_extra_bytes', 'verified', 'max_rel_error'):
        assert k in s, (m, k)
    assert s['verified'] is True and s['max_rel_error'] <= 1e-12
    assert 0 < s['utilisation'] <= 1 and s['macs_dense'] == s['rows'] * 16 * 16
    assert s['energy_pj'] > 0
assert L['explicit']['lowered_bytes'] == L['lowered_bytes']
assert L['implicit']['lowered_bytes'] == 0
assert 0 < L['implicit']['peak_extra_bytes'] <= 3 * 16 * 16 * 8
assert L['explicit']['peak_extra_bytes'] >= L['lowered_bytes']
assert L['implicit']['packed_taps'] == 3          # min(16 / 3, 3)
t = r['total']
for k in ('layers', 'macs', 'ifmap_bytes', 'lowered_bytes', 'extra_memory_ratio',
          'verified_layers', 'failed_layers', 'skipped_layers', 'explicit', 'implicit'):
    assert k in t, k
assert t['verified_layers'] == 1 and t['failed_layers'] == 0
assert t['explicit']['calls'] == L['explicit']['calls']
EOF
if grep -q "explicit" out.txt && grep -q "implicit" out.txt && grep -qE "(^| )ok [0-9]" out.txt &&
  ! grep -q "FAILED" out.txt && grep -q "^checked: 1 verified, 0 failed" out.txt; then
  pass; else fail "table: $(cat out.txt)"; fi

echo "-- the first two AlexNet layers from the shipped network file"
net=$TRIADA_SRC/data/networks/alexnet.csv
h1=55 h2=27  # the output sizes of conv1 and conv2
if sanitized; then
  # Under the sanitizers the two layers take most of a minute: conv1 and conv2 with their
  # filters, strides, padding and groups, on 35x35 and 7x7 inputs, conv2 with 16 channels,
  # both with 40 filters (20 per group: still more than one 16-wide tile). 0.4 s.
  sed -e 's/^conv1,227,227,11,11,3,96,/conv1,35,35,11,11,3,40,/' \
    -e 's/^conv2,27,27,5,5,96,256,/conv2,7,7,5,5,16,40,/' "$net" >alexnet.csv
  net=alexnet.csv h1=7 h2=7
fi
if "$APP" --network "$net" --max-layers 2 --report a.json >out.txt 2>err.txt; then pass; else
  fail "alexnet run exited non-zero: $(cat err.txt)"
fi
if "$PYTHON" - "$h1" "$h2" <<'EOF'; then pass; else fail "alexnet report"; fi
import json, sys
h1, h2 = map(int, sys.argv[1:])
r = json.load(open('a.json'))
assert [l['name'] for l in r['layers']] == ['conv1', 'conv2'], r['layers']
assert r['config']['layers_listed'] == 5
c1, c2 = r['layers']
assert c1['H_O'] == h1 and c1['lowered_bytes'] == h1 * h1 * 11 * 11 * 3 * 8
assert c2['groups'] == 2 and c2['H_O'] == h2
assert c1['verified'] is True
t = r['total']
assert t['lowered_bytes'] == c1['lowered_bytes'] + c2['lowered_bytes']
assert t['implicit']['peak_extra_bytes'] <= 3 * 16 * 16 * 8
EOF

echo "-- --verify-budget 0 skips the direct convolution and says so; --verify runs it"
"$APP" --layer 1,4,8,8,4,3,3,1,1 --verify-budget 0 --report s.json >out.txt 2>err.txt
if [ $? -eq 0 ] && grep -q "skipped" out.txt && "$PYTHON" -c "
import json; r = json.load(open('s.json')); L = r['layers'][0]
assert L['verified'] is None and L['check'].startswith('skipped'), L['check']
assert r['total']['skipped_layers'] == 1"; then pass; else fail "budget 0: $(cat out.txt err.txt)"; fi
if "$APP" --layer 1,4,8,8,4,3,3,1,1 --verify-budget 0 --verify >out.txt 2>err.txt &&
  grep -q "^checked: 1 verified, 0 failed" out.txt; then pass; else
  fail "--verify: $(cat out.txt err.txt)"; fi

echo "-- --batch overrides N; --method explicit runs one method"
if "$APP" --layer 1,5,9,9,7,3,3,2,1 --batch 3 --method explicit --mxu 4 --latency 5 \
  --report b.json >out.txt 2>err.txt && "$PYTHON" -c "
import json; r = json.load(open('b.json')); L = r['layers'][0]
assert L['N'] == 3 and 'implicit' not in L and L['verified'] is True
e = L['explicit']
assert e['tensor_time'] == e['rows'] * 4 + 5 * e['calls']"; then pass; else
  fail "--batch/--method: $(cat out.txt err.txt)"; fi

echo "-- lower-precision cells: the error is reported, the run does not fail"
if "$APP" --layer 1,8,10,10,8,3,3,1,1 --cell-mode fp32 --report p.json >out.txt 2>err.txt &&
  "$PYTHON" -c "
import json; r = json.load(open('p.json')); L = r['layers'][0]
assert L['verified'] is None
for m in ('explicit', 'implicit'):
    assert 1e-12 < L[m]['max_rel_error'] < 1e-5, L[m]['max_rel_error']
    assert L[m]['verified'] is None
# fp32 is the FP32-MXU: 7.97 x the fp16 unit's 2.0 pJ per step (M3XU paper, Table III)
assert r['config']['energy']['mac_pj'] == 15.94" && grep -q "error " out.txt; then pass; else
  fail "fp32 cells: $(cat out.txt err.txt)"; fi

echo "-- HDF5 --input (NCHW) and --weights (OIHW)"
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(3)
with h5py.File('in.h5', 'w') as f:
    f['x'] = rng.standard_normal((2, 3, 6, 7))
with h5py.File('zero.h5', 'w') as f:
    f['w'] = np.zeros((4, 3, 3, 3), dtype=np.float32)
with h5py.File('w.h5', 'w') as f:
    f['w'] = rng.integers(-3, 4, size=(4, 3, 3, 3)).astype(np.int32)
EOF
if "$APP" --layer 2,3,6,7,4,3,3,1,1 --input in.h5 --weights w.h5:/w --report h.json \
  >out.txt 2>err.txt && "$PYTHON" -c "
import json; r = json.load(open('h.json')); assert r['layers'][0]['verified'] is True"; then
  pass; else fail "hdf5 operands: $(cat out.txt err.txt)"; fi
if "$APP" --layer 2,3,6,7,4,3,3,1,1 --input in.h5 --weights zero.h5 --report z.json \
  >out.txt 2>err.txt && "$PYTHON" -c "
import json; L = json.load(open('z.json'))['layers'][0]
assert L['explicit']['macs'] == 0 and L['implicit']['macs'] == 0  # ESOP: zero weights
assert L['explicit']['max_rel_error'] == 0"; then pass; else
  fail "zero weights: $(cat out.txt err.txt)"; fi
expect_error 1 "shape 2x3x6x7, the layer needs 1x3x6x7" --layer 1,3,6,7,4,3,3,1,1 --input in.h5
expect_error 1 "no such file" --layer 1,3,6,7,4,3,3,1,1 --weights missing.h5

echo "-- per-axis stride, dilation, asymmetric pads, groups: --layer and the network file"
# Each layer as --layer and as a row of a network file: verified by both methods, H_O, W_O
# and MACs equal to the closed forms computed here, the per-axis keys as given, the uniform
# keys null where the values differ.
cat >axes.csv <<'EOF'
Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding,Dilation,Groups
a,11,9,3,2,6,9,2x1,1:0:2:1,1x2,3
b,10,13,3,3,4,6,1x3,0x2,2x1,2
c,7,12,2,4,5,5,3x2,3:0:0:4,1,1
d,8,8,3,3,4,4,2,1,1,1
EOF
axes_ok=1
i=0
for spec in 2,6,11,9,9,3,2,2x1,1:0:2:1,1x2,3 2,4,10,13,6,3,3,1x3,0x2,2x1,2 \
  2,5,7,12,5,2,4,3x2,3:0:0:4,1,1 2,4,8,8,4,3,3,2,1,1,1; do
  "$APP" --layer "$spec" --mxu 4 --verify --report "axes$i.json" >/dev/null 2>err.txt ||
    { axes_ok=0; echo "  --layer $spec: $(cat err.txt)"; }
  i=$((i + 1))
done
"$APP" --network axes.csv --batch 2 --mxu 4 --verify --report axes-net.json >/dev/null 2>err.txt ||
  { axes_ok=0; echo "  --network axes.csv: $(cat err.txt)"; }
if [ $axes_ok = 1 ] && "$PYTHON" - <<'EOF'; then pass; else fail "per-axis layers"; fi
import json
# (N, C_I, H_I, W_I, C_O, H_F, W_F, (s_h, s_w), (top, left, bottom, right), (d_h, d_w), g)
layers = [(2, 6, 11, 9, 9, 3, 2, (2, 1), (1, 0, 2, 1), (1, 2), 3),
          (2, 4, 10, 13, 6, 3, 3, (1, 3), (0, 2, 0, 2), (2, 1), 2),
          (2, 5, 7, 12, 5, 2, 4, (3, 2), (3, 0, 0, 4), (1, 1), 1),
          (2, 4, 8, 8, 4, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), 1)]
net = json.load(open('axes-net.json'))['layers']
for i, (n, ci, hi, wi, co, hf, wf, s, p, d, g) in enumerate(layers):
    ho = (hi + p[0] + p[2] - d[0] * (hf - 1) - 1) // s[0] + 1
    wo = (wi + p[1] + p[3] - d[1] * (wf - 1) - 1) // s[1] + 1
    L = json.load(open(f'axes{i}.json'))['layers'][0]
    assert (L['H_O'], L['W_O']) == (ho, wo), (i, L['H_O'], L['W_O'], ho, wo)
    assert L['macs'] == n * ho * wo * co * hf * wf * ci // g, i
    assert L['verified'] is True, i
    for m in ('explicit', 'implicit'):
        assert L[m]['useful_macs'] == L['macs'] and L[m]['verified'] is True, (i, m)
    got = [L[k] for k in ('stride_h', 'stride_w', 'pad_top', 'pad_left', 'pad_bottom',
                          'pad_right', 'dilation_h', 'dilation_w', 'groups')]
    assert got == [*s, *p, *d, g], (i, got)
    for key, v in (('stride', s), ('pad', p), ('dilation', d)):
        assert L[key] == (v[0] if len(set(v)) == 1 else None), (i, key, L[key])
    same = {k: v for k, v in L.items() if k not in ('index', 'name', 'explicit', 'implicit',
                                                    'direct_seconds')}
    assert same == {k: net[i][k] for k in same}, i
assert net[0]['shape'] == '2x6x11x9 -> 9 3x2 s2x1 p1:0:2:1 d1x2 g3', net[0]['shape']
assert net[1]['shape'] == '2x4x10x13 -> 6 3x3 s1x3 p0x2 d2x1 g2', net[1]['shape']
assert net[3]['shape'] == '2x4x8x8 -> 4 3x3 s2 p1', net[3]['shape']
EOF
expect_error 2 "--layer: pad: '1:0:2' is not of the form P, PHxPW or T:L:B:R" \
  --layer 1,3,8,8,4,3,3,1,1:0:2
expect_error 2 "--layer: stride: '2x1x1' is not of the form S or SHxSW" \
  --layer 1,3,8,8,4,3,3,2x1x1,1
printf 'Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding,Dilation\nc,8,8,3,3,4,4,1,1,x2\n' >bad5.csv
expect_error 2 "bad5.csv:2: column 'Dilation': 'x2' is not of the form D or DHxDW" --network bad5.csv

echo "-- malformed network files: one error line naming file:line, exit 2"
cat >bad.csv <<'EOF'
# a comment
Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding
conv1,32,32,3,3,3,16,1,1
conv2,32,32,3,3,16
EOF
expect_error 2 "bad.csv:4: expected 9 columns (as the header), got 6" --network bad.csv
printf 'Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding\nc,8,8,3,3,three,4,1,1\n' >bad2.csv
expect_error 2 "bad2.csv:2: column 'Channels': 'three' is not an integer" --network bad2.csv
printf 'Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding\nc,8,8,3,3,4,0,1,1\n' >bad3.csv
expect_error 2 "bad3.csv:2: column 'Num Filter': must be positive" --network bad3.csv
printf 'Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding\nc,4,4,9,9,4,4,1,1\n' >bad4.csv
expect_error 2 "bad4.csv:2 (c): filter 9x9 is larger than the padded input 6x6" --network bad4.csv
expect_error 2 "cannot open" --network nothere.csv

echo "-- bad options: one error line, exit 2"
expect_error 2 "give --network" --method both
expect_error 2 "exclude each other" --network bad.csv --layer 1,3,8,8,4,3,3,1,1
expect_error 2 "--method" --layer 1,3,8,8,4,3,3,1,1 --method sideways
expect_error 2 "--mxu" --layer 1,3,8,8,4,3,3,1,1 --mxu 0
expect_error 2 "--latency" --layer 1,3,8,8,4,3,3,1,1 --latency -1
expect_error 2 "cell mode" --layer 1,3,8,8,4,3,3,1,1 --cell-mode fp8
expect_error 2 "--layer" --layer 1,3,8,8,4,3,3,1
expect_error 2 "larger than the padded input" --layer 1,3,2,2,4,5,5,1,0
expect_error 2 "go with --layer" --network "$TRIADA_SRC/data/networks/vgg16.csv" --input in.h5
expect_error 2 "unrecognised option\|unrecognized option" --layer 1,3,8,8,4,3,3,1,1 --bogus
L=(--layer 1,3,8,8,4,3,3,1,1)
expect_error 2 "'--mx'" "${L[@]}" --mx 4  # abbreviations are not guessed
expect_error 2 "unexpected argument 'extra'" "${L[@]}" extra
expect_error 2 "unexpected argument 'yes'" "${L[@]}" --verify yes
expect_error 2 "--mxu: expected a positive integer, got '4 4'" "${L[@]}" --mxu "4 4"
expect_error 2 "--seed: .*'-1'" "${L[@]}" --seed -1
for v in inf nan " 5" 0x10 1e999; do
  expect_error 2 "--verify-budget" "${L[@]}" --verify-budget "$v"
done
mkdir -p meshdir
printf '[energy]\nmac_pj = -1\n' >negative.ini
expect_error 2 "meshdir: mesh config: is a directory" "${L[@]}" --mesh meshdir
expect_error 2 "negative.ini: \[energy\] mac_pj: expected 0 or a number in \[1e-6, 1e9\] (pJ)" "${L[@]}" --mesh negative.ini
expect_error 2 "--cell-mode: cell mode: unknown '\\\\x1b\[31m'" "${L[@]}" --cell-mode $'\e[31m'

echo "-- --help documents every option"
echo "-- --executor reference and fused: the same per-method counters, recorded in config"
if for e in reference fused; do
  "$APP" --layer 2,6,7,7,8,3,3,2,1,1,2 --method both --mxu 4 --latency 2 --executor $e \
    --report "e-$e.json" >/dev/null 2>err.txt || exit 1
done && "$PYTHON" -c "
import json
a, b = (json.load(open('e-%s.json' % e)) for e in ('reference', 'fused'))
assert a['config']['executor'] == 'reference' and b['config']['executor'] == 'fused'
for m in ('explicit', 'implicit'):  # every figure but the wall time
    x, y = ({k: v for k, v in r['layers'][0][m].items() if k != 'wall_seconds'} for r in (a, b))
    assert x == y and x['macs'] > 0 and x['verified'] is True, (m, x, y)
"; then pass; else fail "--executor reference vs fused: $(cat err.txt)"; fi
expect_error 2 "executor" --layer 1,3,8,8,4,3,3,1,1 --executor fast

if "$APP" --help >help.txt 2>err.txt; then pass; else fail "--help exited non-zero"; fi
missing=""
for opt in --network --layer --method --mxu --batch --latency --cell-mode --mesh --report --csv \
  --input --weights --seed --verify --verify-budget --max-layers --executor; do
  grep -q -- "$opt" help.txt || missing="$missing $opt"
done
if [ -z "$missing" ]; then pass; else fail "--help lacks:$missing"; fi

# Not under the sanitizers: the script is Python, and its runs (AlexNet's first two layers
# again, stride 1, 2, 4 layers) are the cases above at full size, which would double the time.
if sanitized; then
  echo "SKIPPED: plot_conv.py in a sanitizer build (the Release build's tests run it)"
  summary
  exit
fi
echo "-- run_scripts/plot_conv.py --quick writes both PNGs and the tables"
if "$PYTHON" "$TRIADA_SRC/run_scripts/plot_conv.py" --bin "$TRIADA_BIN" --src "$TRIADA_SRC" \
  --work runs --out img --quick >tables.md 2>err.txt; then pass; else
  fail "plot_conv.py: $(cat err.txt)"; fi
bad_png=""
for f in img/conv_memory.png img/conv_stride.png; do
  [ -s "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '211PNG' ] || bad_png="$bad_png $f"
done
if [ -z "$bad_png" ] && grep -q "| AlexNet | 2 |" tables.md && grep -q "Stride study" tables.md
then pass; else fail "plot_conv.py outputs:$bad_png $(cat tables.md)"; fi

summary
