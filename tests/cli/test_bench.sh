#!/usr/bin/env bash
# triada-bench --quick works end to end (no timing is asserted): exit 0 at np=1 and np=2,
# the JSON parses and has rows for fused, reference, openblas and fftw-dct with the
# required keys, and the printed table names the OpenBLAS kernel; --accuracy --quick gives a
# row per cell mode with the expected error ordering. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

BENCH="$TRIADA_BIN/triada-bench"

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-bench-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

json_ok() {  # json_ok FILE RANKS
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
path, ranks = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    j = json.load(f)
rows = j["rows"]
need = ("shape", "sparsity", "variant", "threads", "ranks", "seconds", "gmacs_per_s", "macs",
        "macs_dense", "steps")
for v in ("fused", "reference", "openblas", "fftw-dct"):
    vr = [r for r in rows if r["variant"] == v]
    assert vr, "no rows for " + v
    for r in vr:
        for k in need:
            assert k in r, (v, "lacks", k)
        assert len(r["shape"]) == 3 and r["threads"] == 1, r
        assert r["seconds"] > 0 and "gflops" not in r, r
        # GMAC/s: useful MACs (the baselines: the dense count) per second / 1e9
        assert abs(r["gmacs_per_s"] - r["macs"] / r["seconds"] / 1e9) <= 1e-9 * r["gmacs_per_s"], r
for r in rows:
    if r["variant"] in ("fused", "reference"):
        assert r["ranks"] == ranks, r
        assert 0 < r["macs"] <= r["macs_dense"], r
        assert len(r["stage_seconds"]) == 3, r
shapes = {tuple(r["shape"]) for r in rows}
assert shapes == {(16, 16, 16), (12, 10, 8)}, shapes
m = j["machine"]
assert m["mpi_world_size"] == ranks and m["openblas_corename"], m
assert m["kernels"]["isa"] == j["provenance"]["kernels"] in m["kernels"]["available"], m
assert j["verification"]["result"] == "verified", j["verification"]
assert any("simulation only" in n for n in j["notes"]), j["notes"]
EOF
}

for np in 1 2; do
  out="$dir/out$np.txt"
  err="$dir/err$np.txt"
  json="$dir/b$np.json"
  if [[ $np == 1 ]]; then
    cmd=("$BENCH" --quick --json "$json")
  else
    cmd=("$MPIEXEC" --oversubscribe -np 2 "$BENCH" --quick --json "$json")
  fi
  rc=0
  "${cmd[@]}" >"$out" 2>"$err" || rc=$?
  [[ $rc -eq 0 ]] || cat "$out" "$err" >&2
  check "np=$np: --quick exits 0" test "$rc" -eq 0
  check "np=$np: JSON has fused, reference, openblas and fftw-dct rows" json_ok "$json" "$np"
  check "np=$np: table names the OpenBLAS kernel" grep -qE '^OpenBLAS kernel: [A-Za-z0-9]+' "$out"
  check "np=$np: table has a fused row" grep -qE '^16x16x16 +dense +fused' "$out"
  # The whole line, to its end: "-> verified", not "-> MISMATCH" or a word containing it.
  check "np=$np: fused agrees with OpenBLAS" \
    grep -qE '^OpenBLAS vs fused on [0-9x]+ [a-z0-9.]+: max relative difference [0-9.e+-]+ -> verified$' "$out"
  check "np=$np: one progress line per row on stderr, in GMAC/s" \
    test "$(grep -cE '^triada-bench \[.*: [0-9.]+ s, [0-9.]+ GMAC/s$' "$err")" -eq 28
  check "np=$np: the throughput column is named GMAC/s" \
    grep -qE '^shape +sparsity +variant +ranks +seconds +GMAC/s +MACs%' "$out"
done

check "--help documents every option" bash -c '
  help=$("$0" --help) || exit 1
  for opt in --sizes --sparsity --variants --reps --reference-max --transform --actuators \
             --seed --json --quick; do
    grep -q -- "$opt" <<<"$help" || { echo "--help lacks $opt" >&2; exit 1; }
  done' "$BENCH"
check "a bad --sizes is refused with one line" bash -c '
  "$0" --sizes 4x4 --json "$1/x.json" >/dev/null 2>"$1/bad.txt" && exit 1
  [[ $(wc -l <"$1/bad.txt") -eq 1 ]] && grep -q "^triada-bench: error: --sizes" "$1/bad.txt"' \
  "$BENCH" "$dir"
