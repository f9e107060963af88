#!/usr/bin/env bash
# The installed package works for another project, as a user would use it: `cmake --install`
# of the build into a temporary prefix; a copy of tests/package (outside the tree) configured
# with only that prefix, find_package(triada) + triada::triada; built, run, its output
# checked. Also: the consumer's compile lines carry -ffp-contract=off and no -march flag
# (instruction-set flags stay PRIVATE to the library: the kernel paths are chosen at run
# time); the Python package imports from the prefix and runs. Run by ctest (label package).
set -uo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

SRC=${TRIADA_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CMAKE=${CMAKE_COMMAND:-cmake}

if grep -q '^TRIADA_SANITIZE:BOOL=ON' "$TRIADA_BIN/CMakeCache.txt" 2>/dev/null; then
  echo "skipped: a sanitizer build's libraries need the sanitizer runtime in the consumer"
  exit 77
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-package-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT

logged() {  # logged LOG CMD...: runs CMD with its output in LOG, shown on failure
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; return 1; }
}

prefix=$dir/prefix
check "install into a fresh prefix" logged "$dir/install.log" "$CMAKE" --install "$TRIADA_BIN" --prefix "$prefix"
for f in triada config jobs plan counters report errors version; do
  check "installed include/triada/$f.hpp" test -f "$prefix/include/triada/$f.hpp"
done
for f in core/types.hpp core/version_config.hpp jobs/transform_job.hpp; do
  check "installed what the API needs: include/triada/detail/$f" test -f "$prefix/include/triada/detail/$f"
done
# The kernels (constants that follow the compiler's flags), the fused executor and the I/O
# internals are the library's own: not installed.
for f in kernels engine/fused engine/engine.hpp io/hdf5.hpp io/input_file.hpp io/tensor_io.hpp \
  io/output_files.hpp io/tensor_reader.hpp io/tensor_writer.hpp mxu/tcu_inputs.hpp \
  jobs/transform_tensors.hpp jobs/transform_run.hpp jobs/memory_tensors.hpp apps; do
  check "private, not installed: $f" test ! -e "$prefix/include/triada/detail/$f"
done
# Of io/ (the HDF5 wrapper) only the plain dataset reference of the configs; no installed
# header reaches HDF5's or MPI's wrappers.
check "of io/, only dataset_ref.hpp installed" bash -c \
  "[[ \$(ls '$prefix/include/triada/detail/io') == dataset_ref.hpp ]]"
check "no installed header includes <hdf5.h> or mesh/mpi.hpp" bash -c \
  "! grep -rlE '#include [<\"](hdf5\.h|H5[A-Za-z]*\.h|mesh/mpi\.hpp)' '$prefix/include'"
check "nothing installed beside include/triada" bash -c "[[ \$(ls '$prefix/include') == triada ]]"
# Installed headers reach each other by namespaced paths only (<triada/detail/core/types.hpp>):
# the package put include/triada/detail on consumers' include path, where the bare names
# of the detail headers ("core/types.hpp") met a consumer's own headers of those names.
check "no installed header includes a bare library path" bash -c \
  "! grep -rn '#include \"' '$prefix/include'"
check "no installed header includes Boost (the programs' option parser)" bash -c \
  "! grep -rn '#include <boost' '$prefix/include'"
check "the package's include path is PREFIX/include alone" bash -c \
  "! grep -n 'INTERFACE_INCLUDE_DIRECTORIES.*detail' '$prefix'/lib*/cmake/triada/triadaTargets.cmake"
check "installed bin/triada-transform" test -x "$prefix/bin/triada-transform"
config=$(find "$prefix" -name triadaConfig.cmake | head -n 1)
check "installed triadaConfig.cmake" test -n "$config"
check "installed triadaConfigVersion.cmake" test -f "$(dirname "$config")/triadaConfigVersion.cmake"
version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$(dirname "$config")/triadaConfigVersion.cmake")

# The Python package, where the build has it: imported from the prefix alone, it runs a job.
if grep -q '^TRIADA_PYTHON:BOOL=ON' "$TRIADA_BIN/CMakeCache.txt"; then
  check "installed Python package runs a transform" env -u PYTHONPATH \
    PYTHONPATH="$prefix/lib/python3/dist-packages" "${PYTHON:-python3}" -c "
import numpy as np, triada
assert triada.__file__.startswith('$prefix'), triada.__file__
y, r = triada.transform(np.ones((2, 3, 4)), 'dct')
assert abs(y[0, 0, 0] - np.sqrt(24)) < 1e-12 and r['counters']['macs'] > 0"
fi

