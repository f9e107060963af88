#!/usr/bin/env bash
# The documentation's mpirun commands fit a 2-core laptop as printed: every `mpirun -np N`
# with a number, in README.md and in doc/*.md's code blocks, asks for at most 2 ranks or says
# --oversubscribe, and the README's worked example runs as printed (mpirun without
# --oversubscribe) and prints the lines shown, times aside.
# Run by ctest (label cli); skipped (77) on a machine with fewer than 2 cores.
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"

if [[ $(nproc) -lt 2 ]]; then
  echo "SKIPPED: $(nproc) core; the README's examples want 2"
  exit 77
fi
in_scratch_dir readme-mpirun

echo "-- every mpirun -np N in README.md and doc/*.md asks for at most 2 ranks or oversubscribes"
check "documented mpirun commands fit 2 cores" "$PYTHON" - "$TRIADA_SRC"/README.md \
  "$TRIADA_SRC"/doc/*.md <<'EOF'
import re, sys
def commands(name):  # the README's every line; a doc page's code blocks (prose may cite runs)
    fenced = False
    for line in open(name):
        fenced ^= line.startswith("```")
        if fenced or name.endswith("README.md"):
            yield line
bad = [f"{name}: {line.strip()}" for name in sys.argv[1:] for line in commands(name)
       for m in [re.search(r"\bmpirun\b.*?-np\s+(\d+)", line)]
       if m and int(m.group(1)) > 2 and "--oversubscribe" not in line]
assert len(sys.argv) > 3, "README.md and the doc/ pages"
assert not bad, "needs more than 2 cores: " + " | ".join(bad)
EOF

echo "-- the worked example, as printed"
# The first sh block after "## Worked example": the "$ ..." command (with its "\"
# continuation lines) and the lines it prints.
"$PYTHON" - "$TRIADA_SRC/README.md" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"## Worked example\n+```sh\n(.*?)```", text, re.S).group(1).splitlines()
cmd, i = [block[0][2:]], 1
while cmd[-1].endswith("\\"):
    cmd[-1] = cmd[-1][:-1]
    cmd.append(block[i].strip())
    i += 1
open("command.txt", "w").write(" ".join(cmd) + "\n")
open("printed.txt", "w").write("\n".join(block[i:]) + "\n")
EOF
read -r -a words <command.txt
if [[ ${words[0]} != mpirun ]] || grep -q -- "--oversubscribe" command.txt; then
  fail "the worked example is not a plain mpirun command: $(cat command.txt)"
fi
args=()
# Only the words' prefixes are mapped: the build or source tree may itself lie under /tmp.
for w in "${words[@]:1}"; do
  w=${w/#\/tmp\//$tmp/}
  w=${w/#build\//$TRIADA_BIN/}
  args+=("${w/#data\//$TRIADA_SRC/data/}")
done
if timeout 120 "$MPIEXEC" "${args[@]}" >got.txt 2>err.txt; then
  pass
  # The wall and simulation times differ from run to run; every other line is exact.
  check "the example prints what the README shows (times aside)" \
    diff <(grep -vE '^  (time|split|model) ' printed.txt) <(grep -vE '^  (time|split|model) ' got.txt)
  check "the split and model lines have the README's form" bash -c \
    "grep -qE '^  split    slowest stage [123] \(axis [123]\) [0-9.]+ s; min/mean/max over 2 brick ranks: compute [0-9./]+, pack [0-9./]+, wait [0-9./]+, idle [0-9./]+ s$' got.txt && grep -qE '^  model    stages( [0-9.e+-]+){3} s modelled, measured( [0-9.e+-]+){3} s \(\[machine\] ' got.txt"
  check "the time line has the README's form" \
    grep -qE '^  time     [0-9.]+ s wall \(simulation [0-9.]+ s\); MPI [0-9]+ messages, [0-9.]+ MiB$' \
    got.txt
  for f in s.h5 r.json t.csv; do check "the example wrote /tmp/$f" test -s "$tmp/$f"; done
else
  fail "the worked example failed without --oversubscribe: $(cat err.txt)"
fi

summary
