#!/usr/bin/env bash
# Every C++ file of src, include, apps, tests, bench, python and examples is formatted as
# the repository's .clang-format says: clang-format --dry-run -Werror, which names each
# file and line that differs. Fix with: clang-format -i FILE... (same clang-format major
# version as CI: Debian 12's clang-format 14; CLANG_FORMAT overrides the binary).
# Usage: run_scripts/format_check.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cf=${CLANG_FORMAT:-clang-format}
command -v "$cf" >/dev/null || { echo "format_check: $cf not found (run_scripts/install_deps.sh)" >&2; exit 1; }

cd "$here"
dirs=()
for d in src include apps tests bench python examples; do [ -d "$d" ] && dirs+=("$d"); done
mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
  -o -name '*.cc' \) | LC_ALL=C sort)
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run -Werror --style=file "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -eq 0 ]; then
  echo "format_check: ${#files[@]} files formatted ($("$cf" --version))"
  exit 0
fi
# The first differences of the first files, then every file, so the log stays short.
for f in "${bad[@]:0:3}"; do "$cf" --dry-run -Werror --style=file "$f" 2>&1 | head -n 12 >&2 || true; done
echo "format_check: ${#bad[@]} of ${#files[@]} files not formatted (clang-format -i them):" >&2
printf '  %s\n' "${bad[@]}" >&2
exit 1
