#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install what is missing, check the
# formatting (run_scripts/format_check.sh), build (Release, warnings on), and run every test
# through ctest (the package test among them: install, then a separate project builds
# against it). Under CI also the unit, MPI and CLI tests and the input fuzz test of a
# portable (no -march=native) ASan+UBSan build. A formatting failure fails the script at
# the end, after the tests ran, so one CI run reports both.
# Usage: run_scripts/test.sh [extra ctest args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$here/build}"

bash "$here/run_scripts/install_deps.sh"
format_rc=0
bash "$here/run_scripts/format_check.sh" || format_rc=$?
cmake -S "$here" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "$BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@")

# In CI (or with TRIADA_ASAN=1): everything once more under AddressSanitizer + UBSan, built
# without -march=native, so the same pass tests the kernels' portable paths (no AVX-512,
# no AVX2) whatever this CPU has. The unit, MPI and CLI tests run with this build's apps
# (TRIADA_BIN is the build dir), and so does the input fuzz test (label asan, sanitizer
# builds only). Leak checking is off: Open MPI and HDF5 keep memory until exit by design,
# which every run would report. Every other ASan error exits 86 (not 1, which CLI tests
# expect for bad input) and a UBSan report halts the run, so real errors still fail.
# Left out: the peak-RSS test (bounds mean nothing with ASan's shadow memory) and the
# MPI-IO stress test (about MPI-IO under contention, which the first pass runs; under
# ASan it would take most of CI's time). The package test (label package) is not in this
# pass: a sanitized static library needs the sanitizer runtime in every consumer's link, so
# a plain consumer cannot link it; the first pass tests the package.
if [ "${TRIADA_ASAN:-${CI:-}}" = "1" ] || [ "${TRIADA_ASAN:-${CI:-}}" = "true" ]; then
  ASAN_BUILD="${BUILD}-asan"
  # -O1 -g1: a sanitized -O2 -g build of the Catch2 tests took most of CI's 20 minutes;
  # -O1 keeps ASan's reports exact and -g1 their file:line, at a fraction of the time.
  cmake -S "$here" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIADA_SANITIZE=ON \
    -DTRIADA_NATIVE=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
  cmake --build "$ASAN_BUILD" -j"$(nproc)"
  (cd "$ASAN_BUILD" &&
    ASAN_OPTIONS="detect_leaks=0:exitcode=86${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    ctest --output-on-failure -j"$(nproc)" --timeout 900 -L 'unit|mpi|cli|asan' \
      -E '^cli_test_(memory|io_stress)$')
fi

if [ "$format_rc" -ne 0 ]; then
  echo "test.sh: the tests passed, but run_scripts/format_check.sh failed (see its list above)" >&2
  exit "$format_rc"
fi