# The consumer sees nothing of the tree: its own copy, the prefix, no package registry; it
# includes only <triada/...> (and MPI's and HDF5's own headers).
cp -r "$SRC/tests/package" "$dir/consumer"
cp "$SRC/examples/dct3d.cpp" "$dir/consumer/"
check "consumer includes only <triada/...> of the library" bash -c \
  "! grep -hE '^#include' '$dir'/consumer/*.cpp | grep -vE '^#include <(triada/[a-z]+\.hpp|mpi\.h|hdf5\.h|[a-z_]+)>$'"
check "consumer configures" logged "$dir/configure.log" "$CMAKE" -S "$dir/consumer" -B "$dir/build" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
check "consumer builds" logged "$dir/build.log" "$CMAKE" --build "$dir/build" -j2
check "consumer runs" logged "$dir/run.log" "$dir/build/triada_consumer"
cat "$dir/run.log"
check "reports version $version" grep -qx "triada $version" "$dir/run.log"

# A consumer that enables only C++ (project(app CXX), as many do): find_package(triada)
# asked for MPI's C component, which needs the C language ("Could NOT find MPI").
mkdir -p "$dir/cxx_only"
cp "$SRC/tests/package/cxx_only.cpp" "$dir/cxx_only/main.cpp"
# It also has headers of its own named as ours and as Boost's, first on its include path:
# each stops the build if an installed header reaches it.
for h in core/types.hpp config/options.hpp jobs/transform_job.hpp boost/program_options.hpp; do
  mkdir -p "$dir/cxx_only/shadow/$(dirname "$h")"
  echo "#error \"the consumer's own $h was included\"" >"$dir/cxx_only/shadow/$h"
done
printf '%s\n' 'cmake_minimum_required(VERSION 3.20)' 'project(cxx_only LANGUAGES CXX)' \
  'find_package(triada REQUIRED)' 'add_executable(cxx_only main.cpp)' \
  'target_include_directories(cxx_only BEFORE PRIVATE shadow)' \
  'target_link_libraries(cxx_only PRIVATE triada::triada)' >"$dir/cxx_only/CMakeLists.txt"
check "a C++-only consumer configures" logged "$dir/cxx_configure.log" "$CMAKE" -S "$dir/cxx_only" \
  -B "$dir/cxx_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
check "a C++-only consumer builds" logged "$dir/cxx_build.log" "$CMAKE" --build "$dir/cxx_build" -j2
check "a C++-only consumer runs a job" bash -c \
  "'$dir/cxx_build/cxx_only' | grep -qxE 'cxx-only y000 4\.8989794855663[0-9]*'"

# Without CMake: the installed pkg-config file, with the same shadowing headers.
pc_dir=$(dirname "$(find "$prefix" -name triada.pc | head -n 1)")
check "installed lib/pkgconfig/triada.pc" test -f "$pc_dir/triada.pc"
check "a pkg-config consumer builds" logged "$dir/pc_build.log" bash -c \
  "mpicxx -I'$dir/cxx_only/shadow' \$(PKG_CONFIG_PATH='$pc_dir' pkg-config --cflags triada) \
   '$dir/cxx_only/main.cpp' -o '$dir/pc_consumer' \$(PKG_CONFIG_PATH='$pc_dir' pkg-config --libs triada)"
check "a pkg-config consumer runs a job" bash -c \
  "'$dir/pc_consumer' | grep -qxE 'cxx-only y000 4\.8989794855663[0-9]*'"

check "builds a plan" grep -qx "plan 8x6x4 cells, 3 stages, order 312" "$dir/run.log"
check "parses an executor" grep -qx "executor fused" "$dir/run.log"
check "names the kernel path" grep -qxE "kernels (avx512|avx2|portable)" "$dir/run.log"
check "runs a DCT in memory" grep -qxE "dct y000 4\.8989794855663[0-9]*" "$dir/run.log"
check "a job before MPI_Init is an mpi_error" \
  grep -qx "before init: MPI is not started: call MPI_Init (or MPI_Init_thread) before a job runs" "$dir/run.log"
check "a job after MPI_Finalize is an mpi_error" \
  grep -qx "after finalize: MPI was finalized in this process: a job cannot run after it" "$dir/run.log"
check "the example runs on the installed package" logged "$dir/dct3d.log" "$dir/build/dct3d" "$dir"
cc=$dir/build/compile_commands.json
check "consumer compiles with -ffp-contract=off" grep -q -- "-ffp-contract=off" "$cc"
check "no -march flag reaches the consumer" bash -c "! grep -q -- '-march' '$cc'"
summary
