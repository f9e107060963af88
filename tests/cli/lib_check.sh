# Shared by the CLI test scripts (sourced): `check NAME COMMAND...` runs the command,
# counts and reports the outcome (a script may define its own `check` after sourcing);
# `pass` and `fail MESSAGE...` count an outcome decided by the script; `summary` prints
# the closing "N passed, M failed" line and fails the script if anything failed; `run_np`
# runs an app at a given rank count (below); `sanitized` is true for a sanitizer build;
# `expect_error` checks a refusal of $APP, `expect_error_np` one at a rank count, and
# `in_scratch_dir` moves into a temporary directory (below).
# Every script shares its environment from here: the build (TRIADA_BIN, required), the MPI
# launcher and Python (overridable) and Open MPI allowed to run as root (CI runs as root).
: "${TRIADA_BIN:?set TRIADA_BIN to the build directory}"
MPIEXEC=${MPIEXEC:-mpiexec}
PYTHON=${PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  echo "FAIL: $*" >&2
  failed=$((failed + 1))
}
# pycheck WHAT CODE ARGS...: python (json imported, argv in a, run in the current
# directory) must exit 0; a test may define its own pycheck after sourcing this file.
pycheck() {
  local what=$1 code=$2
  shift 2
  if "$PYTHON" -c "import json, sys
a = sys.argv[1:]
$code" "$@" 2>check.err; then
    pass
  else
    fail "$what: $(tail -n 3 check.err)"
  fi
}

check() {
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name" >&2
  fi
}
# sanitized: the apps under test are a sanitizer build (TRIADA_SANITIZED=1, set by
# tests/CMakeLists.txt), which runs them several times slower. A script may then run a
# smaller workload of a case whose full size the Release pass runs, keeping the code path.
sanitized() { [[ ${TRIADA_SANITIZED:-0} == 1 ]]; }
summary() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
# run_np NP PROGRAM ARGS...: runs PROGRAM directly at NP 1, else under mpirun -q with NP
# ranks (MPIEXEC), within 120 s (SIGTERM, then SIGKILL 10 s later: a wedged mpirun can
# outlive SIGTERM); stdout and stderr go to err.txt, the exit code to $rc.
run_np() {
  local np=$1
  shift
  set +e
  if [[ $np -eq 1 ]]; then
    timeout -k 10 120 "$@" >err.txt 2>&1
  else
    timeout -k 10 120 "${MPIEXEC:-mpiexec}" -q --oversubscribe -np "$np" "$@" >err.txt 2>&1
  fi
  rc=$?
  set -e
}
# expect_error CODE PATTERN ARGS...: $APP ARGS exits with CODE and writes exactly one
# stderr line "<app>: error: ..." containing PATTERN (stdout to out.txt, stderr to err.txt).
expect_error() {
  local code=$1 pattern=$2 app
  shift 2
  app=$(basename "$APP")
  "$APP" "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$code" ]; then
    fail "$* exited $rc, expected $code: $(cat err.txt)"
    return
  fi
  if [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q "^$app: error: .*$pattern" err.txt; then
    fail "$*: expected one '$app: error: ...$pattern' line, got: $(cat err.txt)"
    return
  fi
  pass
}
# expect_error_np NP CODE PATTERN PROGRAM ARGS...: PROGRAM ARGS at NP ranks (run_np) exits
# with CODE and its output (stdout and stderr, every rank's) holds exactly one line
# "<program>: error: ..." containing PATTERN.
expect_error_np() {
  local np=$1 code=$2 pattern=$3 app
  shift 3
  app=$(basename "$1")
  run_np "$np" "$@"
  if [ "$rc" -ne "$code" ]; then
    fail "np $np $*: exited $rc, expected $code: $(cat err.txt)"
  elif [ "$(grep -c "^$app: error" err.txt)" -ne 1 ] ||
    ! grep -q "^$app: error: .*$pattern" err.txt; then
    fail "np $np $*: expected one '$app: error: ...$pattern' line, got: $(cat err.txt)"
  else
    pass
  fi
}
# in_scratch_dir NAME: a new directory $tmp (triada-NAME.XXXXXX under $TMPDIR), removed at
# exit, becomes the working directory.
in_scratch_dir() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/triada-$1.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cd "$tmp" || exit 1
}