# refused ARGS... NEEDLE: exit code 2, one 'triada-bench: error:' line containing NEEDLE.
refused() {
  local needle=${*: -1} rc=0
  "$BENCH" "${@:1:$#-1}" --json "$dir/never.json" >/dev/null 2>"$dir/bad.txt" || rc=$?
  [[ $rc -eq 2 && $(wc -l <"$dir/bad.txt") -eq 1 ]] &&
    grep -q "^triada-bench: error: " "$dir/bad.txt" && grep -qF -- "$needle" "$dir/bad.txt" &&
    ! LC_ALL=C grep -q '[^[:print:]]' "$dir/bad.txt" && [[ ! -e $dir/never.json ]] ||
    { echo "exit $rc: $(cat -v "$dir/bad.txt")" >&2; return 1; }
}
mkdir -p "$dir/meshdir"
check "an abbreviated option is refused, not guessed" refused --rep 1 "'--rep'"
check "a stray word is refused by name" refused --quick extra "unexpected argument 'extra'"
check "a negative --seed is refused" refused --seed -1 "--seed"
check "a number with a space is refused" refused --reps "1 2" "--reps"
check "an empty --sizes item is refused" refused --sizes 16, "--sizes"
check "--mesh naming a directory is refused up front" refused --accuracy --mesh "$dir/meshdir" \
  "meshdir: mesh config: is a directory"
check "an unprintable --transform is escaped" refused --transform $'\e[31m' "--transform"

# --accuracy: every cell mode against fp64 on a DFT, a DCT and a GEMM (doc/precision.md).
accuracy_ok() {  # accuracy_ok FILE
  "$PYTHON" - "$1" <<'EOF'
import json, math, sys
j = json.load(open(sys.argv[1]))
rows = {r["cell_mode"]: r for r in j["accuracy"]}
# Sub-steps per MAC (real, complex) relative to the fp16 unit (doc/precision.md): fp64 the
# TriADA cell, one FMA unit (a complex MAC its four FMAs); a p-bit complex MAC four real products (M3XU Observation 3); a 2p-bit MAC on
# the p-bit unit 4, complex 16 (Corollaries 2, 3); the split schemes one pass per product.
SUB = {"fp64": (1, 4), "fp32": (1, 4), "tf32": (1, 4), "bf16": (1, 4), "fp16": (1, 4),
       "m3xu-fp32": (4, 16), "m3xu-fp32c": (4, 16), "m3xu-fp32-wide": (4, 16),
       "3xtf32": (3, 12), "4xtf32": (4, 16), "3xbf16": (3, 12)}
modes = tuple(SUB)
assert set(rows) == set(modes) and len(j["accuracy"]) == len(modes), sorted(rows)
num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
for m in modes:
    for w in ("dft", "dct", "gemm"):
        c = rows[m]["workloads"][w]
        if m == "m3xu-fp32c" and w != "dft":
            assert c["applicable"] is False and c["max_rel_error"] is None, (m, w, c)
            continue
        assert c["applicable"] is True, (m, w)
        assert num(c["max_rel_error"]) and num(c["mean_rel_error"]), (m, w, c)
        assert 0 <= c["mean_rel_error"] <= c["max_rel_error"], (m, w, c)
        assert c["cycles"] == c["steps"] * c["substeps"], (m, w, c)  # unfolded mesh
        assert c["cycles_fp64"] == c["steps"] * SUB["fp64"][w == "dft"], (m, w, c)
        assert c["substeps"] == SUB[m][w == "dft"], (m, w, c)
        assert c["macs"] > 0, (m, w, c)
        assert abs(c["mac_pj"] - rows[m]["substep_pj"] * c["substeps"]) <= 1e-12 * c["mac_pj"]
        assert abs(c["energy_mac_pj"] - c["macs"] * c["mac_pj"]) <= 1e-9 * c["energy_mac_pj"]
        if m == "fp64":
            assert c["max_rel_error"] == 0, c
        else:
            assert c["max_rel_error"] > 0, (m, w, c)
e = lambda m, w: rows[m]["workloads"][w]["max_rel_error"]
for w in ("dct", "gemm"):  # real data: an m3xu-fp32 cell is an fp32 FMA cell, bit for bit
    assert e("m3xu-fp32", w) == e("fp32", w), (w, e("m3xu-fp32", w), e("fp32", w))
    assert e("m3xu-fp32-wide", w) < e("fp32", w), (w, e("m3xu-fp32-wide", w), e("fp32", w))
for w in ("dft", "dct", "gemm"):
    assert e("bf16", w) > e("tf32", w), (w, e("bf16", w), e("tf32", w))
assert e("m3xu-fp32c", "dft") == e("m3xu-fp32", "dft")
EOF
}
same_as_one_rank() {  # same_as_one_rank A.json B.json: max errors and cycles agree
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(f))["accuracy"] for f in sys.argv[1:3])
assert len(a) == len(b)
for x, y in zip(a, b):
    for w in x["workloads"]:
        p, q = x["workloads"][w], y["workloads"][w]
        assert p.get("max_rel_error") == q.get("max_rel_error"), (x["cell_mode"], w, p, q)
        assert p.get("cycles") == q.get("cycles"), (x["cell_mode"], w)
