#!/usr/bin/env bash
# triada-bench --calibrate --quick works end to end at np=1 and np=2 (no timing is
# asserted): exit 0, the JSON (schema triada-calibration/1) has every key, every time and
# rate is a positive finite number, every alpha-beta fit is the one its raw table gives
# (recomputed with scipy's non-negative least squares on the relative residuals), the MACs
# of each stage are the dense closed form N1 N2 N3 N_axis, the MPI sections are there at
# np=2 and null or empty at np=1; the table and one progress line per phase are printed;
# options that do not go with --calibrate are refused with exit 2. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

BENCH="$TRIADA_BIN/triada-bench"

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-calibrate-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

json_ok() {  # json_ok FILE RANKS
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, math, sys
import numpy as np
from scipy.optimize import nnls

path, ranks = sys.argv[1], int(sys.argv[2])
with open(path) as f:
    j = json.load(f)

def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

def positive(v, what):
    assert is_num(v) and v > 0, (what, v)

def keys(obj, names, what):
    assert isinstance(obj, dict), (what, obj)
    missing = [k for k in names if k not in obj]
    assert not missing, (what, "lacks", missing)

def spread(s, what):
    keys(s, ("min", "median", "max"), what)
    for k in ("min", "median", "max"):
        positive(s[k], what + "." + k)
    assert s["min"] <= s["median"] <= s["max"], (what, s)

def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))

def fit_ok(x, t, fit, what):
    """The fit in the JSON is the NNLS fit of t = alpha + x beta, weights 1/t^2."""
    keys(fit, ("alpha_s", "beta_s_per_byte", "bytes_per_s", "max_rel_residual", "method"), what)
    x, t = np.asarray(x, float), np.asarray(t, float)
    assert len(x) == len(t) >= 2 and np.all(t > 0) and np.all(np.isfinite(t)), (what, t)
    (a, b), _ = nnls(np.column_stack([1 / t, x / t]), np.ones_like(t))
    ja, jb = fit["alpha_s"], fit["beta_s_per_byte"]
    assert is_num(ja) and is_num(jb) and ja >= 0 and jb >= 0, (what, fit)
    # The same line: equal predictions at every point, relative to the measured time.
    assert np.all(np.abs((ja + jb * x) - (a + b * x)) <= 1e-6 * t), (what, (ja, jb), (a, b))
    assert jb > 0 and close(fit["bytes_per_s"], 1 / jb), (what, fit)
    res = np.max(np.abs(ja + jb * x - t) / t)
    assert abs(fit["max_rel_residual"] - res) <= 1e-9 + 1e-6 * res, (what, fit, res)

top = ("schema", "date", "machine", "config", "compute", "memory", "point_to_point",
       "broadcast", "sync", "shared_reads", "overlap", "notes", "provenance")
keys(j, top, "top")
assert j["schema"] == "triada-calibration/1", j["schema"]
m = j["machine"]
keys(m, ("hostname", "cpu_model", "cores", "mpi_world_size", "nodes",
         "ranks_on_node_of_rank_0", "oversubscribed", "loadavg_start", "loadavg_end",
         "compiler"), "machine")
assert m["mpi_world_size"] == ranks and m["nodes"] == 1 and m["cores"] >= 1, m
assert m["ranks_on_node_of_rank_0"] == ranks, m
p = j["provenance"]
assert p["program"] == "triada-bench" and p["ranks"] == ranks and "--calibrate" in p["command_line"], p
assert j["config"]["quick"] is True and j["notes"], j["config"]

# compute: per stage, MACs = the dense closed form N1 N2 N3 N_axis (square DCT, K = N)
c = j["compute"]
keys(c, ("executor", "mode", "transform", "stage_order", "ranks_computing", "reps", "warmup",
         "shapes"), "compute")
