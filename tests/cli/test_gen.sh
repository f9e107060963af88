#!/usr/bin/env bash
# End-to-end checks of triada-gen: types, exact index values, sparsity statistics, exact
# zero-line counts, N:M structured sparsity (and a transform of it), rank-count
# independence, --report against numpy's count, and the error paths (one line, non-zero
# exit, no file; an existing output or report kept without --force). Run by ctest (label cli).
set -euo pipefail

: "${TRIADA_BIN:?set TRIADA_BIN to the build directory}"
MPIEXEC=${MPIEXEC:-mpiexec}
PYTHON=${PYTHON:-/usr/bin/python3}
GEN="$TRIADA_BIN/triada-gen"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/triada-gen-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
py() { "$PYTHON" -c "$@"; }

echo "-- element types map to the numpy dtypes h5py reports"
for t in float64 complex128 int32 float32 complex64; do
  dist=uniform
  [[ $t == int32 ]] && dist=int
  "$GEN" --output "t_$t.h5" --shape 3,4,5 --type "$t" --dist "$dist" >/dev/null
  py "
import h5py, sys
x = h5py.File('t_$t.h5', 'r')['/x']
assert x.shape == (3, 4, 5), x.shape
assert x.dtype.name == '$t', x.dtype
" || fail "--type $t"
done

echo "-- index values equal numpy arange, at a custom dataset path"
"$GEN" --output "idx.h5:/grp/t" --shape 4,5,6 --dist index >/dev/null
py "
import h5py, numpy as np
x = h5py.File('idx.h5', 'r')['/grp/t'][()]
assert np.array_equal(x, np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6))
" || fail "index values"

echo "-- attributes record the generator settings"
py "
import h5py
a = h5py.File('idx.h5', 'r')['/grp/t'].attrs
assert a['dist'] == 'index', a['dist']
assert a['type'] == 'float64'
assert list(a['shape']) == [4, 5, 6]
assert a['seed'] == 1 and a['seed'].shape == (), a['seed']  # a scalar
assert a['sparsity'] == 0.0
" || fail "attributes"

echo "-- sparsity fraction within 3 sigma of the request"
"$GEN" --output sp.h5 --shape 40,40,40 --sparsity 0.3 --seed 7 >/dev/null
py "
import h5py, numpy as np
x = h5py.File('sp.h5', 'r')['/x'][()]
n, p = x.size, 0.3
zeros = np.count_nonzero(x == 0)
sigma = (n * p * (1 - p)) ** 0.5
assert abs(zeros - n * p) <= 3 * sigma, (zeros, n * p, sigma)
" || fail "sparsity"

echo "-- zero-lines zeroes exactly round(F*N1*N2) lines along axis 3"
"$GEN" --output zl.h5 --shape 10,7,5 --zero-lines 0.25 --dist ones >/dev/null
py "
import h5py, numpy as np
x = h5py.File('zl.h5', 'r')['/x'][()]
zero_lines = np.count_nonzero(np.all(x == 0, axis=2))
assert zero_lines == round(0.25 * 10 * 7), zero_lines
assert np.count_nonzero(x) == (70 - zero_lines) * 5
" || fail "zero-lines"

echo "-- zero-planes zeroes exactly round(F*N) planes orthogonal to the axis"
"$GEN" --output zp.h5 --shape 6,8,5 --zero-planes 0.5 --plane-axis 2 --dist ones >/dev/null
py "
import h5py, numpy as np
x = h5py.File('zp.h5', 'r')['/x'][()]
assert np.count_nonzero(np.all(x == 0, axis=(0, 2))) == 4
assert np.count_nonzero(x) == 4 * 6 * 5
" || fail "zero-planes"

echo "-- the file content does not depend on the number of ranks"
args=(--shape 7,5,9 --type complex128 --dist normal --sparsity 0.2 --zero-lines 0.1 --seed 42)
"$GEN" --output np1.h5 "${args[@]}" >/dev/null
"$MPIEXEC" -n 3 --oversubscribe "$GEN" --output np3.h5 "${args[@]}" >np3.out
grep -q "7x5x9 complex128" np3.out || fail "summary line: $(cat np3.out)"
[[ $(wc -l <np3.out) -eq 1 ]] || fail "summary printed by more than one rank"
py "
import h5py, numpy as np
a = h5py.File('np1.h5', 'r')['/x'][()]
b = h5py.File('np3.h5', 'r')['/x'][()]
assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
" || fail "np=1 and np=3 differ"
nnz=$(py "import h5py, numpy as np; print(np.count_nonzero(h5py.File('np1.h5', 'r')['/x'][()]))")
grep -q " $nnz nonzeros" np3.out || fail "nonzero count in summary: $(cat np3.out), numpy says $nnz"

