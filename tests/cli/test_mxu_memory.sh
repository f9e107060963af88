#!/usr/bin/env bash
# The planar MXU's memory side end to end ([mxu] keys, mxu/memory_side.hpp): triada-conv's
# per-method traffic keys and the explicit method's lowering traffic against closed forms
# written here; ample bandwidth leaves the implicit method no stall; a buffer too small for
# the staging is refused by its key; triada-tcu's memory counters and Theorem 12's I/O lower
# bound for the matrix product against a hand computation, none (with a reason) for the DFT.
# Run by ctest (label cli); ends with "N passed, M failed".
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

CONV="$TRIADA_BIN/triada-conv"
TCU="$TRIADA_BIN/triada-tcu"

in_scratch_dir mxu-memory-test

echo "-- conv: C_I = S = 16, M = 64: both methods make the same calls' traffic"
# 1 x 16 x 8 x 8 -> 16, 3x3, pad 1: M = 64 rows, K = 144 = 9 chunks of S, one C_O tile; no
# padding, so the explicit GEMM and the implicit 1x1 partial GEMMs stream the same rows and
# tiles, and explicit differs by its lowering pass only (IFMap read, lowered matrix written).
if "$CONV" --layer 1,16,8,8,16,3,3,1,1 --mxu 16 --report c.json >out.txt 2>err.txt; then
  pass
else
  fail "conv run exited non-zero: $(cat err.txt)"
fi
if "$PYTHON" - <<'EOF'; then pass; else fail "conv memory keys and closed forms"; fi
import json
r = json.load(open('c.json'))
L = r['layers'][0]
ex, im = L['explicit'], L['implicit']
keys = ('sram_reads', 'sram_writes', 'dram_read_bytes', 'dram_write_bytes', 'stall_cycles',
        'tile_loads', 'tile_hits')
for m in (ex, im, r['total']['explicit'], r['total']['implicit']):
    for k in keys:
        assert isinstance(m[k], int), k
for k in keys:
    assert k in r['definitions'], k
dram = lambda m: m['dram_read_bytes'] + m['dram_write_bytes']
lowered = 64 * 144 * 8            # N H_O W_O H_F W_F C_I words of 8 bytes
ifmap = 16 * 8 * 8 * 8
assert L['lowered_bytes'] == lowered
assert dram(ex) - dram(im) >= lowered, (dram(ex), dram(im))
assert dram(ex) - dram(im) == lowered + ifmap, (dram(ex), dram(im))
# explicit: 9 calls of 64 rows x 16 columns write their results, plus the lowered matrix
assert ex['calls'] == 9
assert ex['dram_write_bytes'] == 9 * 64 * 16 * 8 + lowered
# every explicit call has its own right tile; the implicit one reuses its 9 across 4 blocks
assert ex['tile_loads'] == 9 and ex['tile_hits'] == 0
assert im['tile_loads'] == 9 and im['tile_hits'] == 27
assert ex['stall_cycles'] > im['stall_cycles']
assert r['total']['explicit']['dram_read_bytes'] == ex['dram_read_bytes']
EOF
grep -q "DRAM MiB" out.txt && grep -q "stall %" out.txt && pass || fail "table lacks DRAM MiB / stall %"

echo "-- conv: ample bandwidth leaves the calls no stall; the lowering pass still waits"
printf '[mxu]\ndram_gbps = 1000000\nclock_ghz = 0.001\n' >fast.ini
if "$CONV" --layer 1,16,8,8,16,3,3,1,1 --mxu 16 --mesh fast.ini --report f.json >out.txt 2>err.txt \
  && "$PYTHON" -c "
import json
L = json.load(open('f.json'))['layers'][0]
assert L['implicit']['stall_cycles'] == 0, L['implicit']['stall_cycles']
assert L['explicit']['stall_cycles'] >= 1
"; then pass; else fail "ample bandwidth: $(cat err.txt)"; fi

echo "-- a buffer too small for the staging and one right tile is refused"
printf '[mxu]\nsram_kib = 1\n' >tiny.ini
for app in conv tcu; do
  if [[ $app == conv ]]; then
    "$CONV" --layer 1,16,8,8,16,3,3,1,1 --mxu 16 --mesh tiny.ini >out.txt 2>err.txt
  else
    "$TCU" --algo matmul --size 32 --m 256 --latency 0 --mesh tiny.ini >out.txt 2>err.txt
  fi
  rc=$?
  if [[ $rc -eq 2 ]] && grep -q "error: .*tiny.ini.*\[mxu\] sram_kib" err.txt; then
    pass
  else
    fail "$app with tiny.ini: exit $rc, $(cat err.txt)"
  fi
done

echo "-- tcu: memory counters and Theorem 12's I/O lower bound"
if "$TCU" --algo matmul --size 64 --m 16 --latency 0 --report t.json >out.txt 2>err.txt; then
  pass
else
  fail "tcu matmul exited non-zero: $(cat err.txt)"
fi
grep -q "I/O bound" out.txt && pass || fail "no I/O bound line"
if "$PYTHON" - <<'EOF'; then pass; else fail "tcu io_lower_bound"; fi
import json, math
r = json.load(open('t.json'))
b = r['io_lower_bound']
# side 64, M = 3 x 16 = 48: 64^3 / (2 sqrt 2 sqrt 48) - 48 = 32768 / sqrt 6 - 48
assert b['M'] == 48 and b['B'] == 1
assert abs(b['value'] - 13329.48) < 0.01, b['value']
assert 'sqrt' in b['formula'] and 'Irony' in b['source']
m = r['memory']
for k in ('sram_reads', 'sram_writes', 'dram_read_bytes', 'dram_write_bytes', 'stall_cycles',
          'tile_loads', 'tile_hits'):
    assert isinstance(m[k], int), k
# every call reads its r x 4 left rows and writes r x 4 results: 8-byte words
assert m['dram_write_bytes'] == r['tcu']['rows'] * 4 * 8
assert m['tile_loads'] + m['tile_hits'] == r['tcu']['calls']
EOF
if "$TCU" --algo dft --size 256 --m 16 --latency 0 --report d.json >out.txt 2>err.txt \
  && "$PYTHON" -c "
import json
b = json.load(open('d.json'))['io_lower_bound']
assert b['value'] is None and b['reason']
"; then pass; else fail "tcu dft io_lower_bound: $(cat err.txt)"; fi

summary
