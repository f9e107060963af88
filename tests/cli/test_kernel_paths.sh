#!/usr/bin/env bash
# The kernels' instruction-set paths from outside (doc/design.md §8.4): --version names the
# path in use and the paths this CPU runs (/proc/cpuinfo's flags are the oracle); the
# environment variable TRIADA_ISA picks one, which the report's `kernels` object and the
# provenance (JSON and HDF5 attributes) name; an unknown value, or ranks choosing different
# paths, is one config error (exit 2) at start-up; every path gives the same output file
# and counters (triada-transform, triada-tcu). And the libraries hold no instruction
# beyond baseline x86-64 outside the avx2 and avx512 paths' own functions (objdump), so
# no code but a path chosen for this CPU can meet an instruction it lacks.
# Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

in_scratch_dir kernel-paths
TR=$TRIADA_BIN/triada-transform
GEN=$TRIADA_BIN/triada-gen
TCU=$TRIADA_BIN/triada-tcu
arch=$(sed -n 's/^TRIADA_ARCH:STRING=//p' "$TRIADA_BIN/CMakeCache.txt")

echo "-- --version: the path in use, the paths compiled and those this CPU runs"
env -u TRIADA_ISA "$TR" --version >v.txt 2>v.err
check "--version succeeds" test ! -s v.err
line=$(grep '^kernels: ' v.txt)
re='^kernels: (avx512|avx2|portable) \(cpu; compiled: ([a-z0-9 ]+); this CPU: ([a-z0-9 ]+)\)$'
if [[ $line =~ $re ]]; then pass; else fail "--version: '$line'"; fi
compiled=${BASH_REMATCH[2]:-}
avail=${BASH_REMATCH[3]:-portable}
best=${avail%% *}
check "TRIADA_ISA unset: the best path this CPU runs" test "${BASH_REMATCH[1]:-}" = "$best"
if [[ -z $arch && $(uname -m) == x86_64 ]]; then
  check "a portable x86-64 build holds all three paths" test "$compiled" = "avx512 avx2 portable"
  flags=" $(grep -m1 '^flags' /proc/cpuinfo) "
  has() { for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
  expect=""
  has avx2 fma popcnt avx512f avx512vl avx512dq avx512bw avx512cd && expect="avx512 "
  has avx2 fma popcnt && expect+="avx2 "
  expect+="portable"
  check "this CPU runs what /proc/cpuinfo's flags allow ($expect)" test "$avail" = "$expect"
fi
for p in $avail; do
  TRIADA_ISA=$p "$TR" --version >vp.txt 2>&1
  check "TRIADA_ISA=$p: --version names it" grep -q "^kernels: $p (TRIADA_ISA; " vp.txt
done

echo "-- a bad TRIADA_ISA is one config error at start-up"
APP=$TR
TRIADA_ISA=sse9 expect_error 2 "TRIADA_ISA=sse9: not a kernel path (allowed: avx512, avx2, portable" \
  --version
TRIADA_ISA=sse9 expect_error 2 "TRIADA_ISA=sse9: not a kernel path" --model-only 4,4,4 -t dct
TRIADA_ISA=AVX2 expect_error_np 2 2 "TRIADA_ISA=AVX2: not a kernel path" "$TCU" --algo matmul \
  --size 8 --m 4 --latency 0
for p in avx512 avx2 portable; do
  [[ " $avail " == *" $p "* ]] && continue
  TRIADA_ISA=$p expect_error 2 "TRIADA_ISA=$p: " --version  # not here: says why
done
set -- $avail
if [[ $# -ge 2 ]]; then  # two ranks asking for different paths
  set +e
  timeout 120 "$MPIEXEC" -q --oversubscribe -np 1 env TRIADA_ISA="$1" "$TR" --model-only 4,4,4 \
    -t dct : -np 1 env TRIADA_ISA="$2" "$TR" --model-only 4,4,4 -t dct >err.txt 2>&1
  rc=$?
  set -e
  check "ranks choosing $1 and $2: exit 2, one error line" \
    bash -c "[[ $rc == 2 && \$(grep -c 'error' err.txt) == 1 ]] &&
             grep -q 'TRIADA_ISA: the ranks chose different kernel paths ($2 to $1)' err.txt"
fi

echo "-- every path: the same output bits and counters, the path named in the outputs"
"$GEN" --output x.h5:/x --shape 13,7,29 --dist normal --sparsity 0.4 --zero-lines 0.2 \
  --seed 5 >/dev/null
nps="1 3"
sanitized && nps=3  # the sanitizer build: the multi-rank case alone (each run is slow)
for np in $nps; do
  for p in cpu $avail; do
    envs=(TRIADA_ISA="$p")
    [[ $p == cpu ]] && envs=(-u TRIADA_ISA)
    run_np "$np" env "${envs[@]}" "$TR" --input x.h5 --output "y_${p}_$np.h5" \
      --transform dct,dht,dct --report "r_${p}_$np.json" --quiet
    check "np $np, $p: transform ran" test "$rc" = 0
  done
done
check "outputs, counters and the path's names agree" "$PYTHON" - "$nps" "$best" $avail <<'EOF'
import json, sys, h5py, numpy as np
nps, best, paths = sys.argv[1].split(), sys.argv[2], sys.argv[3:]
for np_ in nps:
    ref = None
    for p in ["cpu"] + paths:
        r = json.load(open(f"r_{p}_{np_}.json"))
        with h5py.File(f"y_{p}_{np_}.h5", "r") as f:
            y = f["y"][...]
            attr = f["y"].attrs["kernels"]
        isa = best if p == "cpu" else p
        k = r["kernels"]
        assert k["isa"] == isa and r["provenance"]["kernels"] == isa and attr == isa, (p, k, attr)
        assert k["selected_by"] == ("cpu" if p == "cpu" else "TRIADA_ISA"), k
        assert k["available"] == paths and k["compiled"][-1] == paths[-1], k
        assert k["register_block"] == ([14, 16] if isa == "avx512" else [6, 8]), k
        got = (y.view(np.uint64) if y.dtype.kind == "f" else y.view(np.uint8)).tobytes()
        facts = (got, r["counters"], r["steps"], r["cycles"], r["mpi"])
        if ref is None:
            ref = facts
        assert facts == ref, f"np {np_}: path {p} differs from the first"
EOF
for p in $avail; do
  run_np 2 env TRIADA_ISA="$p" "$TCU" --algo matmul --size 40 --m 16 --latency 0 --report "t_$p.json"
  check "tcu on $p ran" test "$rc" = 0
done
check "tcu: the same results and counters on every path" "$PYTHON" - $avail <<'EOF'
import json, sys
ref = None
for p in sys.argv[1:]:
    r = json.load(open(f"t_{p}.json"))
    assert r["provenance"]["kernels"] == p, r["provenance"]
    del r["provenance"], r["wall_seconds"]
    facts = json.dumps(r, sort_keys=True)
    ref = ref or facts
    assert facts == ref, p
EOF

echo "-- no instruction beyond baseline x86-64 outside the avx2 and avx512 paths' code"
if [[ $(uname -m) == x86_64 && -z $arch ]] && command -v objdump >/dev/null; then
  libs=("$TRIADA_BIN"/libtriada_model.a "$TRIADA_BIN"/libtriada_engine.a "$TRIADA_BIN"/libtriada_mxu.a)
  objdump -d --no-show-raw-insn -C "${libs[@]}" >dis.txt 2>/dev/null
  # VEX/EVEX instructions (v...), ymm/zmm/mask registers, and the scalar extensions the
  # paths enable (popcnt; BMI, LZCNT, MOVBE, SSE4 by name, though no path asks for them).
  awk '
    /^[0-9a-f]+ <.*>:$/ { fn = $0; next }
    /^ +[0-9a-f]+:\t/ {
      split($0, p, "\t"); ins = p[2]; m = ins; sub(/ .*/, "", m)
      ext = m ~ /^v/ || ins ~ /%[yz]mm|%k[0-7]/ ||
            m ~ /^(popcnt|lzcnt|andn|bextr|blsi|blsmsk|blsr|bzhi|pdep|pext|rorx|sarx|shlx|shrx|movbe|pshufb|ptest|crc32|pmulld|pcmpgtq|pcmpeqq|pinsrq|pextrq|roundsd|roundpd)$/
      if (!ext) next
      if (fn ~ /isa_avx(2|512)/) ok[fn] = 1; else { print "outside a path: " fn " " ins; bad = 1 }
    }
    END { n = 0; for (f in ok) ++n; print n " functions of the avx2 and avx512 paths use them"
          exit bad || n == 0 }' dis.txt >isolation.txt
  check "the extensions appear only in the paths' functions ($(tail -1 isolation.txt))" \
    bash -c "! grep -q '^outside' isolation.txt && [[ \$(tail -1 isolation.txt) != 0\ * ]]"
  grep '^outside' isolation.txt | head -5 || true
fi

summary