echo "-- --sparsity-pattern N:M: exactly N nonzeros in every group of M along the axis"
# nm_check.py FILE AXIS N M: every group of M consecutive elements along AXIS (from index 0;
# the last may be shorter, r elements, and keeps min(N, r)) holds exactly N nonzeros; along
# each other axis the groups of M are not all alike (the pattern is along AXIS only).
cat >nm_check.py <<'EOF'
import sys, h5py, numpy as np
path, axis, n, m = sys.argv[1], int(sys.argv[2]) - 1, int(sys.argv[3]), int(sys.argv[4])
with h5py.File(path, 'r') as f:
    x = f['/x'][()]
    a = dict(f['/x'].attrs)
assert a['sparsity_pattern'] == f'{n}:{m}', a['sparsity_pattern']
assert a['pattern_axis'] == axis + 1, a['pattern_axis']
def group_counts(t, ax):
    t = np.moveaxis(t != 0, ax, -1)
    return [(np.count_nonzero(t[..., s:s + m], axis=-1), min(m, t.shape[-1] - s))
            for s in range(0, t.shape[-1], m)]
for got, r in group_counts(x, axis):
    assert np.all(got == min(n, r)), (r, np.unique(got))
for other in {0, 1, 2} - {axis}:
    if x.shape[other] >= m and 0 < n < m:
        assert len(np.unique(group_counts(x, other)[0][0])) > 1, f'axis {other + 1} patterned'
EOF
"$GEN" --output nm.h5 --shape 6,7,11 --dist normal --sparsity-pattern 2:4 --seed 3 >nm.out
"$PYTHON" nm_check.py nm.h5 3 2 4 || fail "2:4 along axis 3 (the default)"
grep -q " $((6 * 7 * (2 + 2 + 2))) nonzeros" nm.out || fail "2:4 nonzero count: $(cat nm.out)"
# Axis 1 at np 3: the slabs (7, 7, 6 planes) cut groups of 8 in two; the file is np 1's.
args=(--shape 20,5,9 --type complex64 --dist uniform --sparsity-pattern 3:8 --pattern-axis 1)
"$GEN" --output nm1.h5 "${args[@]}" --seed 9 >/dev/null
"$MPIEXEC" -n 3 --oversubscribe "$GEN" --output nm3.h5 "${args[@]}" --seed 9 >/dev/null
"$PYTHON" nm_check.py nm1.h5 1 3 8 || fail "3:8 along axis 1"
py "
import h5py
a = h5py.File('nm1.h5', 'r')['/x'][()]
b = h5py.File('nm3.h5', 'r')['/x'][()]
assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
" || fail "3:8 pattern: np=1 and np=3 differ"
"$GEN" --output nm_s1.h5 --shape 4,4,16 --dist ones --sparsity-pattern 1:2 --pattern-axis 3 \
  --seed 1 >/dev/null
"$GEN" --output nm_s2.h5 --shape 4,4,16 --dist ones --sparsity-pattern 1:2 --seed 2 >/dev/null
"$GEN" --output nm_s1b.h5 --shape 4,4,16 --dist ones --sparsity-pattern 1:2 --seed 1 >/dev/null
"$PYTHON" nm_check.py nm_s2.h5 3 1 2 || fail "1:2 with --dist ones"
py "
import h5py, numpy as np
x1, x2, x1b = (h5py.File(p, 'r')['/x'][()] for p in ('nm_s1.h5', 'nm_s2.h5', 'nm_s1b.h5'))
assert np.array_equal(x1, x1b), 'same seed, different positions'
assert not np.array_equal(x1, x2), 'another seed, the same positions'
" || fail "--seed decides the pattern's positions"
# M larger than the axis: one short group per line keeps min(N, extent).
"$GEN" --output nm_big.h5 --shape 3,3,5 --sparsity-pattern 2:16 >/dev/null
"$PYTHON" nm_check.py nm_big.h5 3 2 16 || fail "2:16 on an axis of 5"

# The DFT's coefficients are never 0, so the first stage's MACs are nnz(x) N3 exactly.
echo "-- the DFT of a 2:4 tensor equals numpy's; its first stage skips the zeros (ESOP)"
if "$TRIADA_BIN/triada-transform" -q --input nm.h5 --output nm_dft.h5 --transform dft \
  --stage-order 312 --report nm_dft.json; then
  py "
