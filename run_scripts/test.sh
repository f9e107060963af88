#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install what is missing, build
# (Release, warnings on), and run every test through ctest. Under CI also the unit tests
# under ASan+UBSan and the unit + MPI tests of a portable (no -march=native) build.
# Usage: run_scripts/test.sh [extra ctest args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$here/build}"

bash "$here/run_scripts/install_deps.sh"
cmake -S "$here" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
(cd "$BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@")

# In CI (or with TRIADA_ASAN=1): the unit tests once more under AddressSanitizer + UBSan.
if [ "${TRIADA_ASAN:-${CI:-}}" = "1" ] || [ "${TRIADA_ASAN:-${CI:-}}" = "true" ]; then
  ASAN_BUILD="${BUILD}-asan"
  cmake -S "$here" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRIADA_SANITIZE=ON
  cmake --build "$ASAN_BUILD" -j"$(nproc)" --target triada_unit_tests
  (cd "$ASAN_BUILD" && ctest --output-on-failure -j"$(nproc)" -L unit)
fi

# In CI (or with TRIADA_PORTABLE=1): the unit and MPI tests once more without -march=native,
# so the kernels' portable paths (no AVX-512, no AVX2) are tested whatever this CPU has.
if [ "${TRIADA_PORTABLE:-${CI:-}}" = "1" ] || [ "${TRIADA_PORTABLE:-${CI:-}}" = "true" ]; then
  PORTABLE_BUILD="${BUILD}-portable"
  cmake -S "$here" -B "$PORTABLE_BUILD" -DCMAKE_BUILD_TYPE=Release -DTRIADA_NATIVE=OFF
  cmake --build "$PORTABLE_BUILD" -j"$(nproc)" --target triada_unit_tests triada_mpi_tests
  (cd "$PORTABLE_BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 900 -L 'unit|mpi')
fi