assert c["mode"] == "dense" and c["executor"] == "fused" and c["ranks_computing"] == ranks, c
assert [tuple(s["shape"]) for s in c["shapes"]] == [(64, 64, 64), (128, 128, 128)], c["shapes"]
for s in c["shapes"]:
    keys(s, ("shape", "stages", "left_macs_per_s", "right_macs_per_s"), "compute shape")
    n = s["shape"]
    assert [st["axis"] for st in s["stages"]] == [3, 1, 2], s
    for st in s["stages"]:
        keys(st, ("axis", "kernel", "macs", "seconds", "macs_per_s"), "stage")
        assert st["kernel"] == ("left" if st["axis"] == 3 else "right"), st
        assert st["macs"] == n[0] * n[1] * n[2] * n[st["axis"] - 1], (n, st)
        spread(st["seconds"], "stage seconds")
        spread(st["macs_per_s"], "stage macs_per_s")
    spread(s["left_macs_per_s"], "left")
    spread(s["right_macs_per_s"], "right")
    if ranks == 1:  # one rank: its own numbers, exactly
        st = {x["axis"]: x for x in s["stages"]}
        sec = {a: st[a]["seconds"]["median"] for a in st}
        for a in st:
            assert close(st[a]["macs_per_s"]["median"], st[a]["macs"] / sec[a]), st[a]
        assert close(s["left_macs_per_s"]["median"], st[3]["macs"] / sec[3]), s
        right = (st[1]["macs"] + st[2]["macs"]) / (sec[1] + sec[2])
        assert close(s["right_macs_per_s"]["median"], right), (s, right)

mem = j["memory"]
keys(mem, ("bytes_per_copy", "bytes_counted", "reps", "all_ranks", "alone"), "memory")
assert mem["bytes_counted"] == 2 * mem["bytes_per_copy"] > 0, mem
spread(mem["all_ranks"]["seconds"], "memory seconds")
spread(mem["all_ranks"]["bytes_per_s"], "memory bytes_per_s")
positive(mem["alone"]["seconds"], "alone seconds")
assert close(mem["alone"]["bytes_per_s"], mem["bytes_counted"] / mem["alone"]["seconds"]), mem

# point to point: 8 B .. 8 MiB by powers of 4
pp = j["point_to_point"]
keys(pp, ("method", "reps", "pairs"), "point_to_point")
if ranks == 1:
    assert pp["pairs"] == [], pp
else:
    assert [q["ranks"] for q in pp["pairs"]] == [[0, 1]], pp["pairs"]
    for q in pp["pairs"]:
        keys(q, ("ranks", "same_node", "sizes_bytes", "round_trips_per_rep",
                 "round_trips_per_sample", "seconds", "fit"), "pair")
        assert q["sizes_bytes"] == [8 * 4 ** k for k in range(11)], q["sizes_bytes"]
        assert q["same_node"] is True and len(q["seconds"]) == 11, q
        for t in q["seconds"]:
            positive(t, "ping-pong seconds")
        fit_ok(q["sizes_bytes"], q["seconds"], q["fit"], "ping-pong fit")

b = j["broadcast"]
keys(b, ("root", "method", "reps", "communicators"), "broadcast")
if ranks == 1:
    assert b["communicators"] == [], b
else:
    assert [q["ranks"] for q in b["communicators"]] == [2], b["communicators"]
    for q in b["communicators"]:
        keys(q, ("ranks", "one_node", "sizes_bytes", "bcast", "ibcast"), "communicator")
        assert q["sizes_bytes"] == [8192 * 4 ** k for k in range(6)], q["sizes_bytes"]
        for kind in ("bcast", "ibcast"):
            for t in q[kind]["seconds"]:
                positive(t, kind + " seconds")
            fit_ok(q["sizes_bytes"], q[kind]["seconds"], q[kind]["fit"], kind + " fit")

s = j["sync"]
keys(s, ("barrier", "fence", "flag_handshake", "samples"), "sync")
for part in ("barrier", "fence"):
    keys(s[part], ("communicator_ranks", "calls_per_sample", "seconds"), part)
positive(s["barrier"]["seconds"], "barrier")
positive(s["fence"]["seconds"], "fence")
assert s["barrier"]["communicator_ranks"] == ranks == s["fence"]["communicator_ranks"], s
if ranks == 1:
    assert s["flag_handshake"] is None, s
else:
    positive(s["flag_handshake"]["seconds"], "flag handshake")

r = j["shared_reads"]
o = j["overlap"]
if ranks == 1:
    assert r is None and o is None, (r, o)
