#!/usr/bin/env bash
# triada-tcu's inputs and parameters (doc/mxu.md "The planar MXU and the TCU algorithms"): dft,
# stencil, intmul, karatsuba and polyeval read their inputs from HDF5 and spmm takes any
# real values, each result checked against numpy / Python integers here (the report's
# result sample, not the program's own check); --k, --kernel, --points and --product reach
# the run and its bound; every bad value or file is one 'triada-tcu: error:' line naming
# the option or the dataset, exit 2 (option) or 1 (file).
# Run by ctest (label cli); ends with "N passed, M failed".
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-tcu"

in_scratch_dir tcu-inputs

# The inputs, and what numpy and Python integers say the results are.
"$PYTHON" - <<'EOF' || exit 1
import h5py, json, numpy as np
rng = np.random.default_rng(14)
want = {}
with h5py.File('x.h5', 'w') as f:  # 64 = 4^3 points for m = 16; a real and a complex vector
    x = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    f['x'] = x
    f['real'] = rng.integers(-9, 10, 16).astype(np.int16)
    f['bad'] = np.ones(48)
    pairs = lambda y: [[z.real, z.imag] for z in y[:8]]
    want['dft'] = pairs(np.fft.fft(x))
    want['dft_real'] = pairs(np.fft.fft(f['real'][()].astype(float)))
with h5py.File('st.h5', 'w') as f:  # 12 x 12, an asymmetric kernel with mixed signs, k = 3
    A = rng.uniform(-1, 1, (12, 12))
    f['A'] = A
    f['rect'] = np.ones((4, 5))
    w = np.array([[.1, .25, 0], [.25, -1, .3], [0, .25, -.05]])  # rows: offset -1, 0, 1 in i
    g = np.pad(A, 3)  # whole-plane definition: influence moves one cell per sweep
    for _ in range(3):
        h = np.zeros_like(g)
        for a in range(3):
            for b in range(3):
                h += w[a, b] * np.roll(np.roll(g, 1 - a, 0), 1 - b, 1)
        g = h
    want['stencil'] = g[3, 3:11].tolist()
