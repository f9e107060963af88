#!/usr/bin/env bash
# The include graph of src/ points only down: a file of one layer may include headers of
# its own layer or of a lower one, never of a higher one (that is what lets the model
# library build without MPI/HDF5 and the engine without the apps). Every src/ folder must
# be a layer, and the layers below mesh (the model library) include neither <mpi.h> nor
# <hdf5.h>. Prints every violation as FILE:LINE, then fails if there was any.
# Run by ctest (label cli); needs only bash and awk.
set -euo pipefail

SRC=${TRIADA_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# The layers, lowest first (the one list; CMakeLists.txt groups them into libraries).
LAYERS="core geometry precision cell actuator counters physical report config kernels mesh io engine mxu conv jobs"

cd "$SRC/src"
files=$(find . -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \) | sed 's|^\./||' | sort)
[[ -n $files ]] || { echo "no sources under $SRC/src" >&2; exit 1; }

# shellcheck disable=SC2086
awk -v layers="$LAYERS" '
  BEGIN {
    n = split(layers, names, " ")
    for (i = 1; i <= n; ++i) rank[names[i]] = i
  }
  FNR == 1 {
    split(FILENAME, parts, "/")
    from = (index(FILENAME, "/") > 0) ? parts[1] : ""
    if (!(from in rank)) {
      print "src/" FILENAME ": folder \"" from "\" is not a layer (" layers ")"
      ++bad
    }
  }
  /^[ \t]*#[ \t]*include[ \t]*<(mpi|hdf5|H5[A-Za-z]*)\.h>/ {
    if ((from in rank) && rank[from] < rank["mesh"]) {
      print "src/" FILENAME ":" FNR ": " from " (layer " rank[from] ", below mesh) includes MPI/HDF5: " $0
      ++bad
    }
  }
  /^[ \t]*#[ \t]*include[ \t]*"[^"\/]+\// {
    if (!(from in rank)) next
    target = $0
    sub(/^[^"]*"/, "", target)
    sub(/\/.*$/, "", target)
    if (!(target in rank)) {
      print "src/" FILENAME ":" FNR ": includes \"" target "/\", not a layer"
      ++bad
    } else if (rank[target] > rank[from]) {
      print "src/" FILENAME ":" FNR ": " from " (layer " rank[from] ") includes " target \
            " (layer " rank[target] "): " $0
      ++bad
    }
  }
  END {
    if (bad > 0) { print bad " layering violation(s)"; exit 1 }
    print "layers ok: every include of src/ points to its own or a lower layer"
  }
' $files