else:
    keys(r, ("bytes", "reps", "node_ranks", "neighbour", "own"), "shared_reads")
    for part in ("neighbour", "own"):
        spread(r[part]["seconds"], part + " seconds")
        spread(r[part]["bytes_per_s"], part + " bytes_per_s")
    keys(o, ("bytes", "root", "communicator_ranks", "reps", "blocking_seconds",
             "compute_seconds", "post_seconds", "wait_seconds", "ratio", "progress",
             "with_tests"), "overlap")
    assert o["bytes"] == 2 << 20 and o["communicator_ranks"] == 2, o
    positive(o["blocking_seconds"], "blocking")
    assert close(o["compute_seconds"], 2 * o["blocking_seconds"]), o
    for part in (o, o["with_tests"]):
        positive(part["post_seconds"], "post")
        assert is_num(part["wait_seconds"]) and part["wait_seconds"] >= 0, part
        assert close(part["ratio"], part["wait_seconds"] / o["blocking_seconds"]), part
        assert part["progress"] in ("asynchronous", "partial", "none"), part
EOF
}

for np in 1 2; do
  out="$dir/out$np.txt"
  err="$dir/err$np.txt"
  json="$dir/c$np.json"
  if [[ $np == 1 ]]; then
    cmd=("$BENCH" --calibrate --quick --json "$json")
  else
    cmd=("$MPIEXEC" --oversubscribe -np 2 "$BENCH" --calibrate --quick --json "$json")
  fi
  rc=0
  timeout 300 "${cmd[@]}" >"$out" 2>"$err" || rc=$?
  [[ $rc -eq 0 ]] || cat "$out" "$err" >&2
  check "np=$np: --calibrate --quick exits 0" test "$rc" -eq 0
  check "np=$np: the JSON has every key, positive numbers, consistent fits and MACs" \
    json_ok "$json" "$np"
  check "np=$np: the table has the compute rows" grep -qE '^  64x64x64 +3 +left ' "$out"
  check "np=$np: the table has memory and synchronisation lines" \
    bash -c 'grep -q "^memory: memcpy of 64 MiB" "$0" && grep -q "^synchronisation: MPI_Barrier" "$0"' "$out"
  # 2 compute shapes + memory, point-to-point, broadcast, sync, shared reads, overlap
  check "np=$np: one progress line per phase on stderr" \
    test "$(grep -cE '^triada-bench \[[0-9]/8\] calibrate .*\([0-9.]+ s\)$' "$err")" -eq 8
done
check "np=2: the table has the ping-pong and broadcast series" \
  bash -c 'grep -q "^point-to-point: ping-pong" "$0" && grep -qE "^  8388608 " "$0" &&
           grep -q "Ibcast@2" "$0" && grep -q "^overlap: MPI_Ibcast of 2 MiB" "$0"' "$dir/out2.txt"

check "--help documents --calibrate" bash -c '"$0" --help | grep -q -- "--calibrate"' "$BENCH"
# refused ARGS... NEEDLE: exit code 2, one 'triada-bench: error:' line containing NEEDLE,
# no JSON written.
refused() {
  local needle=${*: -1} rc=0
  "$BENCH" "${@:1:$#-1}" --json "$dir/never.json" >/dev/null 2>"$dir/bad.txt" || rc=$?
  [[ $rc -eq 2 && $(wc -l <"$dir/bad.txt") -eq 1 ]] &&
    grep -q "^triada-bench: error: " "$dir/bad.txt" && grep -qF -- "$needle" "$dir/bad.txt" &&
    [[ ! -e $dir/never.json ]] ||
    { echo "exit $rc: $(cat -v "$dir/bad.txt")" >&2; return 1; }
}
check "--calibrate with --mxu is refused" refused --calibrate --mxu "--mxu, --accuracy, --m3xu and --calibrate: choose one"
check "--calibrate with --accuracy is refused" refused --accuracy --calibrate "choose one"
check "--calibrate with --variants is refused" refused --calibrate --variants fused \
  "--calibrate: --variants does not apply"
check "--calibrate with --sparsity is refused" refused --calibrate --quick --sparsity r90 \
  "--calibrate: --sparsity does not apply"
check "--calibrate with --transform is refused" refused --calibrate --transform dht \
  "--calibrate: --transform does not apply"
check "--calibrate with a bad --reps is refused" refused --calibrate --reps 0 "--reps"
check "--calibrate with a bad --sizes is refused" refused --calibrate --sizes 64x64 "--sizes"
check "--calibrate refuses an existing --json without --force" bash -c '
  touch "$1/exists.json"
  "$0" --calibrate --quick --json "$1/exists.json" >/dev/null 2>"$1/e.txt"; rc=$?
  [[ $rc -ne 0 && ! -s $1/exists.json ]] && grep -q "exists.json" "$1/e.txt"' "$BENCH" "$dir"

summary
