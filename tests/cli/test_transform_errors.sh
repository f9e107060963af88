#!/usr/bin/env bash
# End-to-end checks of the error paths of triada-transform (doc/design.md §6): every bad
# input ends the run with exactly one line 'triada-transform: error: ...' on stderr that
# names the input, a non-zero exit code, no hang (timeout 60 s), and no file left behind
# (neither the output nor a temporary '.<name>.tmp-*'), at np=1 and under mpirun at np=3
# and np=5 (np=5: dedicated actuator ranks); a check that needs no data refuses --dry-run
# and --model-only alike, with the same exit code and line. An existing output survives
# byte-identical without --force and is replaced with it. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir transform-errors
mkdir in cases

# ---- inputs ---------------------------------------------------------------------------
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(3)
with h5py.File('in/x.h5', 'w') as f:          # 4x5x3 float64, the good input
    f['x'] = rng.standard_normal((4, 5, 3))
with h5py.File('in/x5.h5', 'w') as f:         # N3 = 5
    f['x'] = rng.standard_normal((4, 4, 5))
with h5py.File('in/two.h5', 'w') as f:        # two rank-3 datasets
    f['a'] = np.ones((2, 2, 2))
    f['b'] = np.ones((2, 2, 2))
with h5py.File('in/rank2.h5', 'w') as f:      # rank 2 only
    f['x'] = np.ones((4, 4))
with h5py.File('in/strings.h5', 'w') as f:    # rank-3 string dataset
    f.create_dataset('x', data=np.array([[[b'ab', b'cd']] * 2] * 2, dtype='S2'))
with h5py.File('in/x788.h5', 'w') as f:       # not a power of two along axis 1
    f['x'] = np.ones((7, 8, 8))
with h5py.File('in/noc2.h5', 'w') as f:       # coefficients without /C2
    f['C1'] = np.eye(4); f['C3'] = np.eye(3)
with h5py.File('in/badc1.h5', 'w') as f:      # /C1 has 5 rows, N1 = 4
    f['C1'] = np.ones((5, 4)); f['C2'] = np.eye(5); f['C3'] = np.eye(3)
with h5py.File('in/nanc2.h5', 'w') as f:   # /C2 holds a NaN
    c2 = np.eye(5); c2[1, 3] = np.nan
    f['C1'] = np.eye(4); f['C2'] = c2; f['C3'] = np.eye(3)
with h5py.File('in/singular.h5', 'w') as f:   # /C3 singular (rank 1)
    f['C1'] = np.eye(4); f['C2'] = np.eye(5); f['C3'] = np.ones((3, 3))
EOF
echo 'this is not an HDF5 file' >in/text.h5
printf '[mesh]\ncelz = 1\n' >in/badkey.ini

# ---- one error case -------------------------------------------------------------------
# Each run works in its own directory cases/ID (with an empty out/ for the output), so the
# runs of one case at np=1, 3, 5 go concurrently (mpirun start-up is mostly waiting).
# launch ID NP ARGS... : NP=0 runs the app as a plain process, otherwise mpirun -np NP.
ncase=0
launch() {
  local id=$1 np=$2
  shift 2
  mkdir -p "cases/$id/out"
  (
    cd "cases/$id"
    # Concurrent mpiruns race on Open MPI's one session directory root: one each.
    export OMPI_MCA_orte_tmpdir_base=$tmp/sess/$id
    rc=0
    if [[ $np -eq 0 ]]; then
      timeout 60 "$APP" "$@" >stdout.txt 2>stderr.txt || rc=$?
    else
      timeout 60 "$MPIEXEC" --oversubscribe -np "$np" "$APP" "$@" >stdout.txt 2>stderr.txt || rc=$?
    fi
    echo "$rc" >rc.txt
  ) &
}