EOF
}
mesh_energy_ok() {  # mesh_energy_ok FILE: mac_pj_bf16 = 1.0 from the INI, fp64 default
  "$PYTHON" - "$1" <<'EOF'
import json, sys
r = {x["cell_mode"]: x for x in json.load(open(sys.argv[1]))["accuracy"]}
assert r["bf16"]["substep_pj"] == 1.0 and r["fp64"]["substep_pj"] == 108.9, (r["bf16"], r["fp64"])
EOF
}
table_rows_ok() {  # table_rows_ok FILE: a row per mode, n/a for m3xu-fp32c on real data
  local m
  for m in fp64 fp32 tf32 bf16 fp16 m3xu-fp32 m3xu-fp32c m3xu-fp32-wide 3xtf32 4xtf32 3xbf16; do
    grep -qE "^$m +[0-9]+;[0-9]+ +\|" "$1" || { echo "no table row for $m" >&2; return 1; }
  done
  grep -E "^m3xu-fp32c " "$1" | grep -q "n/a"
}

rc=0
"$BENCH" --accuracy --quick --json "$dir/acc1.json" >"$dir/acc1.txt" 2>"$dir/accerr1.txt" || rc=$?
[[ $rc -eq 0 ]] || cat "$dir/acc1.txt" "$dir/accerr1.txt" >&2
check "--accuracy --quick exits 0" test "$rc" -eq 0
check "--accuracy JSON: a row per mode, numeric errors, m3xu-fp32 = fp32 (real), bf16 > tf32" \
  accuracy_ok "$dir/acc1.json"
check "--accuracy table: a row per mode, n/a for m3xu-fp32c on real data" \
  table_rows_ok "$dir/acc1.txt"
rc=0
"$MPIEXEC" --oversubscribe -np 2 "$BENCH" --accuracy --quick --json "$dir/acc2.json" \
  >/dev/null 2>"$dir/accerr2.txt" || rc=$?
check "--accuracy under mpirun -np 2 exits 0" test "$rc" -eq 0
check "--accuracy under mpirun -np 2: same max errors and cycles as one rank" \
  same_as_one_rank "$dir/acc1.json" "$dir/acc2.json"
check "--help documents --accuracy and --mesh" bash -c '
  help=$("$0" --help) || exit 1
  grep -q -- "--accuracy" <<<"$help" && grep -q -- "--mesh" <<<"$help"' "$BENCH"
printf '[energy]\nmac_pj_bf16 = 1.0\n' >"$dir/e.ini"
rc=0
"$BENCH" --accuracy --quick --mesh "$dir/e.ini" --json "$dir/acc3.json" >/dev/null 2>&1 || rc=$?
check "--accuracy --mesh FILE takes the MAC energies from the file" \
  bash -c '[[ $0 -eq 0 ]]' "$rc"
check "--accuracy --mesh FILE: mac_pj_bf16 from the file" mesh_energy_ok "$dir/acc3.json"


