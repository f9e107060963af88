#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install what is missing, build
# (Release, warnings on), and run every test through ctest. Under CI also the unit, MPI and
# CLI tests and the input fuzz test under ASan+UBSan, and the unit + MPI tests of a
# portable (no -march=native) build.
# Usage: run_scripts/test.sh [extra ctest args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$here/build}"

bash "$here/run_scripts/install_deps.sh"
cmake -S "$here" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "$BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@")

# In CI (or with TRIADA_ASAN=1): the unit, MPI and CLI tests once more under
# AddressSanitizer + UBSan (the CLI scripts run this build's apps: TRIADA_BIN is the build
# dir), and the fuzz test of the input side (label asan, sanitizer builds only).
# Leak checking is off: Open MPI and HDF5 keep memory until exit by design, which every
# run would report. Every other ASan error exits 86 (not 1, which CLI tests expect for bad
# input) and a UBSan report halts the run, so real errors in our code still fail.
if [ "${TRIADA_ASAN:-${CI:-}}" = "1" ] || [ "${TRIADA_ASAN:-${CI:-}}" = "true" ]; then
  ASAN_BUILD="${BUILD}-asan"
  cmake -S "$here" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIADA_SANITIZE=ON
  cmake --build "$ASAN_BUILD" -j"$(nproc)"
  (cd "$ASAN_BUILD" &&
    ASAN_OPTIONS="detect_leaks=0:exitcode=86${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    ctest --output-on-failure -j"$(nproc)" --timeout 900 -L 'unit|mpi|cli|asan' \
      -E '^cli_test_memory$')  # peak-RSS bounds mean nothing with ASan's shadow memory
fi

# In CI (or with TRIADA_PORTABLE=1): the unit and MPI tests once more without -march=native,
# so the kernels' portable paths (no AVX-512, no AVX2) are tested whatever this CPU has.
if [ "${TRIADA_PORTABLE:-${CI:-}}" = "1" ] || [ "${TRIADA_PORTABLE:-${CI:-}}" = "true" ]; then
  PORTABLE_BUILD="${BUILD}-portable"
  cmake -S "$here" -B "$PORTABLE_BUILD" -DCMAKE_BUILD_TYPE=Release -DTRIADA_NATIVE=OFF
  cmake --build "$PORTABLE_BUILD" -j"$(nproc)" --target triada_unit_tests triada_mpi_tests
  (cd "$PORTABLE_BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 900 -L 'unit|mpi')
fi
