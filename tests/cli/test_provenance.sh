#!/usr/bin/env bash
# Provenance and progress of every program (doc/design.md §5.6, §5.7):
# --version names the project version and the git commit of the sources (git rev-parse, or
# "unknown" outside a checkout); every JSON report (transform, --model-only, tcu, conv,
# bench) and every HDF5 output (transform, gen) records program, version, commit, command
# line, host, date, ranks, the MPI and HDF5 libraries and the kernel path, at np 1 and 2;
# every HDF5
# attribute holding one value is a scalar. --progress: the plain lines' format in a file,
# one per update at TRIADA_PROGRESS_SECONDS=0 and from rank 0 only, the live line on a
# terminal, none with never or --quiet. Run by ctest (label cli).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"

in_scratch_dir provenance-test

APPS=(transform gen tcu conv bench)
[[ -x $TRIADA_BIN/triada-bench ]] || APPS=(transform gen tcu conv)

# The oracle: the project version from CMakeLists.txt, the commit from git itself.
version=$(sed -n 's/^project(triada .*VERSION \([0-9.]*\)).*/\1/p' "$TRIADA_SRC/CMakeLists.txt")
commit=unknown
top=$(git -C "$TRIADA_SRC" rev-parse --show-toplevel 2>/dev/null) &&
  [[ $(realpath "$top") == $(realpath "$TRIADA_SRC") ]] &&
  commit=$(git -C "$TRIADA_SRC" rev-parse HEAD)
commit_re="^${commit}(-dirty)?\$"
[[ $commit == unknown ]] && commit_re='^unknown$'
echo "-- expecting version $version, commit $commit"

echo "-- --version: version, commit, MPI, HDF5 and kernels lines, rank 0 only"
for a in "${APPS[@]}"; do
  app="$TRIADA_BIN/triada-$a"
  if "$app" --version >v.txt 2>v.err && [[ ! -s v.err ]]; then pass; else fail "$a --version: $(cat v.err)"; fi
  check "$a: first line 'triada-$a $version'" test "$(sed -n 1p v.txt)" = "triada-$a $version"
  if grep -qE "${commit_re/^/^commit }" <(sed -n 2p v.txt); then
    pass
  else  # also when the programs were built before the checkout's last commit
    fail "$a: '$(sed -n 2p v.txt)', the checkout is at $commit (rebuild after a commit)"
  fi
  check "$a: MPI and HDF5 lines" grep -qE '^HDF5: [0-9]+\.[0-9]+\.[0-9]+$' <(sed -n 4p v.txt)
  check "$a: an MPI line" grep -qE '^MPI: .+' <(sed -n 3p v.txt)
  check "$a: a kernels line" grep -qE '^kernels: (avx512|avx2|portable) \(' <(sed -n 5p v.txt)
  help=$("$app" --help 2>&1)
  check "$a: --help lists --version and --progress" \
    bash -c "grep -q -- '--version' <<<\"\$1\" && grep -q -- '--progress' <<<\"\$1\"" _ "$help"
done
cp v.txt version.txt
run_np 2 "$TRIADA_BIN/triada-gen" --version --output ignored.h5
check "np 2: --version printed once, nothing written" \
  bash -c "[[ $rc == 0 && \$(grep -c '^commit ' err.txt) == 1 && ! -e ignored.h5 ]]"
# The MPI library as mpiexec names its version (an oracle independent of our call).
mpi_version=$("${MPIEXEC:-mpiexec}" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1)

# check_record KIND FILE NP ARGS...: the provenance of FILE (a JSON report, or an HDF5
# file:/dataset for KIND h5) says the program of ARGS[0] ran ARGS on NP ranks.
check_record() {
  "$PYTHON" - "$commit_re" "$version" "${mpi_version:-}" "$@" <<'EOF'
import datetime, json, re, shlex, socket, sys
commit_re, version, mpi_version, kind, path, np, *args = sys.argv[1:]
if kind == "json":
    with open(path, encoding="utf-8") as f:
        p = json.load(f)["provenance"]
else:
    import h5py
    name, dset = path.split(":")
    with h5py.File(name, "r") as f:
        a = f[dset].attrs
        p = {k: a[k] for k in a}
        for k in ("program", "version", "commit", "command_line", "host", "date",
                  "mpi_library", "hdf5_library", "kernels"):
            assert isinstance(p[k], str), (k, type(p[k]))  # scalar strings
        assert a["ranks"].shape == (), a["ranks"]
        p["ranks"] = int(a["ranks"])
with open("version.txt") as f:
    lines = f.read().splitlines()
assert p["program"] == "triada-" + args[0].rsplit("triada-", 1)[1], p["program"]
assert p["version"] == version, p["version"]
assert re.match(commit_re, p["commit"]), (p["commit"], commit_re)
assert shlex.split(p["command_line"]) == args, (p["command_line"], args)
assert p["host"] == socket.gethostname(), p["host"]
date = datetime.datetime.strptime(p["date"], "%Y-%m-%dT%H:%M:%SZ")
age = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - date
assert datetime.timedelta(minutes=-5) < age < datetime.timedelta(hours=1), p["date"]
assert p["ranks"] == int(np), (p["ranks"], np)
assert p["mpi_library"] and (not mpi_version or mpi_version in p["mpi_library"]), p
assert "MPI: " + p["mpi_library"] == lines[2], (p["mpi_library"], lines[2])
assert re.fullmatch(r"\d+\.\d+\.\d+", p["hdf5_library"]), p["hdf5_library"]
assert "HDF5: " + p["hdf5_library"] == lines[3], (p["hdf5_library"], lines[3])
assert lines[4].startswith("kernels: " + p["kernels"] + " ("), (p["kernels"], lines[4])
EOF
}