# --mxu --quick: the fused MXU against dgemm (no timing asserted): rows for both unit sides
# and the TCU matmul, with ratios and results that agree with dgemm.
mxu_ok() {  # mxu_ok FILE
  "$PYTHON" - "$1" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "triada-bench-mxu/1" and j["config"]["executor"] == "fused", j["config"]
rows = j["rows"]
assert [(r["workload"], r["side"]) for r in rows] == [("conv-gemm", 4), ("conv-gemm", 16),
                                                      ("tcu-matmul", 16)], rows
for r in rows:
    assert r["mxu_seconds"] > 0 and r["dgemm_seconds"] > 0 and r["ratio"] > 0, r
    assert abs(r["ratio"] - r["dgemm_seconds"] / r["mxu_seconds"]) <= 1e-9 * r["ratio"], r
    assert r["max_rel_diff"] < 1e-12, r
    assert r["macs"] in (100 * 288 * 32, 128 ** 3), r
assert rows[0]["explicit_conv_seconds"] > 0 and rows[0]["implicit_conv_seconds"] > 0
EOF
}
rc=0
"$BENCH" --mxu --quick --json "$dir/mxu.json" >"$dir/mxu.txt" 2>"$dir/mxuerr.txt" || rc=$?
[[ $rc -eq 0 ]] || cat "$dir/mxu.txt" "$dir/mxuerr.txt" >&2
check "--mxu --quick exits 0" test "$rc" -eq 0
check "--mxu JSON: conv GEMM at S = 4 and 16, TCU matmul, ratios, agreement with dgemm" \
  mxu_ok "$dir/mxu.json"
check "--mxu table has the ratio column" grep -q "ratio = dgemm seconds / MXU seconds" "$dir/mxu.txt"
check "--mxu with --accuracy is refused" refused --mxu --accuracy "--mxu, --accuracy, --m3xu and --calibrate: choose one"

# --m3xu --quick: the M3XU paper's comparison at equal memory bandwidth (doc/precision.md).
m3xu_ok() {  # m3xu_ok FILE
  "$PYTHON" - "$1" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "triada-bench-m3xu/1", j["schema"]
n, s = j["config"]["n"], j["config"]["side"]
assert (n, s) == (32, 4), j["config"]
# Compute cycles in closed form: (n / s)^2 calls of n steps per pass, times the mode's
# sub-steps (M3XU: 4, Corollary 2; the rest 1).
SUB = {"fp16": 1, "fp32": 1, "m3xu-fp32": 4, "tf32": 1, "bf16": 1}
pick = lambda m, p: next(r for r in j["rows"] if r["cell_mode"] == m and r["passes"] == p)
for r in j["rows"]:
    for b in ("equal_count", "equal_area"):
        x = r[b]
        assert x["compute_cycles"] == r["passes"] * SUB[r["cell_mode"]] * n ** 3 // s ** 2, (r, b)
        e = (x["compute_cycles"] + x["stall_cycles"]) * s * s * r["substep_pj"] / n ** 3
        assert abs(x["pj_per_mac"] - e) <= 1e-9 * e, (r, b)
fp32, m3, x3, b3 = pick("fp32", 1), pick("m3xu-fp32", 1), pick("tf32", 3), pick("bf16", 3)
st = lambda r, b: r[b]["stall_cycles"] / (r[b]["compute_cycles"] + r[b]["stall_cycles"])
# One unit each at the fp16 unit's bandwidth: 32-bit words stall the FP32-MXU about half
# its time (Sec. II-B) and every 3xTF32 pass; M3XU's 4 sub-steps and 3xBF16's 16-bit words
# do not stall.
assert st(fp32, "equal_count") > 0.4 and st(x3, "equal_count") > 0.4, (fp32, x3)
assert m3["equal_count"]["stall_cycles"] == 0 and b3["equal_count"]["stall_cycles"] == 0
assert fp32["equal_area"]["stall_cycles"] == 0  # its bandwidth grows with its 3.55x area
for b in ("equal_count", "equal_area"):
    assert m3[b]["pj_per_mac"] < fp32[b]["pj_per_mac"], b
    assert m3[b]["pj_per_mac"] < x3[b]["pj_per_mac"], b
assert m3["max_rel_error"] <= fp32["max_rel_error"] and b3["max_rel_error"] > x3["max_rel_error"]
c = j["m3xu_against"]
assert abs(c["fp32_mxu"]["equal_count"]["energy_per_mac_lower_by"] -
           (1 - m3["equal_count"]["pj_per_mac"] / fp32["equal_count"]["pj_per_mac"])) < 1e-12
EOF
}
rc=0
"$BENCH" --m3xu --quick --json "$dir/m3xu.json" >"$dir/m3xu.txt" 2>"$dir/m3xuerr.txt" || rc=$?
[[ $rc -eq 0 ]] || cat "$dir/m3xu.txt" "$dir/m3xuerr.txt" >&2
check "--m3xu --quick exits 0" test "$rc" -eq 0
check "--m3xu JSON: closed-form cycles, stalls at equal bandwidth, energy per MAC" \
  m3xu_ok "$dir/m3xu.json"
check "--m3xu prints the paper's figures beside ours" grep -q "the paper (Sec. VI-B" "$dir/m3xu.txt"

summary
