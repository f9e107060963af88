#!/usr/bin/env bash
# triada-conv on SCALE-Sim's topology files as they are: its convolution format (IFMAP
# already padded, trailing commas, an extra trailing column, a blank row and a row of commas)
# and its GEMM format (Layer, M, N, K) give the same counters and outputs as the same layers
# in our format (the JSON reports' method objects compared); the --csv report checked with
# Python's csv module against the JSON report; --csv's output rules; malformed SCALE-Sim
# files giving one 'triada-conv: error:' line naming file:line. Small layers (sanitizer-safe).
# Run by ctest (label cli); ends with "N passed, M failed".
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-conv"

in_scratch_dir scalesim-test

# same_methods A.json B.json: the same layers (names, shapes) with equal method objects,
# wall_seconds aside: every counter and the error against the direct convolution (the same
# random operands, so equal outputs give an equal error).
same_methods() {
  "$PYTHON" - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(f))['layers'] for f in sys.argv[1:])
assert len(a) == len(b) and len(a) > 0, (len(a), len(b))
for x, y in zip(a, b):
    assert x['name'] == y['name'] and x['shape'] == y['shape'], (x['shape'], y['shape'])
    assert x['verified'] is True and y['verified'] is True
    for m in ('explicit', 'implicit'):
        p, q = dict(x[m]), dict(y[m])
        p.pop('wall_seconds'), q.pop('wall_seconds')
        assert p == q, (x['name'], m, {k: (p[k], q.get(k)) for k in p if p[k] != q.get(k)})
PY
}

echo "-- SCALE-Sim's convolution format against the same layers in ours (padded IFMAP, pad 0)"
# Header as SCALE-Sim writes it (spaces, trailing comma) with an extra trailing column.
cat >ss_conv.csv <<'CSV'
Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides, Sparsity,
Conv1, 11, 11, 3, 3, 3, 8, 2, 1:4,

,,,,,,,,,
CB2a, 8, 9, 3, 3, 5, 6, 1,,
FC, 1, 1, 1, 1, 12, 7, 1,,
CSV
cat >ours_conv.csv <<'CSV'
Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding
Conv1,11,11,3,3,3,8,2,0
CB2a,8,9,3,3,5,6,1,0
FC,1,1,1,1,12,7,1,0
CSV
if "$APP" --network ss_conv.csv --mxu 4 --report ss.json --csv ss.csv >out.txt 2>err.txt &&
  "$APP" --network ours_conv.csv --mxu 4 --report ours.json >out2.txt 2>err.txt; then pass; else
  fail "convolution runs: $(cat err.txt)"; fi
if same_methods ss.json ours.json; then pass; else fail "SCALE-Sim conv vs ours differ"; fi
if "$PYTHON" -c "
import json; L = json.load(open('ss.json'))['layers']
assert [l['kind'] for l in L] == ['conv'] * 3 and all('gemm' not in l for l in L)
assert [(l['pad'], l['N'], l['H_O']) for l in L] == [(0, 1, 5), (0, 1, 6), (0, 1, 1)], L"; then
  pass; else fail "SCALE-Sim conv mapping"; fi

echo "-- SCALE-Sim's GEMM format: M x K by K x N as the 1x1 convolution M x 1, K channels, N filters"
printf 'Layer, M, N, K,\nL0, 20, 6, 9,\n\nL1, 3, 17, 5, extra,\n' >ss_gemm.csv
cat >ours_gemm.csv <<'CSV'
Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,Padding
L0,20,1,1,1,9,6,1,0
L1,3,1,1,1,5,17,1,0
CSV
if "$APP" --network ss_gemm.csv --mxu 4 --report g.json --csv g.csv >out.txt 2>err.txt &&
  "$APP" --network ours_gemm.csv --mxu 4 --report og.json >out2.txt 2>err.txt; then pass; else
  fail "GEMM runs: $(cat err.txt)"; fi
if same_methods g.json og.json; then pass; else fail "SCALE-Sim GEMM vs ours differ"; fi
if "$PYTHON" -c "
import json; L = json.load(open('g.json'))['layers']
assert [l['kind'] for l in L] == ['gemm', 'gemm']
assert [l['gemm'] for l in L] == [{'M': 20, 'N': 6, 'K': 9}, {'M': 3, 'N': 17, 'K': 5}]
assert [l['macs'] for l in L] == [20 * 6 * 9, 3 * 17 * 5]
assert [(l['H_I'], l['W_I'], l['C_I'], l['C_O']) for l in L] == [(20, 1, 9, 6), (3, 1, 5, 17)]"
then pass; else fail "GEMM mapping in the report"; fi