# check ID WHAT "TOKEN[|TOKEN...]" "ARGS" : all TOKENs must appear on the error line; the
# files allowed in out/ afterwards are $keep (space-separated names, default none); the
# exit code must be $want_rc when set (2: bad option or config).
keep=""
want_rc=""
check() {
  local id=$1 what=$2 tokens=$3 args=$4
  local d="cases/$id" rc
  rc=$(cat "$d/rc.txt")

  # 1. finishes (no hang) with a non-zero exit code
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    fail "$what: timed out (hang), args: $args"
  elif [[ $rc -eq 0 ]]; then
    fail "$what: exit code 0, args: $args"
  elif [[ -n $want_rc && $rc -ne $want_rc ]]; then
    fail "$what: exit code $rc, expected $want_rc, args: $args"
  else
    pass
  fi

  # 2. exactly one error line from our app, starting with the prefix, naming the input
  local n line ok=1 tok
  n=$(grep -c 'triada-transform: error' "$d/stderr.txt" || true)
  line=$(grep 'triada-transform: error' "$d/stderr.txt" | head -n 1 || true)
  if [[ $n -ne 1 ]]; then
    ok=0
    fail "$what: expected 1 'triada-transform: error' line on stderr, got $n: $(cat "$d/stderr.txt")"
  elif [[ $line != "triada-transform: error: "* ]]; then
    ok=0
    fail "$what: error line does not start with 'triada-transform: error:': '$line'"
  elif LC_ALL=C grep -q '[^[:print:]]' <<<"$line"; then
    ok=0
    fail "$what: error line holds raw non-printable bytes: '$(cat -v <<<"$line")'"
  elif grep -q 'triada-transform: error' "$d/stdout.txt"; then
    ok=0
    fail "$what: error line also on stdout: $(cat "$d/stdout.txt")"
  else
    IFS='|' read -r -a toks <<<"$tokens"
    for tok in "${toks[@]}"; do
      if [[ $line != *"$tok"* ]]; then
        ok=0
        fail "$what: error line does not name '$tok': '$line'"
        break
      fi
    done
  fi
  if [[ $ok -eq 1 ]]; then pass; fi

  # 3. nothing left behind in the output directory (no output, no report, no temp file)
  local left expect
  left=$(cd "$d/out" && find . -mindepth 1 | sed 's|^\./||' | sort | tr '\n' ' ')
  expect=$(tr ' ' '\n' <<<"$keep" | sed '/^$/d' | sort | tr '\n' ' ')
  if [[ $left != "$expect" ]]; then
    fail "$what: files left in the output directory: '$left' (expected '$expect')"
  else
    pass
  fi
}

# ---- the same checks in --dry-run and --model-only ------------------------------------
# Every check of a run that needs no tensor data holds in --dry-run and in --model-only too
# (doc/transform.md "A plan before the run"): a case also runs with --dry-run and, where `model`
# gives the input's shape, as --model-only of that shape (no --input, no --output), and must
# exit as the run did with the same error line, the input's name aside. `plan_ok` (a
# reason) marks a case only the run refuses: a check of the data, or of the output, which a
# plan never probes. Both are set for one case as `model=4,5,3 all_np ...`.
model=""
plan_ok=""

# model_args ARGS...: ARGS with --input/-i replaced by --model-only $model and without
# --output/-o, in the array margs.
model_args() {
  margs=()
  local skip=0 a
  for a in "$@"; do
    if [[ $skip -eq 1 ]]; then
      skip=0
    elif [[ $a == --input || $a == -i ]]; then
      margs+=(--model-only "$model")
      skip=1
    elif [[ $a == --output || $a == -o ]]; then
      skip=1
    else
      margs+=("$a")
    fi
  done
}

