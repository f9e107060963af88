#!/usr/bin/env bash
# with_own_tmpdir.sh COMMAND...: runs COMMAND (one ctest test) with a TMPDIR of its own,
# removed afterwards, whatever COMMAND left there. Open MPI 4 roots the session directories
# of every mpirun of a user on a host at one $TMPDIR/ompi.<host>.<uid>, which each creates
# and, ending, removes: tests run at once (ctest -j) raced on it ("orte_session_dir
# failed"). The programs' own singletons take roots of their own (src/mesh/mpi.cpp).
dir=$(mktemp -d "${TMPDIR:-/tmp}/triada-test.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
TMPDIR=$dir "$@"
