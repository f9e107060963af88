#!/usr/bin/env bash
# Peak resident memory per brick rank stays within 3x the brick's tensor bytes plus a
# fixed few MB (issue 3, item 4), as the report measures it: peak RSS minus the RSS
# before the input was read.
set -euo pipefail
BIN=${TRIADA_BIN:?}
MPIEXEC=${MPIEXEC:-mpirun}
PY=${PYTHON:-/usr/bin/python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

"$BIN/triada-gen" -o "$dir/x.h5" --shape 160,144,128 --sparsity 0.3 > /dev/null
for np in 1 2; do
  for ex in fused; do
    "$MPIEXEC" --oversubscribe -np "$np" "$BIN/triada-transform" -i "$dir/x.h5" \
      -o "$dir/y_${np}_$ex.h5" -t dct,dht,dct --executor "$ex" --ranks.actuators colocated \
      --report "$dir/r_${np}_$ex.json" -q
    check "peak RSS within 3x brick + 16 MiB, np=$np $ex" "$PY" - "$dir/r_${np}_$ex.json" "$ex" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["memory"]
ok = True
for peak, base, brick in zip(m["peak_rss_bytes"], m["baseline_rss_bytes"], m["brick_tensor_bytes"]):
    growth = peak - base
    limit = 3 * brick + 16 * 2**20
    print(f"  {sys.argv[2]}: grew {growth / 2**20:.1f} MiB for a {brick / 2**20:.1f} MiB brick (limit {limit / 2**20:.1f} MiB)")
    if growth > limit:
        ok = False
sys.exit(0 if ok else 1)
PY
  done
done
summary
