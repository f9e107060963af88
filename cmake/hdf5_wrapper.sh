#!/bin/sh
# Runs HDF5's compiler wrapper ($1: h5pcc, h5cc) on the other arguments, a file of the
# working directory passed by its name alone. The wrapper splits its arguments at spaces
# (`for arg in $@`), and FindHDF5 hands it a file of the build directory: where that path
# has a space, HDF5 was "not found". cmake/TriadaHDF5.cmake calls this only there.
wrapper=$1
shift
here=$(pwd -P)
n=$#
while [ "$n" -gt 0 ]; do
  arg=$1
  shift
  case $arg in
    */*)
      dir=$(cd "${arg%/*}" 2>/dev/null && pwd -P)
      if [ "$dir" = "$here" ] && [ -e "$arg" ]; then arg=${arg##*/}; fi ;;
  esac
  set -- "$@" "$arg"
  n=$((n - 1))
done
exec "$wrapper" "$@"