echo "-- --csv: one row per layer and method, every field equal to the JSON report's"
# check_csv FILE.csv FILE.json
check_csv() {
  "$PYTHON" - "$1" "$2" <<'PY'
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
layers = json.load(open(sys.argv[2]))['layers']
want = [(L, m) for L in layers for m in ('explicit', 'implicit') if m in L]
assert len(rows) == len(want) > 0, (len(rows), len(want))
cols = rows[0].keys()
for c in ('layer', 'kind', 'method', 'useful_macs', 'calls', 'cycles', 'utilisation', 'sram_reads',
          'sram_writes', 'dram_read_bytes', 'dram_write_bytes', 'stall_cycles', 'energy_pj'):
    assert c in cols, c
def same(text, v):
    if v is None:
        return text == ''
    if isinstance(v, bool):
        return text == ('true' if v else 'false')
    if isinstance(v, int):
        return text == str(v)            # integers exactly, no exponent
    if isinstance(v, float):
        return float(text) == v          # reals read back to the same double
    return text == v
described = {'index', 'layer', 'kind', 'shape', 'gemm_m', 'gemm_n', 'gemm_k', 'method'}
for r, (L, m) in zip(rows, want):
    assert r['layer'] == L['name'] and r['method'] == m and r['kind'] == L['kind'], r
    assert r['index'] == str(L['index']) and r['shape'] == L['shape']
    g = L.get('gemm', {})
    assert [r['gemm_m'], r['gemm_n'], r['gemm_k']] == [str(g[k]) if g else '' for k in 'MNK']
    assert r['useful_macs'] == str(L['macs'])
    for c in cols:
        if c in described:
            continue
        v = L[m].get(c)   # a key the report lacks (the memory side's, before it) is empty
        assert same(r[c], v), (c, r[c], v)
PY
}
if check_csv ss.csv ss.json; then pass; else fail "conv CSV against the JSON"; fi
if check_csv g.csv g.json; then pass; else fail "GEMM CSV against the JSON"; fi

echo "-- --csv follows the report's output rules"
echo keep >old.csv
expect_error 1 "old.csv: exists" --network ss_gemm.csv --mxu 4 --csv old.csv
if [ "$(cat old.csv)" = keep ]; then pass; else fail "an existing --csv file was changed"; fi
expect_error 1 "--csv is the same file as --network" --network ss_gemm.csv --csv ss_gemm.csv --force
expect_error 1 "--csv is the same file as --report" --network ss_gemm.csv --report x.out --csv x.out
if [ ! -e x.out ]; then pass; else fail "a refused run left x.out"; fi
if "$APP" --network ss_gemm.csv --mxu 4 --csv old.csv --force >out.txt 2>err.txt &&
  head -1 old.csv | grep -q '^index,layer,kind,shape,gemm_m,gemm_n,gemm_k,method,useful_macs,'
then pass; else fail "--force replaces the CSV: $(cat err.txt old.csv)"; fi

echo "-- a UTF-8 byte-order mark (and CRLF lines), as spreadsheets export: the same layers"
for f in ss_conv ss_gemm ours_conv; do
  "$PYTHON" -c "import sys; t = open(sys.argv[1], 'rb').read().replace(b'\n', b'\r\n')
open(sys.argv[2], 'wb').write(b'\xef\xbb\xbf' + t)" "$f.csv" "bom_$f.csv"
  if "$APP" --network "$f.csv" --mxu 4 --report "plain_$f.json" >out.txt 2>err.txt &&
    "$APP" --network "bom_$f.csv" --mxu 4 --report "bom_$f.json" >out.txt 2>err.txt &&
    same_methods "plain_$f.json" "bom_$f.json"; then
    pass
  else
    fail "$f.csv with a byte-order mark: $(cat err.txt)"
  fi
done
# A BOM elsewhere than the file's start, and other bytes of the file, are data: refused
# with the bytes escaped, the line plain ASCII.
printf '%s\n\xef\xbb\xbfc1,8,8,3,3,4,4,1,\nc\xc3\xa9,8,8,3,3,\x1b[31m4,4,1,\n' \
  "$(head -n 1 ours_conv.csv | cut -d, -f1-8)," >bytes.csv
expect_error 2 "bytes.csv:3: column 'Channels': '\\\\x1b\[31m4' is not an integer" --network bytes.csv
check "the error line holds no raw control or non-ASCII byte" bash -c "! LC_ALL=C grep -q '[^[:print:]]' err.txt"
printf '\xef\xbb\xbfLayer,M,N,K\n' >bomhead.csv
printf 'x\xef\xbb\xbfLayer,M,N,K\ng,1,1,1\n' >midbom.csv
expect_error 2 "midbom.csv:1: header: column 1 must be 'Layer' or 'Layer name', got 'x\\\\xef\\\\xbb\\\\xbfLayer'" \
  --network midbom.csv
expect_error 2 "bomhead.csv: no layers after the header" --network bomhead.csv

echo "-- malformed SCALE-Sim files: one error line naming file:line and the field, exit 2"
H='Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,'
printf '%s\nc1, 8, 8, 3, 3, 4, 4,\n' "$H" >few.csv
expect_error 2 "few.csv:2: expected at least 8 columns (SCALE-Sim convolution format), got 7" \
  --network few.csv
printf '%s\nc1, 8, 8, 3, 3, 4, 4, 1,\nc2, 8, 8, 3, 3, four, 4, 1,\n' "$H" >nonint.csv
expect_error 2 "nonint.csv:3: column 'Channels': 'four' is not an integer" --network nonint.csv
printf '%s\nc1, 8, 8, 3, 3, 4, 0, 1,\n' "$H" >zero.csv
expect_error 2 "zero.csv:2: column 'Num Filter': must be positive" --network zero.csv
printf '%s\nc1, 4, 4, 5, 5, 4, 4, 1,\n' "$H" >big.csv
expect_error 2 "big.csv:2 (c1): filter 5x5 is larger than the padded input 4x4" --network big.csv
printf 'Layer, M, N, K,\ng, 4, 4, 0,\n' >gzero.csv
expect_error 2 "gzero.csv:2: column 'K': must be positive" --network gzero.csv
printf 'Layer, M, N, K,\ng, 4, 4\n' >gfew.csv
expect_error 2 "gfew.csv:2: expected at least 4 columns (SCALE-Sim GEMM format), got 3" \
  --network gfew.csv
printf 'Layer, Rows, Cols\ng, 4, 4\n' >unknown.csv
expect_error 2 "unknown.csv:1: header: unknown format (3 columns)" --network unknown.csv

summary