# Every attribute of FILE:/DSET holds one value as a scalar; the listed ones are arrays.
check_scalars() {
  "$PYTHON" - "$@" <<'EOF'
import sys, h5py
name, dset, *arrays = sys.argv[1:]
with h5py.File(name, "r") as f:
    a = f[dset].attrs
    assert len(a) > 0
    for k in a:
        v = a[k]
        if k in arrays:
            assert v.ndim == 1 and v.size > 1, (k, v)
        else:
            assert isinstance(v, str) or v.shape == (), (k, v)
            assert a.get_id(k).shape == (), (k, a.get_id(k).shape)  # the dataspace itself
EOF
}

GEN=$TRIADA_BIN/triada-gen
TR=$TRIADA_BIN/triada-transform
for np in 1 2; do
  echo "-- np $np: records in the outputs of gen, transform, tcu, conv, bench"
  run_np "$np" "$GEN" --output "x$np.h5:/x" --shape 6,5,4 --dist int --seed 3
  check "np $np: gen ran" test "$rc" = 0
  check "np $np: gen's file records its run" \
    check_record h5 "x$np.h5:/x" "$np" "$GEN" --output "x$np.h5:/x" --shape 6,5,4 --dist int --seed 3
  check "np $np: gen's attributes are scalars" check_scalars "x$np.h5" /x shape
  args=("$TR" --input "x$np.h5" --output "y$np.h5" --transform dct --report "r$np.json" --quiet)
  run_np "$np" "${args[@]}"
  check "np $np: transform ran" test "$rc" = 0
  check "np $np: transform's report" check_record json "r$np.json" "$np" "${args[@]}"
  check "np $np: transform's output" check_record h5 "y$np.h5:/y" "$np" "${args[@]}"
  check "np $np: transform's attributes are scalars" \
    check_scalars "y$np.h5" /y mesh brick_ranks steps_per_stage
  args=("$TR" --model-only 8,8,8 --transform dft --report "m$np.json" --quiet)
  run_np "$np" "${args[@]}"
  check "np $np: --model-only's report" check_record json "m$np.json" "$np" "${args[@]}"
  args=("$TRIADA_BIN/triada-tcu" --algo matmul --size 8 --m 4 --latency 0 --report "t$np.json")
  run_np "$np" "${args[@]}"
  check "np $np: tcu's report" check_record json "t$np.json" "$np" "${args[@]}"
  args=("$TRIADA_BIN/triada-conv" --layer 1,2,5,5,3,3,3,1,1 --report "c$np.json" --mxu 4)
  run_np "$np" "${args[@]}"
  check "np $np: conv's report" check_record json "c$np.json" "$np" "${args[@]}"
  if [[ -x $TRIADA_BIN/triada-bench ]]; then
    args=("$TRIADA_BIN/triada-bench" --sizes 4 --sparsity dense --variants fused --reps 1
      --json "b$np.json" --progress never)
    run_np "$np" "${args[@]}"
    check "np $np: bench's JSON" check_record json "b$np.json" "$np" "${args[@]}"
  fi
done
args=("$TRIADA_BIN/triada-tcu" --algo matmul --sweep --latency 0 --sizes 4,8 --ms 4 --report sw.json)
run_np 1 "${args[@]}"
check "tcu --sweep's report" check_record json sw.json 1 "${args[@]}"
args=("$GEN" --output "sp ace's.h5" --shape 2,2,2)
run_np 1 "${args[@]}"
check "a quoted word reads back as one" check_record h5 "sp ace's.h5:/x" 1 "${args[@]}"

