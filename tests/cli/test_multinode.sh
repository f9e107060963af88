#!/usr/bin/env bash
# The distributed contract across nodes (doc/scaling.md "An emulated cluster on one
# machine"): three emulated nodes on this machine, each a UTS + network namespace of its
# own (hostname node0, node1, node2, address 10.77.0.1-3 on a bridge in a fourth
# namespace), Open MPI started in node0 and reaching node1 and node2 through an rsh agent
# that enters their namespaces, TCP between nodes and shared memory within one. Ranks
# are placed round robin over the nodes (every line of bricks crosses nodes) and two per
# node in turn (some lines within a node, some across), at 2 to 6 ranks, with dedicated
# and co-located actuators; for dft (complex input), dct and gemt (non-square
# coefficients) on a sparse 9x7x5 tensor, every --transport (auto, broadcast, shared)
# must give the one-rank output bit for bit, and triada-gen's file must be its one-rank
# file. Needs root, unshare and nsenter (util-linux) and ip (iproute2): where the
# namespaces cannot be made the script says why and exits 77, which ctest shows as
# skipped. Everything it makes lives in its scratch directory and goes at exit.
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

APP="$TRIADA_BIN/triada-transform"
GEN="$TRIADA_BIN/triada-gen"
NODES=(node0 node1 node2)
NET=10.77.0.0/24

skip() {
  echo "SKIPPED: $*; emulated multi-node cases not run"
  exit 77
}
[[ $(id -u) -eq 0 ]] || skip "making namespaces needs root"
for tool in unshare:util-linux nsenter:util-linux ip:iproute2; do
  command -v "${tool%:*}" >/dev/null || skip "no ${tool%:*} here (Debian package ${tool#*:})"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/triada-multinode.XXXXXX")