import json, h5py, numpy as np
x = h5py.File('nm.h5', 'r')['/x'][()]
y = h5py.File('nm_dft.h5', 'r')['/y'][()]
ref = np.fft.fftn(x, norm='ortho')
assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref)), np.max(np.abs(y - ref))
c = json.load(open('nm_dft.json'))['counters']
first, dense = c['per_stage'][0], c['dense_per_stage'][0]
assert first['axis'] == 3, first
assert first['macs'] == np.count_nonzero(x) * x.shape[2], (first['macs'], np.count_nonzero(x))
assert first['macs'] == dense['macs'] * 6 // 11, (first['macs'], dense['macs'])
" || fail "dft of the 2:4 tensor"
else
  fail "triada-transform on nm.h5"
fi

echo "-- a bad --shape: one line on stderr, non-zero exit, no file"
msg="triada-gen: error: --shape: expected three positive integers N1,N2,N3, got '4,0'"
if "$GEN" --output bad.h5 --shape 4,0 >out.txt 2>err.txt; then fail "--shape 4,0 accepted"; fi
[[ $(cat err.txt) == "$msg" ]] || fail "expected exactly one line '$msg', got: $(cat err.txt)"
[[ ! -e bad.h5 ]] || fail "bad.h5 written"
# Under mpirun every rank fails together; only rank 0 prints (mpirun adds its own notes).
if "$MPIEXEC" -n 3 --oversubscribe "$GEN" --output bad.h5 --shape 4,0 >out.txt 2>err.txt; then
  fail "--shape 4,0 accepted at np=3"
fi
[[ $(grep -c '^triada-gen' err.txt) -eq 1 ]] || fail "expected one error line at np=3: $(cat err.txt)"
grep -qxF "$msg" err.txt || fail "message at np=3: $(cat err.txt)"
[[ ! -e bad.h5 ]] || fail "bad.h5 written at np=3"
"$GEN" --output bad.h5 --shape 2,2,2 --bogus >/dev/null 2>err.txt && fail "unknown option accepted"
grep -q "bogus" err.txt || fail "unknown option message: $(cat err.txt)"
[[ ! -e bad.h5 ]] || fail "bad.h5 written after unknown option"

echo "-- an existing output is kept without --force, replaced with it"
cp idx.h5 keep.h5
before=$(md5sum <keep.h5)
if "$GEN" --output keep.h5 --shape 2,2,2 >/dev/null 2>err.txt; then fail "overwrote without --force"; fi
grep -q "keep.h5: exists (use --force to overwrite)" err.txt || fail "message: $(cat err.txt)"
[[ $(md5sum <keep.h5) == "$before" ]] || fail "existing output changed"
"$GEN" --output keep.h5 --shape 2,2,2 --force >/dev/null
py "
import h5py
assert h5py.File('keep.h5', 'r')['/x'].shape == (2, 2, 2)
" || fail "--force did not replace"

echo "-- strict options: exit code 2, one line naming the option, no file touched"
# strict ARGS... NEEDLE: the run fails with exit code 2 and exactly one error line that
# contains NEEDLE; keep.h5 (the existing output) is unchanged and no bad.h5 appears.
strict() {
  local needle=${*: -1} rc=0
  before=$(md5sum <keep.h5)
  "$GEN" "${@:1:$#-1}" >out.txt 2>err.txt || rc=$?
  [[ $rc -eq 2 ]] || fail "'${*:1:$#-1}': exit $rc, expected 2: $(cat err.txt)"
  [[ $(wc -l <err.txt) -eq 1 ]] || fail "'${*:1:$#-1}': expected one line: $(cat err.txt)"
  grep -qF "triada-gen: error: " err.txt || fail "'${*:1:$#-1}': no error prefix: $(cat err.txt)"
  grep -qF -- "$needle" err.txt || fail "'${*:1:$#-1}': message lacks '$needle': $(cat err.txt)"
  ! LC_ALL=C grep -q '[^[:print:]]' err.txt || fail "'${*:1:$#-1}': raw bytes: $(cat -v err.txt)"
  [[ $(md5sum <keep.h5) == "$before" && ! -e bad.h5 ]] || fail "'${*:1:$#-1}' touched a file"
}
strict --output keep.h5 --shape 2,2,2 --for "'--for'"  # was taken as --force: overwrote
strict --output keep.h5 --shape 2,2,2 --force yes "unexpected argument 'yes'"
strict --output bad.h5 --shape 2,2,2 --sha 2,2,2 "'--sha'"
strict --output bad.h5 --shape 2,2,2 4 "unexpected argument '4'"
strict --output bad.h5 --shape "2 2,2,2" "--shape"
strict --output bad.h5 --shape 2,2,2, "--shape"
strict --output bad.h5 --shape 99999999999999999999,1,1 "--shape"
strict --output bad.h5 --shape 2,2,2 --seed -1 "--seed: expected an integer in [0, 2^63), got '-1'"
strict --output bad.h5 --shape 2,2,2 --sparsity " 0.5" "--sparsity"
strict --output bad.h5 --shape 2,2,2 --sparsity 0x1p-1 "--sparsity"
strict --output bad.h5 --shape 2,2,2 --zero-lines nan "--zero-lines"
strict --output bad.h5 --shape 2,2,2 --plane-axis " 1" "--plane-axis"
strict --output bad.h5 --shape 2,2,2 --dist $'\e[31m' "--dist: expected uniform"
strict --output bad.h5 --shape 2,2,2 --sparsity-pattern 5:4 "--sparsity-pattern: N must not exceed M"
strict --output bad.h5 --shape 2,2,2 --sparsity-pattern 2:0 "--sparsity-pattern: M must be at least 1"
for bad in 2-4 2: :4 a:b 2:4:8 " 2:4" -1:4 2.0:4; do
  strict --output bad.h5 --shape 2,2,2 --sparsity-pattern "$bad" "--sparsity-pattern: expected N:M"
