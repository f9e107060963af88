#!/usr/bin/env bash
# No function in src/ or apps/ is longer than about 120 lines (doc/design.md §10): a long
# function is where transports, kernels and counters used to get mixed. Prints each one
# as FILE:LINE. The checker is exercised on a planted long function first, so that a
# checker that finds nothing cannot pass.
set -euo pipefail
SRC=${TRIADA_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PY=${PYTHON:-/usr/bin/python3}
LIMIT=125
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
  echo "template <class T>"
  echo "void planted(const T& a,"
  echo "             int b) {"
  for i in $(seq 130); do echo "  f($i, \"}\"); // {"; done
  echo "}"
} >"$tmp/planted.cpp"
if "$PY" "$SRC/tests/cli/function_lengths.py" "$LIMIT" "$tmp" >"$tmp/out"; then
  echo "FAIL: the checker missed a planted 132-line function" >&2
  exit 1
fi
grep -q "planted.cpp:3: function of 132 lines" "$tmp/out" || {
  echo "FAIL: the checker reported: $(cat "$tmp/out")" >&2
  exit 1
}

cd "$SRC"
"$PY" tests/cli/function_lengths.py "$LIMIT" src apps
echo "ok   no function in src/ or apps/ longer than $LIMIT lines"
