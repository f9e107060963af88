#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install what is missing, check the
# formatting (run_scripts/format_check.sh), build (Release, warnings on), and run every test
# through ctest (the package test among them: install, then a separate project builds
# against it). Under CI also the unit, MPI and CLI tests and the input fuzz test of an
# ASan+UBSan build. A formatting failure fails the script at
# the end, after the tests ran, so one CI run reports both.
# Usage: run_scripts/test.sh [extra ctest args]
#
# CI time: a fresh 2-core machine took 23 minutes, half building, half testing; these
# choices brought it to about 16 (each measured alone, same load; build times in CPU s):
# - Process start-up. Every app run and test rank is an MPI process, and each spent 0.4 s
#   starting: probing for psm/psm2 networks (there are none; Open MPI then takes pml ob1)
#   and, for a program started without mpirun, an orted daemon. The tests' environment
#   (TRIADA_TEST_MPI_ENV, tests/CMakeLists.txt) names pml ob1 (isolated singletons would
#   save the daemon too, but they share a session directory and collide under ctest -j).
# - Catch2 v2 is one header; its implementation was compiled twice per build (93 CPU s
#   each under ASan). The unit tests link the package's compiled main, the MPI tests'
#   own main compiles it at -O0; Catch2's header is precompiled for the test sources; the
#   test oracles (tests/support) are compiled once (tests/CMakeLists.txt).
# - ctest runs one test more than there are cores: the tests spend a fifth of their time
#   waiting (MPI start-up, the file system), and the extra one fills it (both passes
#   about 12% shorter). The two longest tests have a COST so they start first.
# - The sanitizer pass: see below (no triada-bench, smaller workloads, tests at -O0).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$here/build}"
JOBS=$(($(nproc) + 1))  # ctest's parallel tests: one more than cores (above)

bash "$here/run_scripts/install_deps.sh"
format_rc=0
bash "$here/run_scripts/format_check.sh" || format_rc=$?
cmake -S "$here" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "$BUILD" && ctest --output-on-failure -j"$JOBS" --timeout 900 "$@")

# In CI (or with TRIADA_ASAN=1): everything once more under AddressSanitizer + UBSan. Both
# builds hold every kernel path (avx512, avx2, portable; chosen at run time), and the tests
# force each one this CPU runs, so this pass checks the memory accesses of the portable
# path (whose tails are plain loops) whatever the CPU has, and of the others where it has
# them. The unit, MPI and CLI tests run with this build's apps
# (TRIADA_BIN is the build dir), and so does the input fuzz test (label asan, sanitizer
# builds only). Leak checking is off: Open MPI and HDF5 keep memory until exit by design,
# which every run would report. Every other ASan error exits 86 (not 1, which CLI tests
# expect for bad input) and a UBSan report halts the run, so real errors still fail.
# Left out: the peak-RSS test (bounds mean nothing with ASan's shadow memory) and the
# MPI-IO stress test (about MPI-IO under contention, which the first pass runs; under
# ASan it would take most of CI's time). The package test (label package) is not in this
# pass: a sanitized static library needs the sanitizer runtime in every consumer's link, so
# a plain consumer cannot link it; the first pass tests the package.
# Run several times slower under the sanitizers, a few CLI cases take a smaller workload
# in this pass (TRIADA_SANITIZED=1, which tests/CMakeLists.txt sets for a sanitizer build;
# `sanitized` in tests/cli/lib_check.sh), keeping every code path; the first pass runs them
# at full size. test_conv.sh: AlexNet's conv1 and conv2 on smaller inputs, and not
# plot_conv.py (a Python script repeating those runs): 127 s -> 5 s. test_faults.sh: the
# killed-rank runs on 64^3 and with two of the four signal/victim pairs: 92 s -> 16 s.
# The tests' own sources compile at -O0 in this build (tests/CMakeLists.txt).
# Nor the Python tests (label python): this build has no Python module (TRIADA_PYTHON=OFF,
# its default with TRIADA_SANITIZE), since a sanitized module imports only into a python3
# started with the ASan runtime preloaded; the first pass runs them.
if [ "${TRIADA_ASAN:-${CI:-}}" = "1" ] || [ "${TRIADA_ASAN:-${CI:-}}" = "true" ]; then
  ASAN_BUILD="${BUILD}-asan"
  # -O1 -g1: a sanitized -O2 -g build of the Catch2 tests took most of CI's 20 minutes;
  # -O1 keeps ASan's reports exact and -g1 their file:line, at a fraction of the time.
  # No triada-bench (TRIADA_BUILD_BENCH=OFF): a measuring program whose own code
  # (apps/bench) nothing but its test exercises, 80 CPU s of this build (a twelfth); the
  # first pass builds and tests it, and tests/cli/test_full_disk.sh skips its case here.
  cmake -S "$here" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIADA_SANITIZE=ON \
    -DTRIADA_BUILD_BENCH=OFF -DTRIADA_PYTHON=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
  cmake --build "$ASAN_BUILD" -j"$(nproc)"
  (cd "$ASAN_BUILD" &&
    ASAN_OPTIONS="detect_leaks=0:exitcode=86${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
    ctest --output-on-failure -j"$JOBS" --timeout 900 -L 'unit|mpi|cli|asan|example' \
      -E '^cli_test_(memory|io_stress)$')
fi

if [ "$format_rc" -ne 0 ]; then
  echo "test.sh: the tests passed, but run_scripts/format_check.sh failed (see its list above)" >&2
  exit "$format_rc"
fi