done
strict --output bad.h5 --shape 2,2,2 --sparsity-pattern 2:4 --pattern-axis 4 \
  "--pattern-axis: expected 1, 2 or 3, got '4'"
strict --output bad.h5 --shape 2,2,2 --pattern-axis 2 "--pattern-axis: only used with"
strict --output bad.h5 --shape 2,2,2 --report "" "--report"

echo "-- --report: settings, elements and nonzeros as numpy counts them, at np 1 and 2"
for np_ in 1 2; do
  "$MPIEXEC" -n $np_ --oversubscribe "$GEN" --output rep$np_.h5 --shape 9,7,5 --sparsity 0.4 \
    --zero-planes 0.3 --plane-axis 2 --seed 11 --report rep$np_.json >/dev/null
  py "
import json, h5py, numpy as np
x = h5py.File('rep$np_.h5', 'r')['/x'][()]
r = json.load(open('rep$np_.json'))
assert r['schema'] == 'triada-gen-report/1' and r['app'] == 'triada-gen', r
assert r['shape'] == [9, 7, 5] and r['seed'] == 11 and r['plane_axis'] == 2, r
assert r['sparsity'] == 0.4 and r['zero_planes'] == 0.3 and r['dist'] == 'uniform', r
assert r['elements'] == x.size and r['nonzeros'] == np.count_nonzero(x), (r, np.count_nonzero(x))
assert r['zero_fraction'] == (x.size - np.count_nonzero(x)) / x.size, r
assert r['output'] == 'rep$np_.h5:/x' and r['provenance']['ranks'] == $np_, r
" || fail "--report at np $np_"
done
py "
import json
a, b = (json.load(open(f'rep{k}.json')) for k in (1, 2))
for r in (a, b):
    del r['output'], r['provenance']
assert a == b, (a, b)
" || fail "the report depends on the rank count"
echo "-- --report: an existing report is kept without --force; the output as report is refused"
before=$(md5sum <rep1.json)
if "$GEN" --output rep3.h5 --shape 2,2,2 --report rep1.json >/dev/null 2>err.txt; then
  fail "--report overwrote without --force"
fi
grep -qxF "triada-gen: error: rep1.json: exists (use --force to overwrite)" err.txt || fail "$(cat err.txt)"
[[ $(md5sum <rep1.json) == "$before" && ! -e rep3.h5 ]] || fail "a refused --report touched a file"
if "$GEN" --output rep3.h5 --shape 2,2,2 --report rep3.h5 >/dev/null 2>err.txt; then
  fail "--report as --output accepted"
fi
grep -qF "rep3.h5: --report is the same file as --output" err.txt || fail "$(cat err.txt)"
[[ ! -e rep3.h5 ]] || fail "rep3.h5 written"
"$GEN" --output rep1.h5 --shape 2,2,2 --report rep1.json --force >/dev/null
py "
import json
assert json.load(open('rep1.json'))['elements'] == 8
" || fail "--force did not replace the report"

echo "-- no temporary files left behind"
leftovers=$(find . -name '.*tmp*' -o -name '.triada-probe*')
[[ -z $leftovers ]] || fail "left behind: $leftovers"

echo "-- --help documents every option"
help=$("$GEN" --help)
for opt in --output --shape --type --dist --sparsity --zero-lines --zero-planes --plane-axis \
  --sparsity-pattern --pattern-axis --seed --report --force; do
  grep -q -- "$opt" <<<"$help" || fail "--help lacks $opt"
done

echo "PASS"
