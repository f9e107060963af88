#!/usr/bin/env bash
# The documentation's links hold: every relative link of README.md and doc/*.md names a
# file of the repository, and every #anchor a heading of the page it points to (GitHub's
# anchors: the heading lower-cased, punctuation but - and _ dropped, spaces as -).
# Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"

echo "-- every relative link and anchor of README.md and doc/*.md resolves"
check "documentation links resolve" "$PYTHON" - "$TRIADA_SRC"/README.md "$TRIADA_SRC"/doc/*.md <<'PY'
import pathlib, re, sys

def anchors(page):
    found = set()
    for line in page.read_text().split("\n"):
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found

pages = [pathlib.Path(p) for p in sys.argv[1:]]
assert len(pages) > 5, "README.md and the doc/ pages"
bad, links = [], 0
for page in pages:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code is not linked
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        links += 1
        path, _, anchor = target.partition("#")
        to = (page.parent / path).resolve() if path else page.resolve()
        if not to.exists():
            bad.append(f"{page.name}: {target} (no such file)")
        elif anchor and to.suffix == ".md" and anchor not in anchors(to):
            bad.append(f"{page.name}: {target} (no such heading)")
assert links > 50, f"only {links} links found"
assert not bad, "\n".join(bad)
PY

summary
