# Shared by scaling.sh and chip_compare.sh (sourced, not run). Expects `prog`
# (the script's name) and, for find_tools, `here` and `bin`.

# One "PROG: error: ..." line on stderr, exit code 2.
die() {
  echo "$prog: error: $*" >&2
  exit 2
}
# Option checks: need_val OPTION "$@" (a value follows), posint OPTION VALUE.
need_val() { [[ $# -ge 2 && -n $2 ]] || die "option $1 needs a value"; }
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got '$2'"; }

# find_tools [BINARY...]: finds the built binaries (the ones named, default triada-transform
# and triada-gen), a python3 with numpy and matplotlib, and splits the MPI launcher command;
# sets TRANSFORM, GEN, BENCH, PYTHON and the array `launcher`.
find_tools() {
  TRANSFORM="$bin/triada-transform"
  GEN="$bin/triada-gen"
  BENCH="$bin/triada-bench"
  local names=("$@") name
  [[ ${#names[@]} -gt 0 ]] || names=(triada-transform triada-gen)
  for name in "${names[@]}"; do
    [[ -x $bin/$name ]] || die "$bin/$name not found or not executable (build it: cmake -S $here -B $bin && cmake --build $bin --target ${names[*]})"
  done
  if [[ -z ${PYTHON:-} ]]; then  # the first python3 that has numpy and matplotlib
    for p in python3 /usr/bin/python3; do
      if "$p" -c 'import numpy, matplotlib' >/dev/null 2>&1; then PYTHON=$p; break; fi
    done
    [[ -n ${PYTHON:-} ]] || die "no python3 with numpy and matplotlib found (set PYTHON)"
  fi
  command -v "$PYTHON" >/dev/null || die "python '$PYTHON' not found (set PYTHON)"
  read -r -a launcher <<<"${LAUNCHER:-${MPIEXEC:-mpirun}}"
}

# Fails unless the launcher is set and on the PATH.
check_launcher() {
  [[ ${#launcher[@]} -gt 0 ]] || die "LAUNCHER is empty"
  command -v "${launcher[0]}" >/dev/null || die "MPI launcher '${launcher[0]}' not found (set LAUNCHER)"
}