ns=$tmp/ns  # the namespaces, kept alive by bind mounts on these files
mkdir "$ns"
cleanup() {
  # A namespace ends with its last mount and process; the veth pairs and bridge go with it.
  local f
  for f in "$ns"/*; do
    if [[ -e $f ]]; then umount "$f" 2>/dev/null || true; fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP  # through the EXIT trap: no namespace left mounted
cd "$tmp"

# setup CMD...: a step of making the nodes; one that fails means it cannot be done here.
setup() {
  "$@" >>setup.err 2>&1 || skip "cannot make the emulated nodes here ($*: $(tail -n 1 setup.err))"
}
in_ns() {  # in_ns NAME CMD...: CMD in namespace NAME's network (and UTS, for a node)
  local name=$1
  shift
  if [[ -e $ns/$name.uts ]]; then
    nsenter --net="$ns/$name.net" --uts="$ns/$name.uts" -- "$@"
  else
    nsenter --net="$ns/$name.net" -- "$@"
  fi
}

setup touch "$ns/switch.net"
setup unshare --net="$ns/switch.net" true
setup in_ns switch ip link add br0 type bridge
setup in_ns switch ip link set br0 up
for i in "${!NODES[@]}"; do
  node=${NODES[$i]}
  setup touch "$ns/$node.net" "$ns/$node.uts"
  setup unshare --net="$ns/$node.net" --uts="$ns/$node.uts" hostname "$node"
  setup in_ns switch ip link add "port$i" type veth peer name eth0 netns "$ns/$node.net"
  setup in_ns switch ip link set "port$i" master br0 up
  setup in_ns "$node" ip addr add "10.77.0.$((i + 1))/24" dev eth0
  setup in_ns "$node" ip link set eth0 up
  setup in_ns "$node" ip link set lo up
done

# Open MPI calls its rsh agent as it would ssh: `agent HOST COMMAND...`, the command one
# shell line; it runs in HOST's namespaces (the same file system, so orted is found).
cat >rsh-agent <<EOF
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done  # no ssh options apply here
host=\$1
shift
[ -e "$ns/\$host.uts" ] || { echo "rsh-agent: no emulated node \$host" >&2; exit 255; }
exec nsenter --net="$ns/\$host.net" --uts="$ns/\$host.uts" -- /bin/sh -c "\$*"
EOF
chmod +x rsh-agent
printf '%s slots=2\n' "${NODES[@]}" >hostfile

# run_nodes NP MAP PROGRAM ARGS...: PROGRAM at NP ranks over the nodes, mpirun in node0;
# MAP node: round robin over the nodes, slot: two ranks per node in turn. Output to
# err.txt, exit code to $rc, within 120 s. Each node offers two slots, but all share this
# machine's cores: ranks waiting in MPI must yield, as Open MPI does by itself only where
# it sees a node oversubscribed (busy-polling ranks made each run four times slower here).
run_nodes() {
  local np=$1 map=$2
  shift 2
  set +e
  timeout -k 10 120 nsenter --net="$ns/node0.net" --uts="$ns/node0.uts" -- \
    "$MPIEXEC" -q --hostfile hostfile --map-by "$map" -np "$np" \
    --mca plm rsh --mca plm_rsh_agent "$tmp/rsh-agent" \
    --mca btl self,vader,tcp --mca btl_tcp_if_include "$NET" --mca oob_tcp_if_include "$NET" \
    --mca mpi_yield_when_idle 1 "$@" >err.txt 2>&1
  rc=$?
  set -e
}

echo "-- the ranks land on the emulated nodes"
# shellcheck disable=SC2016  # expanded by each rank's shell
where='echo "$OMPI_COMM_WORLD_RANK $(hostname)"'
# Only the ranks' lines: Open MPI's rsh launcher may warn on the same stream (a setpgid
# that lost its race with the child's exec, harmless).
ranks_placed() { { grep -E '^[0-9]+ node[0-9]+$' err.txt || true; } | sort -n | tr '\n' ' '; }
run_nodes 6 node sh -c "$where"
placed=$(ranks_placed)
check "np 6 round robin: ranks 0-5 on node0 1 2 0 1 2 ($placed)" \
  test "$placed" == "0 node0 1 node1 2 node2 3 node0 4 node1 5 node2 "
run_nodes 5 slot sh -c "$where"
placed=$(ranks_placed)
check "np 5 by slot: ranks 0-4 on node0 0 1 1 2 ($placed)" \
  test "$placed" == "0 node0 1 node0 2 node1 3 node1 4 node2 "
if [[ $failed -ne 0 ]]; then
  echo "Open MPI cannot start ranks on the emulated nodes: $(head -c 2000 err.txt)" >&2
  summary || exit 1
fi

cat >same.py <<'EOF'
import sys, h5py, numpy as np
(a, b), dset = sys.argv[1:3], sys.argv[3]
x, y = h5py.File(a, 'r')[dset][()], h5py.File(b, 'r')[dset][()]
assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
assert x.tobytes() == y.tobytes(), f'{a} and {b} differ: max |diff| {np.max(np.abs(x - y))}'
EOF
# expect_same NAME OUT REF DSET: the last run succeeded and OUT's DSET is REF's, bit for bit.
expect_same() {
  if [[ $rc -ne 0 ]]; then
    fail "$1: exit $rc: $(head -c 1500 err.txt)"
  elif "$PYTHON" same.py "$2" "$3" "$4" 2>check.err; then
    pass
    echo "ok   $1"
  else
    fail "$1: $(tail -n 1 check.err)"
  fi
}

echo "-- triada-gen: the file does not depend on the ranks or the nodes"
gen_cases=(
  "--type float64 --dist normal --sparsity 0.3 --zero-lines 0.2 --seed 7"
  "--type complex128 --dist uniform --sparsity-pattern 2:4 --pattern-axis 1 --seed 5"
)
for g in "${!gen_cases[@]}"; do
  read -ra opts <<<"${gen_cases[$g]}"
  run_np 1 "$GEN" --output "gen$g.h5" --shape 9,7,5 "${opts[@]}"
  [[ $rc -eq 0 ]] || fail "gen ${gen_cases[$g]} at np 1: $(cat err.txt)"
  for placement in "2 node" "3 node" "5 slot" "6 slot"; do
    read -r np map <<<"$placement"
    run_nodes "$np" "$map" "$GEN" --output g.h5 --shape 9,7,5 "${opts[@]}" --force
    expect_same "gen ${gen_cases[$g]}: np $np by $map == np 1" g.h5 "gen$g.h5" /x
  done
done

echo "-- triada-transform: every transport and layout gives the one-rank bits"
# A sparse real tensor (ESOP skips) with a complex twin, and non-square gemt coefficients.
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(36)
with h5py.File('gen0.h5', 'r') as f:
    x = f['x'][()]
with h5py.File('x.h5', 'w') as f:
    f['x'] = x
    f['z'] = x + 1j * np.where(x == 0, 0.0, rng.standard_normal(x.shape))
with h5py.File('coeffs.h5', 'w') as f:
    f['C1'] = rng.standard_normal((9, 4))
    f['C2'] = rng.standard_normal((7, 7))
    f['C3'] = rng.standard_normal((5, 6))
EOF
transforms=(
  "dft --input x.h5:/z"
  "dct --input x.h5:/x"
  "gemt --input x.h5:/x --coeffs coeffs.h5"
)
# A sanitizer build, several times slower, runs dft alone (every layout and transport).
sanitized && transforms=("${transforms[0]}")
# NP MAP ACTUATORS GRID: lines across nodes only, and within and across nodes.
layouts=(
  "2 node colocated auto"
  "3 node colocated auto"
  "4 slot colocated 2,2,1"
  "5 node auto auto"
  "6 slot colocated 3,2,1"
)
for t in "${transforms[@]}"; do
  read -ra opts <<<"$t"
  name=${opts[0]}
  run_np 1 "$APP" --transform "${opts[@]}" --output "ref_$name.h5" --quiet
  [[ $rc -eq 0 ]] || fail "$name at np 1: $(cat err.txt)"
  for l in "${layouts[@]}"; do
    read -r np map actuators grid <<<"$l"
    for transport in auto broadcast shared; do
      run_nodes "$np" "$map" "$APP" --transform "${opts[@]}" --output y.h5 --force --quiet \
        --ranks.actuators "$actuators" --ranks.grid "$grid" --transport "$transport"
      expect_same "$name np $np by $map, actuators $actuators, grid $grid, --transport $transport" \
        y.h5 "ref_$name.h5" /y
    done
  done
done


echo "-- the memory model counts a shared window only for a line within one node"
# A line's window exists only where all its bricks share a node (Topology); the model
# counted one for every line of two or more bricks.
windows() {  # the report's predicted_window_bytes, one per rank, comma-separated
  "$PYTHON" -c "import json, sys; print(','.join(map(str, json.load(open(sys.argv[1]))['memory']['predicted_window_bytes'])))" "$1"
}
run_nodes 2 node "$APP" --transform dct --input x.h5:/x --output y.h5 --force --quiet \
  --ranks.actuators colocated --transport shared --report across.json
check "np 2 across two nodes: no line has a window ($(windows across.json))" \
  test "$(windows across.json)" == "0,0"
run_nodes 4 slot "$APP" --transform dct --input x.h5:/x --output y.h5 --force --quiet \
  --ranks.actuators colocated --ranks.grid 2,2,1 --transport shared --report split.json
run_np 4 "$APP" --transform dct --input x.h5:/x --output y.h5 --force --quiet \
  --ranks.actuators colocated --ranks.grid 2,2,1 --transport shared --report local.json
# Ranks 0,1 on node0 and 2,3 on node1: the axis-2 lines are within a node, the axis-1 lines
# across; on one node both axes have windows.
check "np 4 two per node: windows of the axis-2 lines only ($(windows split.json) < $(windows local.json))" \
  "$PYTHON" -c "
import json
s, l = (json.load(open(f))['memory']['predicted_window_bytes'] for f in ('split.json', 'local.json'))
assert len(s) == len(l) == 4 and all(0 < a < b for a, b in zip(s, l)), (s, l)"

summary