echo "-- --progress in a file (not a terminal)"
line_re='^triada-transform: progress stage [123]/3 \(axis [123]\): step [0-9]+/[0-9]+, [0-9]+% done, elapsed [0-9]+\.[0-9] s, ETA ([0-9]+|\?) s$'
TRA=("$TR" --input x1.h5 --output p.h5 --transform dct --force --executor reference)
"${TRA[@]}" --progress always >/dev/null 2>p.err
n10=$(grep -c . p.err)
check "always: plain lines, each of the documented format" \
  bash -c "[[ $n10 -ge 2 ]] && ! grep -vqE '$line_re' p.err"
check "always: a line at most every 10% (and the first)" test "$n10" -le 11
TRIADA_PROGRESS_SECONDS=0 "${TRA[@]}" --progress always >/dev/null 2>p0.err
check "interval 0: one line per update (6 + 5 + 4 steps)" test "$(grep -cE "$line_re" p0.err)" = 15
TRIADA_PROGRESS_SECONDS=0 "${TRA[@]}" >/dev/null 2>pa.err
check "auto in a file: the plain lines" test "$(grep -cE "$line_re" pa.err)" = 15
"${TRA[@]}" >/dev/null 2>short.err
check "auto: a run shorter than 2 s prints nothing" test ! -s short.err
for quiet in "--progress never" "--quiet" "--quiet --progress always"; do
  # shellcheck disable=SC2086
  TRIADA_PROGRESS_SECONDS=0 "${TRA[@]}" $quiet >/dev/null 2>q.err
  check "$quiet: no progress line" test ! -s q.err
done
run_np 2 env TRIADA_PROGRESS_SECONDS=0 "${TRA[@]}" --progress always --quiet
check "np 2, --quiet: nothing" bash -c "[[ $rc == 0 ]] && ! grep -q progress err.txt"
run_np 2 env TRIADA_PROGRESS_SECONDS=0 "${TRA[@]}" --progress always
check "np 2: rank 0 alone prints (15 lines, not 30)" test "$(grep -cE "$line_re" err.txt)" = 15
if script -qec true /dev/null >/dev/null 2>&1; then
  TRIADA_PROGRESS_SECONDS=0 script -qec "$(printf '%q ' "${TRA[@]}") --quiet" /dev/null \
    >tty.txt 2>&1 </dev/null
  check "quiet on a terminal: nothing" bash -c "! grep -q 'stage' tty.txt"
  TRIADA_PROGRESS_SECONDS=0 script -qec "$(printf '%q ' "${TRA[@]}")" /dev/null \
    >tty.txt 2>&1 </dev/null
  check "auto on a terminal: the live line, rewritten in place" \
    bash -c "grep -q \$'\\r  stage 1/3 (axis 3): step' tty.txt && ! grep -q 'progress stage' tty.txt"
fi

echo "-- --progress of gen, tcu, conv, bench"
run_np 2 env TRIADA_PROGRESS_SECONDS=0 "$GEN" --output g.h5 --shape 8,3,3 --progress always
check "gen np 2: rank 0's 4 planes, one line each" \
  test "$(grep -cE '^triada-gen: progress generate: plane [1-4]/4 of rank 0.s slab, [0-9]+% done' err.txt)" = 4
"$GEN" --output g.h5 --shape 8,3,3 --force --progress never 2>g.err >/dev/null
check "gen never: nothing" test ! -s g.err
"$TRIADA_BIN/triada-tcu" --algo matmul --sweep --latency 0 --sizes 4,8 --ms 4 --progress always \
  >/dev/null 2>t.err
check "tcu --sweep: a line per point" \
  test "$(grep -cE '^triada-tcu: progress sweep: point [12]/2 of rank 0 \(m 4, size [48]\), ' t.err)" = 2
"$TRIADA_BIN/triada-conv" --layer 1,2,5,5,3,3,3,1,1 --mxu 4 --progress always >/dev/null 2>c.err
check "conv: a line per part" \
  test "$(grep -cE '^triada-conv: progress layer 1/1 \(.*\) (explicit|implicit): part [12]/2 of rank 0, ' c.err)" = 2
if [[ -x $TRIADA_BIN/triada-bench ]]; then
  B=("$TRIADA_BIN/triada-bench" --sizes 4 --sparsity dense --variants fused --reps 1 --json - )
  "${B[@]}" >/dev/null 2>b.err
  check "bench: a line per row" test "$(grep -c '^triada-bench \[1/1\]' b.err)" = 1
  "${B[@]}" --progress never >/dev/null 2>b.err
  check "bench never: nothing" test ! -s b.err
fi

summary
