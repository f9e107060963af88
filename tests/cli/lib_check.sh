# Shared by the CLI test scripts (sourced): `check NAME COMMAND...` runs the command,
# counts and reports the outcome (a script may define its own `check` after sourcing);
# `pass` and `fail MESSAGE...` count an outcome decided by the script; `summary` prints
# the closing "N passed, M failed" line and fails the script if anything failed.
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  echo "FAIL: $*" >&2
  failed=$((failed + 1))
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
summary() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