# input_of ARGS...: the value of --input/-i (empty if none).
input_of() {
  while [[ $# -gt 1 ]]; do
    if [[ $1 == --input || $1 == -i ]]; then
      echo "$2"
      return
    fi
    shift
  done
}

# launch_plans ARGS...: launches the case's --dry-run (and --model-only) at np=1; their
# case ids in plan_ids.
launch_plans() {
  plan_ids=()
  ncase=$((ncase + 1))
  keep_copy "$ncase"
  launch "$ncase" 0 "$@" --dry-run
  plan_ids+=("$ncase:--dry-run")
  if [[ -n $model ]]; then
    model_args "$@"
    ncase=$((ncase + 1))
    keep_copy "$ncase"
    launch "$ncase" 0 "${margs[@]}"
    plan_ids+=("$ncase:--model-only $model")
  fi
}

# keep_copy ID: with $keep set, the existing output the case must leave as it is.
keep_copy() {
  [[ -z $keep ]] && return
  mkdir -p "cases/$1/out"
  cp "$keep_src" "cases/$1/out/$keep"
}

# error_line ID NAME: the case's error line with NAME (the input as named) replaced by X.
error_line() {
  local line
  line=$(grep 'triada-transform: error' "cases/$1/stderr.txt" | head -n 1 || true)
  [[ -n $2 ]] && line=${line//"$2"/X}
  echo "$line"
}

# check_plans WHAT RUN_ID ARGS...: each of plan_ids against the run RUN_ID (np=1).
check_plans() {
  local what=$1 run=$2 e id mode rc_run rc line_run line left
  shift 2
  rc_run=$(cat "cases/$run/rc.txt")
  line_run=$(error_line "$run" "$(input_of "$@")")
  for e in "${plan_ids[@]}"; do
    id=${e%%:*} mode=${e#*:}
    rc=$(cat "cases/$id/rc.txt")
    if [[ -n $plan_ok ]]; then
      [[ $rc -eq 0 ]] && pass || fail "$what ($mode): exit $rc, expected 0 ($plan_ok): $(cat "cases/$id/stderr.txt")"
      continue
    fi
    line=$(error_line "$id" "$([[ $mode == --model-only* ]] && echo "--model-only ${model//,/x}" || input_of "$@")")
    if [[ $rc -ne $rc_run || $line != "$line_run" ]]; then
      fail "$what ($mode): exit $rc with '$line', but the run exits $rc_run with '$line_run'"
    else
      pass
    fi
    left=$(cd "cases/$id/out" && find . -mindepth 1 | sed 's|^\./||' | sort | tr '\n' ' ')
    [[ -z $left || $left == "$keep " ]] && pass || fail "$what ($mode): files left in out/: '$left'"
  done
}

# every case at np=1 (plain process), np=3 and np=5, run concurrently, then checked; and
# at np=1 with --dry-run and --model-only (above)
all_np() {
  local name=$1 tokens=$2
  shift 2
  local np ids=()
  for np in 0 3 5; do
    ncase=$((ncase + 1))
    keep_copy "$ncase"
    launch "$ncase" "$np" "$@"
    ids+=("$ncase:$np")
  done
  launch_plans "$@"
  wait
  local e
  for e in "${ids[@]}"; do
    np=${e#*:}
    [[ $np -eq 0 ]] && np="1, no mpirun"
    check "${e%%:*}" "$name (np=$np)" "$tokens" "$*"
  done
  check_plans "$name" "${ids[0]%%:*}" "$@"
}

I="$tmp/in"
O=(--output out/y.h5)
echo "-- bad inputs, each at np=1, 3, 5"
all_np "missing input file" "nofile.h5" --input "$I/nofile.h5" "${O[@]}" --transform dft
all_np "not an HDF5 file" "text.h5" --input "$I/text.h5" "${O[@]}" --transform dft
all_np "missing dataset" "x.h5|/nope" --input "$I/x.h5:/nope" "${O[@]}" --transform dft
all_np "two rank-3 datasets, none named" "two.h5" --input "$I/two.h5" "${O[@]}" --transform dft
all_np "rank-2 dataset" "rank2.h5" --input "$I/rank2.h5" "${O[@]}" --transform dft
all_np "string dataset" "strings.h5" --input "$I/strings.h5" "${O[@]}" --transform dft
model=7,8,8 all_np "wht on 7x8x8" "x788.h5" --input "$I/x788.h5" "${O[@]}" --transform wht
all_np "gemt without --coeffs" "--coeffs" --input "$I/x.h5" "${O[@]}" --transform gemt
all_np "coeffs without /C2" "noc2.h5|C2" --input "$I/x.h5" "${O[@]}" --transform gemt \
  --coeffs "$I/noc2.h5"
all_np "/C1 rows != N1" "badc1.h5|C1" --input "$I/x.h5" "${O[@]}" --transform gemt \
  --coeffs "$I/badc1.h5"
plan_ok="a check of the data" all_np "non-finite coefficient in /C2" "nanc2.h5|C2" --input "$I/x.h5" "${O[@]}" \
  --transform gemt --coeffs "$I/nanc2.h5"
plan_ok="a check of the data" all_np "--inverse with singular /C3" "singular.h5|C3" --input "$I/x.h5" "${O[@]}" \
  --transform gemt --coeffs "$I/singular.h5" --inverse
model=4,5,3 all_np "unknown --transform" "transform|fft" --input "$I/x.h5" "${O[@]}" --transform fft
model=4,5,3 all_np "bad --norm" "norm|unitary" --input "$I/x.h5" "${O[@]}" --transform dft --norm unitary
model=4,5,3 all_np "bad --stage-order" "stage-order" --input "$I/x.h5" "${O[@]}" --transform dft \
  --stage-order 112
model=4,5,3 all_np "bad mesh config key" "badkey.ini|celz" --input "$I/x.h5" "${O[@]}" --transform dft \
  --mesh "$I/badkey.ini"
# A mesh smaller than the problem folds (not an error); a non-positive extent is.
model=4,5,3 all_np "mesh with an empty extent" "mesh.cells" --input "$I/x.h5" "${O[@]}" \
  --transform dft --mesh.cells 4,0,4
model=4,5,3 all_np "unknown cell mode" "cell|fp8" --input "$I/x.h5" "${O[@]}" --transform dft \
  --cell-mode fp8
plan_ok="a check of the output" all_np "output directory missing" "out/nodir/y.h5" --input "$I/x.h5" --output out/nodir/y.h5 \
  --transform dft
model=4,5,3 all_np "report directory missing" "out/nodir/r.json" --input "$I/x.h5" "${O[@]}" \
  --transform dft --report out/nodir/r.json

echo "-- strict options: exit code 2 and a line naming the option or the INI file and key"
want_rc=2
printf '[mesh]\ncells = 4 4,5,3\n' >in/spaced.ini
printf '[energy]\nmac_pj = -1\n' >in/negative.ini
printf '\177ELF\002\001\000\000\033[31m\377\n' >in/binary.ini
printf '[mesh]\ncell = 4,4,4\n' >in/abbrev.ini
mkdir in/meshdir
one_np() {  # like all_np, at np=1 only (the parse is the same code on every rank)
  local name=$1 tokens=$2 run
  shift 2
  ncase=$((ncase + 1))
  run=$ncase
  launch "$ncase" 0 "$@"
  launch_plans "$@"
  wait
  check "$run" "$name (np=1, no mpirun)" "$tokens" "$*"
  check_plans "$name" "$run" "$@"
}
X=(--input "$I/x.h5" "${O[@]}")
model=4,5,3  # x.h5's shape
one_np "a stray word after --transform" "unexpected argument 'dft'" "${X[@]}" --transform dct dft
one_np "a value after the switch --force" "unexpected argument 'yes'" "${X[@]}" --transform dct \
  --force yes
one_np "abbreviated --force" "--for'" "${X[@]}" --transform dct --for
one_np "abbreviated --mesh.cells" "--mesh.cell'" "${X[@]}" --transform dct --mesh.cell 4,4,4
one_np "abbreviated INI key" "abbrev.ini: [mesh] cell: unknown key" "${X[@]}" --transform dct \
  --mesh "$I/abbrev.ini"
for spec in dct, ,dct dct,,dft dct,dct,dct,dct; do
  one_np "--transform $spec" "--transform|'$spec'" "${X[@]}" --transform "$spec"
done
one_np "a space inside a number" "--mesh.cells|'4 4,5,3'" "${X[@]}" --transform dct \
  --mesh.cells "4 4,5,3"
one_np "an extent beyond int64" "--mesh.cells" "${X[@]}" --transform dct \
  --mesh.cells 99999999999999999999,4,4
one_np "a negative --shuffle-seed" "--shuffle-seed|'-1'" "${X[@]}" --transform dct \
  --shuffle-seed -1
model=4,5,3 all_np "--mesh names a directory" "meshdir|directory" "${X[@]}" --transform dct \
  --mesh "$I/meshdir"
model=4,5,3 all_np "a bad value in the mesh INI" "spaced.ini: [mesh] cells|'4 4,5,3'" "${X[@]}" \
  --transform dct --mesh "$I/spaced.ini"
one_np "a negative energy in the mesh INI" "negative.ini: [energy] mac_pj" "${X[@]}" \
  --transform dct --mesh "$I/negative.ini"
one_np "a binary mesh INI" "binary.ini|\\x7f" "${X[@]}" --transform dct --mesh "$I/binary.ini"
# The physical model's keys (doc/physical.md): negative, non-finite, unknown node or model.
printf '[timing]\nwire_ps_per_mm = nan\n' >in/nanwire.ini
one_np "a negative --timing.driver_ps" "--timing.driver_ps|'-5'" "${X[@]}" --transform dct \
  --timing.driver_ps -5
one_np "a NaN wire delay in the INI" "nanwire.ini: [timing] wire_ps_per_mm|'nan'" "${X[@]}" \
  --transform dct --mesh "$I/nanwire.ini"
one_np "an unknown technology node" "--technology.node_nm|22" "${X[@]}" --transform dct \
  --technology.node_nm 22
one_np "an unknown bus model" "--timing.bus_model|wireless" "${X[@]}" --transform dct \
  --timing.bus_model wireless
one_np "zero actuator heads" "--timing.actuator_heads" "${X[@]}" --transform dct \
  --timing.actuator_heads 0
model=""
one_np "--model-only with --input" "--model-only|--input" --model-only 4,4,4 "${X[@]}" \
  --transform dct
one_np "--model-only with gemt's --coeffs" "--model-only|--coeffs" --model-only 4,4,4 --transform gemt \
  --coeffs c.h5
one_np "--model-only with a bad shape" "--model-only|'4,0,4'" --model-only 4,0,4 --transform dct
want_rc=""

echo "-- more brick ranks than cells (np=6, colocated actuators, 1x1x6 grid, N3=5)"
ncase=$((ncase + 1))
run=$ncase
bricks6=(--input "$I/x5.h5" "${O[@]}" --transform dft --ranks.grid 1,1,6 --ranks.actuators colocated)
launch "$ncase" 6 "${bricks6[@]}"
ncase=$((ncase + 1))
launch "$ncase" 6 "${bricks6[@]}" --dry-run
plan_ids=("$ncase:--dry-run")
model=4,4,5
model_args "${bricks6[@]}"
ncase=$((ncase + 1))
launch "$ncase" 6 "${margs[@]}"
plan_ids+=("$ncase:--model-only $model")
wait
check "$run" "1x1x6 bricks on N3=5 (np=6, colocated)" "ranks.grid" "--ranks.grid 1,1,6"
check_plans "1x1x6 bricks on N3=5 (np=6)" "$run" "${bricks6[@]}"
model=""

echo "-- an existing output is kept byte-identical without --force"
"$APP" --input "$I/x5.h5" --output keep.h5 --transform dct -q
keep_src="$tmp/keep.h5"
before=$(sha256sum <keep.h5)
keep="keep.h5"
first=$((ncase + 1))
plan_ok="a check of the output" all_np "output exists without --force" "keep.h5|--force" --input "$I/x.h5" \
  --output out/keep.h5 --transform dft
for id in $(seq "$first" "$ncase"); do
  after=$(sha256sum <"cases/$id/out/keep.h5")
  if [[ $before == "$after" ]]; then pass; else fail "existing keep.h5 changed (case $id)"; fi
done

echo "-- --force replaces an existing output"
mkdir force
cp keep.h5 force/keep.h5
rc=0
timeout 60 "$MPIEXEC" --oversubscribe -np 3 "$APP" --input "$I/x.h5" --output force/keep.h5 \
  --transform dft --force -q >stdout.txt 2>stderr.txt || rc=$?
if [[ $rc -ne 0 ]]; then
  fail "--force run exited $rc: $(cat stderr.txt)"
elif "$PYTHON" -c "
import h5py, sys
d = h5py.File('force/keep.h5', 'r')['/y']
sys.exit(0 if d.shape == (4, 5, 3) and d.dtype.name == 'complex128'
         and d.attrs['transform'] == 'dft,dft,dft' else 1)
"; then
  pass
else
  fail "--force did not replace force/keep.h5 with the new result"
fi
left=$(cd force && find . -mindepth 1 | sed 's|^\./||' | tr '\n' ' ')
if [[ $left == "keep.h5 " ]]; then pass; else fail "after --force, force/ holds: '$left'"; fi

summary
