# Shared by scaling.sh and sweep.sh (sourced, not run): finds the built binaries, a
# python3 with numpy and matplotlib, and splits the MPI launcher command. Expects `here`,
# `bin` and a `die` function; sets TRANSFORM, GEN, PYTHON and the array `launcher`.
find_tools() {
  TRANSFORM="$bin/triada-transform"
  GEN="$bin/triada-gen"
  for exe in "$TRANSFORM" "$GEN"; do
    [[ -x $exe ]] || die "$exe not found or not executable (build it: cmake -S $here -B $bin && cmake --build $bin --target triada-transform triada-gen)"
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
