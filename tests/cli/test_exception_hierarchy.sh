#!/usr/bin/env bash
# Every exception the library throws is a class of core/error.hpp's one hierarchy
# (doc/design.md §6.2), so that each program maps it to its exit code and the Python module
# to its exception class: no throw of a std:: exception in src/, and no exception class
# derived from one outside core/error.hpp. Run by ctest (label cli).
set -uo pipefail
SRC=${TRIADA_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$SRC" || exit 1
status=0
if found=$(grep -rnE "throw std::[a-z_]+ *[({]" src); then
  echo "FAIL: std:: exceptions thrown in src/ (use a class of core/error.hpp):" >&2
  echo "$found" >&2
  status=1
fi
if found=$(grep -rnE "(struct|class) +\w+ *: *(public +)?std::(exception|runtime_error|logic_error|invalid_argument)\b" src |
  grep -v "^src/core/error.hpp:"); then
  echo "FAIL: exception classes outside core/error.hpp's hierarchy:" >&2
  echo "$found" >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "PASS: every exception in src/ is a triada::error"
exit $status