with h5py.File('int.h5', 'w') as f:  # 32-bit digits, least significant first
    a, b = int(rng.integers(1, 2**62)) ** 17, int(rng.integers(1, 2**62)) ** 11 + 5
    digits = lambda v: [(v >> (32 * i)) & 0xffffffff for i in range((v.bit_length() + 31) // 32)]
    f['a'] = np.array(digits(a), np.uint32)
    f['b'] = np.array(digits(b), np.uint64)
    want['intmul'] = {'bits': max(a.bit_length(), b.bit_length()),
                      'product_bits': (a * b).bit_length(), 'low': (a * b) % 2**64}
with h5py.File('int_bad.h5', 'w') as f:
    f['a'] = np.array([1, 2**32], np.int64)
    f['b'] = np.array([3], np.uint8)
with h5py.File('int_frac.h5', 'w') as f:
    f['a'] = np.array([1.5])
    f['b'] = np.array([3])
with h5py.File('poly.h5', 'w') as f:  # 20 coefficients, 5 points
    c, p = rng.uniform(-1, 1, 20), rng.uniform(-1.2, 1.2, 5)
    f['coefficients'] = c
    f['points'] = p.reshape(5, 1)
    want['polyeval'] = [float(np.polynomial.polynomial.polyval(t, c)) for t in p]
    want['polyeval_mag'] = [float(np.polynomial.polynomial.polyval(abs(t), abs(c))) for t in p]
with h5py.File('poly_big.h5', 'w') as f:
    f['coefficients'] = np.ones(400)
    f['points'] = np.array([0.5, 1e3])
with h5py.File('sp.h5', 'w') as f:  # real values of both signs, some exact zeros
    a = rng.uniform(-2, 2, (40, 40)) * (rng.random((40, 40)) < 0.08)
    b = rng.uniform(-2, 2, (40, 40)) * (rng.random((40, 40)) < 0.08)
    f['A'], f['B'] = a, b
json.dump(want, open('want.json', 'w'))
EOF

# report NAME ARGS...: runs a single triada-tcu run writing NAME.json; passes if it exits 0
# and verifies itself.
report() {
  local name=$1
  shift
  if "$APP" "$@" --report "$name.json" >"$name.txt" 2>err.txt && grep -q "verified    yes" "$name.txt"; then
    pass
  else
    fail "$*: $(cat "$name.txt" err.txt)"
  fi
}
# agree NAME PYTHON-ASSERTIONS: r = the report, w = want.json.
agree() {
  if "$PYTHON" -c "
import json, math
r = json.load(open('$1.json')); w = json.load(open('want.json')); d = r['details']
$2
"; then pass; else fail "$1: report disagrees with the oracle"; fi
}

echo "-- dft: the vector of FILE[:/DSET] (default /x), complex or real, against numpy's FFT"
report dft --algo dft --input x.h5 --m 16 --latency 2
agree dft "
assert r['size'] == 64 and d['input'] == 'x.h5:/x', (r['size'], d['input'])
for (re, im), z in zip(d['result_head'], w['dft']):
    assert abs(complex(re, im) - complex(*z)) <= 1e-13 * 64, (re, im, z)"
report dftr --algo dft --input x.h5:/real --m 4 --latency 2
agree dftr "
assert r['size'] == 16
for (re, im), z in zip(d['result_head'], w['dft_real']):
    assert abs(complex(re, im) - complex(*z)) <= 1e-13 * 16 * 9, (re, im, z)"

echo "-- stencil: /A, --k and --kernel against direct iteration in numpy"
report st --algo stencil --input st.h5 --m 4 --latency 1 --k 3 --kernel 0.1,0.25,0,0.25,-1,0.3,0,0.25,-0.05
agree st "
assert r['size'] == 12 and d['k'] == 3 and d['kernel'][4] == -1, (r['size'], d['k'], d['kernel'])
assert all(abs(a - b) <= 1e-12 for a, b in zip(d['result_head'], w['stencil'])), d['result_head']
assert 'k = 3' in r['tcu']['bound_formula'], r['tcu']['bound_formula']"

echo "-- intmul and karatsuba: /a and /b as 32-bit digits, against Python integers"
for algo in intmul karatsuba; do
  report "$algo" --algo "$algo" --input int.h5 --m 16 --latency 3
  agree "$algo" "
assert r['size'] == w['intmul']['bits'] and d['bits'] == w['intmul']['bits'], (r['size'], w)
assert d['product_bits'] == w['intmul']['product_bits'] and d['product_low_word'] == w['intmul']['low']"
done

echo "-- polyeval: /coefficients and /points, against numpy's polyval; --points"
report poly --algo polyeval --input poly.h5 --m 4 --latency 1
agree poly "
assert r['size'] == 20 and d['points'] == 5, (r['size'], d['points'])
u = 2.0 ** -53  # both sides: n products, up to n + s multiplications for the powers
assert all(abs(a - b) <= 2 * (2 * 20 + 2 * 2 + 2) * u * g
           for a, b, g in zip(d['result_head'], w['polyeval'], w['polyeval_mag'])), d['result_head']
m, l = 4, 1
assert abs(r['tcu']['bound'] - (5 * 20 / 2 + 5 * 2 + 20 / m * l)) < 1e-9, r['tcu']['bound']"
report pts --algo polyeval --size 30 --points 3 --m 16 --latency 1
agree pts "assert d['points'] == 3 and len(d['result_head']) == 3 and 'p = 3' in r['tcu']['bound_formula']"

echo "-- strassen on real /A and /B: Strassen's own (normwise) bound, not the classical one"
# Uniform [0, 1) matrices of sides 16 and 32 (3 and 4 recursion levels at m 4; the
# entrywise bound failed on several of them) and ones whose rows of A and columns of B span
# 2^30: every run verifies itself (exit 0).
"$PYTHON" - <<'EOF' || exit 1
import h5py, numpy as np
for seed in range(48):
    rng = np.random.default_rng(seed)
    n = 16 if seed < 40 else 32
    a, b = rng.random((n, n)), rng.random((n, n))
    if seed >= 44:
        scale = 2.0 ** -np.floor(np.arange(n) * 30 / n)
        a, b = a * scale[:, None], b * scale[None, :]
    with h5py.File(f'ab{seed}.h5', 'w') as f:
        f['A'], f['B'] = a, b
EOF
bad=""
for seed in $(seq 0 47); do
  "$APP" --algo strassen --m 4 --latency 2 --input "ab$seed.h5" >out.txt 2>&1 ||
    bad+=" [ab$seed.h5: exit $?: $(grep -E 'verified|error' out.txt)]"
done
if [[ -z $bad ]]; then pass; else fail "strassen on real inputs:$bad"; fi

echo "-- spmm: real values of both signs from HDF5; both products reported"
report sp --algo spmm --input sp.h5 --m 4 --latency 1 --product both
agree sp "
assert r['size'] == 40 and d['product'] == 'fast'
ps = {p['product']: p for p in r['products']}
assert set(ps) == {'fast', 'classical'} and all(p['verified'] for p in ps.values()), ps
for p in ps.values():
    assert p['model_time']['total'] > 0 and p['bound'] == d['bounds'][p['product']], (p, d['bounds'])"
if grep -q "^  product     fast" sp.txt && grep -q "^  product     classical" sp.txt; then pass; else
  fail "--product both prints each product: $(cat sp.txt)"; fi
report apc --algo apsd --size 30 --m 16 --latency 2 --product classical
agree apc "assert d['product'] == 'classical' and 'w0 = 3/2' in r['tcu']['bound_formula'] and abs(r['tcu']['bound'] - d['bounds']['classical']) < 1e-6"

echo "-- sweeps take the parameters; the header states the bound they imply"
if "$APP" --algo spmm --sweep --sizes 20,40 --ms 4 --latency 1 --product classical \
  --report sw.json >sw.txt 2>err.txt && grep -q "w0 = 3/2 (classical product)" sw.txt &&
  "$PYTHON" -c "
import json; s = json.load(open('sw.json'))
assert s['product'] == 'classical' and abs(s['exponent_theorem'] - 1.0) < 1e-12, s['exponent_theorem']"; then
  pass; else fail "spmm sweep --product classical: $(cat sw.txt err.txt)"; fi

echo "-- bad values: exit 2 naming the option; bad files: exit 1 naming the dataset"
expect_error 2 "--k: applies to stencil only" --algo dft --size 16 --m 4 --latency 1 --k 2
expect_error 2 "--k" --algo stencil --size 16 --m 4 --latency 1 --k 0
expect_error 2 "--k 1000" --algo stencil --size 16 --m 16 --latency 1 --k 1000
expect_error 2 "--kernel" --algo stencil --size 16 --m 4 --latency 1 --kernel 1,2
expect_error 2 "--kernel" --algo stencil --size 16 --m 4 --latency 1 --kernel 1,1,1,1,inf,1,1,1,1
expect_error 2 "--points: applies to polyeval only" --algo ge --size 8 --m 4 --latency 1 --points 2
expect_error 2 "--points" --algo polyeval --input poly.h5 --m 4 --latency 1 --points 2
expect_error 2 "--product: applies to spmm and apsd only" --algo strassen --size 8 --m 4 --latency 1 --product fast
expect_error 2 "--product" --algo spmm --size 8 --m 4 --latency 1 --product quick
expect_error 2 "--product both" --algo apsd --sweep --latency 1 --product both
expect_error 2 "--input: empty" --algo dft --input "" --m 4 --latency 1
expect_error 1 "x.h5:/bad: the length 48 is not a power of sqrt(m) = 4" --algo dft --input x.h5:/bad --m 16 --latency 1
expect_error 1 "x.h5:/nope" --algo dft --input x.h5:/nope --m 16 --latency 1
expect_error 1 "st.h5:/rect: expected a non-empty square matrix" --algo stencil --input st.h5:/rect --m 4 --latency 1
expect_error 1 "int_bad.h5:/a: digit 1 is not an integer in \[0, 2^32)" --algo intmul --input int_bad.h5 --m 4 --latency 1
expect_error 1 "int_frac.h5:/a: digit 0" --algo karatsuba --input int_frac.h5 --m 4 --latency 1
expect_error 1 "poly_big.h5:/points: point 1" --algo polyeval --input poly_big.h5 --m 4 --latency 1
expect_error 2 "--size 21 does not match" --algo polyeval --input poly.h5 --size 21 --m 4 --latency 1

summary
