#!/usr/bin/env bash
# Installs every Debian package the build, the tests, the format check and the plots need.
# Idempotent: packages already present are skipped; safe to call from CI.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config clang-format
  openmpi-bin libopenmpi-dev
  libhdf5-openmpi-dev hdf5-tools
  libboost-program-options-dev
  catch2
  libfftw3-dev libopenblas-dev
  nlohmann-json3-dev libgmp-dev
  python3-numpy python3-h5py python3-matplotlib
  python3-pybind11 pybind11-dev python3-mpi4py python3-pytest python3-scipy
  python3-venv python3-pip python3-setuptools python3-wheel  # pip install . (pyproject.toml)
  python3-mypy  # the package's type hints, checked as a user's mypy reads them
  python3-onnx  # triada.onnx_net: ONNX models' layers
  util-linux iproute2  # unshare, nsenter, ip: tests/cli/test_multinode.sh's emulated nodes
  ccache  # pip install . builds afresh each time: repeats hit the cache (test_pip_build.py)
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PKGS[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
