#!/usr/bin/env bash
# The sample job of run_scripts/demo.sh (3D DCT of data/sample.h5 with the default mesh
# config at np=4: 1 brick + 3 actuator ranks), run with the already built binaries, and
# the --help text of triada-transform. Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

: "${TRIADA_SRC:?set TRIADA_SRC to the source directory}"
APP="$TRIADA_BIN/triada-transform"

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-demo-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

echo "-- the demo job: mpirun -np 4 triada-transform --transform dct on data/sample.h5"
rc=0
timeout 60 "$MPIEXEC" --oversubscribe -np 4 "$APP" --input "$TRIADA_SRC/data/sample.h5" \
  --output "$dir/o.h5" --transform dct --mesh "$TRIADA_SRC/meshcfg/default.ini" \
  --report "$dir/r.json" >demo.out 2>demo.err || rc=$?
cat demo.out
if [[ $rc -eq 0 ]]; then pass; else fail "demo job exited $rc: $(cat demo.err)"; fi
for word in steps MACs energy; do
  if grep -q "$word" demo.out; then pass; else fail "summary lacks '$word': $(cat demo.out)"; fi
done
if [[ -s o.h5 ]]; then pass; else fail "no output o.h5"; fi
if [[ -s r.json ]]; then pass; else fail "no report r.json"; fi
if "$PYTHON" -c "
import json, h5py
r = json.load(open('r.json'))
assert r['schema'] == 'triada-report/1', r.get('schema')
assert r['mesh']['world_size'] == 4 and r['mesh']['actuator_ranks'] == 3, r['mesh']
with h5py.File('$TRIADA_SRC/data/sample.h5', 'r') as f:
    shapes = []
    f.visititems(lambda n, o: shapes.append(o.shape) if hasattr(o, 'shape') else None)
with h5py.File('o.h5', 'r') as f:
    y = f['/y']
    assert y.dtype.name == 'float64', y.dtype
    assert y.shape in shapes, (y.shape, shapes)
" 2>check.err; then
  pass
else
  fail "report/output content: $(tail -n 3 check.err)"
fi

echo "-- run_scripts/demo.sh writes nothing in the repository outside its build folder"
# A copy of the script in a bare tree, with install_deps.sh, cmake and mpirun stubbed: what
# the script itself creates is all that appears.
mkdir -p fake/run_scripts stubs
cp "$TRIADA_SRC/run_scripts/demo.sh" fake/run_scripts/
echo 'exit 0' >fake/run_scripts/install_deps.sh
printf '#!/bin/sh\necho "$@" >>"%s/stubs/calls"\n' "$dir" >stubs/cmake
cp stubs/cmake stubs/mpirun
chmod +x stubs/cmake stubs/mpirun
rc=0
PATH="$dir/stubs:$PATH" BUILD_DIR= bash fake/run_scripts/demo.sh 1 >stub.out 2>&1 || rc=$?
if [[ $rc -eq 0 ]]; then pass; else fail "stubbed demo.sh exited $rc: $(cat stub.out)"; fi
left=$(cd fake && find . -mindepth 1 -maxdepth 1 ! -name run_scripts ! -name build | sort)
if [[ -z $left ]]; then pass; else fail "demo.sh left in the repository: $left"; fi
if [[ -f fake/build/configure.log ]]; then pass; else
  fail "no configure log in the build folder"; fi

echo "-- triada-transform --help"
rc=0
"$APP" --help >help.out 2>&1 || rc=$?
if [[ $rc -eq 0 ]]; then pass; else fail "--help exited $rc"; fi
for opt in --input --output --transform --inverse --norm --coeffs --stage-order --esop \
  --mesh --report --trace --force; do
  if grep -q -- "$opt\b" help.out; then pass; else fail "--help does not mention $opt"; fi
done

summary
