#!/usr/bin/env bash
# triada-transform with a [chip] area budget (doc/physical.md §4.1): --model-only, --dry-run
# and a real run all plan on the mesh the sizer picks (the report's physical.chip.mesh),
# not the full mesh; the real run's output equals, bitwise, the same run with --mesh.cells
# set to that mesh. A problem too large for the die is refused in one line, or with
# [memory] kind set tiled in passes.
# Run by ctest (label cli).
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"

in_scratch_dir chip

ok() {
  run_np 1 "$APP" "$@"
  [[ $rc -eq 0 ]] || fail "$*: exit $rc: $(cat err.txt)"
}

# A budget that folds 24x20x16 (fp64 DCT at 7 nm) onto a smaller mesh.
CHIP=(-t dct --chip.area_mm2 0.5 --technology.node_nm 7)

ok --model-only 24,20,16 "${CHIP[@]}" --report model.json
ok --model-only 24,20,16 "${CHIP[@]}" --dry-run --report dry.json
pycheck "--model-only and --dry-run plan on the sized mesh, folded" '
m, d = (json.load(open(f)) for f in a)
sized = m["physical"]["chip"]["mesh"]
assert sized != [24, 20, 16], sized
assert m["mesh"]["cells"] == sized, (m["mesh"], sized)
assert d["physical"]["chip"]["mesh"] == sized, d["physical"]["chip"]
assert d["layout"]["mesh"] == sized, d["layout"]
fold = [-(-v // p) for v, p in zip([24, 20, 16], sized)]
assert m["mesh"]["fold"] == fold and d["layout"]["fold"] == fold, (m["mesh"], d["layout"])
' model.json dry.json

"$TRIADA_BIN/triada-gen" -o x.h5 --shape 24,20,16 >/dev/null
ok -i x.h5 -o sized.h5 "${CHIP[@]}" --report run.json
mesh=$("$PYTHON" -c 'import json; print(",".join(map(str, json.load(open("model.json"))["physical"]["chip"]["mesh"])))')
ok -i x.h5 -o fixed.h5 -t dct --technology.node_nm 7 --mesh.cells "$mesh" --report fixed.json
pycheck "the run's mesh is the sized one and its output that of --mesh.cells $mesh, bitwise" '
import h5py, numpy as np
run, fixed = (json.load(open(f)) for f in a[:2])
assert run["mesh"]["cells"] == run["physical"]["chip"]["mesh"] == fixed["mesh"]["cells"]
assert run["mesh"]["cells"] != [24, 20, 16] and run["mesh"]["fold"] != [1, 1, 1], run["mesh"]
y, z = (h5py.File(f, "r")["y"][...] for f in a[2:])
assert y.shape == (24, 20, 16) and y.tobytes() == z.tobytes()
' run.json fixed.json sized.h5 fixed.h5

# Too large for the die: refused with one line, unless [memory] tiles it in passes.
SHAPE=48,40,32
TILE=(--model-only "$SHAPE" -t dct --chip.area_mm2 0.3 --technology.node_nm 7)
expect_error_np 1 2 "set \[memory\] kind to tile it off chip" "$APP" "${TILE[@]}"
ok "${TILE[@]}" --memory.kind hbm3 --report tiled.json
pycheck "tiled: the sized mesh in passes, within the budget, bytes as each pass moves them" '
r = json.load(open(a[0]))
p = r["physical"]
assert r["mesh"]["cells"] == p["chip"]["mesh"]
assert p["memory"]["passes"] in (2, 3) and p["chip"]["area_mm2"]["total"] <= 0.3, p["memory"]
assert p["memory"]["bytes_read"] == sum(q["bytes_read"] for q in p["memory"]["per_pass"])
assert abs(p["seconds"] / (p["compute_seconds"] + p["memory_seconds"]) - 1) < 1e-12
' tiled.json

# Beyond a reticle: a given mesh whose die is longer than chip.max_die_mm is refused in one
# line naming the key; the sized one fits the outline the report gives.
OUTLINE=(--model-only 24,20,16 -t dct --technology.node_nm 7 --area.layout planar)
expect_error_np 1 2 "beyond chip.max_die_mm = 0.1 x 0.2 mm" "$APP" "${OUTLINE[@]}" \
  --chip.mesh 24,20,16 --chip.max_die_mm 0.1,0.2
ok "${OUTLINE[@]}" --chip.area_mm2 5 --chip.max_die_mm 0.3,0.5 --report outline.json
pycheck "the sized die fits the outline it reports" '
c = json.load(open(a[0]))["physical"]["chip"]
assert c["max_die_mm"] == [0.3, 0.5] and c["outline_mm"][0] <= c["outline_mm"][1], c
assert c["outline_mm"][0] <= 0.3 and c["outline_mm"][1] <= 0.5, c["outline_mm"]
' outline.json

# A power budget under the chip's power: the summary's chip line states the stretch, the
# report's the same k.
ok --model-only 24,20,16 "${CHIP[@]}" --chip.power_w 0.05 --report capped.json
cp err.txt capped.txt
pycheck "the summary states the period stretch the power cap applied" '
import re
r = json.load(open(a[0]))["physical"]["chip"]["power"]
assert r["clock_capped"] and r["w"] <= 0.05, r
m = re.search(r"clock stretched x([0-9.e+]+) to fit the power", open(a[1]).read())
assert m and len(m.group(1).replace(".", "")) <= 4, open(a[1]).read()
assert abs(float(m.group(1)) / r["period_stretch"] - 1) < 5e-4, (m.group(1), r)
' capped.json capped.txt

summary
