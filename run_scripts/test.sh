#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: install what is missing, build
# (Release, warnings on), and run every test through ctest.
# Usage: run_scripts/test.sh [extra ctest args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$here/build}"

bash "$here/run_scripts/install_deps.sh"
cmake -S "$here" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$BUILD"
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@"
